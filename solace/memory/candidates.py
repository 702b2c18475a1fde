"""One agent's side of retrieval: what its two tiers offer a query.

:class:`Retriever` keeps two BM25 indexes beside the agent's tiers, brought in line
with them at each query (records change as they fade, merge and move):

* **records** — every record of both tiers, by its text; a rung-3 record (an
  embedding and tags) by its tags plus its rehydrated form, the text it would have
  at ``inject_rung`` rebuilt from its substrate events, which is also the form it is
  injected in and the tokens it costs;
* **units** — every event of a record that stands for several events (a faded
  episode), in that event's own rung-1 form (the ladder's key sentence, with "I" and
  "yesterday" resolved to the speaker and the date). A question usually needs one or
  two turns of an episode; a unit carries them at a fraction of the episode's cost,
  with the facts the summary may have condensed away.

A unit's dense relevance is its event's own embedding: the vector its rung-0 record
had when it was ingested (``vectors``, kept by the runtime), or, after a restart,
its raw text embedded once on first use.

A query's candidates: every working record (scored in place), the long-term tier's
``candidates`` nearest records by embedding (a FAISS search in a worker thread,
concurrent with the rest), its ``candidates`` best records by BM25, and the
``candidates`` best units by BM25 and by embedding.
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping, Sequence
from typing import Any

import numpy as np
import trio

from solace.memory.lexical import LexicalIndex
from solace.memory.record import MemoryRecord
from solace.memory.retrieval import Candidate, EventReader

__all__ = ["Rehydrate", "Retriever"]

Rehydrate = Callable[[Sequence[Any], int], str]
UNIT_RUNG = 1


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
        vectors: entry id -> embedding of the event's raw text (shared, filled by the
            runtime at ingest and here on first use).
        embed: the embedder's blocking ``embed(texts)``.
        unit_form: ``event -> text`` of a unit; default: the event's rung-1 form.
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
        vectors: MutableMapping[int, np.ndarray] | None = None,
        embed: Callable[[Sequence[str]], np.ndarray] | None = None,
        unit_form: Callable[[Any], str] | None = None,
    ) -> None:
        if inject_rung not in (1, 2):
            raise ValueError(f"inject_rung must be 1 or 2, got {inject_rung!r}")
        if candidates < 1:
            raise ValueError(f"candidates must be >= 1, got {candidates!r}")
        self.memory = memory
        self.tokenizer = tokenizer
        self.offloader = offloader
        self.events = events
        self.rehydrate = rehydrate
        self.inject_rung = inject_rung
        self.candidates = candidates
        self.vectors: MutableMapping[int, np.ndarray] = vectors if vectors is not None else {}
        self.embed = embed
        self.unit_form = unit_form if unit_form is not None else (
            lambda event: self.rehydrate([event], UNIT_RUNG)
        )
        self._unit_matrix: tuple[frozenset[int], np.ndarray, np.ndarray] | None = None
        self._records = LexicalIndex()
        self._units = LexicalIndex()
        # record_id -> (entry_ids, rehydrated text, tokens), for rung-3 records
        self._forms: dict[int, tuple[tuple[int, ...], str, int]] = {}
        # entry_id -> (rung-1 text, tokens); an event never changes, so neither does this
        self._unit_forms: dict[int, tuple[str, int]] = {}

    @property
    def agent(self) -> str:
        """The agent whose memory this is."""
        return str(self.memory.agent)

    # ------------------------------------------------------------ forms

    def injected_form(self, record: MemoryRecord) -> tuple[str, int]:
        """The text a record is injected as, and its tokens (rung 3: rehydrated).

        Only valid after a :meth:`gather` (or :meth:`refresh`) that saw the record.
        """
        if record.rung < 3:
            return record.text, record.tokens
        _ids, text, tokens = self._forms[record.record_id]
        return text, tokens

    async def _build_forms(self, records: Sequence[MemoryRecord], unit_ids: set[int]) -> None:
        """Rehydrate the rung-3 records and the units not built yet, in one thread call."""
        todo = [
            r for r in records
            if r.rung >= 3 and self._forms.get(r.record_id, ((),))[0] != tuple(r.entry_ids)
        ]
        units = sorted(e for e in unit_ids if e not in self._unit_forms)
        unembedded = sorted(e for e in unit_ids if e not in self.vectors)
        if self.embed is None:
            unembedded = []
        if not todo and not units and not unembedded:
            return
        wanted = sorted({e for r in todo for e in r.entry_ids} | set(units) | set(unembedded))
        events = dict(zip(wanted, await self.events.get_many(wanted), strict=True))

        def build() -> tuple[list[str], list[str], list[int], np.ndarray | None]:
            forms = [self.rehydrate([events[e] for e in r.entry_ids], self.inject_rung)
                     for r in todo]
            unit_texts = [self.unit_form(events[e]) for e in units]
            raw = [self.rehydrate([events[e]], 0) for e in unembedded]
            vectors = self.embed(raw) if raw and self.embed is not None else None
            return forms, unit_texts, self.tokenizer.count_many(forms + unit_texts), vectors

        forms, unit_texts, counts, vectors = await self.offloader.run(build)
        for record, text, tokens in zip(todo, forms, counts[: len(forms)], strict=True):
            self._forms[record.record_id] = (tuple(record.entry_ids), text, tokens)
        for eid, text, tokens in zip(units, unit_texts, counts[len(forms):], strict=True):
            self._unit_forms[eid] = (text, tokens)
        if vectors is not None:
            for eid, vector in zip(unembedded, vectors, strict=True):
                self.vectors.setdefault(eid, np.asarray(vector, dtype=np.float32))

    async def refresh(self) -> tuple[dict[int, MemoryRecord], dict[int, MemoryRecord]]:
        """Bring both indexes in line with the tiers.

        Returns:
            ``(records by id, owning record by unit entry id)``.
        """
        records: dict[int, MemoryRecord] = {r.record_id: r for r in self.memory.working.records()}
        records.update((r.record_id, r) for r in self.memory.longterm.records())
        owners = {e: r for r in records.values() if len(r.entry_ids) > 1 for e in r.entry_ids}
        await self._build_forms(list(records.values()), set(owners))
        docs = {}
        for rid, record in records.items():
            docs[rid] = record.text if record.rung < 3 else (
                record.text + "\n" + self._forms[rid][1]
            )
        self._records.sync(docs)
        self._units.sync({e: self._unit_forms[e][0] for e in owners})
        for rid in [r for r in self._forms if r not in records]:
            del self._forms[rid]
        return records, owners

    # ----------------------------------------------------------- gather

    async def gather(
        self, query: str, vector: np.ndarray, *, include_private: bool
    ) -> list[Candidate]:
        """The query's candidates from both tiers (see the module docstring).

        Private records (drafts) and their units are offered only when
        ``include_private`` (the agent asking its own memory).
        """
        records, owners = await self.refresh()
        dense_hits: list[tuple[MemoryRecord, float]] = []

        async def search_longterm() -> None:
            if len(self.memory.longterm):
                found = await self.offloader.run(
                    self.memory.longterm.search, vector, self.candidates
                )
                dense_hits.extend(found)

        lexical = self._records.scores(query)
        ceiling = self._records.ceiling(query) or 1.0
        out: list[Candidate] = []
        async with trio.open_nursery() as nursery:
            nursery.start_soon(search_longterm)
            ids, matrix = self.memory.working.embeddings()
            sims = matrix @ vector if len(ids) else np.zeros(0)
            for rid, sim in zip(ids.tolist(), sims.tolist(), strict=True):
                record = records[int(rid)]
                if include_private or not record.private:
                    out.append(self._candidate(record, "working", float(sim),
                                               lexical.get(record.record_id, 0.0) / ceiling))

        offered: set[int] = set()
        for record, sim in dense_hits:
            if include_private or not record.private:
                offered.add(record.record_id)
                out.append(self._candidate(record, "longterm", float(sim),
                                           lexical.get(record.record_id, 0.0) / ceiling))
        by_lexical = sorted(
            (rid for rid in lexical if rid in self.memory.longterm),
            key=lambda r: (-lexical[r], r),
        )
        for rid in by_lexical[: self.candidates]:
            record = records[rid]
            if rid not in offered and (include_private or not record.private):
                out.append(self._candidate(record, "longterm", _dense(record, vector),
                                           lexical[rid] / ceiling))
        out.extend(self._unit_candidates(query, vector, owners, include_private))
        return out

    def _candidate(self, record: MemoryRecord, tier: str, dense: float,
                   lexical: float) -> Candidate:
        text, tokens = self.injected_form(record)
        return Candidate(record, tier, self.agent, dense, lexical, text, tokens,  # type: ignore[arg-type]
                         tuple(record.entry_ids))

    def _unit_dense(self, owners: dict[int, MemoryRecord], vector: np.ndarray
                    ) -> dict[int, float]:
        """Cosine of the query and each unit's event embedding (units without one: none)."""
        ids = frozenset(e for e in owners if e in self.vectors)
        if self._unit_matrix is None or self._unit_matrix[0] != ids:
            order = np.array(sorted(ids), dtype=np.int64)
            matrix = (np.stack([self.vectors[int(e)] for e in order]) if len(order)
                      else np.zeros((0, len(vector)), dtype=np.float32))
            self._unit_matrix = (ids, order, matrix)
        _ids, order, matrix = self._unit_matrix
        if not len(order):
            return {}
        return dict(zip(order.tolist(), (matrix @ vector).tolist(), strict=True))

    def _unit_candidates(self, query: str, vector: np.ndarray,
                         owners: dict[int, MemoryRecord], include_private: bool
                         ) -> list[Candidate]:
        lexical = self._units.scores(query)
        ceiling = self._units.ceiling(query) or 1.0
        dense = self._unit_dense(owners, vector)
        chosen = sorted(lexical, key=lambda e: (-lexical[e], e))[: self.candidates]
        chosen += sorted(dense, key=lambda e: (-dense[e], e))[: self.candidates]
        out = []
        for eid in dict.fromkeys(chosen):
            record = owners[eid]
            if record.private and not include_private:
                continue
            tier = "working" if record.record_id in self.memory.working else "longterm"
            text, tokens = self._unit_forms[eid]
            sim = dense[eid] if eid in dense else _dense(record, vector)
            out.append(Candidate(record, tier, self.agent,  # type: ignore[arg-type]
                                 sim, lexical.get(eid, 0.0) / ceiling, text, tokens, (eid,),
                                 unit=True))
        return out


def _dense(record: MemoryRecord, vector: np.ndarray) -> float:
    return float(record.embedding @ vector) if record.embedding is not None else 0.0
