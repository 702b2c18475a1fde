"""Shutdown snapshots and flushes; a restart brings every record back and warms up."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from runtime_support import LINES, START, fill

from solace import ReplayClock, open_runtime
from solace.config import AgentConfig, Config, MemoryConfig, ModelsConfig, SubstrateConfig
from solace.memory.retrieval_forms import Forms


def config(warmup: int = 2, budget: int = 40, **memory: float) -> Config:
    small = AgentConfig(budget_tokens=budget)
    return Config(
        models=ModelsConfig(embedder="hashing", llm_backend="none"),
        substrate=SubstrateConfig(fsync="always"),
        memory=MemoryConfig(warmup_records=warmup, warmup_rung=1, **memory),
        agents={"Main": small, "Supervisor": small},
    )


def state(rt) -> dict:  # type: ignore[no-untyped-def]
    out = {}
    for name, memory in rt.memories.items():
        for tier in ("working", "longterm"):
            for r in getattr(memory, tier).records():
                out[(name, tier, r.record_id)] = (r.rung, r.text, r.entry_ids, r.private)
    return out


async def test_clean_shutdown_and_restart_lose_nothing(tmp_path: Path) -> None:
    clock = ReplayClock(START)
    async with open_runtime(tmp_path, config(), clock=clock) as rt:
        ids = await fill(rt)
        await rt.observe_internal("a thought to keep", author="Main", kind="draft")
        before = state(rt)
        last_id = rt.substrate.last_id
    for name in ("Supervisor", "Main"):
        assert any((tmp_path / "memory" / name).iterdir())  # snapshotted on exit
    async with open_runtime(tmp_path, config(), clock=clock, warm_up=False) as rt:
        assert state(rt) == before
        assert rt.substrate.last_id == last_id
        for eid in ids:
            assert rt.event(eid).content == LINES[ids.index(eid)][1]
            held = [r for n in ("Supervisor", "Main")
                    for t in ("working", "longterm")
                    for r in getattr(rt.memories[n], t).records() if eid in r.entry_ids]
            assert len(held) == 2  # one record per agent that perceived it, no more


async def test_restart_without_snapshots_rebuilds_the_same_records(tmp_path: Path) -> None:
    clock = ReplayClock(START)
    async with open_runtime(tmp_path, config(), clock=clock) as rt:
        await fill(rt)
        before = state(rt)
    for path in (tmp_path / "memory").rglob("*"):
        if path.is_file():
            path.unlink()  # lose every projection: the substrate is the truth
    async with open_runtime(tmp_path, config(), clock=clock, warm_up=False) as rt:
        assert state(rt) == before


async def test_warm_up_rehydrates_the_newest_longterm_records_so_no_agent_starts_amnesic(
    tmp_path: Path,
) -> None:
    clock = ReplayClock(START)
    async with open_runtime(tmp_path, config(), clock=clock) as rt:
        await fill(rt)
        newest = [r.record_id for r in rt.memories["Main"].longterm.newest(2)]
        assert len(newest) == 2
    clock.advance(3600)
    # A working budget with room for the warmed records: with 40 tokens the fade
    # coroutine, which starts with the actors, could demote one before we look.
    async with open_runtime(tmp_path, config(warmup=2, budget=4000), clock=clock) as rt:
        added = {int(e.attrs["record_id"]): int(e.attrs["rung"])  # what warm-up wrote
                 for e in await rt.substrate.scan(agent="Main", kind="fade")
                 if e.attrs.get("op") == "add" and e.attrs.get("tier") == "working"}
        assert {rid: added.get(rid) for rid in newest} == dict.fromkeys(newest, 1)
        memory = rt.memories["Main"]
        for rid in newest:
            record = memory.working.get(rid)
            assert record is not None and record.rung == 1
            assert memory.longterm.get(rid) is None
        hits = await rt.agent("Main").recall("museum kids wonderful", k=3, read_through=False)
        assert hits


EPISODES = config(episode_min_similarity=-1.0)  # every turn joins an episode


async def recalled_home(tmp_path: Path, clock: ReplayClock
                        ) -> tuple[dict[int, np.ndarray], dict[str, Forms], set[int]]:
    """A home filled and recalled from once (deriving the forms), closed: its event
    vectors, Main's and Supervisor's forms, and its units (the events of every
    multi-event record, which retrieval ranks inside episodes)."""
    async with open_runtime(tmp_path, EPISODES, clock=clock) as rt:
        await fill(rt)
        await rt.agent("Main").recall("pottery class", k=3)
        forms = {n: rt.agent(n).retriever.forms() for n in ("Main", "Supervisor")}
        return dict(rt.event_vectors), forms, units_of(rt)


def units_of(rt) -> set[int]:  # type: ignore[no-untyped-def]
    return {e for memory in rt.memories.values() for tier in (memory.working, memory.longterm)
            for r in tier.records() if len(r.entry_ids) > 1 for e in r.entry_ids}


async def test_restart_keeps_event_vectors_and_derived_forms_so_none_is_made_again(
    tmp_path: Path,
) -> None:
    clock = ReplayClock(START)
    vectors, forms, units = await recalled_home(tmp_path, clock)
    assert units and units <= vectors.keys()  # the events retrieval ranks inside episodes
    assert units & forms["Main"].units.keys()
    async with open_runtime(tmp_path, EPISODES, clock=clock, warm_up=False) as rt:
        assert rt.event_vectors.keys() == vectors.keys()
        assert all(np.array_equal(rt.event_vectors[e], vectors[e]) for e in vectors)
        for name, kept in forms.items():
            again = rt.agent(name).retriever.forms()
            assert (again.records, again.units) == (kept.records, kept.units)
            for index in ("records_index", "units_index"):  # the BM25 indexes came back
                a, b = getattr(again, index), getattr(kept, index)
                assert dict(zip(a.ids.tolist(), a.texts, strict=True)) == \
                    dict(zip(b.ids.tolist(), b.texts, strict=True))
    other = config(episode_min_similarity=-0.5)  # forms depend on the memory config
    async with open_runtime(tmp_path, other, clock=clock, warm_up=False) as rt:
        assert rt.agent("Main").retriever.forms().units == {}


async def test_units_whose_vectors_were_lost_are_embedded_again_by_the_first_recall(
    tmp_path: Path,
) -> None:
    clock = ReplayClock(START)
    vectors, _, _ = await recalled_home(tmp_path, clock)
    for segment in (tmp_path / "memory" / "event-vectors").iterdir():
        segment.unlink()  # the kept vectors are a cache: lost, nothing else is
    async with open_runtime(tmp_path, EPISODES, clock=clock, warm_up=False) as rt:
        units = units_of(rt)
        assert units and not units & rt.event_vectors.keys()
        await rt.agent("Main").recall("pottery class", k=3)
        main_units = set(rt.agent("Main").retriever.forms().units)
        assert main_units and main_units <= rt.event_vectors.keys()
        assert all(np.array_equal(rt.event_vectors[e], vectors[e]) for e in main_units)
