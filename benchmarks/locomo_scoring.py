"""Scoring for the LoCoMo recall benchmark: pure functions on small inputs.

``benchmarks/locomo_recall.py`` runs the systems; this module says how a ranked list
of hits is scored, how turns are timed, and how two rankings are fused, so that the
rules can be tested on hand-made inputs (``tests/test_bench_locomo_*.py``).

Rules (issue 15, §1):

* A *fitted hit* is one that fits the token budget: hits are taken in rank order
  while their tokens add up to at most the budget; the first that does not fit ends
  the injection (:func:`within_tokens`).
* *Evidence credit* (the headline): an evidence turn counts when a fitted hit stands
  for that turn alone (one event, in any rung, compressed or not), or stands for it
  among other events and its text carries at least half of that turn's distinct
  content words (:func:`credited_turns`). A turn with no content words at all
  ("Yeah!") is carried by any hit that stands for it: half of nothing is nothing.
* *Per-event-id credit* (secondary, labelled ``id@``): a turn counts when any fitted
  hit stands for it, whatever its text (:func:`event_id_recall`). It over-credits a
  long episode summary that names a turn's id but none of its words.
* *Answer recall*: the share of the gold answer's distinct content words present in
  the fitted hits' text (:func:`answer_recall`).

Content words are :func:`solace.memory.lexical.content_words`: casefolded word
tokens minus the project's one stop-word list, unstemmed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from solace.memory.lexical import content_words

__all__ = [
    "READING_WPM",
    "RRF_K",
    "TOKEN_CUTS",
    "TYPING_WPM",
    "Injected",
    "Tally",
    "answer_recall",
    "carries",
    "credited_turns",
    "evidence_recall",
    "event_id_recall",
    "rrf_fuse",
    "score_question",
    "turn_times",
    "within_tokens",
    "word_set",
]

# Turn spacing: a turn is typed after the previous one is read. Rates fixed a priori
# from commonly cited figures (casual typing ~40 words per minute, silent reading
# ~250), never tuned on any split.
TYPING_WPM = 40.0
READING_WPM = 250.0
# Reciprocal rank fusion constant: the value of Cormack, Clarke and Buettcher (2009),
# used as published, not tuned.
RRF_K = 60
TOKEN_CUTS = (250, 500, 1000, 2000)


@dataclass(frozen=True, slots=True)
class Injected:
    """One ranked hit as the benchmark sees it.

    Attributes:
        dia_ids: the LoCoMo turns it stands for.
        n_events: how many events it stands for (turns or not); 1 means "alone".
        text: the text it would be injected as.
        tokens: the tokens of ``text`` (WordPiece, one tokenizer for every system).
    """

    dia_ids: frozenset[str]
    n_events: int
    text: str
    tokens: int


def word_set(text: str) -> frozenset[str]:
    """The distinct content words of ``text`` (the project's stop-word list removed)."""
    return frozenset(content_words(text))


def carries(present: frozenset[str], words: frozenset[str]) -> bool:
    """Whether a text whose content words are ``present`` carries a sentence or turn
    of content words ``words``: at least half of them (any text carries none)."""
    return 2 * len(words & present) >= len(words)


def within_tokens(hits: Sequence[Injected], budget: int) -> list[Injected]:
    """The fitted hits: the longest prefix of ``hits`` whose tokens sum to <= ``budget``."""
    out: list[Injected] = []
    used = 0
    for hit in hits:
        if used + hit.tokens > budget:
            break
        out.append(hit)
        used += hit.tokens
    return out


def credited_turns(hit: Injected, turn_words: Mapping[str, frozenset[str]]) -> set[str]:
    """The turns ``hit`` earns headline evidence credit for.

    Args:
        hit: one fitted hit.
        turn_words: each turn's distinct content words, by ``dia_id``.

    Returns:
        ``hit.dia_ids`` when the hit stands for one event alone; otherwise the turns
        among ``hit.dia_ids`` of which its text carries at least half the content words.
    """
    if hit.n_events == 1:
        return set(hit.dia_ids)
    present = word_set(hit.text)
    return {d for d in hit.dia_ids if carries(present, turn_words[d])}


def evidence_recall(
    hits: Iterable[Injected], evidence: frozenset[str], turn_words: Mapping[str, frozenset[str]]
) -> float:
    """Headline evidence recall: the share of ``evidence`` credited by ``hits``.

    Raises:
        ValueError: ``evidence`` is empty (the share would be undefined).
    """
    if not evidence:
        raise ValueError("evidence recall of a question with no evidence turns")
    covered: set[str] = set()
    for hit in hits:
        covered |= credited_turns(hit, turn_words) & evidence
    return len(covered) / len(evidence)


def event_id_recall(hits: Iterable[Injected], evidence: frozenset[str]) -> float:
    """Per-event-id evidence recall: the share of ``evidence`` any hit stands for.

    Raises:
        ValueError: ``evidence`` is empty.
    """
    if not evidence:
        raise ValueError("evidence recall of a question with no evidence turns")
    covered: set[str] = set()
    for hit in hits:
        covered |= hit.dia_ids
    return len(evidence & covered) / len(evidence)


def answer_recall(hits: Iterable[Injected], words: frozenset[str]) -> float:
    """The share of the answer's content ``words`` present in the hits' text.

    Raises:
        ValueError: ``words`` is empty.
    """
    if not words:
        raise ValueError("answer recall of an answer with no content words")
    present: set[str] = set()
    for hit in hits:
        present |= word_set(hit.text)
    return len(words & present) / len(words)


def rrf_fuse(rankings: Sequence[Sequence[int]], depth: int, k: int = RRF_K) -> list[int]:
    """Reciprocal rank fusion of rankings of unit indices.

    Each unit scores ``sum(1 / (k + rank))`` over the rankings it appears in (rank
    from 1). Ties break by the smaller index, so the fusion is deterministic.

    Returns:
        At most ``depth`` unit indices, best first.
    """
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, unit in enumerate(ranking, start=1):
            scores[unit] = scores.get(unit, 0.0) + 1.0 / (k + rank)
    return sorted(scores, key=lambda u: (-scores[u], u))[:depth]


def turn_times(
    start: datetime, texts: Sequence[str], next_start: datetime | None = None
) -> list[datetime]:
    """When each turn of a session is said, from the session's real start time.

    The first turn is at ``start``; each later turn follows the previous one by the
    time to read it (``READING_WPM``) and to type itself (``TYPING_WPM``), counting
    whitespace-separated words, at least one each. If the session would run past
    ``next_start`` (the next session's real start), its gaps are scaled down evenly
    so that its last turn is said before then.

    Raises:
        ValueError: ``next_start`` is not after ``start``.
    """
    if next_start is not None and next_start <= start:
        raise ValueError(f"next session starts at {next_start}, not after {start}")
    words = [max(len(t.split()), 1) for t in texts]
    gaps = [0.0] + [
        60.0 * (words[i - 1] / READING_WPM + words[i] / TYPING_WPM) for i in range(1, len(words))
    ]
    span = sum(gaps)
    if next_start is not None and span > 0:
        room = (next_start - start).total_seconds() - 1.0
        if span > room:
            gaps = [g * room / span for g in gaps]
    out, offset = [], 0.0
    for gap in gaps:
        offset += gap
        out.append(start + timedelta(seconds=offset))
    return out


@dataclass(slots=True)
class Tally:
    """Per-category sums of every metric for one system on one split."""

    sums: dict[tuple[int, str], float] = field(default_factory=dict)
    counts: dict[tuple[int, str], int] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)

    def add(self, category: int, metric: str, value: float) -> None:
        """Add one question's ``value`` of ``metric`` to its category."""
        key = (category, metric)
        self.sums[key] = self.sums.get(key, 0.0) + value
        self.counts[key] = self.counts.get(key, 0) + 1

    def mean(self, categories: Sequence[int], metric: str) -> float | None:
        """Mean over the categories: shares as percentages, ``tok@`` counts as they are.

        None when nothing was counted.
        """
        total = sum(self.sums.get((c, metric), 0.0) for c in categories)
        n = self.n(categories, metric)
        scale = 1.0 if metric.startswith("tok@") else 100.0
        return scale * total / n if n else None

    def n(self, categories: Sequence[int], metric: str) -> int:
        """How many questions of the categories were scored on ``metric``."""
        return sum(self.counts.get((c, metric), 0) for c in categories)


def score_question(
    tally: Tally, q: Any, ranked: Sequence[Injected], turn_words: dict[str, frozenset[str]]
) -> None:
    """Add one question's evidence (headline and per-id) and answer recall at every budget.

    Also ``tok@10``: the tokens of its first ten hits (what a hit costs, by system).
    ``q`` is a :class:`solace.locomo.Question` (``answer``, ``evidence``, ``category``).
    """
    tally.add(q.category, "tok@10", float(sum(h.tokens for h in ranked[:10])))
    words = word_set(q.answer) if q.answer else frozenset()
    for budget in TOKEN_CUTS:
        fitted = within_tokens(ranked, budget)
        if q.evidence:
            tally.add(q.category, f"ev@{budget}", evidence_recall(fitted, q.evidence, turn_words))
            tally.add(q.category, f"id@{budget}", event_id_recall(fitted, q.evidence))
        if words:
            tally.add(q.category, f"ans@{budget}", answer_recall(fitted, words))
