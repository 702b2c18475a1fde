"""Lexical relevance: an incremental BM25 index over record and unit texts.

Dense similarity finds paraphrases but is weak on the exact strings people ask
about — names, numbers, dates ("What did Caroline do on 7 May?"). BM25 over the
words of a record's text finds those, so retrieval adds a lexical term to the
composite score. The index is a plain synchronous structure, cheap enough to update
on every change of a record's text and to query on the event loop: each term's
posting is a pair of compact arrays (documents' slots and term frequencies, six bytes
a document); an update touches only its document's terms (a removal moves the
posting's last entry into the gap), and a query scores each posting through numpy
views of it, without a copy. A document's text is kept in a list by its slot (8 bytes
a document, where a dict by id cost ~90). Saving and loading a :class:`LexicalState`
cost array operations, not a loop over every document of every posting.

Terms are :func:`solace.memory.lexical.terms`.
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from solace.memory.lexical import query_terms, terms

__all__ = ["LexicalIndex", "LexicalState", "scores_among"]

#: The largest term frequency a posting records (uint16); more counts as this many.
_TF_LIMIT = int(np.iinfo(np.uint16).max)


@dataclass(frozen=True, slots=True, eq=False)
class LexicalState:
    """A :class:`LexicalIndex`'s contents as flat arrays, to write and read back fast.

    ``ids[i]`` was indexed as ``texts[i]``; the posting of ``terms[t]`` is the
    documents ``docs[indptr[t]:indptr[t + 1]]`` (positions in ``ids``) with their term
    frequencies ``tfs[...]`` at the same places. :meth:`LexicalIndex.state` gives
    ``docs`` as int32 and ``tfs`` as uint16 (what the postings hold); any integer type
    is taken back.
    """

    k1: float
    b: float
    ids: np.ndarray  # int64
    texts: list[str]
    terms: list[str]
    indptr: np.ndarray  # int64, len(terms) + 1
    docs: np.ndarray  # int32
    tfs: np.ndarray  # uint16, each at most the limit

    def check(self) -> None:
        """Raise ValueError unless the arrays fit together (a damaged file, a bug)."""
        n = len(self.ids)
        if len(self.texts) != n or len(self.indptr) != len(self.terms) + 1:
            raise ValueError(f"lexical state of {n} ids has {len(self.texts)} texts and "
                             f"{len(self.indptr)} posting bounds for {len(self.terms)} terms")
        if len(self.docs) != len(self.tfs) or (len(self.indptr) and (
                self.indptr[0] != 0 or self.indptr[-1] != len(self.docs)
                or (np.diff(self.indptr) <= 0).any())):
            raise ValueError("lexical state's postings do not fit their bounds")
        if len(self.docs) and (self.docs.min() < 0 or self.docs.max() >= n
                               or self.tfs.min() < 1):
            raise ValueError("lexical state's postings name a document it does not hold")
        if len(set(self.ids.tolist())) != n:
            raise ValueError("lexical state holds an id twice")


class _Posting:
    """One term's documents: their slots and term frequencies, in two ``array.array``s
    (six bytes a document, where a dict entry cost about seventy). A query reads them
    as numpy views (:meth:`arrays`) that it drops before the index changes again."""

    __slots__ = ("slots", "tfs")

    def __init__(self, slots: memoryview | None = None, tfs: memoryview | None = None) -> None:
        """Empty, or holding ``slots`` (int32 bytes) and ``tfs`` (uint16 bytes, each at
        most the limit)."""
        self.slots = array("i")
        self.tfs = array("H")
        if slots is not None and tfs is not None:
            self.slots.frombytes(slots)
            self.tfs.frombytes(tfs)

    @property
    def n(self) -> int:
        return len(self.slots)

    def add(self, slot: int, tf: int) -> None:
        try:
            self.slots.append(slot)
        except BufferError:  # a view of it outlived its query: keep it, change a copy
            self._copy()
            self.slots.append(slot)
        try:
            self.tfs.append(min(tf, _TF_LIMIT))
        except BufferError:
            self._copy()
            self.tfs.append(min(tf, _TF_LIMIT))

    def remove(self, slot: int) -> None:
        """Drop ``slot`` (its place takes the last entry: order is not kept)."""
        view = np.frombuffer(self.slots, dtype=np.int32)
        at = np.flatnonzero(view == slot)
        del view  # released before the arrays shrink
        if not len(at):
            return
        try:
            last_slot = self.slots.pop()
        except BufferError:
            self._copy()
            last_slot = self.slots.pop()
        try:
            last_tf = self.tfs.pop()
        except BufferError:
            self._copy()
            last_tf = self.tfs.pop()
        i = int(at[0])
        if i < len(self.slots):  # arrays that shrank hold no view: safe to write
            self.slots[i], self.tfs[i] = last_slot, last_tf

    def _copy(self) -> None:
        """Own fresh arrays (a view of the old ones keeps reading them as they were)."""
        self.slots, self.tfs = array("i", self.slots), array("H", self.tfs)

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(slots as int32, term frequencies as uint16): views, not copies."""
        return (np.frombuffer(self.slots, dtype=np.int32),
                np.frombuffer(self.tfs, dtype=np.uint16))


