"""A chat turn's session type (issue 11: "a chat turn with memory (text, memory id,
store, session type)"): a ``shared`` turn in a process serving main sessions sees no
private memory (MEMORY.md, durable facts, the fact recall block, the recall tool), for
that turn only; a turn may narrow what it sees, never widen it; HTTP carries it."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio
from http_support import running

from solace import TrioClock, open_runtime
from solace.app import Solace
from solace.config import Config, ModelsConfig, SubstrateConfig
from solace.runtime_workspace import SessionTypeError


def config() -> Config:
    return Config(models=ModelsConfig(embedder="hashing", llm_backend="none"),
                  substrate=SubstrateConfig(fsync="never"))


async def _home_with_private_memory(root: Path) -> None:
    async with open_runtime(root, config(), clock=TrioClock()) as rt:
        app = Solace(rt)
        await app.set_fact("garden_plot", "Plot 42 by the north gate")
        await app.remember("user", "The user's sister Mireille lives in Grenoble.")
        assert rt.workspace is not None
        await rt.workspace.synthesize()


async def test_a_shared_turn_in_a_main_session_sees_no_private_memory_for_that_turn_only(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    await _home_with_private_memory(tmp_path)
    async with open_runtime(tmp_path, config(), clock=TrioClock()) as rt:
        assert rt.session is not None and rt.session_type == "main"
        app = Solace(rt)
        await app.chat("Where does Mireille live?", session_type="shared")
        shared = rt.session.last_stack
        assert shared is not None
        assert "Plot 42" not in shared.stable and "# Durable facts" not in shared.stable
        assert "Grenoble" not in shared.stable and shared.recall == ""
        assert rt.agent("Main").last_recall is None
        # The session is main again for the next turn, with its private memory.
        assert rt.session.session_type == "main"
        assert rt.session.loaded is not None and "MEMORY.md" in rt.session.loaded.files
        await app.chat("Where does Mireille live?")
        main = rt.session.last_stack
        assert main is not None and "Plot 42" in main.stable and "Grenoble" in main.stable


async def test_a_process_serving_shared_sessions_refuses_a_main_turn_and_sends_nothing(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with open_runtime(tmp_path, config(), clock=TrioClock(),
                            session_type="shared") as rt:
        app = Solace(rt)
        before = rt.substrate.last_id
        with pytest.raises(SessionTypeError, match="never widen"):
            await app.chat("Tell me everything you know about me.", session_type="main")
        with pytest.raises(SessionTypeError, match="'public'"):
            await app.chat("Hello.", session_type="public")
        assert rt.substrate.last_id == before  # nothing was sent to Main
        reply = await app.chat("Hello.", session_type="shared")
        assert reply.text


async def test_the_recall_tool_is_refused_in_a_shared_turn(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    await _home_with_private_memory(tmp_path)
    async with open_runtime(tmp_path, config(), clock=TrioClock()) as rt:
        assert rt.session is not None
        async with rt.session.as_type("shared"):
            said = await rt.session.dispatch('{"tool": "recall", "args": {"query": "sister"}}')
        assert "not available in a shared session" in said and "Grenoble" not in said
        said = await rt.session.dispatch('{"tool": "recall", "args": {"query": "sister"}}')
        assert "Grenoble" in said  # the main session's own turn may recall


async def test_http_chat_takes_the_session_type_and_refuses_a_bad_one(tmp_path: Path) -> None:
    async with running(tmp_path) as (_, client):
        ok = await client.post("/chat", json={"message": "Hi.", "session_type": "shared"})
        assert ok.status_code == 200, ok.text
        assert ok.json()["session_type"] == "shared"
        default = await client.post("/chat", json={"message": "Hi again."})
        assert default.status_code == 200 and default.json()["session_type"] == "main"
        bad = await client.post("/chat", json={"message": "Hi.", "session_type": "public"})
        assert bad.status_code == 400 and "session_type" in bad.text
