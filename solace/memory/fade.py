"""The fade score and the pass planner: pure, vectorised numpy over the working tier.

Seed 002, "What decides when a record fades"::

    fade_score = age·w_age + token_pressure·w_pressure − reference_freq·w_freq
                 − emotional_weight·w_emo − tag_boost·w_tags

The terms, each computed for every working record at once:

* ``age`` — hours since the record entered working (or was given fresh tracking),
  divided by ``AgentConfig.age_scale_hours``;
* ``token_pressure`` — ``min(total / budget, 1) ** 4`` (negligible at half the
  budget, 0.41 at 80 %, 1 at the budget: "rises as the tier nears its budget, so
  crowding alone can demote recent material"), times the record's size factor
  ``sqrt(tokens / mean tokens)`` clipped to [0.25, 4], so that under pressure the
  records that free most tokens go first. It saturates at the budget on purpose: an
  excess is not a reason for *every* record to fade (that would demote protected
  records along with the rest); the planner's cover below demotes just enough of the
  most faded ones;
* ``reference_freq`` — ``log1p(references)`` decayed by half every ``age_scale_hours``
  since the last reference: what the agent keeps coming back to stays sharp;
* ``emotional_weight`` — the record's own (0..1);
* ``tag_boost`` — ``1 − 0.5 ** n_tags``: the first advisor tag counts most, and it
  saturates.

Rungs are rungs of a ladder, so ageing climbs them one at a time: a record at rung
``r`` is due to demote when its score exceeds ``demote_threshold · (r + 1)``. With the
defaults a record that nobody references reaches rung 1 after one ``age_scale``, rung 2
after two and long-term after three. Pressure adds to that: while the projected
working total exceeds the budget, the highest-scoring records are demoted one rung
too (ties: lower record id first), so referenced, emotional and tagged records —
whose scores are lower — resist longest.

Nothing here touches a :class:`~solace.memory.record.MemoryRecord`: the planner returns
row indices, and only the rows it chooses become Python objects again.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from solace.config import FadeWeights

__all__ = [
    "KEEP_SHARE",
    "FadeColumns",
    "FadeCounters",
    "FadeReport",
    "fade_score",
    "plan_round",
    "size_factor",
    "tag_boost",
    "token_pressure",
]

#: Expected share of a record's tokens left after one demotion from rung 0, 1 and 2
#: (the ladder's ~0.3x and ~0.1x; rung 2 -> 3 leaves working entirely). Only used to
#: decide how many records one round must demote; the next round checks the real total.
KEEP_SHARE = np.array([0.3, 0.33, 0.0], dtype=np.float64)

_HOUR = 3600.0
_PRESSURE_POWER = 4


@dataclass(frozen=True, slots=True)
class FadeColumns:
    """The working tier's columns the score reads, one entry per record (views, not copies).

    Attributes:
        record_id: int64 ids (ties are broken by them).
        rung: int8, 0..2.
        tokens: int64 token counts of the records' current text.
        created: float64 epoch seconds the record entered working / got fresh tracking.
        last_referenced: float64 epoch seconds of the last reference (0: never).
        references: float64 reference counts.
        emotional_weight: float64, 0..1.
        n_tags: float64 number of advisor tags.
    """

    record_id: np.ndarray
    rung: np.ndarray
    tokens: np.ndarray
    created: np.ndarray
    last_referenced: np.ndarray
    references: np.ndarray
    emotional_weight: np.ndarray
    n_tags: np.ndarray

    def __len__(self) -> int:
        return len(self.record_id)


def token_pressure(total_tokens: float, budget_tokens: float) -> float:
    """``min(total / budget, 1) ** 4``: 0.06 at half the budget, 0.41 at 80 %, 1 at and
    past it.

    Raises:
        ValueError: ``budget_tokens`` is not positive.
    """
    if budget_tokens <= 0:
        raise ValueError(f"budget_tokens must be > 0, got {budget_tokens!r}")
    return float(min(total_tokens / budget_tokens, 1.0) ** _PRESSURE_POWER)


def size_factor(tokens: np.ndarray) -> np.ndarray:
    """``sqrt(tokens / mean)`` clipped to [0.25, 4]: big records feel more pressure."""
    if len(tokens) == 0:
        return np.zeros(0)
    mean = float(tokens.mean()) or 1.0
    return np.clip(np.sqrt(tokens / mean), 0.25, 4.0)


def tag_boost(n_tags: np.ndarray) -> np.ndarray:
    """``1 − 0.5 ** n_tags``: 0, 0.5, 0.75, ... saturating at 1."""
    return 1.0 - np.power(0.5, n_tags)


def fade_score(
    columns: FadeColumns,
    *,
    now: float,
    total_tokens: float,
    budget_tokens: float,
    weights: FadeWeights,
    age_scale_hours: float,
) -> np.ndarray:
    """The fade score of every record in ``columns`` (float64, same order).

    Args:
        columns: the working tier's columns.
        now: the clock's now (epoch seconds); records from the future have age 0.
        total_tokens: the working tier's current total.
        budget_tokens: its budget (> 0).
        weights: the agent's fade weights.
        age_scale_hours: hours of age that add 1 to the age term (> 0).

    Returns:
        Higher means more faded; pure, deterministic, no Python loop over records.
    """
    scale = age_scale_hours * _HOUR
    age = np.maximum(now - columns.created, 0.0) / scale
    since_ref = np.maximum(now - columns.last_referenced, 0.0) / scale
    freq = np.log1p(columns.references) * np.exp2(-since_ref)
    pressure = token_pressure(total_tokens, budget_tokens) * size_factor(columns.tokens)
    score = weights.age * age
    score += weights.pressure * pressure
    score -= weights.freq * freq
    score -= weights.emo * columns.emotional_weight
    score -= weights.tags * tag_boost(columns.n_tags)
    return score


def plan_round(
    scores: np.ndarray,
    columns: FadeColumns,
    *,
    threshold: float,
    total_tokens: int,
    budget_tokens: int,
    exclude: np.ndarray | None = None,
) -> np.ndarray:
    """Rows to demote by one rung in this round, most faded first.

    Two reasons select a row: its score is past its rung's threshold (ageing:
    ``score > threshold · (rung + 1)``), or the tier is projected to stay over budget
    after the aged rows demote (pressure: the highest scores among the rest, until the
    expected tokens freed — :data:`KEEP_SHARE` — cover the excess). Each row appears
    at most once, so no record moves more than one rung per round.

    Args:
        scores: :func:`fade_score` of ``columns``.
        columns: the working tier's columns.
        threshold: ``AgentConfig.demote_threshold``.
        total_tokens, budget_tokens: the tier's total and budget.
        exclude: optional boolean mask of rows that may not be chosen (e.g. records
            whose compression just failed).

    Returns:
        int64 row indices, by score descending then record id ascending.
    """
    n = len(scores)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    rung = columns.rung.astype(np.int64)
    allowed = np.ones(n, dtype=bool) if exclude is None else ~exclude
    due = (scores > threshold * (rung + 1)) & allowed
    freed = columns.tokens * (1.0 - KEEP_SHARE[np.clip(rung, 0, 2)])
    excess = total_tokens - float(freed[due].sum()) - budget_tokens
    chosen = np.flatnonzero(due)
    if excess > 0:
        rest = np.flatnonzero(allowed & ~due)
        chosen = np.concatenate([chosen, _cover(rest, scores, freed, columns.record_id, excess)])
    return _order(chosen, scores, columns.record_id)


def _order(rows: np.ndarray, scores: np.ndarray, record_id: np.ndarray) -> np.ndarray:
    if len(rows) < 2:
        return rows.astype(np.int64)
    return rows[np.lexsort((record_id[rows], -scores[rows]))].astype(np.int64)


def _cover(
    rows: np.ndarray, scores: np.ndarray, freed: np.ndarray, record_id: np.ndarray,
    excess: float,
) -> np.ndarray:
    """The fewest of ``rows``, highest score first, whose expected frees cover ``excess``.

    Sorting all rows would cost O(n log n) on every pass; the pressure excess is usually
    covered by a few records, so take the top ``k`` with ``argpartition`` (O(n)) and
    widen ``k`` only if they do not suffice. Rows tied with the k-th score are all
    taken into the sort, so the result does not depend on argpartition's tie order.
    """
    if len(rows) == 0:
        return rows
    s = scores[rows]
    f = freed[rows]
    mean_free = max(float(f.mean()), 1.0)
    k = min(len(rows), max(16, int(2 * excess / mean_free) + 1))
    while True:
        if k >= len(rows):
            top = np.arange(len(rows))
        else:
            part = np.argpartition(-s, k - 1)[:k]
            kth = s[part].min()
            top = np.flatnonzero(s >= kth)
        order = top[np.lexsort((record_id[rows[top]], -s[top]))]
        cumulative = np.cumsum(f[order])
        if cumulative[-1] >= excess or len(top) == len(rows):
            cut = int(np.searchsorted(cumulative, excess, side="left")) + 1
            return rows[order[:cut]]
        k = min(len(rows), k * 4)


@dataclasses.dataclass(slots=True)
class FadeCounters:
    """Cumulative counters of one agent's memory (kept across restarts by snapshots).

    Attributes:
        passes: fade steps run.
        rounds: planning rounds that demoted something.
        demotions: records produced per target rung (1, 2 in working; 3 in long-term).
        merges: demotions that merged two or more records.
        to_longterm: records moved from working to long-term.
        events_written: ``fade`` events appended to the substrate.
        ingested: rung-0 records made by ``ingest``.
        added: records that entered working through ``add_record`` / ``warm_up``.
        ladder_failures: ladder calls that raised a model error (records left as they were).
    """

    passes: int = 0
    rounds: int = 0
    demotions: dict[int, int] = dataclasses.field(default_factory=lambda: {1: 0, 2: 0, 3: 0})
    merges: int = 0
    to_longterm: int = 0
    events_written: int = 0
    ingested: int = 0
    added: int = 0
    ladder_failures: int = 0

    def as_dict(self) -> dict[str, Any]:
        """Plain data (for snapshots and ``stats``)."""
        out = dataclasses.asdict(self)
        out["demotions"] = {str(k): v for k, v in self.demotions.items()}
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FadeCounters:
        """The inverse of :meth:`as_dict`; unknown keys are ignored."""
        known = {f.name for f in dataclasses.fields(cls)}
        kwargs = {k: v for k, v in data.items() if k in known and k != "demotions"}
        counters = cls(**kwargs)
        for rung, n in dict(data.get("demotions") or {}).items():
            counters.demotions[int(rung)] = int(n)
        return counters


@dataclasses.dataclass(slots=True)
class FadeReport:
    """What one :meth:`AgentMemory.fade_step` did.

    Attributes:
        rounds: rounds that demoted something.
        demotions: records produced per target rung.
        merges: of those, merges.
        to_longterm: records moved to long-term.
        failed: ids of records the ladder could not compress this step (left as they were).
        events: fade events written.
        working_tokens, budget_tokens: the tier after the step.
    """

    rounds: int = 0
    demotions: dict[int, int] = dataclasses.field(default_factory=lambda: {1: 0, 2: 0, 3: 0})
    merges: int = 0
    to_longterm: int = 0
    failed: tuple[int, ...] = ()
    events: int = 0
    working_tokens: int = 0
    budget_tokens: int = 0

    @property
    def within_budget(self) -> bool:
        """Whether the working tier ended the step within its budget."""
        return self.working_tokens <= self.budget_tokens

    @property
    def changed(self) -> bool:
        """Whether the step changed anything."""
        return self.events > 0
