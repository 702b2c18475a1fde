"""The fade pipeline on one agent's memory, in virtual time (seed 002, issue §4-§5)."""

from __future__ import annotations

import random
import threading
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing
from test_memory_support import DAY, HOUR, LINES, Env, holder_of, where

from solace.config import AgentConfig, FadeWeights, MemoryConfig
from solace.memory.fading import BACKLOG_BUDGETS
from solace.memory.ladder import rehydrate_text

CONFIG = AgentConfig(budget_tokens=4000)
MEMORY = MemoryConfig()


@pytest.fixture
async def env(tmp_path: Path, autojump_clock: trio.testing.MockClock) -> Env:
    # Tests using it request autojump_clock too: pytest-trio takes the clock from the
    # test's own arguments.
    e = Env(tmp_path, CONFIG, MEMORY)
    await e.open()
    return e


# -------------------------------------------------- "Why the fade is gradual"


async def test_a_record_walks_0_1_2_3_as_it_ages(
    env: Env, autojump_clock: trio.testing.MockClock
) -> None:
    record = await env.say(LINES[0])
    rid = record.record_id
    steps = [
        (23 * HOUR, ("working", 0)),
        (24 * HOUR + 1, ("working", 1)),
        (48 * HOUR + 1, ("working", 2)),
        (72 * HOUR + 1, ("longterm", 2)),  # the summary moves: summary + embedding + tags
        (72 * HOUR + 167 * HOUR, ("longterm", 2)),
        (72 * HOUR + 168 * HOUR + 2, ("longterm", 3)),  # a week later: embedding + tags
    ]
    for at, expected in steps:
        await env.sleep_until(at)
        await env.mem.settle()
        assert where(env.mem, rid) == expected, at / HOUR
    final = env.mem.longterm.get(rid)
    assert final is not None and final.embedding is not None
    assert final.entry_ids == (rid,)


async def test_a_long_jump_in_time_still_visits_every_rung(
    env: Env, autojump_clock: trio.testing.MockClock
) -> None:
    rid = (await env.say(LINES[1])).record_id
    await env.sleep_until(30 * DAY)
    report = await env.mem.fade_step()
    events = [e for e in await env.fade_events() if e.attrs["record_id"] == str(rid)]
    steps = [(e.attrs["op"], e.attrs["tier"], int(e.attrs["rung"])) for e in events]
    assert steps == [("demote", "working", 1), ("demote", "working", 2),
                     ("to_longterm", "longterm", 2)]
    assert report.rounds == 3  # one rung per round, never two
    await env.sleep_until(30 * DAY + 169 * HOUR)
    await env.mem.settle()
    assert where(env.mem, rid) == ("longterm", 3)


# -------------------------------------------- "What decides when a record fades"


