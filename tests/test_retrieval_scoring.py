"""The composite score and the merge order, as pure functions over arrays."""

from __future__ import annotations

import numpy as np
import pytest

from solace.config import RetrievalWeights
from solace.memory.retrieval import (
    composite_parts,
    rank_order,
    recency_scores,
    select,
    tag_match_scores,
)


def test_recency_halves_every_half_life_and_future_counts_as_new() -> None:
    now = 1_000_000.0
    scores = recency_scores(np.array([now, now - 72 * 3600, now - 144 * 3600, now + 60]), now, 72)
    assert scores == pytest.approx([1.0, 0.5, 0.25, 1.0])


def test_tag_match_is_the_share_of_query_tags_carried() -> None:
    scores = tag_match_scores([("joy", "pride"), ("fear",), ()], ["Joy", "fear"])
    assert scores.tolist() == [0.5, 0.5, 0.0]
    assert tag_match_scores([("joy",)], []).tolist() == [0.0]


def test_parts_are_weighted_and_sum_to_the_score() -> None:
    weights = RetrievalWeights(relevance=1.0, lexical=0.5, recency=0.2, emotion=0.1, tags=0.4)
    parts = composite_parts(
        np.array([0.8]), np.array([0.6]), np.array([0.5]), np.array([1.0]), np.array([1.0]),
        weights,
    )
    assert parts[0].tolist() == pytest.approx([0.8, 0.3, 0.1, 0.1, 0.4])
    assert composite_parts(*(np.zeros(0),) * 5, weights).shape == (0, 5)


def test_merge_order_is_score_then_working_first_then_newer_then_id() -> None:
    totals = np.array([0.5, 0.9, 0.5, 0.5, 0.5])
    longterm = np.array([True, True, False, True, True])
    event_ts = np.array([10.0, 0.0, 5.0, 20.0, 20.0])
    ids = [1, 2, 3, 5, 4]
    assert rank_order(totals, longterm, event_ts, ids).tolist() == [1, 2, 4, 3, 0]


def test_select_never_injects_an_event_twice_but_lets_detail_follow_a_summary() -> None:
    entry_ids = [(1, 2), (2,), (3,), (1, 2, 3), (4,), (2,), (3, 4)]
    exact = [len(e) == 1 for e in entry_ids]
    # (2,) is detail under the summary (1, 2): kept; the second (2,) is a repeat: skipped;
    # (1, 2, 3) and (3, 4) only cover events already covered: skipped.
    assert select(np.arange(7), entry_ids.__getitem__, exact.__getitem__, k=10) == [0, 1, 2, 4]
    assert select(np.arange(7), entry_ids.__getitem__, exact.__getitem__, k=2) == [0, 1]


def test_select_fills_k_past_an_unkept_candidate_whose_events_count_as_carried() -> None:
    entry_ids = [(1,), (2,), (2,), (3,), (4,)]
    exact = [True] * 5
    asked: list[int] = []

    def keep(i: int) -> bool:  # candidate 1 restates candidate 0
        asked.append(i)
        return i != 1

    assert select(np.arange(5), entry_ids.__getitem__, exact.__getitem__, k=3,
                  keep=keep) == [0, 3, 4]
    # Not asked about 2: event 2 was carried by the restatement it did not keep.
    assert asked == [0, 1, 3, 4]


def test_a_summary_of_several_events_keeps_the_summary_share_of_its_score() -> None:
    weights = RetrievalWeights(relevance=1.0, lexical=1.0, recency=0.0, emotion=0.0, tags=0.0,
                               summary=0.8)
    ones = np.ones(2)
    parts = composite_parts(ones, ones, ones, ones, ones, weights, np.array([True, False]))
    assert parts.sum(axis=1).tolist() == pytest.approx([2.0, 1.6])
    assert composite_parts(ones, ones, ones, ones, ones, weights).sum(axis=1).tolist() == \
        pytest.approx([2.0, 2.0])


def test_the_summary_share_must_be_a_share() -> None:
    with pytest.raises(ValueError, match="summary"):
        RetrievalWeights(summary=1.5)
