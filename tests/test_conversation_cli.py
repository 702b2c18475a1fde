"""The user's side: `solace topics|facts|notes` (opening the home's substrate directly)
and the REPL commands; user moves set the manual flags the agent cannot override."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
import trio
import trio.testing

from solace.clock import WallClock
from solace.config import Config
from solace.conversation import (
    CONVERSATION_KINDS,
    DEFAULT_SCOPE,
    KEEP_MANUAL_MESSAGE,
    Scope,
    handle_repl_line,
    open_conversations,
)
from solace.conversation.testing import open_harness
from solace.home import Home
from solace.models import Guard, HashingEmbedder, NoLLM, WordPieceTokenizer
from solace.offload import Offloader
from solace.surfaces.cli import conversation_cmd
from substrate import KeySource
from substrate.aio import open_trio_substrate


def run_cli(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="solace")
    parser.add_argument("--config")
    conversation_cmd.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(list(argv))
    return int(args.func(args))


def _seed_home(root: Path) -> tuple[str, str]:
    """A home whose default scope has one session with a six-message topic."""
    home = Home.at(root, Config())

    async def main() -> tuple[str, str]:
        sub = await open_trio_substrate(
            home.substrate_dir, key_source=KeySource(key_file=home.key_file),
            extra_kinds=CONVERSATION_KINDS,
        )
        async with sub:
            tok = WordPieceTokenizer()
            conv = await open_conversations(
                substrate=sub, config=Config().conversation, llm=NoLLM(),
                embedder=HashingEmbedder(), tokenizer=tok, guard=Guard(tokenizer=tok),
                offloader=Offloader(1), clock=WallClock(),
            )
            s = await conv.open_session(DEFAULT_SCOPE)
            for i in range(6):
                await conv.add_message(s.session_id, "user" if i % 2 == 0 else "assistant",
                                       f"We settled on weekly releases, point {i}.")
            await conv.new_topic(s.session_id)
            return s.session_id, s.active_topic_id

    return trio.run(main)


def test_cli_topics_list_show_and_user_curation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, tid = _seed_home(tmp_path)
    home = ["--home", str(tmp_path)]
    assert run_cli("topics", "list", *home) == 0
    listing = capsys.readouterr().out
    assert tid in listing and "6 msgs" in listing
    assert run_cli("topics", "deprecate", tid, *home) == 0
    assert capsys.readouterr().out.strip() == f"{tid}: deprecated"
    assert run_cli("topics", "show", tid, *home) == 0
    shown = capsys.readouterr().out
    assert "state: deprecated" in shown and "deprecatedManuallySet=true" in shown
    assert "We settled on weekly releases, point 0." in shown
    assert run_cli("topics", "undeprecate", tid, *home) == 0
    assert run_cli("topics", "promote", tid, *home) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"{tid}: promoted"
    # another scope does not see the topic
    assert run_cli("topics", "promote", tid, *home, "--user", "bob") == 1
    assert "unknown topic" in capsys.readouterr().err


def test_cli_facts_set_get_unset(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    home = ["--home", str(tmp_path)]
    assert run_cli("facts", "set", "editor", "helix", *home) == 0
    assert run_cli("facts", "set", "shell", "fish", *home) == 0
    capsys.readouterr()
    assert run_cli("facts", "get", *home) == 0
    assert capsys.readouterr().out == "editor: helix\nshell: fish\n"
    assert run_cli("facts", "get", "shell", *home) == 0
    assert capsys.readouterr().out == "fish\n"
    assert run_cli("facts", "unset", "shell", *home) == 0
    assert run_cli("facts", "unset", "shell", *home) == 1
    assert "no durable fact 'shell'" in capsys.readouterr().err
    assert run_cli("facts", "get", *home, "--org", "elsewhere") == 0
    assert capsys.readouterr().out == "(no durable facts)\n"


def test_cli_notes_show_add_replace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sid, closed = _seed_home(tmp_path)
    home = ["--home", str(tmp_path)]
    assert run_cli("topics", "list", *home) == 0
    active = next(line.split()[1] for line in capsys.readouterr().out.splitlines()
                  if line.startswith("*"))
    assert run_cli("notes", "add", active, "first idea", *home) == 0
    assert run_cli("notes", "add", active, "second idea", *home) == 0
    assert capsys.readouterr().out.splitlines()[-2:] == ["first idea", "second idea"]
    assert run_cli("notes", "replace", active, "one idea", *home) == 0
    assert run_cli("notes", "show", active, *home) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "one idea"
    assert run_cli("notes", "add", closed, "too late", *home) == 1
    assert "closed" in capsys.readouterr().err


def test_cli_reports_a_substrate_held_by_the_runtime(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = Home.at(tmp_path, Config())
    held = trio.run(lambda: open_trio_substrate(
        home.substrate_dir, key_source=KeySource(key_file=home.key_file)))
    try:
        assert run_cli("topics", "list", "--home", str(tmp_path)) == 1
        assert "is `solace run` running?" in capsys.readouterr().err
    finally:
        held.sync.close()


async def test_repl_commands_curate_as_the_user(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    assert set(conversation_cmd.repl_commands()) >= {
        "/topics", "/promote", "/demote", "/deprecate", "/undeprecate", "/facts", "/notes"}
    scope = Scope("ada", "Main", "acme")
    async with open_harness(tmp_path / "sub") as h:
        s = await h.conv.open_session(scope)
        sid, tid = s.session_id, s.active_topic_id
        assert await handle_repl_line(h.conv, sid, "hello there") is None
        assert await handle_repl_line(h.conv, sid, f"/promote {tid}") == f"{tid}: promoted"
        assert h.conv.topic(tid).keep_in_memory_manually_set
        outcome = await h.conv.dispatch_tool("manage_topic_memory", {"action": "demote"},
                                             session=sid)
        assert outcome is not None and outcome.result["error"] == KEEP_MANUAL_MESSAGE
        listing = await handle_repl_line(h.conv, sid, "/topics")
        assert listing is not None and listing.startswith(f"* {tid}") and "memory" in listing
        assert await handle_repl_line(h.conv, sid, "/facts set pet cat") == "pet: cat"
        assert await handle_repl_line(h.conv, sid, "/facts") == "pet: cat"
        assert await handle_repl_line(h.conv, sid, "/notes") == "(no active notes)"
        assert await handle_repl_line(h.conv, sid, "/demote t99") == "error: unknown topic 't99'"
        assert await handle_repl_line(h.conv, sid, "/deprecate") == (
            "usage: /deprecate ID: mark topic ID's decision reversed "
            "(only its title stays in memory)")
        reply = await handle_repl_line(h.conv, sid, "/newtopic Taxes")
        assert reply is not None and h.conv.active_topic(sid).title == "Taxes"
