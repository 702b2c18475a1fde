"""Store policies: eviction at max_entries, half-life decay, min_score, top_k
(issue 9 §2, §5, §8)."""

from __future__ import annotations

from pathlib import Path

import pytest

from solace.facts import FactStatus
from solace.facts.ranking import decay
from tests.facts_fixtures import ManualClock, config_with, decrypted_dump, fact_memory

HOUR = 3600.0
FACTS = [  # text, importance; written an hour apart in this order
    ("Alice lives in Paris.", 0.9),
    ("Bob plays the cello.", 0.1),
    ("Carol owns a red bicycle.", 0.5),
    ("Dan works at Initech.", 0.2),
]


async def _fill(fm, clock: ManualClock) -> dict[str, str]:  # type: ignore[no-untyped-def]
    ids = {}
    for text, importance in FACTS:
        r = await fm.remember("m", text, importance=importance)
        ids[text] = r.fact.fact_id
        clock.t += HOUR
    return ids


@pytest.mark.parametrize("policy,evicted", [
    ("oldest", ["Alice lives in Paris."]),
    ("lowest-importance", ["Bob plays the cello."]),
    ("oldest-lowest-importance", ["Bob plays the cello."]),
])
async def test_a_full_memory_evicts_by_its_policy(tmp_path: Path, policy: str,
                                                  evicted: list[str]) -> None:
    clock = ManualClock()
    config = config_with(max_entries=3, eviction_policy=policy)
    async with fact_memory(tmp_path, config, clock) as fm:
        await _fill(fm, clock)
        live = [f.text for f in fm.facts("m")]
        assert len(live) == 3
        assert [t for t, _ in FACTS if t not in live] == evicted
        gone = [f for f in fm.facts("m", include_history=True) if f.text in evicted]
        assert [f.status for f in gone] == [FactStatus.EVICTED]
        assert fm.counters["evicted"] == 1
        assert "Dan works at Initech." in live  # the newest never leaves first


async def test_oldest_lowest_importance_spares_an_old_important_fact(tmp_path: Path) -> None:
    clock = ManualClock()
    async with fact_memory(tmp_path, config_with(max_entries=2,
                                                 eviction_policy="oldest-lowest-importance"),
                           clock) as fm:
        await _fill(fm, clock)
        assert "Alice lives in Paris." in [f.text for f in fm.facts("m")]


async def test_evicted_facts_leave_recall_but_their_events_stay(tmp_path: Path) -> None:
    clock = ManualClock()
    async with fact_memory(tmp_path, config_with(max_entries=1, eviction_policy="oldest"),
                           clock) as fm:
        await _fill(fm, clock)
        block = await fm.recall("Where does Alice live?", "m", k=5)
        assert "Alice" not in block.text
    assert decrypted_dump(tmp_path).count('<attr name="op">write</attr>') == len(FACTS)


def test_decay_halves_at_the_half_life_and_evergreen_never_decays() -> None:
    assert decay(24 * HOUR, 24.0) == pytest.approx(0.5)
    assert decay(48 * HOUR, 24.0) == pytest.approx(0.25)
    assert decay(10_000 * HOUR, 0.0) == 1.0


async def test_recall_scores_decay_with_age_since_last_confirmation(tmp_path: Path) -> None:
    clock = ManualClock()
    config = config_with(time_decay_half_life_hours=24.0, min_score=0.0)
    async with fact_memory(tmp_path, config, clock) as fm:
        await fm.remember("m", "Alice lives in Paris.")
        fresh = (await fm.recall("Where does Alice live?", "m")).facts[0]
        clock.t += 24 * HOUR
        day_old = (await fm.recall("Where does Alice live?", "m")).facts[0]
        assert day_old.decay == pytest.approx(0.5)
        assert day_old.score == pytest.approx(fresh.score / 2)
        await fm.remember("m", "Alice lives in Paris.")  # a NOOP confirms it again
        confirmed = (await fm.recall("Where does Alice live?", "m")).facts[0]
        assert confirmed.decay == pytest.approx(1.0)


async def test_min_score_keeps_unrelated_facts_out_of_recall(tmp_path: Path) -> None:
    async with fact_memory(tmp_path, config_with(min_score=0.3)) as fm:
        await fm.remember("m", "Alice lives in Paris.")
        await fm.remember("m", "Bob plays the cello.")
        block = await fm.recall("Where does Alice live?", "m")
        assert [s.fact.text for s in block.facts] == ["Alice lives in Paris."]
        nothing = await fm.recall("quantum chromodynamics lattice", "m")
        assert nothing.text == "" and nothing.tokens == 0


async def test_top_k_bounds_the_recall_block_and_k_overrides_it(tmp_path: Path) -> None:
    async with fact_memory(tmp_path, config_with(top_k=2, min_score=0.0)) as fm:
        for text, _ in FACTS:
            await fm.remember("m", text)
        assert len((await fm.recall("Alice Bob Carol Dan", "m")).facts) == 2
        assert len((await fm.recall("Alice Bob Carol Dan", "m", k=4)).facts) == 4


async def test_the_recall_block_carries_its_token_count(tmp_path: Path) -> None:
    async with fact_memory(tmp_path) as fm:
        await fm.remember("m", "Alice lives in Paris.")
        block = await fm.recall("Where does Alice live?", "m")
        assert block.text.startswith("Remembered facts (memory m):")
        assert block.tokens == fm._tokenizer.count(block.text) > 0


async def test_memory_ids_are_isolated(tmp_path: Path) -> None:
    async with fact_memory(tmp_path, config_with(min_score=0.0)) as fm:
        await fm.remember("cust-a", "Alice lives in Paris.")
        await fm.remember("cust-b", "Bob lives in Rome.")
        block = await fm.recall("Where does she live?", "cust-b")
        assert "Paris" not in block.text and "Rome" in block.text
        assert fm.memory_ids() == ["cust-a", "cust-b"]


async def test_a_fact_stated_earlier_keeps_its_date_for_decay_and_recall(
        tmp_path: Path) -> None:
    clock = ManualClock()
    config = config_with(time_decay_half_life_hours=24.0, min_score=0.0)
    stated = clock.t - 48 * HOUR
    async with fact_memory(tmp_path, config, clock) as fm:
        r = await fm.remember("m", "Alice lives in Paris.", as_of=stated)
        assert r.fact.created == r.fact.last_confirmed == stated
        hit = (await fm.recall("Where does Alice live?", "m")).facts[0]
        assert hit.decay == pytest.approx(0.25)
    async with fact_memory(tmp_path, config, clock) as fm:  # the date is in the event
        assert fm.facts("m")[0].created == stated


async def test_a_bad_as_of_is_refused_naming_it(tmp_path: Path) -> None:
    from solace.facts import InvalidFactError

    async with fact_memory(tmp_path) as fm:
        with pytest.raises(InvalidFactError, match="as_of"):
            await fm.remember("m", "Alice lives in Paris.", as_of=float("nan"))
        assert fm.memory_ids() == []
