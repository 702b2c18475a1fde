"""The conversation layer's model: every change is a substrate event, and the query
side is a projection that a replay of the substrate rebuilds exactly."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import trio
import trio.testing

from solace.conversation import CONVERSATION_KINDS, Scope
from solace.conversation import events as ev
from solace.conversation.events import LAYER
from solace.conversation.testing import Harness, open_harness
from substrate import NewEvent

SCOPE = Scope("ada", "Main", "acme")


@pytest.fixture
async def h(tmp_path: Path, autojump_clock: trio.testing.MockClock) -> AsyncIterator[Harness]:
    async with open_harness(tmp_path / "substrate") as harness:
        yield harness


async def _busy_session(h: Harness) -> str:
    conv = h.conv
    s = await conv.open_session(SCOPE)
    sid = s.session_id
    for i in range(3):
        await conv.add_message(sid, "user", f"Plan the Lisbon trip, day {i}. I prefer trains.")
        await conv.add_message(sid, "assistant", f"Day {i}: train to Sintra, pastries in Belem.")
    await conv.dispatch_tool("notes", {"operation": "$set", "content": "Trains, not cars."},
                             session=sid)
    await conv.dispatch_tool("important_info",
                             {"operation": "$set", "key": "home_city", "value": "Porto"},
                             session=sid)
    first = conv.active_topic(sid).topic_id
    await conv.new_topic(sid, title="Tax return")
    await conv.add_message(sid, "user", "Which tax form do I need for freelance income?")
    await conv.curate(first, "promote")
    await conv.curate(first, "deprecate")
    await conv.evaluate_now(sid)
    return sid


async def test_rebuild_from_the_substrate_equals_live_state(h: Harness) -> None:
    await _busy_session(h)
    rebuilt = await h.reopen()
    assert rebuilt.projection.state() == h.conv.projection.state()
    assert rebuilt.projection.max_topic_no == h.conv.projection.max_topic_no


async def test_every_change_is_an_event_of_this_layer_in_the_substrate(h: Harness) -> None:
    sid = await _busy_session(h)
    kinds = {e.kind for e in await h.conv.store.replay()}
    assert {"session", "topic", "note", "message", "tool_call", "tool_result", "curation",
            "fact"} <= kinds
    all_events = await h.substrate.scan()
    assert all(e.attrs.get("layer") == LAYER for e in all_events)
    assert all(e.agent == SCOPE.agent for e in all_events)
    assert set(CONVERSATION_KINDS) == {"session", "topic", "note"}
    # The projection holds nothing the log does not: the thread is made of events.
    for item in h.conv.thread(h.conv.active_topic(sid).topic_id):
        event = await h.substrate.get(item.entry_id)
        assert event.content == item.content


async def test_events_of_other_layers_sharing_builtin_kinds_are_not_replayed(
    h: Harness,
) -> None:
    s = await h.conv.open_session(SCOPE)
    await h.substrate.append_many([
        NewEvent("Main", "message", "a raw chat turn observed by the runtime"),
        NewEvent("Main", "fact", "x", {"op": "$set", "key": "k", "user": "ada", "org": "acme"}),
    ])
    rebuilt = await h.reopen()
    assert rebuilt.projection.state() == h.conv.projection.state()
    assert rebuilt.facts(SCOPE) == {}
    assert rebuilt.thread(s.active_topic_id) == []


async def test_exactly_one_active_topic_per_session(h: Harness) -> None:
    s = await h.conv.open_session(SCOPE)
    await h.conv.add_message(s.session_id, "user", "hello")
    t2 = await h.conv.new_topic(s.session_id)
    session = h.conv.session(s.session_id)
    assert session.active_topic_id == t2.topic_id
    assert session.topic_ids == (s.active_topic_id, t2.topic_id)
    assert h.conv.topic(s.active_topic_id).closed
    await h.conv.add_message(s.session_id, "user", "new subject")
    assert h.conv.thread(t2.topic_id)[-1].content == "new subject"


async def test_scopes_are_isolated_per_user_agent_and_org(h: Harness) -> None:
    others = [Scope("bob", "Main", "acme"), Scope("ada", "Mood", "acme"),
              Scope("ada", "Main", "other")]
    await h.conv.set_fact(SCOPE, "editor", "vim")
    for scope in others:
        await h.conv.set_fact(scope, "editor", f"emacs-{scope.key}")
    assert h.conv.facts(SCOPE)["editor"].value == "vim"
    s = await h.conv.open_session(SCOPE)
    await h.conv.curate(s.active_topic_id, "promote")
    for scope in others:
        assert h.conv.topics_of(scope) == []
        assert (await h.conv.memory_block(scope)).text == ""


def test_scope_parts_with_separators_are_refused() -> None:
    with pytest.raises(ValueError, match="scope org must be"):
        Scope("ada", "Main", "a:b")
    assert SCOPE.key == "Main:ada:acme"


async def test_replayed_agent_move_after_a_user_decision_does_not_override_it(
    h: Harness,
) -> None:
    s = await h.conv.open_session(SCOPE)
    tid = s.active_topic_id
    await h.conv.curate(tid, "demote")  # the user takes a position
    # Another writer raced the guard and logged an agent promotion anyway.
    await h.conv.store.append([ev.curation(SCOPE, s.session_id, tid, "promote", by="agent")], 1.0)
    rebuilt = await h.reopen()
    assert rebuilt.topic(tid).keep_in_memory is False
    assert rebuilt.topic(tid).keep_in_memory_manually_set is True
