"""Recall scoring and eviction order: pure functions of facts, vectors and ``now``.

Recall (issue 9 §5): similarity is the blend of MiniLM cosine and word overlap with
the query; it is multiplied by a half-life decay on the age since the fact was last
confirmed (none when the store's half-life is 0); facts under ``min_score`` are
dropped; the best ``top_k`` are kept, ties broken by the newer confirmation, then
the fact id, so the order is deterministic.

Scores closer than ``recency_band`` are not told apart: at the ``top_k`` boundary
the slots go to the newer of the facts within the band of the last one kept (the
best fact is always kept). A knowledge update the write-time classification could
not order ("James has two dogs", months later "James introduced three pets ... Max,
Daisy and the new pup Ned") usually scores a little below the older, more literal
phrasing; without the band the newer fact falls just outside the block and recall
shows only the old value.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from solace.clock import utc_day
from solace.config.schema import StoreConfig
from solace.facts.classify import lexical_overlap
from solace.facts.model import Fact, FactStatus, RecallBlock, ScoredFact
from solace.memory.lexical import terms

__all__ = ["decay", "evict_order", "render_block", "score_facts"]


def decay(age_seconds: float, half_life_hours: float) -> float:
    """``0.5 ** (age / half-life)``; 1.0 for an evergreen store (half-life 0)."""
    if half_life_hours <= 0:
        return 1.0
    return math.pow(0.5, max(0.0, age_seconds) / (half_life_hours * 3600.0))


def score_facts(query: str, query_vector: np.ndarray, facts: Sequence[Fact],
                vectors: np.ndarray, *, now: float, store: StoreConfig, lexical_weight: float,
                k: int | None = None, recency_band: float = 0.0) -> list[ScoredFact]:
    """The recalled facts, best first (at most ``k`` or the store's ``top_k``).

    The best fact, and any scoring more than ``recency_band`` above the last one
    kept, are kept; the remaining slots go to the facts within ``recency_band`` of
    that score, newest confirmation first (:func:`_fill_band`).
    """
    if not facts:
        return []
    q_terms = terms(query)
    cosines = vectors @ query_vector
    scored = []
    for fact, cos in zip(facts, cosines, strict=True):
        sim = ((1.0 - lexical_weight) * max(0.0, float(cos))
               + lexical_weight * lexical_overlap(q_terms, terms(fact.text)))
        d = decay(now - fact.last_confirmed, store.time_decay_half_life_hours)
        score = sim * d
        if score >= store.min_score:
            scored.append(ScoredFact(fact, sim, d, score))
    scored.sort(key=lambda s: (-s.score, -s.fact.last_confirmed, s.fact.fact_id))
    return _fill_band(scored, k if k is not None else store.top_k, recency_band)


def _fill_band(ranked: list[ScoredFact], k: int, band: float) -> list[ScoredFact]:
    """The ``k`` kept of ``ranked`` (best first): the best one and those clearly above
    the ``k``-th score, then the newest of those within ``band`` of it; best first."""
    if len(ranked) <= k or k <= 1 or band <= 0.0:
        return ranked[:k]
    edge = ranked[k - 1].score
    sure = ranked[:1] + [s for s in ranked[1:] if s.score > edge + band]
    near = [s for s in ranked[1:] if edge - band <= s.score <= edge + band]
    near.sort(key=lambda s: (-s.fact.last_confirmed, -s.score, s.fact.fact_id))
    kept = sure + near[: k - len(sure)]
    kept.sort(key=lambda s: (-s.score, -s.fact.last_confirmed, s.fact.fact_id))
    return kept


def render_block(memory_id: str, store: str, scored: Sequence[ScoredFact],
                 count_tokens: Callable[[str], int]) -> RecallBlock:
    """The hidden-context block recall puts in front of the model, with its token count.

    One line per fact with the day it was last confirmed; a conflicting fact carries
    the flag and the ids it contradicts, so the model asks instead of choosing.
    """
    if not scored:
        return RecallBlock(memory_id, store, (), "", 0)
    lines = [f"Remembered facts (memory {memory_id}):"]
    for s in scored:
        f = s.fact
        line = f"- {f.text} (as of {utc_day(f.last_confirmed)})"
        if f.status is FactStatus.CONFLICTING:
            line += f" [CONFLICT with {', '.join(f.conflicts_with) or 'another fact'}: confirm]"
        lines.append(line)
    text = "\n".join(lines)
    return RecallBlock(memory_id, store, tuple(scored), text, count_tokens(text))


def evict_order(live: Sequence[Fact], policy: str) -> list[Fact]:
    """``live`` in the order a full memory lets them go, first to leave first.

    ``oldest``: least recently confirmed first. ``lowest-importance``: least important
    first, the older first among equals. ``oldest-lowest-importance``: the least
    important of the older half first, then the rest by age.
    """
    by_age = sorted(live, key=lambda f: (f.last_confirmed, f.created, f.fact_id))
    if policy == "oldest":
        return by_age
    if policy == "lowest-importance":
        return sorted(by_age, key=lambda f: f.importance)
    if policy == "oldest-lowest-importance":
        half = max(1, (len(by_age) + 1) // 2)
        older = sorted(by_age[:half], key=lambda f: f.importance)
        return older + by_age[half:]
    raise ValueError(f"unknown eviction_policy {policy!r}")
