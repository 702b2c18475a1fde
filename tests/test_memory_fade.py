"""The fade score and the planner: pure, vectorised, and faithful to the seed's formula."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solace.config import FadeWeights
from solace.memory.fade import (
    FadeColumns,
    fade_score,
    plan_round,
    size_factor,
    tag_boost,
    token_pressure,
)

NOW = 1_700_000_000.0
HOUR = 3600.0
W = FadeWeights()


def columns(n: int, **overrides: np.ndarray) -> FadeColumns:
    base: dict[str, np.ndarray] = dict(
        record_id=np.arange(1, n + 1, dtype=np.int64),
        rung=np.zeros(n, dtype=np.int8),
        tokens=np.full(n, 30, dtype=np.int64),
        created=np.full(n, NOW),
        last_referenced=np.zeros(n),
        references=np.zeros(n),
        emotional_weight=np.zeros(n),
        n_tags=np.zeros(n),
    )
    base.update(overrides)
    return FadeColumns(**base)


def score(cols: FadeColumns, *, now: float = NOW, total: float = 0.0, budget: float = 1000.0,
          weights: FadeWeights = W) -> np.ndarray:
    return fade_score(cols, now=now, total_tokens=total, budget_tokens=budget, weights=weights,
                      age_scale_hours=24.0)


def test_the_score_is_the_seed_formula_term_by_term() -> None:
    cols = columns(
        1, created=np.array([NOW - 36 * HOUR]), references=np.array([3.0]),
        last_referenced=np.array([NOW]), emotional_weight=np.array([0.4]),
        n_tags=np.array([2.0]),
    )
    weights = FadeWeights(age=1.0, pressure=2.0, freq=0.5, emo=1.5, tags=0.25)
    expected = (1.5 * 1.0 + (800 / 1000) ** 4 * 1.0 * 2.0 - np.log1p(3) * 0.5
                - 0.4 * 1.5 - 0.75 * 0.25)
    got = score(cols, total=800, weights=weights)
    assert got[0] == pytest.approx(expected)


def test_token_pressure_rises_as_the_tier_nears_its_budget() -> None:
    values = [token_pressure(t, 1000) for t in (0, 500, 800, 900, 1000, 1500)]
    assert values == sorted(values)
    assert values[1] < 0.1 and values[2] == pytest.approx(0.4096) and values[4] == 1.0
    assert values[5] == 1.0  # saturates: the planner's cover handles any excess
    with pytest.raises(ValueError, match="budget_tokens must be > 0, got 0"):
        token_pressure(10, 0)


def test_references_emotion_and_tags_each_lower_the_score() -> None:
    base = score(columns(1))[0]
    assert score(columns(1, references=np.array([2.0]), last_referenced=np.array([NOW])))[0] < base
    assert score(columns(1, emotional_weight=np.array([0.5])))[0] < base
    assert score(columns(1, n_tags=np.array([1.0])))[0] < base


def test_references_count_less_as_they_age_and_tags_saturate() -> None:
    fresh = columns(1, references=np.array([4.0]), last_referenced=np.array([NOW]))
    stale = columns(1, references=np.array([4.0]), last_referenced=np.array([NOW - 72 * HOUR]))
    assert score(fresh)[0] < score(stale)[0]
    boosts = tag_boost(np.arange(6, dtype=np.float64))
    assert np.all(np.diff(boosts) > 0) and boosts[-1] < 1.0


def test_bigger_records_feel_more_pressure() -> None:
    factors = size_factor(np.array([10, 40, 160], dtype=np.int64))
    assert factors[0] < factors[1] < factors[2]
    assert factors.min() >= 0.25 and factors.max() <= 4.0


def test_ageing_demotes_a_record_once_per_rung_threshold() -> None:
    cols = columns(3, rung=np.array([0, 1, 2], dtype=np.int8),
                   created=np.full(3, NOW - 25 * HOUR))  # age 1.04: past rung 0's threshold
    rows = plan_round(score(cols), cols, threshold=1.0, total_tokens=90, budget_tokens=1000)
    assert rows.tolist() == [0]


def test_pressure_takes_the_most_faded_records_until_the_excess_is_covered() -> None:
    n = 10
    cols = columns(n, created=NOW - np.arange(n) * HOUR)  # record n is the oldest
    total = int(cols.tokens.sum())  # 300
    rows = plan_round(score(cols, total=total, budget=250), cols, threshold=10.0,
                      total_tokens=total, budget_tokens=250)
    # 50 tokens over; a rung-0 demotion frees ~70% of 30 = 21 tokens: three records.
    assert cols.record_id[rows].tolist() == [10, 9, 8]


def test_ties_are_broken_by_record_id_whatever_the_row_order() -> None:
    cols = columns(40, record_id=np.arange(40, 0, -1, dtype=np.int64))
    total = int(cols.tokens.sum())
    rows = plan_round(score(cols, total=total, budget=total - 25), cols, threshold=10.0,
                      total_tokens=total, budget_tokens=total - 25)
    assert cols.record_id[rows].tolist() == [1, 2]


def test_excluded_rows_are_never_planned() -> None:
    cols = columns(5, created=np.full(5, NOW - 30 * HOUR))
    exclude = np.array([True, False, True, False, False])
    rows = plan_round(score(cols), cols, threshold=1.0, total_tokens=150, budget_tokens=1000,
                      exclude=exclude)
    assert sorted(rows.tolist()) == [1, 3, 4]


@settings(max_examples=60, deadline=None)
@given(
    tokens=st.lists(st.integers(1, 400), min_size=1, max_size=300),
    budget=st.integers(1, 5000),
    ages=st.lists(st.floats(0, 200), min_size=1, max_size=300),
)
def test_a_round_plans_each_row_at_most_once_and_covers_the_expected_excess(
    tokens: list[int], budget: int, ages: list[float]
) -> None:
    n = min(len(tokens), len(ages))
    cols = columns(n, tokens=np.array(tokens[:n], dtype=np.int64),
                   created=NOW - np.array(ages[:n]) * HOUR,
                   rung=(np.arange(n) % 3).astype(np.int8))
    total = int(cols.tokens.sum())
    rows = plan_round(score(cols, total=total, budget=budget), cols, threshold=1.0,
                      total_tokens=total, budget_tokens=budget)
    assert len(set(rows.tolist())) == len(rows)
    keep = np.array([0.3, 0.33, 0.0])[cols.rung]
    expected_after = total - float((cols.tokens * (1 - keep))[rows].sum())
    if expected_after > budget:  # only when every row was taken
        assert len(rows) == n
