"""The workspace wired into the runtime (issue 10): SOUL.md edits take effect at the
next session start and on /reload; a shared session loads no MEMORY.md, no durable
facts and no fact-memory recall block; a chat turn that teaches a fact gives today's
daily log a header; a fact deleted through the app leaves every file under the home."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import trio

from solace import TrioClock, open_runtime
from solace.app import Solace
from solace.config import Config, ModelsConfig, SubstrateConfig
from solace.surfaces.repl import Repl

SOUL_LINE = "You are Quill, a terse archivist who answers in haiku."


def config() -> Config:
    return Config(models=ModelsConfig(embedder="hashing", llm_backend="none"),
                  substrate=SubstrateConfig(fsync="never"))


def _edit_soul(root: Path) -> None:
    soul = root / "workspace" / "SOUL.md"
    text = soul.read_text()
    soul.write_text(text.replace(
        "You are Solace, a friendly assistant with a long-term memory of this user.",
        SOUL_LINE))


async def test_soul_edits_take_effect_at_the_next_session_start_and_on_reload(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with open_runtime(tmp_path, config(), clock=TrioClock()) as rt:
        assert rt.workspace is not None and rt.session is not None
        assert "friendly assistant" in rt.session.identity
        app = Solace(rt)
        await app.chat("Hello there.")
        stack = rt.session.last_stack
        assert stack is not None and "friendly assistant" in stack.stable
        _edit_soul(tmp_path)
        assert SOUL_LINE not in rt.session.identity  # not before /reload
        repl = Repl(rt, open("/dev/null", "w"))  # noqa: SIM115
        await repl.start()
        reply = await repl.handle("/reload")
        assert reply is not None and "SOUL.md" in reply
        assert SOUL_LINE in rt.session.identity and SOUL_LINE in rt.session.short_identity
        await app.chat("Who are you?")
        assert SOUL_LINE in rt.session.last_stack.stable
        assert "friendly assistant" not in rt.session.last_stack.stable
    (tmp_path / "workspace" / "SOUL.md").write_text("# SOUL\n\nYou are Wren, a gardener.\n")
    async with open_runtime(tmp_path, config(), clock=TrioClock()) as rt:
        assert rt.session is not None
        assert "You are Wren, a gardener." in rt.session.identity  # the next session start
        assert SOUL_LINE not in rt.session.identity


async def test_a_shared_session_loads_no_memory_md_no_durable_facts_and_no_recall(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with open_runtime(tmp_path, config(), clock=TrioClock()) as rt:
        app = Solace(rt)
        await app.set_fact("garden_plot", "Plot 42 by the north gate")
        await app.remember("user", "The user's sister Mireille lives in Grenoble.")
        assert rt.workspace is not None
        await rt.workspace.synthesize()
        assert "Mireille" in (rt.workspace.root / "MEMORY.md").read_text()
        assert "Plot 42" in (rt.workspace.root / "MEMORY.md").read_text()
    async with open_runtime(tmp_path, config(), clock=TrioClock()) as rt:  # main
        assert rt.session is not None and rt.session.loaded is not None
        assert "MEMORY.md" in rt.session.loaded.files
        await Solace(rt).chat("Where does Mireille live?")
        main_stack = rt.session.last_stack
        assert main_stack is not None and "Plot 42" in main_stack.stable
        assert "MEMORY.md" not in main_stack.stable and "Grenoble" in main_stack.stable
    async with open_runtime(tmp_path, config(), clock=TrioClock(),
                            session_type="shared") as rt:
        assert rt.session is not None and rt.session.loaded is not None
        assert rt.session_type == "shared"
        assert "MEMORY.md" not in rt.session.loaded.files
        await Solace(rt).chat("Where does Mireille live?")
        stack = rt.session.last_stack
        assert stack is not None
        assert "Plot 42" not in stack.stable and "# Durable facts" not in stack.stable
        assert stack.recall == "" and rt.agent("Main").last_recall is None
        whole = stack.stable + rt.session.identity + rt.session.short_identity
        assert "Grenoble" not in whole  # neither MEMORY.md nor the recall block


async def test_todays_daily_log_gets_a_header_after_a_chat_turn_that_teaches_a_fact(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with open_runtime(tmp_path, config(), clock=TrioClock()) as rt:
        app = Solace(rt)
        await app.chat("I moved to Lisbon last month.")
        await app.chat("Thanks!")  # Main extracts before taking the next line
        assert any("Lisbon" in f.text for f in app.memory_facts("user"))
        # The log of the day the fact was learned (the autojump clock may have carried
        # "today" past midnight since: background timers jump virtual time).
        logs = [p for p in sorted((rt.workspace.root / "memory").glob("*.md"))
                if "Lisbon" in p.read_text()]
        assert len(logs) == 1, logs
        text, day = logs[0].read_text(), logs[0].stem
        assert f"## {day} " in text
        assert "I moved to Lisbon last month." not in text  # distilled, not the transcript


def _holding(root: Path, needle: str) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")
                  if p.is_file() and needle.encode() in p.read_bytes())


async def test_a_fact_deleted_through_the_app_leaves_every_file_under_the_home(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with open_runtime(tmp_path, config(), clock=TrioClock()) as rt:
        app = Solace(rt)
        doomed = await app.remember("user", "The user's locker code is Orchid-7731.")
        await app.remember("user", "The user plays the cello.")
        assert rt.workspace is not None
        await rt.workspace.synthesize()
        await rt.workspace.rollup()
        assert any(n.startswith("workspace/memory/") for n in _holding(tmp_path, "Orchid-7731"))
        assert "workspace/MEMORY.md" in _holding(tmp_path, "Orchid-7731")
        await app.delete_fact("user", doomed.fact.fact_id)
        assert _holding(tmp_path, "Orchid-7731") == []
        assert "cello" in (rt.workspace.root / "MEMORY.md").read_text()
    assert _holding(tmp_path, "Orchid-7731") == []


async def test_repl_workspace_and_now_commands_list_show_and_rewrite(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with open_runtime(tmp_path, config(), clock=TrioClock()) as rt:
        repl = Repl(rt, open("/dev/null", "w"))  # noqa: SIM115
        await repl.start()
        listing = await repl.handle("/workspace")
        assert listing is not None and "SOUL.md" in listing and "bytes" in listing
        soul = await repl.handle("/workspace SOUL")
        assert soul is not None and "friendly assistant" in soul
        assert "outside the workspace" in (await repl.handle("/workspace ../x.md") or "")
        assert "no workspace file" in (await repl.handle("/workspace NOPE.md") or "")
        now = await repl.handle("/now")
        day = datetime.fromtimestamp(rt.clock.now(), UTC).date().isoformat()
        assert now is not None and (rt.workspace.root / "NOW.md").read_text().rstrip() == now
        assert day in now or str(datetime.fromtimestamp(rt.clock.now(), UTC).year) in now
        assert "/reload" in (await repl.handle("/help") or "")
