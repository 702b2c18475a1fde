"""Retrieval: query both tiers in parallel and merge them on one composite score.

The two tiers are complementary indices, not primary-and-cache (seed 002,
"Retrieval"): working answers exactly over a few records, long-term answers by
embedding similarity over many. Both are scored on the same axes —

* relevance: cosine similarity of the query and the record's embedding;
* lexical: BM25 of the query over the record's text, divided by the query's BM25
  ceiling so it lies in [0, 1] (names, numbers and dates that embeddings blur);
* recency: ``0.5 ** (age / half_life)`` of the newest event the record stands for;
* emotion: the record's emotional weight (Mood's, 0..1);
* tags: the share of the query's tags the record carries —

each multiplied by the asking agent's :class:`~solace.config.RetrievalWeights`; a
candidate standing for several events (a summary) then scores ``weights.summary`` of
that, so at equal relevance one event in full comes before a summary that carries
only part of each of its events' words. Then each of the asker's own candidates
standing for one event closes ``weights.context`` of the gap to the best score among
its candidates for the turns said next to it (:mod:`solace.memory.adjacent`): a reply
is found by the question it answers, and no turn rises for a worse neighbour. The
order is by total score, then working before long-term, then newer, then record id,
so equal scores never reorder between runs.

A rung-3 long-term record is an embedding and tags; it is scored lexically, and
injected, in its rehydrated form (the text it would have at ``inject_rung``, rebuilt
from its substrate events), and a hit costs the tokens of that form.

The scoring functions are pure numpy over arrays; each agent's
:class:`~solace.memory.candidates.Retriever` gathers its candidates (working in
place, long-term search through the Offloader) and :func:`recall` runs the asker's
and any read-through peers' in one trio nursery.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import trio

from solace.config import RetrievalWeights
from solace.memory.adjacent import context_scores
from solace.memory.hit_merge import Statements
from solace.memory.record import Hit, MemoryRecord, ScoreParts, Tier

__all__ = [
    "PART_NAMES",
    "Candidate",
    "EventReader",
    "Gathered",
    "Gatherer",
    "composite_parts",
    "rank_order",
    "recall",
    "recency_scores",
    "select",
    "tag_match_scores",
]

PART_NAMES = ("relevance", "lexical", "recency", "emotion", "tags", "context")


class EventReader(Protocol):
    """Reads substrate events by id, many per call (one worker thread per call)."""

    async def get_many(self, entry_ids: Sequence[int]) -> list[Any]: ...


@dataclass(slots=True)  # not frozen: a recall builds ~100 and a frozen init costs 6x
class Candidate:
    """Something recall may return: a record, or one event of a multi-event record.
    Built by a gather and only read after.

    Attributes:
        record: the record it comes from (a unit's owning record).
        tier: the record's tier. owner: the agent whose memory holds the record.
        dense: cosine similarity of the query and the record's embedding.
        lexical: BM25 of the query over ``text``'s index, divided by the query's
            ceiling in that index (0..1).
        text: the injected form. tokens: its cost.
        entry_ids: the events the injected text stands for.
        unit: one event of a multi-event record, in its own rung-1 form (names and
            dates resolved) — injected detail under a summary.
    """

    record: MemoryRecord
    tier: Tier
    owner: str
    dense: float
    lexical: float
    text: str
    tokens: int
    entry_ids: tuple[int, ...]
    unit: bool = False

    @property
    def exact(self) -> bool:
        """Its text carries its events in full detail (one event: a unit or a rung-0 turn)."""
        return len(self.entry_ids) == 1

    @property
    def covers(self) -> tuple[Any, ...]:
        """What it carries, for :func:`select`: its entry ids, or for a chunk of a large
        event that event's part (``(entry id, start)``), so two chunks of one event are
        two different things while a chunk seen by two agents is one."""
        if self.record.span and not self.unit:
            return ((self.entry_ids[0], self.record.span[0]),)
        return self.entry_ids


@dataclass(slots=True)
class Gathered:
    """One agent's candidates for a query, scored in columns.

    Every working record an agent offers is a candidate, and an agent holds hundreds,
    so they stay columns (from its :class:`~solace.memory.tier_view.TierView`) and a
    :class:`Candidate` is built only for one recall picks; ``others`` (long-term records
    and units, a few dozen) are built by the gather.

    Attributes:
        owner: the agent. working: the working records offered, then ``others``.
        dense, lexical, event_ts, emotion, record_id, longterm, single: one value
            per candidate, the working records' first, then ``others``' in order
            (``longterm``: its record is in the long-term tier; ``single``: it
            stands for one event).
    """

    owner: str
    working: Sequence[MemoryRecord]
    others: list[Candidate]
    dense: np.ndarray
    lexical: np.ndarray
    event_ts: np.ndarray
    emotion: np.ndarray
    record_id: np.ndarray
    longterm: np.ndarray
    single: np.ndarray

    @classmethod
    def of(cls, owner: str, working: Sequence[MemoryRecord], dense: np.ndarray,
           lexical: np.ndarray, event_ts: np.ndarray, emotion: np.ndarray,
           record_id: np.ndarray, single: np.ndarray, others: list[Candidate]) -> Gathered:
        """The working records' columns (row-aligned with ``working``) and ``others``."""

        def column(working_part: np.ndarray, values: Any, dtype: Any) -> np.ndarray:
            tail = np.fromiter(values, dtype=dtype, count=len(others))
            return np.concatenate([np.asarray(working_part, dtype=dtype), tail])

        return cls(
            owner, working, others,
            column(dense, (c.dense for c in others), np.float64),
            column(lexical, (c.lexical for c in others), np.float64),
            column(event_ts, (c.record.event_ts for c in others), np.float64),
            column(emotion, (c.record.emotional_weight for c in others), np.float64),
            column(record_id, (c.record.record_id for c in others), np.int64),
            column(np.zeros(len(working), dtype=bool), (c.tier != "working" for c in others),
                   bool),
            column(single, (len(c.entry_ids) == 1 for c in others), bool))

    def extended(self, more: list[Candidate]) -> Gathered:
        """These candidates and ``more`` after them (only ``more``'s columns built)."""
        empty = np.zeros(0)
        tail = Gathered.of(self.owner, (), empty, empty, empty, empty, empty,
                           np.zeros(0, dtype=bool), more)
        names = ("dense", "lexical", "event_ts", "emotion", "record_id", "longterm", "single")
        return Gathered(self.owner, self.working, self.others + more,
                        *(np.concatenate([getattr(self, c), getattr(tail, c)]) for c in names))

    def __len__(self) -> int:
        return len(self.dense)

    def record(self, i: int) -> MemoryRecord:
        """The ``i``-th candidate's record."""
        n = len(self.working)
        return self.working[i] if i < n else self.others[i - n].record

    def candidate(self, i: int) -> Candidate:
        """The ``i``-th candidate (a working record's is built here)."""
        n = len(self.working)
        if i >= n:
            return self.others[i - n]
        record = self.working[i]
        return Candidate(record, "working", self.owner, float(self.dense[i]),
                         float(self.lexical[i]), record.text, record.tokens,
                         tuple(record.entry_ids))

    def entries(self) -> np.ndarray:
        """Per candidate, the one event it stands for, or -1 (it stands for several)."""
        n = len(self.working)
        out = np.full(len(self), -1, dtype=np.int64)
        for i in np.flatnonzero(self.single).tolist():
            out[i] = (self.working[i].entry_ids if i < n else self.others[i - n].entry_ids)[0]
        return out

    @property
    def candidates(self) -> list[Candidate]:
        """Every candidate, built (recall builds only those it picks)."""
        return [self.candidate(i) for i in range(len(self))]


class Gatherer(Protocol):
    """One agent's side of retrieval (see :class:`solace.memory.candidates.Retriever`).

    ``gather`` leaves out every candidate standing only for events in ``known`` (a
    read-through peer is told what the asker holds: its own record of an event wins).
    """

    @property
    def agent(self) -> str: ...

    async def gather(
        self, query: str, vector: np.ndarray, *, include_private: bool,
        tags: Sequence[str] = (), known: Container[int] = frozenset(),
    ) -> Gathered: ...


# ------------------------------------------------------------------ pure scoring


def recency_scores(event_ts: np.ndarray, now: float, half_life_hours: float) -> np.ndarray:
    """``0.5 ** (age_hours / half_life_hours)``; records from the future count as new."""
    age_hours = np.maximum(now - np.asarray(event_ts, dtype=np.float64), 0.0) / 3600.0
    return np.power(0.5, age_hours / half_life_hours)


def tag_match_scores(
    record_tags: Sequence[Sequence[str]], query_tags: Sequence[str]
) -> np.ndarray:
    """Share of ``query_tags`` each record carries (0 for every record if there are none)."""
    wanted = {t.casefold() for t in query_tags}
    if not wanted:
        return np.zeros(len(record_tags))
    return np.array(
        [len(wanted & {t.casefold() for t in tags}) / len(wanted) for tags in record_tags],
        dtype=np.float64,
    )


def composite_parts(
    dense: np.ndarray,
    lexical: np.ndarray,
    recency: np.ndarray,
    emotion: np.ndarray,
    tags: np.ndarray,
    weights: RetrievalWeights,
    single: np.ndarray | None = None,
) -> np.ndarray:
    """The weighted parts, shape ``(n, 5)`` in :data:`PART_NAMES` order (all but
    ``context``, which :func:`recall` adds once the totals are known). A row whose
    ``single`` is False (a candidate standing for several events) is then scaled by
    ``weights.summary``; without ``single`` no row is."""
    w = np.array(
        [weights.relevance, weights.lexical, weights.recency, weights.emotion, weights.tags]
    )
    raw = np.stack(
        [np.asarray(a, dtype=np.float64) for a in (dense, lexical, recency, emotion, tags)],
        axis=1,
    ) if len(dense) else np.zeros((0, 5))
    weighted: np.ndarray = raw * w
    if single is not None and len(weighted):
        weighted *= np.where(np.asarray(single, dtype=bool), 1.0, weights.summary)[:, None]
    return weighted


def rank_order(
    totals: np.ndarray, longterm: np.ndarray, event_ts: np.ndarray,
    record_ids: Sequence[int] | np.ndarray,
) -> np.ndarray:
    """Indices best first: total desc, working before long-term (``longterm``: a flag
    per candidate), newer first, id asc."""
    if len(totals) == 0:
        return np.zeros(0, dtype=np.int64)
    # np.lexsort sorts by the last key first.
    return np.lexsort((np.asarray(record_ids), -np.asarray(event_ts, dtype=np.float64),
                       np.asarray(longterm, dtype=np.int8), -totals))


def select(
    order: np.ndarray, covers: Callable[[int], tuple[Any, ...]], exact: Callable[[int], bool],
    k: int, keep: Callable[[int], bool] | None = None,
) -> list[int]:
    """The first ``k`` indices of ``order`` that add something (``covers(i)``: what the
    ``i``-th candidate carries; ``exact(i)``: whether it carries one event in full) and
    that ``keep`` (when given) keeps.

    A hit that carries one event in full (``exact``) is skipped if that event was
    already carried in full by a better hit (the same event seen by two agents); a
    summary of several events is skipped if every one of its events is already
    covered, in full or by another summary. So detail may follow a summary of the same
    events, but nothing is injected twice. ``keep`` is asked only about a candidate
    that adds something; one it does not keep (a restatement of a better hit) still
    counts its events as carried.
    """
    chosen: list[int] = []
    in_full: set[Any] = set()
    covered: set[Any] = set()
    for i in order:
        index = int(i)
        ids = covers(index)
        if exact(index):
            if in_full.issuperset(ids):
                continue
            in_full.update(ids)
        elif covered.issuperset(ids):
            continue
        covered.update(ids)
        if keep is not None and not keep(index):
            continue
        chosen.append(index)
        if len(chosen) >= k:
            break
    return chosen


# ---------------------------------------------------------------- the merge


async def recall(
    asker: Gatherer,
    query: str,
    k: int,
    *,
    vector: np.ndarray,
    weights: RetrievalWeights,
    half_life_hours: float,
    now: float,
    peers: Sequence[Gatherer] = (),
    held: Container[int] = frozenset(),
    query_tags: Sequence[str] = (),
    private: bool = True,
    between: Callable[[int, int], int] | None = None,
    distinct: bool = False,
) -> list[Hit]:
    """The ``k`` best hits for ``query`` from ``asker``'s memory and its read-through peers.

    The asker is queried first, then the peers in parallel (one trio nursery; large
    long-term searches run in worker threads). ``query_tags`` do two things: they
    narrow every retriever's long-term candidates to records carrying at least one of
    them (working records all stay candidates), and they score every candidate by the
    share of them it carries (the ``tags`` part). Without tags nothing is narrowed and
    the tag part is 0. Peers never offer private records, and their hits carry
    ``owner``. ``held`` is the events the asker holds (its
    :meth:`~solace.memory.holdings.Holdings.held`): peers add only what it lacks, so a
    peer's candidate standing only for events in ``held`` is dropped (the asker's own
    record of an event wins, and can be rehydrated as its cue; peers are told ``held``,
    so they build no such candidate). The caller asks only the peers that hold
    something the asker lacks. A hit adding nothing to better hits is skipped (see
    :func:`select`), so the same event is injected once. ``private=False`` leaves the
    asker's own private records out too (its memory consulted for another agent).
    ``between`` counts the events the asker holds strictly between two entry ids
    (:meth:`~solace.memory.holdings.Held.between`); with it, the asker's own
    candidates gain their ``context`` part (:mod:`solace.memory.adjacent`), without it
    that part is 0. With ``distinct``, a candidate saying what a better hit said is
    skipped too (:class:`~solace.memory.hit_merge.Statements`), and the next takes
    its place.

    Returns:
        At most ``k`` hits, best first (see :func:`rank_order`).
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k!r}")
    if isinstance(query_tags, str):
        raise TypeError(f"query_tags must be a sequence of strings, not {query_tags!r}")
    tags = tuple(query_tags)
    own = await asker.gather(query, vector, include_private=private, tags=tags)
    results: dict[int, Gathered] = {}

    async def run(i: int, side: Gatherer) -> None:
        results[i] = await side.gather(query, vector, include_private=False, tags=tags,
                                       known=held)

    if peers:
        async with trio.open_nursery() as nursery:
            for i, side in enumerate(peers):
                nursery.start_soon(run, i, side)
    sides = [own] + [results[i] for i in range(len(peers))]
    starts = np.cumsum([0] + [len(side) for side in sides]).tolist()
    if not starts[-1]:
        return []
    built: dict[int, Candidate] = {}

    def candidate(i: int) -> Candidate:
        if i not in built:
            side = bisect.bisect_right(starts, i) - 1
            built[i] = sides[side].candidate(i - starts[side])
        return built[i]

    def record(i: int) -> MemoryRecord:
        side = bisect.bisect_right(starts, i) - 1
        return sides[side].record(i - starts[side])

    def column(name: str) -> np.ndarray:
        return np.concatenate([getattr(side, name) for side in sides])

    event_ts = column("event_ts")
    parts = composite_parts(
        column("dense"),
        column("lexical"),
        recency_scores(event_ts, now, half_life_hours),
        column("emotion"),
        tag_match_scores([record(i).tags for i in range(starts[-1])], query_tags)
        if tags else np.zeros(starts[-1]),
        weights,
        column("single"),
    )
    totals = parts.sum(axis=1)
    context = np.zeros(starts[-1])
    if between is not None and weights.context > 0.0:
        context[: starts[1]] = context_scores(own.entries(), totals[: starts[1]], between,
                                              weights.context)
        totals = totals + context
    parts = np.column_stack([parts, context])
    order = rank_order(totals, column("longterm"), event_ts, column("record_id"))
    statements = Statements() if distinct else None
    chosen = select(order, lambda i: candidate(i).covers, lambda i: candidate(i).exact, k,
                    None if statements is None else lambda i: statements.keep(candidate(i).text))
    asking = asker.agent
    scores, rows = totals[chosen].tolist(), parts[chosen].tolist()  # floats, in one step
    return [
        Hit(
            record_id=c.record.record_id,
            agent=asking,
            tier=c.tier,
            rung=c.record.rung,
            text=c.text,
            tokens=c.tokens,
            entry_ids=c.entry_ids,
            score=score,
            parts=ScoreParts(*row),
            owner=None if c.owner == asking else c.owner,
        )
        for c, score, row in zip(map(candidate, chosen), scores, rows, strict=True)
    ]
