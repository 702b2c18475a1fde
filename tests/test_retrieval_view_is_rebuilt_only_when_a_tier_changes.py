"""A query's view of the tiers (and the indexes over it) is reused while neither tier
has changed, and taken again as soon as one has: no per-query rebuild of what did not
move, never a stale answer. The top-k selection used on the units is exactly what a
full sort would give, ties by id."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import numpy as np
from runtime_support import START, fill

from solace import ReplayClock, open_runtime
from solace.config import AgentConfig, Config, MemoryConfig, ModelsConfig, SubstrateConfig
from solace.memory.unit_candidates import top_ids


def config() -> Config:
    small = AgentConfig(budget_tokens=40)
    return Config(models=ModelsConfig(embedder="hashing", llm_backend="none"),
                  substrate=SubstrateConfig(fsync="never"),
                  memory=MemoryConfig(episode_min_similarity=-1.0),
                  agents={"Main": small, "Supervisor": small})


async def test_the_view_is_reused_until_a_tier_changes_and_then_sees_the_change(
        tmp_path: Path) -> None:
    clock = ReplayClock(START)
    async with open_runtime(tmp_path, config(), clock=clock) as rt:
        await fill(rt)
        retriever = rt.agent("Main").retriever
        first = await retriever.refresh()
        assert await retriever.refresh() is first  # nothing moved: the same view
        await rt.agent("Main").recall("pottery", k=5, read_through=False)
        assert await retriever.refresh() is first  # a recall moves nothing either
        eid = await rt.observe("Caroline bought a kayak called Zephyr.", author="Caroline",
                               at=START + timedelta(hours=2))
        second = await retriever.refresh()
        assert second is not first
        assert any(eid in r.entry_ids for r in second.records.values())
        hits = await rt.agent("Main").recall("kayak Zephyr", k=3, read_through=False)
        assert eid in hits[0].entry_ids


def test_top_ids_is_a_full_sort_by_score_then_id_cut_at_k() -> None:
    rng = np.random.default_rng(7)
    for n, k in [(0, 3), (5, 10), (50, 10), (500, 64), (64, 64)]:
        ids = rng.permutation(10 * n + 1)[:n].astype(np.int64)
        scores = rng.integers(0, 6, n).astype(np.float32) / 5  # many ties
        expected = sorted(range(n), key=lambda i: (-scores[i], ids[i]))[:k]
        assert top_ids(ids, scores, k) == [int(ids[i]) for i in expected]
