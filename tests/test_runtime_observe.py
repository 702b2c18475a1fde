"""observe: one substrate event, one record per perceiving agent, attrs round-trip."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import trio

from solace import Observation, ReplayClock, TrioClock, open_runtime
from solace.config import Config, ModelsConfig, SubstrateConfig


def small_config() -> Config:
    return Config(
        models=ModelsConfig(embedder="hashing", llm_backend="none"),
        substrate=SubstrateConfig(fsync="never"),
    )


async def test_observe_appends_the_event_once_and_attrs_round_trip_exactly(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    at = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    attrs = {"dia_id": "D1:3", "note": "kept as given"}
    async with open_runtime(tmp_path, small_config(), clock=TrioClock()) as rt:
        eid = await rt.agent("Main").observe(
            "I went to a pottery class yesterday.", speaker="Caroline", at=at, attrs=attrs
        )
        event = rt.event(eid)
        same = [e for e in await rt.substrate.scan(agent="Caroline") if "pottery" in e.content]
        assert [e.entry_id for e in same] == [eid]  # appended once
        assert dict(event.attrs) == attrs
        assert (event.agent, event.kind, event.ts) == ("Caroline", "message", at.timestamp())
        assert event.content == "I went to a pottery class yesterday."


async def test_two_actors_at_one_event_make_two_records_naming_the_speaker(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with open_runtime(tmp_path, small_config(), clock=TrioClock()) as rt:
        eid = await rt.agent("Main").observe("The meeting moved to Friday.", speaker="Jon")
        records = {
            name: rt.memories[name].working.get(eid) for name in ("Supervisor", "Main", "Mood")
        }
        assert records["Mood"] is None  # not emotional: Mood keeps no record of it
        sup, main = records["Supervisor"], records["Main"]
        assert sup is not None and main is not None and sup is not main
        assert sup.entry_ids == main.entry_ids == (eid,)
        assert sup.text == main.text == "Jon: The meeting moved to Friday."
        assert (sup.agent, main.agent) == ("Supervisor", "Main")


async def test_replay_clock_follows_the_dates_observed(tmp_path: Path) -> None:
    clock = ReplayClock()
    first, second = datetime(2023, 5, 8, tzinfo=UTC), datetime(2023, 6, 9, tzinfo=UTC)
    async with open_runtime(tmp_path, small_config(), clock=clock) as rt:
        main = rt.agent("Main")
        await main.observe("later", speaker="A", at=second)
        await main.observe("earlier, replayed out of order", speaker="B", at=first)
        assert clock.now() == second.timestamp()  # never runs backwards
        eid = await main.observe("no date given", speaker="A")
        assert rt.event(eid).ts == second.timestamp()


async def test_emotional_override_and_tags_attach_to_every_record_and_survive_restart(
    tmp_path: Path,
) -> None:
    clock = ReplayClock(datetime(2023, 5, 8, tzinfo=UTC))
    async with open_runtime(tmp_path, small_config(), clock=clock) as rt:
        eid = await rt.agent("Main").observe(
            "We adopted a puppy.", speaker="Mel", emotional_weight=0.9, tags=("family",)
        )
        assert rt.event(eid).attrs == {}  # the override is not in the caller's event
        live = {n: rt.memories[n].working.get(eid) for n in ("Supervisor", "Main")}
    async with open_runtime(tmp_path, small_config(), clock=clock, warm_up=False) as rt:
        for name, before in live.items():
            after = rt.memories[name].working.get(eid)
            assert after is not None and before is not None
            assert after.emotional_weight == before.emotional_weight == 0.9
            assert "family" in after.tags and after.tags == before.tags


async def test_observe_many_makes_the_same_records_as_observe(tmp_path: Path) -> None:
    at = datetime(2023, 5, 8, tzinfo=UTC)
    lines = [("Caroline", "I am so happy today!"), ("Mel", "I paint on Sundays.")]
    texts = {}
    for mode in ("one", "many"):
        async with open_runtime(tmp_path / mode, small_config(), clock=ReplayClock()) as rt:
            if mode == "one":
                ids = [await rt.agent("Main").observe(t, speaker=s, at=at) for s, t in lines]
            else:
                ids = await rt.observe_many([Observation(t, s, at=at) for s, t in lines])
            texts[mode] = {
                (n, i): (r.text, r.emotional_weight, r.tags)
                for n in ("Supervisor", "Main", "Mood")
                for i in ids
                if (r := rt.memories[n].working.get(i)) is not None
            }
    assert texts["one"] == texts["many"]
    assert ("Mood", 1) in texts["many"]  # the happy line is emotional enough for Mood
