"""Fact recall's recency band (solace.facts.ranking): scores closer than the band are
not told apart, so at the top_k boundary the newer fact is kept; the best fact and
those clearly above the boundary are kept whatever their age."""

from __future__ import annotations

import numpy as np

from solace.config.schema import StoreConfig
from solace.facts.model import Fact, FactStatus, WriteClass
from solace.facts.ranking import score_facts

T0 = 1_700_000_000.0
DAY = 86_400.0


def fact(fact_id: str, at: float) -> Fact:
    return Fact(fact_id=fact_id, memory_id="m", store="default", text=f"fact {fact_id}",
                importance=0.5, status=FactStatus.LIVE, created=at, last_confirmed=at,
                mentions=1, source="remember", write_class=WriteClass.ADD, reason="")


def recall(cosines: list[float], ages_days: list[float], *, k: int, band: float) -> list[str]:
    """Ids recalled for facts whose cosine to the query is given (no lexical part)."""
    facts = [fact(chr(ord("a") + i), T0 - age * DAY) for i, age in enumerate(ages_days)]
    query = np.array([1.0, 0.0], dtype=np.float32)
    vectors = np.array([[c, float(np.sqrt(1 - c * c))] for c in cosines], dtype=np.float32)
    scored = score_facts("q", query, facts, vectors, now=T0, store=StoreConfig(min_score=0.1),
                         lexical_weight=0.0, k=k, recency_band=band)
    return [s.fact.fact_id for s in scored]


def test_a_newer_fact_just_below_the_last_slot_takes_it() -> None:
    # d (newest) scores 0.03 under c, the last one kept by score alone
    got = recall([0.76, 0.64, 0.53, 0.50], [90, 50, 45, 0], k=3, band=0.05)
    assert got == ["a", "b", "d"]


def test_without_the_band_recall_is_plain_top_k() -> None:
    assert recall([0.76, 0.64, 0.53, 0.50], [90, 50, 45, 0], k=3, band=0.0) == ["a", "b", "c"]


def test_a_newer_fact_outside_the_band_stays_out() -> None:
    assert recall([0.76, 0.64, 0.53, 0.40], [90, 50, 45, 0], k=3, band=0.05) == ["a", "b", "c"]


def test_the_best_fact_and_those_clearly_above_the_boundary_are_kept_whatever_their_age() -> None:
    # all four are within the band of the last slot's score; the best stays, then newest
    assert recall([0.60, 0.59, 0.58, 0.57], [90, 60, 30, 0], k=2, band=0.05) == ["a", "d"]
    assert recall([0.60, 0.59, 0.58, 0.57], [90, 60, 30, 0], k=1, band=0.05) == ["a"]
