"""Lexical relevance: an incremental BM25 index over record texts.

Dense similarity finds paraphrases but is weak on the exact strings people ask
about — names, numbers, dates ("What did Caroline do on 7 May?"). BM25 over the
words of a record's text finds those, so retrieval adds a lexical term to the
composite score. The index is a plain synchronous structure, cheap enough to update
on every change of a record's text and to query on the event loop: postings are
dicts (an update touches only its document's terms), and a query scores each term's
posting as numpy arrays, built once per posting and kept until that term's posting
changes. An index loaded from a kept :class:`LexicalState` keeps each posting as its
arrays until a document holding the term changes, so loading and saving cost array
operations, not a loop over every posting.

Terms are casefolded word tokens (letters and digits), stop words removed, with a
light suffix-stripping stemmer so that "painted", "painting" and "paints" meet.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

__all__ = ["STOP_WORDS", "LexicalIndex", "LexicalState", "content_words", "query_terms",
           "scores_among", "stem", "terms"]

# A compact English stop-word list (function words, auxiliaries, pronouns). Content
# words — names, nouns, verbs, numbers — are what remain.
STOP_WORDS: frozenset[str] = frozenset(
    """a about above after again against all am an and any are aren't as at be because
    been before being below between both but by can can't cannot could couldn't did didn't
    do does doesn't doing don't down during each few for from further had hadn't has hasn't
    have haven't having he he'd he'll he's her here here's hers herself him himself his how
    how's i i'd i'll i'm i've if in into is isn't it it's its itself let's me more most
    mustn't my myself no nor not of off on once only or other ought our ours ourselves out
    over own same shan't she she'd she'll she's should shouldn't so some such than that
    that's the their theirs them themselves then there there's these they they'd they'll
    they're they've this those through to too under until up very was wasn't we we'd we'll
    we're we've were weren't what what's when when's where where's which while who who's
    whom why why's will with won't would wouldn't you you'd you'll you're you've your yours
    yourself yourselves s t d ll m re ve just also yes yeah oh really""".split()
)

_WORD_RE = re.compile(r"[0-9a-z]+(?:'[a-z]+)?")


def stem(word: str) -> str:
    """A light, deterministic suffix stripper (plural, -ing, -ed, final -e).

    It only has to map a word and its common inflections to one key, for query
    and document alike ("hike", "hikes", "hiked", "hiking" -> "hik"); it never
    needs to produce a real word.
    """
    if word.isdigit() or len(word) <= 3:
        return word
    base = word
    if base.endswith("ies") and len(base) > 4:
        base = base[:-3] + "y"
    elif base.endswith("es") and base[:-2].endswith(("s", "x", "z", "ch", "sh")):
        base = base[:-2]
    elif base.endswith("s") and not base.endswith(("ss", "us", "is")):
        base = base[:-1]
    elif base.endswith("ing") and len(base) >= 6:
        base = base[:-3]
    elif base.endswith("ed") and len(base) >= 5:
        base = base[:-2]
    if base.endswith("e") and len(base) > 3:
        base = base[:-1]
    if len(base) > 3 and base[-1] == base[-2] and base[-1] not in "aeiouylsz":
        base = base[:-1]  # running -> runn -> run
    return base


def content_words(text: str) -> list[str]:
    """Casefolded words of ``text`` with punctuation and stop words removed (unstemmed)."""
    out = []
    for word in _WORD_RE.findall(text.casefold().replace("\u2019", "'")):
        word = word.removesuffix("'s")
        if word and word not in STOP_WORDS:
            out.append(word)
    return out


@lru_cache(maxsize=1 << 16)
def _term(word: str) -> str:
    """The index term of one casefolded word ("" for a stop word): a vocabulary
    repeats, so each word is stripped and stemmed once."""
    word = word.removesuffix("'s")
    return stem(word) if word and word not in STOP_WORDS else ""


def terms(text: str) -> list[str]:
    """The index terms of ``text``: content words, stemmed, in order (with repeats)."""
    return [t for t in map(_term, _WORD_RE.findall(text.casefold().replace("\u2019", "'")))
            if t]


@lru_cache(maxsize=4096)
def query_terms(query: str) -> tuple[str, ...]:
    """The distinct index terms of a query, sorted (each counts once; one order, so a
    score sums its terms the same way in every process). Cached: a recall asks every
    agent's indexes the same query."""
    return tuple(sorted(set(terms(query))))