class LexicalIndex:
    """Okapi BM25 over documents keyed by int ids; add, replace and remove in O(terms).

    Args:
        k1: term-frequency saturation.
        b: length normalisation.

    Scores are non-negative (Lucene's IDF), so "no lexical match" is exactly 0.
    """

    def __init__(self, *, k1: float = 1.2, b: float = 0.75) -> None:
        if k1 < 0 or not 0.0 <= b <= 1.0:
            raise ValueError(f"BM25 needs k1 >= 0 and 0 <= b <= 1, got k1={k1!r}, b={b!r}")
        self.k1 = k1
        self.b = b
        self._postings: dict[str, _Posting] = {}
        self._total_length = 0
        # Each document has a slot: a row of ``_slot_ids`` / ``_slot_lengths`` and a
        # place in ``_slot_texts`` ("" while the slot is free).
        self._slot: dict[int, int] = {}
        self._slot_texts: list[str] = []
        self._free: list[int] = []
        self._slot_ids = np.zeros(64, dtype=np.int64)
        self._slot_lengths = np.zeros(64, dtype=np.float64)

    def __len__(self) -> int:
        return len(self._slot)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._slot

    def text(self, doc_id: int) -> str:
        """The text indexed under ``doc_id`` (KeyError if absent)."""
        return self._slot_texts[self._slot[doc_id]]

    def ids(self) -> list[int]:
        """Every indexed id."""
        return list(self._slot)

    def add(self, doc_id: int, text: str) -> None:
        """Index ``text`` under ``doc_id``, replacing what was there (no-op if unchanged)."""
        held = self._slot.get(doc_id)
        if held is not None:
            if self._slot_texts[held] == text:
                return
            self.remove(doc_id)
        counts = Counter(terms(text))
        slot = self._free.pop() if self._free else len(self._slot)
        if slot == len(self._slot_ids):
            self._slot_ids = np.resize(self._slot_ids, 2 * slot)
            self._slot_lengths = np.resize(self._slot_lengths, 2 * slot)
        for term, tf in counts.items():
            posting = self._postings.get(term)
            if posting is None:
                posting = self._postings[term] = _Posting()
            posting.add(slot, tf)
        length = sum(counts.values())
        if slot == len(self._slot_texts):
            self._slot_texts.append(text)
        else:
            self._slot_texts[slot] = text
        self._total_length += length
        self._slot[doc_id] = slot
        self._slot_ids[slot] = doc_id
        self._slot_lengths[slot] = length

    def remove(self, doc_id: int) -> None:
        """Forget ``doc_id``; a no-op if it is not indexed."""
        slot = self._slot.pop(doc_id, None)
        if slot is None:
            return
        text, self._slot_texts[slot] = self._slot_texts[slot], ""
        for term in set(terms(text)):
            posting = self._postings.get(term)
            if posting is not None:
                posting.remove(slot)
                if not posting.n:
                    del self._postings[term]
        self._total_length -= int(self._slot_lengths[slot])
        self._free.append(slot)

    def _df(self, term: str) -> int:
        """How many documents hold ``term``."""
        posting = self._postings.get(term)
        return 0 if posting is None else posting.n

    def state(self) -> LexicalState:
        """The index's contents as arrays (a copy: later changes do not show in it).

        Documents are listed in slot order, so each posting is renumbered with one
        array lookup, not a loop."""
        live = np.zeros(len(self._slot_ids), dtype=bool)
        live[np.fromiter(self._slot.values(), dtype=np.int64, count=len(self._slot))] = True
        position = np.cumsum(live) - 1  # slot -> position in ids
        ids = self._slot_ids[live]
        names = list(self._postings)
        postings = list(self._postings.values())
        indptr = np.zeros(len(names) + 1, dtype=np.int64)
        np.cumsum([p.n for p in postings], out=indptr[1:])
        docs = np.concatenate([position[p.arrays()[0]] for p in postings]).astype(np.int32) \
            if postings else np.zeros(0, dtype=np.int32)
        tfs = np.concatenate([p.arrays()[1] for p in postings]) if postings \
            else np.zeros(0, dtype=np.uint16)
        texts = self._slot_texts
        return LexicalState(self.k1, self.b, ids.astype(np.int64),
                            [texts[s] for s in np.flatnonzero(live).tolist()], names, indptr,
                            docs, tfs)

    @classmethod
    def from_state(cls, state: LexicalState) -> LexicalIndex:
        """The index :meth:`state` was taken of, without analysing any text again.

        Raises:
            ValueError: the state's arrays do not fit together.
        """
        state.check()
        index = cls(k1=state.k1, b=state.b)
        ids = state.ids.tolist()
        lengths = np.bincount(state.docs, weights=state.tfs, minlength=len(ids))
        index._slot_texts = list(state.texts)
        index._total_length = int(lengths.sum())
        bounds = state.indptr.tolist()  # docs are positions in ids = the slots below
        # Typed once and sliced as bytes (no copy) per term: one copy into each posting.
        docs = np.ascontiguousarray(state.docs, dtype=np.int32).data.cast("B")
        tfs = state.tfs if state.tfs.dtype == np.uint16 else \
            np.minimum(state.tfs, _TF_LIMIT).astype(np.uint16)
        tfs = np.ascontiguousarray(tfs).data.cast("B")
        index._postings = {
            term: _Posting(docs[4 * bounds[t]:4 * bounds[t + 1]],
                           tfs[2 * bounds[t]:2 * bounds[t + 1]])
            for t, term in enumerate(state.terms)}
        size = max(64, len(ids))
        index._slot = dict(zip(ids, range(len(ids)), strict=True))
        index._slot_ids = np.zeros(size, dtype=np.int64)
        index._slot_ids[:len(ids)] = state.ids
        index._slot_lengths = np.zeros(size, dtype=np.float64)
        index._slot_lengths[:len(ids)] = lengths
        return index

    def sync(self, docs: Mapping[int, str]) -> None:
        """Make the index hold exactly ``docs`` (adds, replaces and removes as needed)."""
        for doc_id in [d for d in self._slot if d not in docs]:
            self.remove(doc_id)
        for doc_id, text in docs.items():
            self.add(doc_id, text)

    def _idf(self, term: str) -> float:
        n = len(self._slot)
        df = self._df(term)
        return math.log(1.0 + (n - df + 0.5) / (df + 0.5))

    def _posting_arrays(self, term: str) -> tuple[np.ndarray, np.ndarray] | None:
        """``term``'s (slots, term frequencies), or None if no document has it."""
        posting = self._postings.get(term)
        return None if posting is None else posting.arrays()

    def match(self, query: str) -> tuple[np.ndarray, np.ndarray]:
        """BM25 of every document matching at least one query term, as arrays.

        Returns:
            ``(doc ids, scores)``, aligned, scores > 0, in no particular order;
            documents with no term in common are absent.
        """
        total, slots = self._totals(query)
        return self._slot_ids[slots], total[slots]

    def match_at(self, query: str, ids: Sequence[int]
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`match`, and from the same pass the score of each of ``ids`` (aligned
        with them; 0 for one that matches no term or is not indexed)."""
        total, slots = self._totals(query)
        at = np.fromiter((self._slot.get(i, -1) for i in ids), dtype=np.int64,
                         count=len(ids))
        scores_at = np.where(at >= 0, total[at], 0.0) if len(total) else np.zeros(len(ids))
        return self._slot_ids[slots], total[slots], scores_at

    def _totals(self, query: str) -> tuple[np.ndarray, np.ndarray]:
        """BM25 per slot, and the slots of the documents matching a query term."""
        if not self._slot:
            return np.zeros(0, dtype=np.float64), np.zeros(0, dtype=np.int64)
        avg = self._total_length / len(self._slot) or 1.0
        total = np.zeros(len(self._slot_ids), dtype=np.float64)
        hit = np.zeros(len(self._slot_ids), dtype=bool)
        k1, b = self.k1, self.b
        for term in query_terms(query):
            arrays = self._posting_arrays(term)
            if arrays is None:
                continue
            slots, tf = arrays
            idf = self._idf(term)
            norm = 1.0 - b + b * self._slot_lengths[slots] / avg
            total[slots] += idf * tf * (k1 + 1.0) / (tf + k1 * norm)
            hit[slots] = True
        return total, np.flatnonzero(hit)

    def scores(self, query: str, ids: Iterable[int] | None = None) -> dict[int, float]:
        """BM25 score of every document matching at least one query term.

        Args:
            query: free text; analysed like documents (each distinct term counts once).
            ids: restrict to these documents (others are not returned).

        Returns:
            ``{doc_id: score}``, scores > 0; documents with no term in common are absent.
        """
        doc_ids, scores = self.match(query)
        out = dict(zip(doc_ids.tolist(), scores.tolist(), strict=True))
        if ids is not None:
            allowed = set(ids)
            out = {d: v for d, v in out.items() if d in allowed}
        return out

    def ceiling(self, query: str) -> float:
        """An upper bound of :meth:`scores` for ``query`` (0.0 if no term is indexed).

        Dividing by it maps scores into [0, 1] on a scale that does not depend on
        which other documents matched, so lexical scores are comparable across
        tiers and agents.
        """
        return sum(
            self._idf(t) * (self.k1 + 1.0) for t in query_terms(query) if self._df(t)
        )


def scores_among(ids: np.ndarray, scores: np.ndarray, wanted: Iterable[int]) -> dict[int, float]:
    """``{id: score}`` of the ``wanted`` ids among a :meth:`LexicalIndex.match` result
    (``ids``, ``scores``); one absent there matched nothing. Costs one pass over the
    match, not a dict of it (a common word can match tens of thousands of documents)."""
    matched = np.isin(ids, np.fromiter(wanted, dtype=np.int64))
    return dict(zip(ids[matched].tolist(), scores[matched].tolist(), strict=True))
