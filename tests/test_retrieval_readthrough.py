"""Read-through with attribution; a draft is never visible to another agent."""

from __future__ import annotations

from pathlib import Path

import trio

from solace import TrioClock, open_runtime
from solace.config import Config, ModelsConfig, SubstrateConfig


def config() -> Config:
    return Config(
        models=ModelsConfig(embedder="hashing", llm_backend="none"),
        substrate=SubstrateConfig(fsync="never"),
    )


async def test_read_through_returns_another_agents_record_with_attribution(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with open_runtime(tmp_path, config(), clock=TrioClock()) as rt:
        eid = await rt.agent("Supervisor").observe(
            "The narrative so far: Caroline is preparing the adoption interview.",
            kind="reflection",
        )
        assert rt.memories["Main"].working.get(eid) is None  # Main never perceived it
        own_only = await rt.agent("Main").recall("adoption interview", k=5, read_through=False)
        assert all(eid not in h.entry_ids for h in own_only)
        hits = await rt.agent("Main").recall("adoption interview", k=5, read_through=True)
        hit = next(h for h in hits if eid in h.entry_ids)
        assert hit.owner == "Supervisor" and hit.agent == "Main"
        supervisor_view = await rt.agent("Supervisor").recall("adoption interview", k=5)
        assert next(h for h in supervisor_view if eid in h.entry_ids).owner is None


async def test_a_draft_is_private_to_its_author(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with open_runtime(tmp_path, config(), clock=TrioClock()) as rt:
        draft = await rt.observe_internal(
            "Draft: maybe mention the zebra sanctuary fundraiser", author="Main", kind="draft"
        )
        record = rt.memories["Main"].working.get(draft)
        assert record is not None and record.private
        mine = await rt.agent("Main").recall("zebra sanctuary fundraiser", k=5)
        assert any(draft in h.entry_ids for h in mine)
        for name in ("Supervisor", "Mood", "Time", "Mouth"):
            hits = await rt.agent(name).recall("zebra sanctuary fundraiser", k=20,
                                               read_through=True)
            assert all(draft not in h.entry_ids for h in hits), name


async def test_an_event_two_agents_hold_is_injected_once(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with open_runtime(tmp_path, config(), clock=TrioClock()) as rt:
        eid = await rt.agent("Main").observe("Our flight to Lisbon leaves at 7.", speaker="Ana")
        hits = await rt.agent("Main").recall("flight to Lisbon", k=10, read_through=True)
        assert [h.owner for h in hits if eid in h.entry_ids] == [None]  # own record, once


async def test_a_peer_is_asked_only_when_it_holds_an_event_the_asker_lacks(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with open_runtime(tmp_path, config(), clock=TrioClock()) as rt:
        await rt.agent("Main").observe("Our flight to Lisbon leaves at 7.", speaker="Ana")
        asked: list[str] = []
        for name in ("Supervisor", "Mood", "Time", "Mouth"):
            retriever = rt.agent(name).retriever
            original = retriever.gather

            async def noting(*args, _name=name, _original=original, **kwargs):  # type: ignore[no-untyped-def]
                asked.append(_name)
                return await _original(*args, **kwargs)

            retriever.gather = noting  # type: ignore[method-assign]
        await rt.agent("Main").recall("flight to Lisbon", k=10, read_through=True)
        assert asked == []  # Supervisor holds the message, and so does Main
        eid = await rt.agent("Supervisor").observe(
            "The narrative so far: Ana is flying to Lisbon.", kind="reflection")
        hits = await rt.agent("Main").recall("flight to Lisbon", k=10, read_through=True)
        assert asked == ["Supervisor"]
        assert [h.owner for h in hits if eid in h.entry_ids] == ["Supervisor"]