async def test_token_pressure_demotes_recent_records_when_over_budget(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    env = Env(tmp_path, AgentConfig(budget_tokens=80), MEMORY)
    await env.open()
    first = await env.say(LINES[0])
    await env.mem.settle()
    assert where(env.mem, first.record_id) == ("working", 0)  # under budget: untouched
    for line in LINES[1:]:
        await env.say(line)
    assert env.mem.working.total_tokens > 80
    await env.mem.settle()  # no virtual time has passed: every record is brand new
    assert env.mem.working.total_tokens <= 80
    assert any(r.rung > 0 for r in env.mem.working.records()) or len(env.mem.longterm) > 0
    assert env.mem.counters.demotions[1] > 0


async def test_ingest_waits_for_a_fade_that_has_fallen_more_than_two_budgets_behind(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    # No fade coroutine runs in an Env and nothing here settles: only ingest's
    # back-pressure can fade, so without it working would hold every line.
    env = Env(tmp_path, AgentConfig(budget_tokens=60), MEMORY)
    await env.open()
    said = 0
    for i in range(40):
        record = await env.say(LINES[i % len(LINES)], speaker=("Caroline", "Melanie")[i % 2])
        said += record.tokens
        assert env.mem.working.total_tokens <= BACKLOG_BUDGETS * 60 + record.tokens
    assert said > 4 * BACKLOG_BUDGETS * 60
    assert env.mem.counters.demotions[1] > 0
    for entry in env.spoken:
        assert len(holder_of(env.mem, entry)) == 1, entry  # nothing lost on the way


PROTECTIONS = ["referenced", "emotional", "tagged"]


async def _equal_pair(env: Env, protection: str) -> tuple[int, int]:
    """Two otherwise equal records an hour apart (no episode merge), one protected."""
    plain = await env.say(LINES[2], speaker="Melanie")
    await env.sleep_until(HOUR)
    kwargs: dict[str, dict[str, Any]] = {
        "emotional": {"emo": 0.9}, "tagged": {"tags": ("family", "promise")}}
    kept = await env.say(LINES[3], speaker="Caroline", **kwargs.get(protection, {}))
    if protection == "referenced":
        for _ in range(3):
            env.mem.touch(kept.record_id, env.clock.now())
    return plain.record_id, kept.record_id


@pytest.mark.parametrize("protection", PROTECTIONS)
async def test_a_protected_record_outlives_an_otherwise_equal_one_as_it_ages(
    env: Env, autojump_clock: trio.testing.MockClock, protection: str
) -> None:
    plain, kept = await _equal_pair(env, protection)
    await env.sleep_until(25 * HOUR + 60)  # both past one age scale
    await env.mem.settle()
    assert where(env.mem, plain) == ("working", 1)
    assert where(env.mem, kept) == ("working", 0)


@pytest.mark.parametrize("protection", PROTECTIONS)
async def test_a_protected_record_outlives_an_otherwise_equal_one_under_pressure(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, protection: str
) -> None:
    env = Env(tmp_path, AgentConfig(budget_tokens=4000), MEMORY)
    await env.open()
    plain, kept = await _equal_pair(env, protection)
    records = [env.mem.working.get(plain), env.mem.working.get(kept)]
    total = sum(r.tokens for r in records if r is not None)
    env.mem.tune(budget_tokens=total - 1)  # one of the two must fade
    await env.mem.settle()
    assert where(env.mem, plain) != ("working", 0)  # as far as it takes to make room
    assert where(env.mem, kept) == ("working", 0)


async def test_mood_weights_keep_emotional_records_sharp_for_longer(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    mood = AgentConfig(budget_tokens=2000, fade=FadeWeights(emo=3.0), age_scale_hours=48.0)
    env = Env(tmp_path, mood, MEMORY)
    await env.open("Mood")
    felt = await env.say("I was terrified and then so relieved when Mel called.", emo=0.8)
    await env.sleep_until(10 * DAY)
    await env.mem.settle()
    # age 5 scales - 3.0 * 0.8 = 2.6: past rung 1 and 2 thresholds (1, 2), not rung 3's (3).
    assert where(env.mem, felt.record_id) == ("working", 2)


# ----------------------------------------------------------- invariants


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_after_every_fade_step_working_is_within_budget_and_nothing_is_lost(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, seed: int
) -> None:
    rng = random.Random(seed)
    env = Env(tmp_path, AgentConfig(budget_tokens=300, age_scale_hours=6.0), MEMORY)
    await env.open()
    at = 0.0
    for _ in range(40):
        action = rng.random()
        if action < 0.6:
            text = " ".join(rng.sample(LINES, rng.randint(1, 3)))
            await env.say(text, speaker=rng.choice(["Caroline", "Melanie"]),
                          emo=rng.choice([0.0, 0.0, 0.7]), tags=rng.choice([(), ("work",)]))
        elif action < 0.75 and len(env.mem.working):
            env.mem.touch(rng.choice(env.mem.working.records()).record_id, env.clock.now())
        elif action < 0.85:
            env.mem.tune(budget_tokens=rng.choice([150, 300, 600]))
        at += rng.choice([60.0, 600.0, 3 * HOUR, DAY])
        await env.sleep_until(at)
        report = await env.mem.fade_step()
        assert report.within_budget
        assert env.mem.working.total_tokens <= env.mem.working.budget_tokens
        assert env.mem.working.total_tokens == sum(r.tokens for r in env.mem.working.records())
        for entry in env.spoken:
            assert len(holder_of(env.mem, entry)) == 1, entry  # exactly one record, one tier
    assert len(env.mem.longterm) > 0


async def test_every_record_at_every_rung_resolves_to_its_substrate_events(
    env: Env, autojump_clock: trio.testing.MockClock
) -> None:
    seen: set[tuple[str, int]] = set()
    checkpoints = [0.0, 25 * HOUR, 49 * HOUR, 73 * HOUR, 73 * HOUR + 169 * HOUR]
    for i, at in enumerate(checkpoints):
        await env.sleep_until(at)
        await env.say(LINES[i], speaker=["Caroline", "Melanie"][i % 2])
        await env.mem.settle()
        records = [("working", r) for r in env.mem.working.records()]
        records += [("longterm", r) for r in env.mem.longterm.records()]
        for tier, record in records:
            seen.add((tier, record.rung))
            events = [await env.sub.get(e) for e in record.entry_ids]
            assert all(e.kind == "message" for e in events)
            raw = rehydrate_text(events, 0, tokenizer=env.tokenizer)
            assert all(event.content in raw for event in events)
        assert sorted(e for _, r in records for e in r.entry_ids) == sorted(env.spoken)
    assert {("working", 0), ("working", 1), ("working", 2), ("longterm", 2),
            ("longterm", 3)} <= seen


async def test_ingesting_an_event_twice_is_refused(
    env: Env, autojump_clock: trio.testing.MockClock
) -> None:
    record = await env.say(LINES[0])
    event = await env.sub.get(record.record_id)
    with pytest.raises(ValueError, match="already has a record of event"):
        await env.mem.ingest(event, speaker="Caroline")


# -------------------------------------------------------- the coroutine


async def test_the_fade_coroutine_ages_records_on_its_own(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    env = Env(tmp_path, AgentConfig(budget_tokens=4000, tick_seconds=600.0), MEMORY)
    await env.open()
    async with trio.open_nursery() as nursery:
        await nursery.start(env.mem.run)
        rid = (await env.say(LINES[4])).record_id
        for _ in range(4 * 24):
            await trio.sleep(HOUR)
            # While a step waits on a worker thread the loop looks idle and the autojump
            # clock would race ahead; spinning keeps virtual time still until it is done.
            while env.mem.fading:
                await trio.sleep(0)
        assert where(env.mem, rid) == ("longterm", 2)
        assert env.mem.counters.passes > 4 * 24  # woken by its ticks (6 an hour), nothing else
        nursery.cancel_scope.cancel()


async def test_a_retune_wakes_the_fade_coroutine(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    env = Env(tmp_path, AgentConfig(budget_tokens=4000, tick_seconds=1e9), MEMORY)
    await env.open()
    async with trio.open_nursery() as nursery:
        await nursery.start(env.mem.run)
        for line in LINES:
            await env.say(line)
        env.mem.tune(budget_tokens=40)
        with trio.fail_after(1e6):  # long before the next tick: only the wake-up can do it
            while env.mem.working.total_tokens > 40:
                await trio.sleep(1)
        assert env.mem.config.budget_tokens == 40
        nursery.cancel_scope.cancel()


async def test_hyperfocus_budget_expansion_keeps_more_sharp(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    env = Env(tmp_path, AgentConfig(budget_tokens=50), MEMORY)
    await env.open("Supervisor")
    env.mem.tune(budget_tokens=2 * 50)  # what Supervisor.set_hyperfocus does
    for line in LINES[:5]:
        await env.say(line)
    await env.mem.settle()
    assert 50 < env.mem.working.total_tokens <= 100
    sharp_in_focus = env.mem.working.count_by_rung()[0]
    env.mem.tune(budget_tokens=50)  # leaving hyperfocus
    await env.mem.settle()
    assert env.mem.working.count_by_rung()[0] < sharp_in_focus
    assert env.mem.working.total_tokens <= 50


class GatedLadder:
    """The real ladder, held at the gate until the test opens it."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.stats = inner.stats
        self.entered = threading.Event()
        self.gate = threading.Event()

    def demote(self, records: Any, *, now: float, perspective: str = "whole") -> Any:
        self.entered.set()
        self.gate.wait(30)
        return self.inner.demote(records, now=now, perspective=perspective)


async def test_the_fade_never_blocks_the_agent(tmp_path: Path) -> None:
    env = Env(tmp_path, AgentConfig(budget_tokens=30), MEMORY)  # real time: real threads
    ladder = GatedLadder(env.ladder)
    env.ladder = ladder  # type: ignore[assignment]
    await env.open()
    for line in LINES[:3]:
        await env.say(line)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(env.mem.fade_step)
        while not ladder.entered.is_set():
            await trio.sleep(0.001)
        # Compression is stuck in its worker thread; the agent's own work goes on.
        with trio.fail_after(10):
            record = await env.say(LINES[5])
            env.mem.touch(record.record_id, env.clock.now())
            assert env.mem.stats()["working_records"] == 4
        assert env.mem.fading
        ladder.gate.set()
    await env.mem.settle()
    assert env.mem.working.total_tokens <= 30


# ------------------------------------------------------------ bad config


def test_bad_agent_config_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="budget_tokens must be > 0, got -5"):
        AgentConfig(budget_tokens=-5)
    with pytest.raises(ValueError, match="longterm_summary_hours must be > 0"):
        AgentConfig(longterm_summary_hours=0.0)
    with pytest.raises(ValueError, match="demote_threshold must be > 0"):
        AgentConfig(demote_threshold=-1.0)
    with pytest.raises(ValueError, match="emo must be >= 0"):
        FadeWeights(emo=-1.0)
    with pytest.raises(TypeError, match="boredom"):
        FadeWeights(boredom=1.0)  # type: ignore[call-arg]


async def test_a_bad_retune_is_refused_and_changes_nothing(
    env: Env, autojump_clock: trio.testing.MockClock
) -> None:
    with pytest.raises(ValueError, match="budget_tokens must be > 0, got -1"):
        env.mem.tune(budget_tokens=-1)
    with pytest.raises(TypeError, match="weights must be FadeWeights"):
        env.mem.tune(weights={"age": 1.0})  # type: ignore[arg-type]
    assert env.mem.config == CONFIG
    assert env.mem.working.budget_tokens == CONFIG.budget_tokens
