"""Tri-state curation and the user-decision guard: exact messages, the user's
decision sticks, un-deprecation is the user's alone, deprecated shows a title only."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import trio
import trio.testing

from solace.config import ConversationConfig
from solace.conversation import (
    DEPRECATED_MANUAL_MESSAGE,
    KEEP_MANUAL_MESSAGE,
    UNDEPRECATE_MESSAGE,
    CurationRejected,
    CurationState,
    Scope,
)
from solace.conversation.testing import Harness, ScriptedLLM, open_harness

SCOPE = Scope("ada", "Main", "acme")


def test_guard_messages_are_the_seeds() -> None:
    assert KEEP_MANUAL_MESSAGE == (
        "keepInMemory was set manually by the user; the agent cannot override it."
    )
    assert DEPRECATED_MANUAL_MESSAGE == (
        "deprecated was set manually by the user; the agent cannot override it."
    )


@pytest.fixture
async def h(tmp_path: Path, autojump_clock: trio.testing.MockClock) -> AsyncIterator[Harness]:
    config = ConversationConfig(drift_interval=100, drift_threshold=-1.0)
    async with open_harness(tmp_path / "sub", config=config) as harness:
        yield harness


async def _topic(h: Harness, n: int = 6) -> tuple[str, str]:
    s = await h.conv.open_session(SCOPE)
    for i in range(n):
        await h.conv.add_message(s.session_id, "user" if i % 2 == 0 else "assistant",
                                 f"Release checklist item {i}: tag, build, publish.")
    return s.session_id, s.active_topic_id


async def _tool(h: Harness, sid: str, action: str, tid: str) -> tuple[bool, str]:
    outcome = await h.conv.dispatch_tool(
        "manage_topic_memory", {"action": action, "topic_id": tid}, session=sid
    )
    assert outcome is not None
    return outcome.ok, str(outcome.result.get("error", ""))


@pytest.mark.parametrize("user_action", ["promote", "demote"])
@pytest.mark.parametrize("agent_action", ["promote", "demote"])
async def test_agent_keep_move_rejected_after_user_set_keep_in_memory(
    h: Harness, user_action: str, agent_action: str
) -> None:
    sid, tid = await _topic(h)
    await h.conv.curate(tid, user_action)
    assert h.conv.topic(tid).keep_in_memory_manually_set
    ok, error = await _tool(h, sid, agent_action, tid)
    assert (ok, error) == (False, KEEP_MANUAL_MESSAGE)
    with pytest.raises(CurationRejected) as info:
        await h.conv.agent_curate(tid, agent_action)
    assert str(info.value) == KEEP_MANUAL_MESSAGE
    assert h.conv.topic(tid).keep_in_memory is (user_action == "promote")


@pytest.mark.parametrize("user_action", ["deprecate", "undeprecate"])
async def test_agent_deprecate_rejected_after_user_set_deprecated(
    h: Harness, user_action: str
) -> None:
    sid, tid = await _topic(h)
    await h.conv.curate(tid, user_action)
    assert h.conv.topic(tid).deprecated_manually_set
    ok, error = await _tool(h, sid, "deprecate", tid)
    assert (ok, error) == (False, DEPRECATED_MANUAL_MESSAGE)
    assert h.conv.topic(tid).deprecated is (user_action == "deprecate")


async def test_agent_cannot_undeprecate_even_its_own_deprecation(h: Harness) -> None:
    sid, tid = await _topic(h)
    assert (await _tool(h, sid, "deprecate", tid))[0]
    assert h.conv.topic(tid).state is CurationState.DEPRECATED
    assert not h.conv.topic(tid).deprecated_manually_set
    assert await _tool(h, sid, "undeprecate", tid) == (False, UNDEPRECATE_MESSAGE)
    with pytest.raises(CurationRejected, match="reserved for the user"):
        await h.conv.agent_curate(tid, "undeprecate")
    ok, error = await _tool(h, sid, "promote", tid)  # would lift the deprecation
    assert not ok and UNDEPRECATE_MESSAGE in error
    spec = next(t for t in h.conv.tools if t.name == "manage_topic_memory")
    assert "undeprecate" not in spec.parameters["properties"]["action"]["enum"]
    await h.conv.curate(tid, "undeprecate")  # the user may
    assert h.conv.topic(tid).state is CurationState.NOT_IN_MEMORY


async def test_agent_curates_freely_until_the_user_takes_a_position(h: Harness) -> None:
    sid, tid = await _topic(h)
    assert (await _tool(h, sid, "promote", tid))[0]
    assert h.conv.topic(tid).state is CurationState.PROMOTED
    assert (await _tool(h, sid, "demote", tid))[0]
    assert h.conv.topic(tid).state is CurationState.NOT_IN_MEMORY
    assert not h.conv.topic(tid).keep_in_memory_manually_set


async def test_agent_cannot_promote_below_min_memory_turns(h: Harness) -> None:
    sid, tid = await _topic(h, n=4)
    ok, error = await _tool(h, sid, "promote", tid)
    assert not ok and "MIN_MEMORY_TURNS" in error


async def test_user_keep_setting_persists_across_summarisation_cycles(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    answer: dict[str, object] = {
        "title": "Release", "summary": "Release checklist (tag, build, publish)."
    }
    llm = ScriptedLLM(lambda messages: dict(answer))
    config = ConversationConfig(drift_interval=100, drift_threshold=-1.0)
    async with open_harness(tmp_path / "sub", llm=llm, config=config) as h:
        sid, tid = await _topic(h)
        await h.conv.curate(tid, "promote")
        answer["include_in_memory"] = False
        await h.conv.evaluate_now(sid)
        assert h.conv.topic(tid).summary_mode == "llm"
        assert h.conv.topic(tid).keep_in_memory is True  # not overridden back to false
        await h.conv.curate(tid, "demote")
        answer["include_in_memory"] = True
        await h.conv.add_message(sid, "user", "Release checklist item 7: announce.")
        await h.conv.evaluate_now(sid)
        assert h.conv.topic(tid).summary_count == 7
        assert h.conv.topic(tid).keep_in_memory is False


async def test_deprecated_topic_renders_title_only_in_memory_prefix(h: Harness) -> None:
    sid, tid = await _topic(h)
    await h.conv.evaluate_now(sid)
    topic = h.conv.topic(tid)
    assert topic.summary and topic.title
    await h.conv.curate(tid, "promote")
    assert f"- {topic.title}: {topic.summary}" in (await h.conv.memory_block(SCOPE)).text
    await h.conv.curate(tid, "deprecate")
    block = (await h.conv.memory_block(SCOPE)).text
    assert block == f"- [DEPRECATED] {topic.title}"
    stack = await h.conv.build_context(sid)
    assert f"[DEPRECATED] {topic.title}" in stack.stable
    assert topic.summary not in stack.stable


async def test_user_brain_toggle_cycles_gray_teal_red_gray(h: Harness) -> None:
    _, tid = await _topic(h)
    states = []
    for _ in range(3):
        states.append((await h.conv.curate(tid, "cycle")).state)
    assert states == [CurationState.PROMOTED, CurationState.DEPRECATED,
                      CurationState.NOT_IN_MEMORY]
    topic = h.conv.topic(tid)
    assert topic.keep_in_memory_manually_set and topic.deprecated_manually_set
