"""Memory across restarts: snapshots, rebuild from the substrate, crashes, warm-up."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import trio
import trio.testing
from test_memory_support import DAY, HOUR, LINES, Env, holder_of, state_of, where

from solace.config import AgentConfig, MemoryConfig
from solace.memory.ladder import rehydrate_text
from solace.memory.snapshot import META_NAME, snapshot_files

CONFIG = AgentConfig(budget_tokens=120, age_scale_hours=12.0, longterm_summary_hours=48.0)
SMALL_INDEX = MemoryConfig(hnsw_threshold=6)  # long-term goes approximate (IVF) early


async def history(env: Env, days: int = 6) -> None:
    """A few days of conversation: records at every rung, some merged, some in long-term."""
    at = 0.0
    for day in range(days):
        for i, line in enumerate(LINES[day % 3 : day % 3 + 4]):
            at = day * DAY + i * 5 * 60
            await env.sleep_until(at)
            await env.say(f"{line} (day {day})", speaker=["Caroline", "Melanie"][i % 2],
                          emo=0.6 if i == 1 else 0.0, tags=("work",) if i == 2 else ())
        await env.mem.settle()
    await env.sleep_until(at + HOUR)
    await env.mem.settle()


def vectors(env: Env) -> dict[int, np.ndarray]:
    out = {}
    for record in env.mem.working.records() + list(env.mem.longterm.records()):
        assert record.embedding is not None
        out[record.record_id] = record.embedding
    return out


def assert_same(before: dict[int, Any], after: dict[int, Any]) -> None:
    assert after.keys() == before.keys()
    for rid in before:
        assert after[rid] == before[rid], rid


@pytest.fixture
async def env(tmp_path: Path, autojump_clock: trio.testing.MockClock) -> Env:
    e = Env(tmp_path, CONFIG, SMALL_INDEX)
    await e.open()
    await history(e)
    rungs = {where(e.mem, r.record_id) for r in e.mem.working.records()}
    rungs |= {where(e.mem, r.record_id) for r in e.mem.longterm.records()}
    assert ("longterm", 3) in rungs and ("longterm", 2) in rungs  # the history is varied
    assert e.mem.longterm.index_kind == "ivf"
    return e


async def test_the_tiers_survive_a_restart(env: Env, autojump_clock: Any) -> None:
    before, vecs, counters = state_of(env.mem), vectors(env), env.mem.counters.as_dict()
    await env.restart(snapshot=True)
    assert_same(before, state_of(env.mem))
    for rid, vector in vectors(env).items():
        np.testing.assert_array_equal(vector, vecs[rid])
    assert env.mem.counters.as_dict() == counters
    assert env.mem.longterm.index_kind == "ivf"
    probe = next(iter(env.mem.longterm.records()))
    assert probe.embedding is not None
    assert env.mem.longterm.search(probe.embedding, 1)[0][0].record_id == probe.record_id


async def test_a_deleted_snapshot_is_rebuilt_from_the_substrate(
    env: Env, autojump_clock: Any
) -> None:
    await env.mem.snapshot()
    before, vecs = state_of(env.mem), vectors(env)
    sources = {e.attrs["embedding"] for e in await env.fade_events()}
    assert {"kept", "mean"} <= sources  # merges' vectors are means, made again below
    for path in snapshot_files(env.mem.directory):
        path.unlink()
    await env.restart(snapshot=False)
    assert_same(before, state_of(env.mem))
    for rid, vector in vectors(env).items():  # re-embedded: the same texts, the same vectors
        np.testing.assert_allclose(vector, vecs[rid], atol=1e-6)
    assert (env.mem.directory / META_NAME).is_file()  # and snapshotted right away


def tracking(memory: Any) -> dict[int, tuple[int, float]]:
    records = memory.working.records() + list(memory.longterm.records())
    return {r.record_id: (r.references, r.last_referenced) for r in records}


async def test_references_made_by_recall_survive_a_rebuild_from_the_substrate(
    env: Env, autojump_clock: Any
) -> None:
    # References slow a record's fade, so they are memory state: written as touch
    # events (before the next fade events, and before a snapshot), replayed in order.
    def touch_some() -> None:
        for record in env.mem.working.records()[:2] + list(env.mem.longterm.records())[:2]:
            env.mem.touch(record.record_id, env.clock.now())
    touch_some()
    touch_some()
    await env.sleep_until(7 * DAY)
    await env.say("Melanie signed up for a pottery class on Friday.", speaker="Melanie")
    await env.mem.settle()  # fade events follow the first references
    touch_some()
    await env.mem.snapshot()
    touches = [e for e in await env.fade_events() if e.attrs["op"] == "touch"]
    assert len(touches) >= 2
    before, tracked = state_of(env.mem), tracking(env.mem)
    assert any(refs for refs, _ in tracked.values())
    for path in snapshot_files(env.mem.directory):
        path.unlink()
    await env.restart(snapshot=False)
    assert_same(before, state_of(env.mem))
    assert tracking(env.mem) == tracked


async def test_a_crash_after_fade_events_before_a_snapshot_loses_nothing(
    env: Env, autojump_clock: Any
) -> None:
    await env.mem.snapshot()
    events_at_snapshot = len(await env.fade_events())
    await env.sleep_until(8 * DAY)
    await env.say("Melanie signed up for a pottery class on Friday.", speaker="Melanie")
    await env.mem.settle()
    assert len(await env.fade_events()) > events_at_snapshot  # faded after the snapshot
    before = state_of(env.mem)
    await env.restart(snapshot=False)  # crash: no snapshot
    assert_same(before, state_of(env.mem))
    for entry in env.spoken:
        assert len(holder_of(env.mem, entry)) == 1


async def test_an_unusable_snapshot_means_a_rebuild_not_an_error(
    env: Env, autojump_clock: Any
) -> None:
    await env.mem.snapshot()
    before = state_of(env.mem)
    (env.mem.directory / META_NAME).write_bytes(b"\xc1 not msgpack")
    await env.restart(snapshot=False)
    assert_same(before, state_of(env.mem))


async def test_a_snapshot_newer_than_the_substrate_is_not_trusted(
    tmp_path: Path, autojump_clock: Any
) -> None:
    env = Env(tmp_path, CONFIG, SMALL_INDEX)
    await env.open()
    await env.say(LINES[0])
    await env.mem.snapshot()
    await env.sub.aclose()
    env.substrate = None
    (tmp_path / "substrate").rename(tmp_path / "elsewhere")  # a different, empty substrate
    memory = await env.open()
    assert len(memory.working) == 0 and len(memory.longterm) == 0


async def test_fade_events_alone_restore_every_faded_record(
    env: Env, autojump_clock: Any
) -> None:
    faded = {rid: s for rid, s in state_of(env.mem).items() if s[1] > 0}
    for path in snapshot_files(env.mem.directory):
        path.unlink()
    env.perceive = None  # no routing: only the fade events are replayed
    await env.restart(snapshot=False)
    after = state_of(env.mem)
    assert {rid: after[rid] for rid in faded} == faded


async def test_a_revived_cue_stays_in_working_after_a_crash(env: Env, autojump_clock: Any) -> None:
    record = next(r for r in env.mem.longterm.records() if r.rung == 3)
    now = env.clock.now()
    env.mem.longterm.remove(record.record_id)  # what the rehydration scope does
    revived = dataclasses.replace(record, rung=1, text="Caroline: revived text", tokens=5,
                                  created=now, last_referenced=now,
                                  references=record.references + 1)
    await env.mem.add_record(revived)
    before = state_of(env.mem)
    await env.restart(snapshot=False)
    assert where(env.mem, record.record_id) == ("working", 1)
    assert_same(before, state_of(env.mem))


async def test_warm_up_brings_the_newest_long_term_records_back(
    env: Env, autojump_clock: Any
) -> None:
    newest = [r.record_id for r in env.mem.longterm.newest(2)]
    revived = await env.mem.warm_up(2, 1)
    assert [r.record_id for r in revived] == newest
    for record in revived:
        assert where(env.mem, record.record_id) == ("working", 1)
        assert record.created == env.clock.now()  # fresh tracking
        events = [await env.sub.get(e) for e in record.entry_ids]
        assert record.text == rehydrate_text(events, 1, tokenizer=env.tokenizer,
                                             config=env.memory_config)
    before = state_of(env.mem)
    await env.restart(snapshot=False)
    assert_same(before, state_of(env.mem))


async def test_snapshot_writes_are_atomic_and_leave_one_generation(
    env: Env, autojump_clock: Any
) -> None:
    await env.mem.snapshot()
    (env.mem.directory / (META_NAME + ".tmp")).write_bytes(b"half-written")
    (env.mem.directory / "longterm-dead.faiss.tmp").write_bytes(b"half-written")
    await env.mem.snapshot()
    names = sorted(p.name for p in env.mem.directory.iterdir())
    assert len(names) == 2 and META_NAME in names  # metadata + the index it names
    before = state_of(env.mem)
    await env.restart(snapshot=False)
    assert_same(before, state_of(env.mem))
