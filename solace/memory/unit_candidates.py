"""One agent's unit candidates: its best units by BM25 and by embedding similarity.

A unit is one event of a faded episode, injected in its own rung-1 form
(:mod:`~solace.memory.candidates`). An agent offers its ``candidates`` best units by
BM25 (the retriever's unit index) and its ``candidates`` best by the similarity of the
query to the event's own vector in the runtime's one
:class:`~solace.memory.event_vectors.EventVectorStore`, shared by every agent.

Dense scoring: below :data:`SCAN_ROWS` vectors every row is scored with one numpy
product that every agent of a recall shares. From there on, one search a recall (every
row scored block by block, half the blocks in a second thread:
:func:`~solace.memory.row_blocks.row_scores`) finds the store's :data:`DENSE_POOL` best
rows for the query
(:meth:`UnitCandidates.prefetch`, in a worker thread once the store is large), and each
agent takes its units from that pool when the pool *proves* its top: its
``candidates``-th unit in the pool scores strictly above the pool's last row, and every
row left out scores at most that. When it does not, the agent's units are all scored:
just their rows when they are few, else every row. Either way the top is exact, until
the store is large enough to keep an approximate index
(:mod:`~solace.memory.row_ann`): then the pool is the index's best, scored exactly, and
an agent with ``candidates`` units in it takes them without the proof; one with fewer
(Time holds a twelfth of the events) asks the index for its best rows alone.
"""

from __future__ import annotations

from collections.abc import Collection, Container, Mapping
from typing import Any

import numpy as np

from solace.memory.bm25 import scores_among
from solace.memory.event_vectors import EventVectorStore
from solace.memory.record import MemoryRecord
from solace.memory.retrieval import Candidate
from solace.memory.row_blocks import best_rows
from solace.memory.tier_view import TierView

__all__ = ["DENSE_POOL", "FEW_UNITS", "PREFETCH_ROWS", "SCAN_ROWS", "UnitCandidates",
           "allowed_units", "record_similarity", "top_ids"]

#: The store's best rows one recall takes for every agent's dense unit candidates (an
#: agent whose best units are not all among them has every unit scored instead).
DENSE_POOL = 256
#: An agent holding fewer than 1/FEW_UNITS of the store's rows as units, when the pool
#: cannot prove its top, has just its units' rows scored, not every row.
FEW_UNITS = 8
#: Below this many event vectors every row is scored (numpy, ~0.2 ms a 1,000 rows, one
#: product shared by the agents); from it on, the pool of best rows is used (scored in
#: a worker thread and shared by the agents: at LoCoMo's sizes its bookkeeping cost
#: 10 % of a recall).
SCAN_ROWS = 4096
#: From this many event vectors on, a recall's pool is searched in a worker thread (at
#: two 4,096-row blocks the search costs about what a thread hop does).
PREFETCH_ROWS = 8192


