"""Notes per topic (append, read, update, archived only after the summary) and durable
facts per (user, agent, org) ($set, read, $unset; never summarised; always in the
stable prefix)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from solace.config import ConversationConfig
from solace.conversation import Scope
from solace.conversation.testing import Harness, ScriptedLLM, open_harness
from solace.models.llm import ChatMessage

SCOPE = Scope("ada", "Main", "acme")
CONFIG = ConversationConfig(drift_interval=100, drift_threshold=-1.0)


@pytest.fixture
async def h(tmp_path: Path, autojump_clock: trio.testing.MockClock) -> AsyncIterator[Harness]:
    async with open_harness(tmp_path / "sub", config=CONFIG) as harness:
        yield harness


async def notes_tool(h: Harness, sid: str, **args: Any) -> dict[str, Any]:
    outcome = await h.conv.dispatch_tool("notes", args, session=sid)
    assert outcome is not None
    return dict(outcome.result)


async def test_notes_set_appends_update_replaces_read_returns(h: Harness) -> None:
    s = await h.conv.open_session(SCOPE)
    sid = s.session_id
    await notes_tool(h, sid, operation="$set", content="Decision: ship Friday.")
    result = await notes_tool(h, sid, operation="$set", content="Reason: QA is done.")
    assert result["notes"] == "Decision: ship Friday.\nReason: QA is done."
    result = await notes_tool(h, sid, operation="update", content="Ship Monday instead.")
    assert result["notes"] == "Ship Monday instead."
    assert (await notes_tool(h, sid, operation="read"))["notes"] == "Ship Monday instead."
    assert h.conv.notes(s.active_topic_id).archived == ()


async def test_notes_read_any_topic_of_the_session_by_id(h: Harness) -> None:
    s = await h.conv.open_session(SCOPE)
    sid, first = s.session_id, s.active_topic_id
    await h.conv.add_message(sid, "user", "Draft the launch email.")
    await notes_tool(h, sid, operation="$set", content="Tone: friendly.")
    await h.conv.new_topic(sid)
    old = await notes_tool(h, sid, operation="read", topic_id=first)
    assert old == {"ok": True, "topic_id": first, "notes": "", "archived": ["Tone: friendly."]}
    other = await h.conv.open_session(SCOPE)
    refused = await notes_tool(h, other.session_id, operation="read", topic_id=first)
    assert refused["ok"] is False and "no topic" in refused["error"]
    closed = await notes_tool(h, sid, operation="$set", content="x", topic_id=first)
    assert closed["ok"] is False


async def test_notes_archived_after_not_before_the_topic_summary(h: Harness) -> None:
    s = await h.conv.open_session(SCOPE)
    sid, first = s.session_id, s.active_topic_id
    await h.conv.add_message(sid, "user", "Plan the Q3 roadmap.")
    await notes_tool(h, sid, operation="$set", content="Roadmap: search first.")
    await h.conv.new_topic(sid)
    log = await h.substrate.scan(kind="topic")
    summary = next(e for e in log if e.attrs["op"] == "summary" and e.attrs["topic"] == first)
    notes = [e for e in await h.substrate.scan(kind="note") if e.attrs["topic"] == first]
    archive = next(e for e in notes if e.attrs["op"] == "archive")
    activate = [e for e in log if e.attrs["op"] == "activate"][-1]
    assert summary.entry_id < archive.entry_id < activate.entry_id
    assert h.conv.notes(first).archived == ("Roadmap: search first.",)
    # the summary was generated from the notes
    assert "Roadmap: search first" in h.conv.topic(first).summary
    stack = await h.conv.build_context(sid)
    assert "# Notes for the current topic" not in stack.semi_stable  # archived: not injected
    assert "note: Roadmap: search first" in stack.semi_stable  # but summarised with the topic


async def test_notes_stay_unarchived_when_the_summary_could_not_be_made(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(messages: Sequence[ChatMessage]) -> dict[str, Any]:
        raise RuntimeError("backend bug")

    async with open_harness(tmp_path / "sub", config=CONFIG, llm=ScriptedLLM(broken)) as h:
        s = await h.conv.open_session(SCOPE)
        await h.conv.add_message(s.session_id, "user", "Plan the Q3 roadmap.")
        await notes_tool(h, s.session_id, operation="$set", content="Roadmap: search first.")
        with pytest.raises(RuntimeError, match="backend bug"):
            await h.conv.new_topic(s.session_id)
        assert h.conv.notes(s.active_topic_id).active == "Roadmap: search first."
        assert [e.attrs["op"] for e in await h.substrate.scan(kind="note")] == ["$set"]
        assert h.conv.session(s.session_id).active_topic_id == s.active_topic_id


async def test_one_active_notes_document_per_topic_injected_in_semi_stable(h: Harness) -> None:
    s = await h.conv.open_session(SCOPE)
    await notes_tool(h, s.session_id, operation="$set", content="first")
    await notes_tool(h, s.session_id, operation="$set", content="second")
    stack = await h.conv.build_context(s.session_id)
    assert "# Notes for the current topic\nfirst\nsecond" in stack.semi_stable


async def test_important_info_set_read_unset(h: Harness) -> None:
    s = await h.conv.open_session(SCOPE)

    async def tool(**args: Any) -> dict[str, Any]:
        outcome = await h.conv.dispatch_tool("important_info", args, session=s.session_id)
        assert outcome is not None
        return dict(outcome.result)

    assert (await tool(operation="$set", key="timezone", value="Europe/Lisbon"))["ok"]
    assert (await tool(operation="$set", key="kids", value=2))["value"] == "2"
    assert (await tool(operation="$set", key="timezone", value="UTC"))["value"] == "UTC"
    assert await tool(operation="read") == {"ok": True, "facts": {"kids": "2", "timezone": "UTC"}}
    assert await tool(operation="read", key="kids") == {"ok": True, "key": "kids", "value": "2"}
    assert await tool(operation="$unset", key="kids") == {"ok": True, "key": "kids", "unset": True}
    missing = await tool(operation="$unset", key="kids")
    assert missing["ok"] is False and "no durable fact 'kids'" in missing["error"]
    no_value = await tool(operation="$set", key="x")
    assert no_value["ok"] is False and "needs 'value'" in no_value["error"]
    assert dict(h.conv.facts(SCOPE)).keys() == {"timezone"}


async def test_durable_facts_always_in_stable_prefix_and_never_summarised(
    h: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    await h.conv.set_fact(SCOPE, "name", "Ada Lovelace")
    first = await h.conv.open_session(SCOPE)
    for i in range(6):
        await h.conv.add_message(first.session_id, "user" if i % 2 == 0 else "assistant",
                                 f"Chat line {i} about gardening and tomatoes.")
    await h.conv.new_topic(first.session_id)
    second = await h.conv.open_session(SCOPE)
    for sid in (first.session_id, second.session_id):
        stack = await h.conv.build_context(sid)
        assert "# Durable facts\n- name: Ada Lovelace" in stack.stable
    for topic in h.conv.topics_of(SCOPE):
        assert "Ada Lovelace" not in topic.summary
    other = await h.conv.open_session(Scope("bob", "Main", "acme"))
    assert "Ada Lovelace" not in (await h.conv.build_context(other.session_id)).stable
    with caplog.at_level(logging.ERROR):
        assert not caplog.records
