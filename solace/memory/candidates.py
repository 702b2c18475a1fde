"""One agent's side of retrieval: what its two tiers offer a query.

:class:`Retriever` keeps two BM25 indexes beside the agent's tiers, brought in line
with them at each query by the records that changed since the last one (records
change as they fade, merge and move; :mod:`~solace.memory.tier_view`,
:mod:`~solace.memory.view_indexes`):

* **records** — every record of both tiers, by its text; a rung-3 record (an
  embedding and tags) by its tags plus its form, the text it is injected in
  (:mod:`~solace.memory.derived_forms`);
* **units** — every event of a record that stands for several events (a faded
  episode), in that event's own rung-1 form. A question usually needs one or two
  turns of an episode; a unit carries them at a fraction of the episode's cost, with
  the facts the summary may have condensed away.

A unit's dense relevance is its event's own embedding: the vector its rung-0 record
had when it was ingested (``vectors``, kept by the runtime), or, after a restart,
its raw text embedded once on first use.

A query works from one :class:`TierView` of both tiers, taken in a single synchronous
step when it starts, so records that fade, merge or move between tiers while it awaits
worker threads change nothing it sees (and raise nothing). Its candidates: every
working record of the view, the long-term tier's ``candidates`` nearest records by
embedding (a FAISS search: on the loop while the tier is small, else in a worker
thread), its
``candidates`` best records by BM25, the ``candidates`` best units by BM25 and by
embedding, and the turns said just after its best few of those (a reply its
question's near-copies crowded out of every pool: :mod:`~solace.memory.neighbours`).

Tags narrow long-term search (seed 002: "long-term answers semantically, by embedding
similarity narrowed by tags"). A query with tags takes its long-term candidates only
from the records carrying at least one of them (casefolded,
:meth:`~solace.memory.longterm.LongTermTier.by_tags`): the nearest of those by exact
cosine, the best of those by BM25, and units only of those (or of working records).
Working records all compete as without tags; the composite score's tag term is what
favours the tagged ones there. A query without tags is not narrowed at all.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Sequence
from typing import Any, TypeVar

import numpy as np
import trio

from solace.memory.bm25 import scores_among
from solace.memory.derived_forms import DerivedForms, RecordForm, Rehydrate, UnitForm
from solace.memory.event_vectors import EventVectorStore
from solace.memory.holdings import Holdings
from solace.memory.neighbours import NEIGHBOUR_SEEDS, with_neighbours
from solace.memory.record import MemoryRecord
from solace.memory.retrieval import Candidate, EventReader, Gathered
from solace.memory.retrieval_forms import Forms, UnitForms
from solace.memory.tier_view import (
    TierVersions,
    TierView,
    changed_between,
    follow_view,
    take_view,
    versions_of,
)
from solace.memory.unit_candidates import (
    UnitCandidates,
    allowed_units,
    record_similarity,
    top_ids,
)
from solace.memory.view_indexes import ViewIndexes

__all__ = ["Retriever", "TierView"]

UNIT_RUNG = 1
T = TypeVar("T")
# Searches over at most this many vectors run on the event loop; larger ones in a
# worker thread. Chosen with benchmarks/inline_search.py (random vectors, flat index,
# k=20, two runs): at 1,024 records a search takes 0.26-0.34 ms and a thread hop adds
# 0.40-0.59; at 2,048 the search (0.75-0.78 ms) costs as much as the hop, and would
# hold the loop that long.
INLINE_SEARCH_MAX = 1024


class Retriever:
    """One agent's candidates for a query, from both tiers.

    Args:
        memory: the agent's ``AgentMemory`` (its ``working`` and ``longterm`` tiers).
        tokenizer: the runtime's token counter (hit costs).
        offloader: runs long-term search and rehydration off the event loop.
        events: reads substrate events (to rehydrate).
        rehydrate: ``(events, rung) -> text``, the ladder's ``rehydrate_text``.
        inject_rung: the rung a rung-3 hit is rehydrated to (1 or 2).
        candidates: how many long-term records each of dense search and BM25 offer,
            and how many units each of BM25 and embedding similarity offer.
        vectors: entry id -> embedding of the event's raw text (the runtime's one store,
            shared by every agent, filled at ingest and here on first use).
        embed: the embedder's blocking ``embed(texts)``.
        unit_form: ``event -> text`` of a unit; default: the event's rung-1 form.
        unit_forms, record_forms, sibling_forms, deriving: where the derived texts are
            kept and shared, and the lock that lets one derive at a time
            (:class:`~solace.memory.derived_forms.DerivedForms`).
        holdings: the runtime's one :class:`~solace.memory.holdings.Holdings`, told
            every record change this retriever follows (read-through asks a peer only
            for the events the asker lacks).
    """

    def __init__(
        self,
        memory: Any,
        *,
        tokenizer: Any,
        offloader: Any,
        events: EventReader,
        rehydrate: Rehydrate,
        inject_rung: int = 2,
        candidates: int = 64,
        vectors: EventVectorStore | None = None,
        embed: Callable[[Sequence[str]], np.ndarray] | None = None,
        unit_form: Callable[[Any], str] | None = None,
        holdings: Holdings | None = None,
        unit_forms: dict[int, UnitForm] | None = None,
        record_forms: dict[int, RecordForm] | None = None,
        sibling_forms: Sequence[dict[int, RecordForm]] = (),
        deriving: trio.Lock | None = None,
    ) -> None:
        if inject_rung not in (1, 2):
            raise ValueError(f"inject_rung must be 1 or 2, got {inject_rung!r}")
        if candidates < 1:
            raise ValueError(f"candidates must be >= 1, got {candidates!r}")
        self.memory = memory
        self.tokenizer = tokenizer
        self.offloader = offloader
        self.events = events
        self.candidates = candidates
        self.vectors = vectors if vectors is not None else EventVectorStore()
        self.unit_form = unit_form if unit_form is not None else (
            lambda event: self.rehydrate([event], UNIT_RUNG)
        )
        self._unit_candidates = UnitCandidates(self.vectors, candidates)
        #: How many best single-event candidates have their neighbours offered (0: none).
        self.neighbour_seeds = NEIGHBOUR_SEEDS
        # The last view and the tiers' (identity, version) it was taken at.
        self._view: tuple[TierVersions, TierView] | None = None
        self._following = trio.Lock()  # held by the one refresh following the tiers
        self._derived = DerivedForms(
            offloader=offloader, events=events, rehydrate=rehydrate, inject_rung=inject_rung,
            tokenizer=tokenizer, vectors=self.vectors, embed=embed, unit_form=self.unit_form,
            unit_forms=unit_forms, record_forms=record_forms, sibling_forms=sibling_forms,
            deriving=deriving)
        #: The BM25 indexes and single-event map, in line with the view they hold (a
        #: concurrent query may have synced them to another).
        self.indexes = ViewIndexes(str(memory.agent), self._derived, holdings)

    @property
    def rehydrate(self) -> Rehydrate:
        """``(events, rung) -> text``: what rung-3 forms, units and used cues are
        rehydrated with (the forms' builder holds it)."""
        return self._derived.rehydrate

    @rehydrate.setter
    def rehydrate(self, rehydrate: Rehydrate) -> None:
        self._derived.rehydrate = rehydrate

    @property
    def agent(self) -> str:
        """The agent whose memory this is."""
        return str(self.memory.agent)

    # ------------------------------------------------------------ forms

    def forms(self) -> Forms:
        """A copy of the texts derived so far (rung-3 records' forms, units' forms) and
        of both BM25 indexes, to keep across a restart
        (:mod:`~solace.memory.retrieval_forms`)."""
        indexes = self.indexes
        return Forms(dict(self._derived.records), self.unit_forms(),
                     indexes.records.state(), indexes.units.state())

    def unit_forms(self, ids: Iterable[int] | None = None) -> UnitForms:
        """The forms of ``ids`` (default: the units this agent's index holds) that are
        derived, taken from the forms every retriever shares (each unit's text once,
        whoever holds it)."""
        units = self._derived.units
        return {e: units[e] for e in (self.unit_ids() if ids is None else ids) if e in units}

    def unit_ids(self) -> list[int]:
        """The units this agent's index holds."""
        return self.indexes.units.ids()

    def seed(self, forms: Forms) -> None:
        """Take ``forms`` (kept by an earlier process for the same code and config) as
        derived (:meth:`~solace.memory.derived_forms.DerivedForms.seed`), and their BM25
        indexes while this retriever has indexed nothing itself: the first query's full
        sync checks each document's text against the tiers' records."""
        self._derived.seed(forms)
        self.indexes.seed(forms)

    def injected_form(self, record: MemoryRecord) -> tuple[str, int]:
        """The text a record is injected as, and its tokens (rung 3: rehydrated).

        Only valid after a :meth:`gather` (or :meth:`refresh`) that saw the record, and
        until a later one that no longer sees it.
        """
        return self._derived.injected(record)

    @property
    def in_line(self) -> bool:
        """Whether the last view (and so the indexes) holds the tiers as they are now."""
        return self._current() is not None

    def _current(self) -> TierView | None:
        last = self._view
        if last is None or last[0] != versions_of(self.memory.working, self.memory.longterm):
            return None
        return last[1]

    async def refresh(self) -> TierView:
        """Take a view of both tiers and bring both indexes in line with it.

        The view is taken in one synchronous step, so it is one instant of the tiers:
        every event acknowledged before the call is in exactly the records it shows,
        whatever the fade or an ingest does while this query awaits. The indexes are
        synced to it just before returning; score them before the next ``await``.

        While neither tier has changed since the last view (their ``version``s), that
        view is returned as it is, without awaiting: the indexes are still in line with
        it. Otherwise the last view is followed by the records that changed since
        (:func:`~solace.memory.tier_view.follow_view`: work in proportion to them), or,
        when the tiers' change logs do not reach back that far, a view is taken of
        every record; only the changed records' forms and units are built and indexed.
        One refresh follows the tiers at a time: a second caller waits for it and then
        follows only what changed since (the actor's index keeper and a query do not
        both build the same forms).

        Returns:
            The :class:`TierView` the query works from.
        """
        view = self._current()
        if view is not None:
            return view
        async with self._following:
            return await self._follow()

    async def _follow(self) -> TierView:
        view = self._current()
        if view is not None:  # the refresh this one waited for followed them
            return view
        working, longterm = self.memory.working, self.memory.longterm
        key = versions_of(working, longterm)
        last = self._view
        changed = None if last is None else changed_between(working, longterm, last[0], key)
        if changed is None:
            view = take_view(working, longterm)
            todo, units = list(view.records.values()), set(view.owners)
        else:
            view, todo = follow_view(last[1], working, longterm, changed)  # type: ignore[index]
            units = {e for r in todo for e in r.entry_ids if view.owners.get(e) is r}
        view.forms.update(await self._derived.build(todo, units))
        self.indexes.sync(key, view, working, longterm)
        self._view = (key, view)
        return view

    # ----------------------------------------------------------- gather

    async def gather(
        self, query: str, vector: np.ndarray, *, include_private: bool,
        tags: Sequence[str] = (), known: Container[int] = frozenset(),
    ) -> Gathered:
        """The query's candidates from both tiers (see the module docstring).

        Candidates standing only for events in ``known`` (the events the asking agent
        holds, when this is a read-through peer) are left out; which candidates are
        chosen does not depend on it.

        Private records (drafts) and their units are offered only when
        ``include_private`` (the agent asking its own memory). With ``tags``, the
        long-term candidates (records and units) are only records carrying at least
        one of them; working candidates are the same as without tags. Without tags
        the candidates are exactly what they were before tags existed.

        Guarantees: candidates come from one :class:`TierView` of the tiers, taken
        when the call starts, so records that fade, merge or move while it awaits
        raise nothing and every event acknowledged before the call is offered through
        the records the view holds. The long-term FAISS search runs on the live index;
        a record it returns that the view does not hold in long-term (one that arrived
        there later) is skipped, since the view offers the records it came from. The
        tagged records are read in the same synchronous step as the view.
        """
        if isinstance(tags, str):
            raise TypeError(f"tags must be a sequence of strings, not the string {tags!r}")
        # No await between this and the view refresh() takes before its first await.
        tagged = self.memory.longterm.by_tags(tags) if tags else None
        view = await self.refresh()
        allowed = view.longterm if tagged is None else view.longterm & tagged
        # Scored now, before any await: the shared indexes are in line with this view.
        columns = view.working_columns
        record_index, unit_index = self.indexes.records, self.indexes.units
        record_ids, record_scores, working_lexical = record_index.match_at(
            query, columns.record_id.tolist())
        ceiling = record_index.ceiling(query) or 1.0
        unit_ids, unit_scores = unit_index.match(query)
        unit_ceiling = unit_index.ceiling(query) or 1.0

        def offers(record: MemoryRecord) -> bool:  # to this asker, and nothing it holds
            return (include_private or not record.private) and not (
                known and all(e in known for e in record.entry_ids))

        working = view.working
        dense = view.working_matrix @ vector if working else np.zeros(0, dtype=np.float32)
        kept: slice | np.ndarray = slice(None)  # the asker's own offers every working record
        if not include_private or known:
            mask = np.fromiter(map(offers, working), dtype=bool, count=len(working))
            working = tuple(r for r, keep in zip(working, mask.tolist(), strict=True) if keep)
            kept = mask
        dense_hits: list[tuple[MemoryRecord, float]] = []
        if allowed and tagged is None:
            dense_hits = await self._search(
                len(self.memory.longterm), self.memory.longterm.search, vector,
                self.candidates)
        elif allowed:  # exact over the tagged records: a FAISS top-k may hold none of them
            dense_hits = await self._search(
                len(allowed), self._nearest, [view.records[r] for r in sorted(allowed)],
                vector)
        in_longterm = _members(record_ids, view.longterm_ids if tagged is None else np.sort(
            np.fromiter(allowed, dtype=np.int64, count=len(allowed))))
        best_lexical = top_ids(record_ids[in_longterm], record_scores[in_longterm],
                               self.candidates)
        lexical = scores_among(record_ids, record_scores,
                               [r.record_id for r, _ in dense_hits] + best_lexical)
        others: list[Candidate] = []
        offered: set[int] = set()
        for found, sim in dense_hits:
            if found.record_id not in allowed:
                continue  # arrived after the view (it offers what it came from), or untagged
            held = view.records[found.record_id]
            if offers(held):
                offered.add(held.record_id)
                others.append(self._candidate(view, held, "longterm", float(sim),
                                              lexical.get(held.record_id, 0.0) / ceiling))

        def by_words(record: MemoryRecord, score: float) -> Candidate:  # BM25 found it
            return self._candidate(view, record, "longterm", record_similarity(record, vector),
                                   score / ceiling)

        for rid in best_lexical:
            record = view.records[rid]
            if rid not in offered and offers(record):
                others.append(by_words(record, lexical[rid]))
        others.extend(self._unit_candidates.offer(
            view, vector, (unit_ids, unit_scores), unit_ceiling, agent=self.agent,
            forms=self._derived.units, include_private=include_private, allowed=allowed,
            known=known))
        gathered = Gathered.of(self.agent, working, dense[kept], working_lexical[kept] / ceiling,
                               columns.event_ts[kept], columns.emotion[kept],
                               columns.record_id[kept], columns.single[kept], others)
        if not self.neighbour_seeds:
            return gathered

        def longterm(records: list[MemoryRecord]) -> list[Candidate]:
            records = [r for r in records if r.record_id in allowed and offers(r)]
            near = scores_among(record_ids, record_scores, [r.record_id for r in records])
            return [by_words(r, near.get(r.record_id, 0.0)) for r in records]

        def units(entry_ids: list[int]) -> list[Candidate]:
            entry_ids = [e for e in entry_ids if e not in known]
            keep = allowed_units(view, allowed, entry_ids).tolist()
            return self._unit_candidates.build(
                view, vector, [e for e, ok in zip(entry_ids, keep, strict=True) if ok],
                (unit_ids, unit_scores), unit_ceiling, agent=self.agent,
                forms=self._derived.units, include_private=include_private)

        return with_neighbours(gathered, view, self.indexes.singles, self.neighbour_seeds,
                               longterm=longterm, units=units)

    async def _search(self, size: int, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)``, a search over ``size`` vectors: on the loop while that is small
        (a worker-thread hop would cost more than the search), else through the offloader."""
        if size <= INLINE_SEARCH_MAX:
            return fn(*args)
        return await self.offloader.run(fn, *args)

    def _nearest(self, records: Sequence[MemoryRecord], vector: np.ndarray
                 ) -> list[tuple[MemoryRecord, float]]:
        """The ``candidates`` records of ``records`` most similar to ``vector`` (exact
        cosine), best first, ties by record id. Blocking: run through the offloader."""
        matrix = np.stack([np.asarray(r.embedding, dtype=np.float32) for r in records])
        sims = matrix @ vector
        ids = np.array([r.record_id for r in records], dtype=np.int64)
        by_id = {r.record_id: (r, float(s)) for r, s in zip(records, sims.tolist(), strict=True)}
        return [by_id[rid] for rid in top_ids(ids, sims, self.candidates)]

    def _candidate(self, view: TierView, record: MemoryRecord, tier: str, dense: float,
                   lexical: float) -> Candidate:
        text, tokens = (record.text, record.tokens) if record.rung < 3 \
            else view.forms[record.record_id]
        return Candidate(record, tier, self.agent, dense, lexical, text, tokens,  # type: ignore[arg-type]
                         tuple(record.entry_ids))

    @property
    def dense_scans(self) -> int:
        """Gathers that had to score every unit of this agent (the shared pool could not
        prove its top: :mod:`~solace.memory.unit_candidates`)."""
        return self._unit_candidates.scans

    async def prefetch(self, vector: np.ndarray) -> None:
        """Find the store's shared pool of best rows for ``vector`` before the agents
        gather (:meth:`~solace.memory.unit_candidates.UnitCandidates.prefetch`)."""
        await self._unit_candidates.prefetch(vector, self.offloader)

def _members(ids: np.ndarray, pool: np.ndarray) -> np.ndarray:
    """Which of ``ids`` are in the sorted array ``pool`` (no sort of either)."""
    if not len(pool):
        return np.zeros(len(ids), dtype=bool)
    at = np.minimum(np.searchsorted(pool, ids), len(pool) - 1)
    found: np.ndarray = pool[at] == ids
    return found
