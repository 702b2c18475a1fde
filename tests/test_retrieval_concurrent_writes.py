"""Recall while many tasks observe and the fade runs: no error, and nothing acknowledged lost.

Eight observers append 2,000 distinct turns while four recallers query and every agent's fade
coroutine demotes, merges and moves records between tiers (small budgets, a short tick,
virtual time). Every recall must succeed, and afterwards every acknowledged event must be
found by its exact text.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import trio

from solace import TrioClock, open_runtime
from solace.config import AgentConfig, Config, MemoryConfig, ModelsConfig, SubstrateConfig

OBSERVERS = 8
RECALLERS = 4
EVENTS_PER_OBSERVER = 250  # 2,000 events in all
SYLLABLES = ["ka", "lo", "mi", "ru", "te", "vo", "zi", "pa", "ne", "sho", "gu", "fa", "di", "wen"]


def churn_config() -> Config:
    small = AgentConfig(budget_tokens=200, tick_seconds=1.0, age_scale_hours=0.05,
                        longterm_summary_hours=0.1)
    return Config(
        models=ModelsConfig(embedder="hashing", llm_backend="none"),
        substrate=SubstrateConfig(fsync="never"),
        memory=MemoryConfig(episode_min_similarity=-1.0, warmup_records=0),
        agents={"Main": small, "Supervisor": small},
    )


def turns(seed: int = 13, *, observers: int = OBSERVERS,
          per_observer: int = EVENTS_PER_OBSERVER) -> list[list[str]]:
    """Distinct turns per observer: each carries two made-up words no other turn has."""
    rng = random.Random(seed)
    seen: set[str] = set()

    def word() -> str:
        while True:
            w = "".join(rng.choice(SYLLABLES) for _ in range(4))
            if w not in seen:
                seen.add(w)
                return w

    return [[f"The parcel {word()} went to {word()} by boat." for _ in range(per_observer)]
            for _ in range(observers)]


async def run_concurrently(rt: Any, lines: list[list[str]]
                           ) -> tuple[dict[int, str], int, list[Exception]]:
    """Observers and recallers at once; returns (acknowledged ids -> text, recalls, errors)."""
    acknowledged: dict[int, str] = {}
    errors: list[Exception] = []
    recalls = 0
    done = trio.Event()
    main = rt.agent("Main")

    async def observe(o: int) -> None:
        for text in lines[o]:
            eid = await main.observe(text, speaker=f"Courier{o}")
            acknowledged[eid] = text
            await trio.sleep(0.05)

    async def recall(r: int) -> None:
        nonlocal recalls
        rng = random.Random(r)
        while not done.is_set():
            query = rng.choice(lines[rng.randrange(OBSERVERS)])
            try:
                await rt.agent(("Main", "Supervisor")[r % 2]).recall(query, k=5)
            except Exception as exc:  # collected: the assertion names each one
                errors.append(exc)
            recalls += 1
            await trio.sleep(0.02)  # paced in virtual time, as a client would be

    async with trio.open_nursery() as recallers:
        for r in range(RECALLERS):
            recallers.start_soon(recall, r)
        async with trio.open_nursery() as observers:
            for o in range(OBSERVERS):
                observers.start_soon(observe, o)
        done.set()
    return acknowledged, recalls, errors


async def test_recall_under_concurrent_observers_raises_nothing_and_loses_nothing(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with open_runtime(tmp_path, churn_config(), clock=TrioClock()) as rt:
        acknowledged, recalls, errors = await run_concurrently(rt, turns())
        memory = rt.memories["Main"]
        assert len(acknowledged) == OBSERVERS * EVENTS_PER_OBSERVER
        assert recalls >= 100
        assert memory.counters.rounds > 0 and len(memory.longterm) > 0  # the fade did run
        assert errors == []
        await rt.settle()
        main = rt.agent("Main")
        missing = []
        for eid, text in acknowledged.items():
            hits = await main.recall(text, k=5, read_through=False)
            if not any(eid in hit.entry_ids for hit in hits):
                missing.append((eid, text))
        assert missing == []