class UnitCandidates:
    """One agent's unit candidates, scored against the shared store.

    Args:
        vectors: the runtime's event vector store (entry id -> the event's embedding).
        candidates: how many units the agent offers by similarity.

    Attributes:
        scans: gathers that had to score every unit of this agent (the shared pool
            could not prove its top).
    """

    def __init__(self, vectors: EventVectorStore, candidates: int) -> None:
        self.vectors = vectors
        self.candidates = candidates
        self.scans = 0
        # The view's unit ids it was built for, the store's size then (a new vector may
        # be a unit's), the unit ids with a vector and their rows in the vector store.
        self._rows: tuple[np.ndarray, int, np.ndarray, np.ndarray, np.ndarray] | None = None

    @property
    def pool(self) -> int:
        """How many of the store's best rows a recall takes."""
        return max(DENSE_POOL, 4 * self.candidates)

    async def prefetch(self, vector: np.ndarray, offloader: Any) -> None:
        """Find the store's shared pool of best rows for ``vector`` before the agents
        gather: in a worker thread once the store is large, so the search does not hold
        the event loop (the agents' gathers then find it remembered)."""
        if len(self.vectors) >= PREFETCH_ROWS:
            await offloader.run(self.vectors.top_rows, vector, self.pool)

    def rows_of(self, view: TierView) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The view's units with an event vector (ids ascending), their rows in the
        store, and a flag per store row (whether it is one of them), worked out again
        only when the units or the store change."""
        size = len(self.vectors)
        cached = self._rows
        if cached is not None and cached[0] is view.unit_ids and cached[1] == size:
            return cached[2], cached[3], cached[4]
        rows = self.vectors.rows_of(view.unit_ids)
        held = rows >= 0
        order, rows = view.unit_ids[held], rows[held]
        members = np.zeros(size, dtype=bool)
        members[rows] = True
        self._rows = (view.unit_ids, size, order, rows, members)
        return order, rows, members

    def scored(self, vector: np.ndarray, order: np.ndarray, rows: np.ndarray,
               members: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Units (ids) with their dense scores, among which
        :func:`top_ids` finds this agent's ``candidates`` best
        exactly: below :data:`SCAN_ROWS` vectors, every unit; else the pool's rows that
        are this agent's, when the pool proves it; else every unit, scored."""
        k, size = self.candidates, len(self.vectors)
        if not len(order):
            return order, np.zeros(0, dtype=np.float32)
        if size < SCAN_ROWS:  # one matvec, shared by the agents, costs less than a search
            return order, self.vectors.similarities(vector)[rows]
        pool = min(size, self.pool)
        top, scores = self.vectors.top_rows(vector, self.pool)
        mine = members[top]
        ids, sims = top[mine], scores[mine]
        if pool == size or (len(ids) >= k and (sims[k - 1] > scores[-1]
                                               or self.vectors.approximate)):
            return self.vectors.entries_at(ids), sims
        if self.vectors.approximate:  # the index's best of this agent's rows alone
            ids, sims = self.vectors.top_rows_among(vector, members, self.pool)
            return self.vectors.entries_at(ids), sims
        self.scans += 1
        if len(order) * FEW_UNITS < size:  # few units: score just their rows
            return order, self.vectors.scores_of(order, vector)[1]  # each has a vector
        return order, self.vectors.similarities(vector)[rows]

    def offer(self, view: TierView, vector: np.ndarray, lexical: tuple[np.ndarray, np.ndarray],
              ceiling: float, *, agent: str, forms: Mapping[int, tuple[str, int]],
              include_private: bool, allowed: Collection[int], known: Container[int],
              ) -> list[Candidate]:
        """The agent's unit candidates: its ``candidates`` best units by BM25
        (``lexical``: unit ids and scores, ``ceiling`` the query's best possible) and by
        embedding, less those standing for ``known`` events, private ones unless
        ``include_private``, and, when ``allowed`` is not the view's long-term ids (tags
        narrow the search), units of long-term records outside it. ``forms``: unit id ->
        (rung-1 text, tokens)."""
        order, rows, members = self.rows_of(view)
        lexical_ids, lexical_scores = lexical
        if allowed is not view.longterm:  # tags: only the allowed units
            keep = allowed_units(view, allowed, order.tolist())
            members = members.copy()
            members[rows[~keep]] = False
            order, rows = order[keep], rows[keep]
            keep = allowed_units(view, allowed, lexical_ids.tolist())
            lexical_ids, lexical_scores = lexical_ids[keep], lexical_scores[keep]
        dense_ids, dense_sims = self.scored(vector, order, rows, members)
        chosen = top_ids(lexical_ids, lexical_scores, self.candidates)
        chosen += top_ids(dense_ids, dense_sims, self.candidates)
        return self.build(view, vector, [e for e in dict.fromkeys(chosen) if e not in known],
                          (lexical_ids, lexical_scores), ceiling, agent=agent, forms=forms,
                          include_private=include_private)

    def build(self, view: TierView, vector: np.ndarray, unique: list[int],
              lexical: tuple[np.ndarray, np.ndarray], ceiling: float, *, agent: str,
              forms: Mapping[int, tuple[str, int]], include_private: bool,
              ) -> list[Candidate]:
        """Candidates for the units ``unique`` (entry ids of the view's units, each
        once), private ones only when ``include_private``: dense by the event's own
        vector (else its record's embedding), lexical by ``lexical`` (unit ids and BM25
        scores) over ``ceiling``."""
        by_id = scores_among(*lexical, unique)
        # The units' own vectors, where they have one, scored exactly (float32 widening).
        held, scores = self.vectors.scores_of(np.asarray(unique, dtype=np.int64), vector)
        has = held.tolist()
        unit_sims = np.zeros(len(unique), dtype=np.float32)
        unit_sims[held] = scores
        unit_sims_list = unit_sims.tolist()
        out = []
        owners, longterm = view.owners, view.longterm
        for i, eid in enumerate(unique):
            record = owners[eid]
            if record.private and not include_private:
                continue
            tier = "longterm" if record.record_id in longterm else "working"
            text, tokens = forms[eid]
            sim = unit_sims_list[i] if has[i] else record_similarity(record, vector)
            out.append(Candidate(record, tier, agent,  # type: ignore[arg-type]
                                 sim, by_id.get(eid, 0.0) / ceiling, text, tokens, (eid,),
                                 unit=True))
        return out


def allowed_units(view: TierView, allowed: Collection[int], ids: list[int]) -> np.ndarray:
    """Per unit of ``ids``, whether a query narrowed to the long-term records
    ``allowed`` may offer it: its record is allowed, or not in long-term at all."""
    owners, longterm = view.owners, view.longterm
    rids = (owners[e].record_id for e in ids)
    return np.fromiter((r not in longterm or r in allowed for r in rids), dtype=bool,
                       count=len(ids))


def top_ids(ids: np.ndarray, scores: np.ndarray, k: int) -> list[int]:
    """The ``k`` ids of the highest ``scores``, best first, ties by id ascending
    (:func:`~solace.memory.row_blocks.best_rows`)."""
    return best_rows(ids, scores, k)[0].tolist()  # type: ignore[no-any-return]


def record_similarity(record: MemoryRecord, vector: np.ndarray) -> float:
    """Cosine of ``record``'s embedding and the query (0 without one)."""
    return float(record.embedding @ vector) if record.embedding is not None else 0.0