@dataclass(frozen=True, slots=True, eq=False)
class LexicalState:
    """A :class:`LexicalIndex`'s contents as flat arrays, to write and read back fast.

    ``ids[i]`` was indexed as ``texts[i]``; the posting of ``terms[t]`` is the
    documents ``docs[indptr[t]:indptr[t + 1]]`` (positions in ``ids``) with their term
    frequencies ``tfs[...]`` at the same places.
    """

    k1: float
    b: float
    ids: np.ndarray  # int64
    texts: list[str]
    terms: list[str]
    indptr: np.ndarray  # int64, len(terms) + 1
    docs: np.ndarray  # int64
    tfs: np.ndarray  # int64

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
        self._postings: dict[str, dict[int, int]] = {}  # term -> {doc id: tf}
        self._lengths: dict[int, int] = {}
        self._texts: dict[int, str] = {}
        self._total_length = 0
        # Each document has a slot: a row of ``_slot_ids`` / ``_slot_lengths``.
        self._slot: dict[int, int] = {}
        self._free: list[int] = []
        self._slot_ids = np.zeros(64, dtype=np.int64)
        self._slot_lengths = np.zeros(64, dtype=np.float64)
        # term -> (slots, tfs) of its posting, dropped when the posting changes.
        self._arrays: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        # term -> (slots, tfs as int64) of a posting loaded by from_state and not
        # changed since: it becomes a dict in _postings only when a document holding
        # the term is added or removed (a term is in one of the two, never both).
        self._packed: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def __len__(self) -> int:
        return len(self._lengths)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._lengths

    def text(self, doc_id: int) -> str:
        """The text indexed under ``doc_id`` (KeyError if absent)."""
        return self._texts[doc_id]

    def ids(self) -> list[int]:
        """Every indexed id."""
        return list(self._lengths)

    def add(self, doc_id: int, text: str) -> None:
        """Index ``text`` under ``doc_id``, replacing what was there (no-op if unchanged)."""
        if self._texts.get(doc_id) == text:
            return
        if doc_id in self._lengths:
            self.remove(doc_id)
        counts = Counter(terms(text))
        for term, tf in counts.items():
            self._posting(term)[doc_id] = tf
            self._arrays.pop(term, None)
        length = sum(counts.values())
        self._lengths[doc_id] = length
        self._texts[doc_id] = text
        self._total_length += length
        slot = self._free.pop() if self._free else len(self._slot)
        if slot == len(self._slot_ids):
            self._slot_ids = np.resize(self._slot_ids, 2 * slot)
            self._slot_lengths = np.resize(self._slot_lengths, 2 * slot)
        self._slot[doc_id] = slot
        self._slot_ids[slot] = doc_id
        self._slot_lengths[slot] = length

    def remove(self, doc_id: int) -> None:
        """Forget ``doc_id``; a no-op if it is not indexed."""
        if doc_id not in self._lengths:
            return
        for term in set(terms(self._texts.pop(doc_id))):
            posting = self._posting(term) if self._df(term) else None
            if posting is not None:
                posting.pop(doc_id, None)
                self._arrays.pop(term, None)
                if not posting:
                    del self._postings[term]
        self._total_length -= self._lengths.pop(doc_id)
        self._free.append(self._slot.pop(doc_id))

    def _posting(self, term: str) -> dict[int, int]:
        """``term``'s posting as a dict to change (unpacked if loaded packed)."""
        posting = self._postings.get(term)
        if posting is None:
            packed = self._packed.pop(term, None)
            posting = {} if packed is None else dict(zip(
                self._slot_ids[packed[0]].tolist(), packed[1].tolist(), strict=True))
            self._postings[term] = posting
        return posting

    def _df(self, term: str) -> int:
        """How many documents hold ``term``."""
        posting = self._postings.get(term)
        if posting is not None:
            return len(posting)
        packed = self._packed.get(term)
        return 0 if packed is None else len(packed[0])

    def state(self) -> LexicalState:
        """The index's contents as arrays (a copy: later changes do not show in it).

        Documents are listed in slot order, so a posting still packed from
        :meth:`from_state` is renumbered with one array lookup, not a loop."""
        live = np.zeros(len(self._slot_ids), dtype=bool)
        live[np.fromiter(self._slot.values(), dtype=np.int64, count=len(self._slot))] = True
        position = np.cumsum(live) - 1  # slot -> position in ids
        ids = self._slot_ids[live]
        names = list(self._postings) + list(self._packed)
        docs_parts, tfs_parts = [], []
        slot = self._slot
        for posting in self._postings.values():
            docs_parts.append(position[np.fromiter((slot[d] for d in posting), dtype=np.int64,
                                                   count=len(posting))])
            tfs_parts.append(np.fromiter(posting.values(), dtype=np.int64, count=len(posting)))
        for slots, tfs in self._packed.values():
            docs_parts.append(position[slots])
            tfs_parts.append(tfs)
        indptr = np.zeros(len(names) + 1, dtype=np.int64)
        np.cumsum([len(p) for p in docs_parts], out=indptr[1:])
        empty = np.zeros(0, dtype=np.int64)
        return LexicalState(self.k1, self.b, ids.astype(np.int64),
                            [self._texts[d] for d in ids.tolist()], names,
                            indptr, np.concatenate(docs_parts) if docs_parts else empty,
                            np.concatenate(tfs_parts).astype(np.int64) if tfs_parts else empty)

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
        lengths_list = [int(x) for x in lengths.tolist()]
        index._lengths = dict(zip(ids, lengths_list, strict=True))
        index._texts = dict(zip(ids, state.texts, strict=True))
        index._total_length = sum(lengths_list)
        bounds = state.indptr.tolist()  # docs are positions in ids = the slots below
        index._packed = {
            term: (state.docs[bounds[t]:bounds[t + 1]], state.tfs[bounds[t]:bounds[t + 1]])
            for t, term in enumerate(state.terms)}
        size = max(64, len(ids))
        index._slot = {d: i for i, d in enumerate(ids)}
        index._slot_ids = np.zeros(size, dtype=np.int64)
        index._slot_ids[:len(ids)] = state.ids
        index._slot_lengths = np.zeros(size, dtype=np.float64)
        index._slot_lengths[:len(ids)] = lengths
        return index

    def sync(self, docs: Mapping[int, str]) -> None:
        """Make the index hold exactly ``docs`` (adds, replaces and removes as needed)."""
        for doc_id in [d for d in self._lengths if d not in docs]:
            self.remove(doc_id)
        for doc_id, text in docs.items():
            self.add(doc_id, text)

    def _idf(self, term: str) -> float:
        n = len(self._lengths)
        df = self._df(term)
        return math.log(1.0 + (n - df + 0.5) / (df + 0.5))

    def _posting_arrays(self, term: str) -> tuple[np.ndarray, np.ndarray] | None:
        arrays = self._arrays.get(term)
        if arrays is None and term in self._packed:
            slots, tfs = self._packed[term]
            arrays = (slots, tfs.astype(np.float64))
            self._arrays[term] = arrays
        if arrays is None:
            posting = self._postings.get(term)
            if not posting:
                return None
            slot = self._slot
            arrays = (np.fromiter((slot[d] for d in posting), dtype=np.int64,
                                  count=len(posting)),
                      np.fromiter(posting.values(), dtype=np.float64, count=len(posting)))
            self._arrays[term] = arrays
        return arrays

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
        if not self._lengths:
            return np.zeros(0, dtype=np.float64), np.zeros(0, dtype=np.int64)
        avg = self._total_length / len(self._lengths) or 1.0
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
