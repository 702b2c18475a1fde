"""``/recall [-k N] QUERY`` shows date, speaker, rung and source, each text once and never
the line just typed; ``/inspect`` is a small table whose columns ``/help inspect``
explains; ``/help`` lists every command."""

from __future__ import annotations

import io
from pathlib import Path

import trio
import trio.testing

from solace import TrioClock, open_runtime
from solace.app import RecallHit
from solace.config import Config, ModelsConfig, SubstrateConfig
from solace.surfaces.repl import Repl
from solace.surfaces.repl_commands import COMMANDS, help_text
from solace.surfaces.repl_format import INSPECT_COLUMNS, cite_hits, format_recall


def config() -> Config:
    return Config(
        models=ModelsConfig(embedder="hashing", llm_backend="none"),
        substrate=SubstrateConfig(fsync="never"),
    )


def hit(text: str, entry_id: int, speaker: str, date: str, *, rung: int = 0,
        tier: str = "working", owner: str | None = None, score: float = 0.5) -> RecallHit:
    return RecallHit(text, "Main", owner, tier, rung, score, 0.0, 0.0, 0.0, 0.0, 0.0, 5,
                     (entry_id,), date, (speaker,), ())


def test_recall_rows_show_each_text_once_and_never_the_excluded_line() -> None:
    hits = [
        hit("user: What is my dog's name?", 4, "user", "2023-11-14T22:15:00+00:00", score=0.9),
        hit("Main: Your dog is called Rex.", 2, "Main", "2023-11-14T22:14:20+00:00", score=0.8),
        hit("Mouth: Your dog is called Rex.", 3, "Mouth", "2023-11-14T22:14:21+00:00",
            score=0.7, owner="Mouth"),
        hit("user: My dog's name is Rex.", 1, "user", "2023-11-14T22:13:20+00:00", rung=1,
            tier="longterm", score=0.6),
    ]
    rows = cite_hits(hits, exclude=["What is my dog's name?"])
    assert [r.text for r in rows] == ["Your dog is called Rex.", "My dog's name is Rex."]
    assert rows[0].speaker == "Main" and rows[0].source == "working #2"
    assert (rows[1].rung, rows[1].source, rows[1].date) == (1, "long-term #1", "2023-11-14 22:13")
    table = format_recall(rows)
    assert table.splitlines()[0].split() == ["#", "date", "speaker", "rung", "source", "text"]
    assert len(cite_hits(hits, k=1)) == 1


async def test_repl_recall_takes_k_and_leaves_out_the_line_just_typed(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with open_runtime(tmp_path, config(), clock=TrioClock()) as rt:
        repl = Repl(rt, io.StringIO())
        await repl.start()
        for line in ["My cat is named Biscuit.", "Biscuit sleeps on the sofa.",
                     "I bought Biscuit a new toy.", "Where does Biscuit sleep?"]:
            await repl.handle(line)
        table = await repl.handle("/recall -k 2 Biscuit")
        assert table is not None
        rows = table.splitlines()[1:]
        assert len(rows) == 2
        assert all(" user " in row or " Mouth " in row for row in rows)
        assert "Where does Biscuit sleep?" not in table  # the line just typed
        texts = [row.split("  ")[-1] for row in (await repl.handle("/recall -k 9 Biscuit")
                                                 or "").splitlines()[1:]]
        assert len(texts) == len(set(texts))
        assert (await repl.handle("/recall -k zero Biscuit") or "").startswith("usage:")
        assert await repl.handle("/recall") == "usage: /recall [-k N] QUERY"


async def test_inspect_is_a_table_whose_columns_help_inspect_explains(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with open_runtime(tmp_path, config(), clock=TrioClock()) as rt:
        repl = Repl(rt, io.StringIO())
        await repl.start()
        table = await repl.handle("/inspect")
        assert table is not None
        header, *rows = table.splitlines()
        assert [r.split()[0] for r in rows[:5]] == ["Supervisor", "Main", "Mood", "Time", "Mouth"]
        explained = help_text("inspect")
        for column, _ in INSPECT_COLUMNS:
            assert column in header and f"  {column}  " in explained
        assert "budget_tokens: 12000" in (await repl.handle("/inspect Supervisor") or "")
        assert "unknown agent 'Nobody'" in (await repl.handle("/inspect Nobody") or "")


def test_help_lists_every_command_the_repl_handles() -> None:
    listing = help_text()
    names = [c.name for c in COMMANDS if c.name]
    for name in names:
        assert f"  {name}" in listing
    assert set(names) >= {"/recall", "/inspect", "/hyperfocus", "/topics", "/newtopic",
                          "/promote", "/demote", "/deprecate", "/undeprecate", "/facts",
                          "/notes", "/help", "/quit"}
    assert help_text("facts").startswith("/facts [get KEY | set KEY VALUE | unset KEY]")
    assert help_text("nope") == "no command 'nope'; /help lists them"


async def test_every_listed_command_is_handled(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with open_runtime(tmp_path, config(), clock=TrioClock()) as rt:
        repl = Repl(rt, io.StringIO())
        await repl.start()
        for command in COMMANDS:
            if command.name in ("", "/quit"):
                continue
            reply = await repl.handle(command.name)
            assert reply is not None and "unknown command" not in reply, command.name
        assert await repl.handle("/quit") is None
        assert "unknown command '/nope'" in (await repl.handle("/nope") or "")
