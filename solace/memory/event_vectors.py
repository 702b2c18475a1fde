"""Embeddings of events' raw text: the runtime's one store of them, searched in place.

Retrieval ranks the events of a faded episode (its *units*) by the embedding of each
event's raw text. The runtime keeps those vectors in one :class:`EventVectorStore`,
entry id -> vector, filled at ingest (a rung-0 record's embedding is its event's) and
by retrieval on first use, and shared by every agent. They are kept across restarts
in sealed segment files (:mod:`~solace.memory.event_vector_files`).

Vectors are kept as int8 codes with one float32 scale a row
(:mod:`~solace.memory.row_blocks`), in memory and in segments: 388 B an event at 384-d,
where float16 took 768 and float32 1,536. Scores are float32 products of the widened
codes, scaled; top-10 agreement with float32 rows, and LoCoMo evidence recall both
ways, are measured by ``benchmarks/vector_precision.py``. From
:data:`~solace.memory.row_ann.ANN_ROWS` rows on, :meth:`EventVectorStore.top_rows`
searches an approximate index (:mod:`~solace.memory.row_ann`) and scores its shortlist
exactly.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Iterator, MutableMapping

import numpy as np

from solace.memory.entry_index import grown_map
from solace.memory.row_ann import ANN_ROWS, RowAnn
from solace.memory.row_blocks import (
    Quantized,
    RowBlock,
    best_rows,
    gather_rows,
    quantize,
    row_scores,
    top_rows,
)

__all__ = ["BLOCK_ROWS", "WIDE_ROWS", "EventVectorStore"]

log = logging.getLogger(__name__)

#: Rows per block of :class:`EventVectorStore` (a block is allocated whole, never moved).
BLOCK_ROWS = 4096
#: The codes of the first block's rows are kept widened to float32 too (6 MB at 384-d,
#: whatever the store's size): a store that fits in it, as most homes do, is scored by
#: one float32 product, not widened chunk by chunk on every query.
WIDE_ROWS = BLOCK_ROWS


class EventVectorStore(MutableMapping[int, np.ndarray]):
    """The runtime's one copy of the events' vectors: entry id -> vector, kept as int8
    codes and a scale a row (:mod:`~solace.memory.row_blocks`) and handed out as a
    float32 copy of that (``codes * scale``).

    Rows live in fixed blocks of :data:`BLOCK_ROWS` (:class:`~solace.memory.row_blocks.
    RowBlock`: a block never moves, so growing copies nothing and :meth:`frozen` copies
    no row). Every agent's retrieval asks the same query vector of the same events, so
    :meth:`top_rows` (the best rows) and :meth:`similarities` (every row) are
    remembered for the last query vector, and the agents pick their units' rows out of
    that (:meth:`rows_of`, :meth:`entries_at`) instead of each scoring its own copy.
    Mutated on the event loop only; a vector, once set, is not changed.
    """

    def __init__(self) -> None:
        self._dim: int | None = None
        self._blocks: list[RowBlock] = []
        self._wide = np.zeros((0, 0), dtype=np.float32)  # the first WIDE_ROWS' codes, widened
        self._size = 0
        self._row_of = np.full(0, -1, dtype=np.int64)  # entry id -> row (-1: none)
        self._entry_of = np.full(0, -1, dtype=np.int64)  # row -> entry id
        #: (query bytes, rows held, every row's score): one scoring a query, whether
        #: similarities() on the loop or top_rows()' exact search in a worker did it
        self._last: tuple[bytes, int, np.ndarray] | None = None
        #: ((query bytes, k), rows held, top_rows' result)
        self._last_top: tuple[tuple[bytes, int], int, tuple[np.ndarray, np.ndarray]] | None = None
        self._frozen = False
        #: the approximate index :meth:`top_rows` searches once it is built (from
        #: :data:`~solace.memory.row_ann.ANN_ROWS` rows on); None before it is started
        self._ann: RowAnn | None = None
        self._ann_lock = threading.Lock()

    def __len__(self) -> int:
        return self._size

    def _row(self, entry_id: object) -> int:
        if not isinstance(entry_id, int | np.integer) or not 0 <= entry_id < len(self._row_of):
            return -1
        return int(self._row_of[entry_id])

    def __contains__(self, entry_id: object) -> bool:
        return self._row(entry_id) >= 0

    def __getitem__(self, entry_id: int) -> np.ndarray:
        row = self._row(entry_id)
        if row < 0:
            raise KeyError(entry_id)
        block, offset = self._blocks[row // BLOCK_ROWS], row % BLOCK_ROWS
        vector: np.ndarray = block.codes[offset].astype(np.float32) * block.scales[offset]
        return vector

    def __iter__(self) -> Iterator[int]:
        return iter(np.flatnonzero(self._row_of >= 0).tolist())

    def __setitem__(self, entry_id: int, vector: np.ndarray) -> None:
        if self._frozen:
            raise TypeError("a frozen copy of the event vectors is read-only")
        vector = np.asarray(vector)
        if self._dim is None:
            self._dim = int(vector.shape[-1])
        if vector.shape != (self._dim,):
            raise ValueError(f"event {entry_id}'s vector has shape {vector.shape}, "
                             f"the store holds {self._dim}-d vectors")
        try:
            kept = quantize(vector[None])  # before any change: a bad vector sets nothing
        except ValueError:
            raise ValueError(f"event {entry_id}'s vector is not finite") from None
        row = self._row(entry_id)
        if row >= 0:  # a row rewritten: a pool may hold its old score
            self._last_top = None
        else:
            if entry_id < 0:
                raise KeyError(f"entry ids are >= 0, got {entry_id!r}")
            self._row_of = grown_map(self._row_of, entry_id + 1)
            row = self._size
            self._grow_rows(row + 1)
            self._size += 1
            self._row_of[entry_id] = row
            self._entry_of[row] = entry_id
        self._put(row, kept)
        self._last = None  # a rewritten row (an added one changes the size anyway)

    def __delitem__(self, entry_id: int) -> None:
        raise TypeError("an event's vector is never removed (events are never changed)")

    def _grow_rows(self, rows: int) -> None:
        """Room for ``rows`` rows: blocks, and the row -> entry id map."""
        assert self._dim is not None
        if not len(self._wide):
            self._wide = np.zeros((WIDE_ROWS, self._dim), dtype=np.float32)
        while len(self._blocks) * BLOCK_ROWS < rows:
            self._blocks.append(RowBlock(BLOCK_ROWS, self._dim))
        self._entry_of = grown_map(self._entry_of, rows)

    def _put(self, row: int, rows: Quantized) -> None:
        """Write ``rows`` from ``row`` on (inside one block), widened into the head too."""
        self._blocks[row // BLOCK_ROWS].put(row % BLOCK_ROWS, rows)
        if row < WIDE_ROWS:
            end = min(row + len(rows), WIDE_ROWS)
            self._wide[row:end] = rows.codes[:end - row]

    def entries_at(self, rows: np.ndarray) -> np.ndarray:
        """The entry ids of ``rows`` (rows the store holds, as :meth:`top_rows` gives)."""
        return self._entry_of[np.asarray(rows, dtype=np.int64)]

    def rows_of(self, entry_ids: np.ndarray) -> np.ndarray:
        """The rows of ``entry_ids`` in :meth:`similarities` (-1 where none is held)."""
        ids = np.asarray(entry_ids, dtype=np.int64)
        rows = np.full(len(ids), -1, dtype=np.int64)
        inside = (ids >= 0) & (ids < len(self._row_of))
        rows[inside] = self._row_of[ids[inside]]
        return rows

    def add_new(self, entry_ids: np.ndarray, matrix: np.ndarray | Quantized) -> int:
        """Set the vectors (rows of ``matrix``: floats, or rows as another store keeps
        them) of those ``entry_ids`` the store does not hold yet (the first of repeated
        ids), all at once; returns how many.

        Raises:
            ValueError: a row of the wrong width, or not finite; nothing is set.
        """
        if self._frozen:
            raise TypeError("a frozen copy of the event vectors is read-only")
        ids = np.asarray(entry_ids, dtype=np.int64)
        rows = matrix if isinstance(matrix, Quantized) else np.asarray(matrix)
        shape = rows.codes.shape if isinstance(rows, Quantized) else rows.shape
        if len(shape) != 2 or shape[0] != len(ids):
            raise ValueError(f"{len(ids)} ids for vectors of shape {shape}")
        if len(ids) == 0:
            return 0
        dim = self._dim if self._dim is not None else int(shape[1])
        if shape[1] != dim:
            raise ValueError(f"vectors of shape {shape}, the store holds {dim}-d vectors")
        if (ids < 0).any():
            raise KeyError(f"entry ids are >= 0, got {int(ids.min())}")
        if not isinstance(rows, Quantized) and not np.isfinite(rows).all():
            raise ValueError("a vector is not finite")
        _, first = np.unique(ids, return_index=True)
        first.sort()
        first = first[self.rows_of(ids[first]) < 0]
        if len(first) < len(ids):
            ids = ids[first]
            rows = (Quantized(rows.codes[first], rows.scales[first])
                    if isinstance(rows, Quantized) else rows[first])
        self._dim = dim
        if len(ids) == 0:
            return 0
        top = int(ids.max())
        self._row_of = grown_map(self._row_of, top + 1)
        start, done = self._size, 0
        self._grow_rows(start + len(ids))
        while done < len(ids):  # a block at a time (a float matrix quantized in slices)
            row = start + done
            take = min(BLOCK_ROWS - row % BLOCK_ROWS, len(ids) - done)
            part = (Quantized(rows.codes[done:done + take], rows.scales[done:done + take])
                    if isinstance(rows, Quantized) else quantize(rows[done:done + take]))
            self._put(row, part)
            done += take
        self._size = start + len(ids)
        self._row_of[ids] = np.arange(start, self._size, dtype=np.int64)
        self._entry_of[start:self._size] = ids
        return len(ids)

    def adopt(self, other: EventVectorStore) -> int:
        """Take every vector of ``other`` (a store read in another thread, not used
        after) that this one does not hold; returns how many. Into an empty store its
        rows move without a copy; otherwise they are added as :meth:`add_new` adds.

        Raises:
            ValueError: their widths differ; nothing is taken.
            TypeError: this store is a frozen copy.
        """
        if self._frozen:
            raise TypeError("a frozen copy of the event vectors is read-only")
        if other is self or not len(other):
            return 0
        if self._dim is not None and other._dim != self._dim:
            raise ValueError(f"vectors of {other._dim} dimensions, the store holds "
                             f"{self._dim}-d vectors")
        if not self._size:
            self._dim, self._size = other._dim, other._size
            self._blocks, self._wide = other._blocks, other._wide
            self._row_of, self._entry_of = other._row_of, other._entry_of
            self._last = self._last_top = None
            if other._ann is not None:  # kept by the files: over these rows, in this order
                with self._ann_lock:
                    self._ann = other._ann
            return self._size
        ids = other._entry_of[: other._size]
        return self.add_new(ids, other.stored(ids))

    def stored(self, entry_ids: np.ndarray) -> Quantized:
        """The rows of ``entry_ids`` as kept (int8 codes and scales), one per id, in
        their order.

        Raises:
            KeyError: an id has no vector.
        """
        rows = self.rows_of(entry_ids)
        if (rows < 0).any():
            raise KeyError(int(np.asarray(entry_ids)[np.argmax(rows < 0)]))
        return gather_rows(self._blocks, rows)

    def frozen(self) -> EventVectorStore:
        """A read-only copy as of now, for a thread to read while the loop adds more.

        It shares the blocks (rows already set never change) and copies only the id
        map, so it costs 8 bytes per id slot, not the vectors."""
        copy = EventVectorStore()
        copy._dim, copy._size = self._dim, self._size
        copy._blocks, copy._wide = list(self._blocks), self._wide
        copy._row_of = self._row_of.copy()
        copy._entry_of = self._entry_of[: self._size].copy()
        copy._ann = self._ann  # searched up to its own size; never built by a copy
        copy._frozen = True
        return copy

    def row_order(self) -> np.ndarray:
        """Every held entry id, in row order (the order the files keep them in, so a
        store read back holds its rows where they were)."""
        return self._entry_of[: self._size].copy()

    def kept_index(self, *, beyond: int = 0) -> tuple[int, bytes, bytes] | None:
        """The approximate index to keep across a restart: ``(rows, the SHA-256 of
        the entry ids of those rows in row order, the index serialized)``, or None
        before it is built, while it holds no more than ``beyond`` rows (the one kept
        already), or when it holds rows this copy does not."""
        ann = self._ann
        if ann is None or not ann.ready or not beyond < ann.rows <= self._size:
            return None  # checked before the dump too: serializing costs ~56 MB at 1M
        rows, data = ann.dump()  # it may have caught up since: its rows as dumped
        if rows > self._size:
            return None
        return rows, _order_digest(self._entry_of[:rows]), data

    def take_index(self, rows: int, digest: bytes, data: bytes) -> None:
        """Search the index :meth:`kept_index` gave from now on, when this store holds
        the same entry ids in its first ``rows`` rows (else nothing changes).

        Raises:
            ValueError: the rows differ, or ``data`` is not an index of this shape.
        """
        if self._frozen or self._dim is None:
            raise ValueError("an empty or frozen store takes no index")
        if rows > self._size or _order_digest(self._entry_of[:rows]) != digest:
            raise ValueError(f"the store's first {rows} rows are not the ones the index "
                             f"was built over")
        ann = RowAnn.load(self._dim, rows, data)
        with self._ann_lock:
            self._ann = ann
        self._last = self._last_top = None

    @property
    def approximate(self) -> bool:
        """Whether :meth:`top_rows` searches the approximate index (module
        :mod:`~solace.memory.row_ann`): its scores are exact, but a row it leaves out
        may score above its last."""
        return self._ann is not None and self._ann.ready

    def similarities(self, vector: np.ndarray) -> np.ndarray:
        """``row @ vector`` for every row (row order), float32, remembered for the last
        vector asked (every agent of one recall asks the same one).

        The first :data:`WIDE_ROWS` rows are multiplied as kept widened; the rest are
        scored block by block (:func:`~solace.memory.row_blocks.row_scores`). Either way
        a row's score is ``(codes · vector) * scale``."""
        vector = np.asarray(vector, dtype=np.float32)
        key = vector.tobytes()
        remembered = self._remembered(key)
        if remembered is not None:
            return remembered
        size = self._size
        sims = np.empty(size, dtype=np.float32)
        head = min(size, WIDE_ROWS)
        if head:
            np.matmul(self._wide[:head], vector, out=sims[:head])
            sims[:head] *= self._blocks[0].scales[:head]
        if size > head:
            row_scores(self._blocks, size, vector, first=head, out=sims[head:])
        self._last = (key, size, sims)
        return sims

    def _remembered(self, key: bytes) -> np.ndarray | None:
        """Every row's score for the query ``key`` if one scoring of it covers the rows
        held now (rows only ever grow; a rewritten one forgets it)."""
        last = self._last
        return last[2] if last is not None and last[0] == key and last[1] == self._size \
            else None

    def scores_of(self, entry_ids: np.ndarray, vector: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
        """``(held, scores)``: which of ``entry_ids`` have a vector, and ``row @ vector``
        (float32) for those, from :meth:`similarities`' remembered scores when they are
        for ``vector``, else from their rows."""
        rows = self.rows_of(entry_ids)
        held = rows >= 0
        if not held.any():  # (an empty store has no width yet)
            return held, np.zeros(0, dtype=np.float32)
        vector = np.asarray(vector, dtype=np.float32)
        remembered = self._remembered(vector.tobytes())
        if remembered is not None:
            return held, remembered[rows[held]]
        return held, self.stored(np.asarray(entry_ids)[held]).scores(vector)

    def top_rows(self, vector: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` rows with the highest ``row @ vector``: ``(rows, scores)``, best first,
        ties by row; every other row scores at most the last (see
        :func:`~solace.memory.row_blocks.top_rows`) unless the store is
        :attr:`approximate`: then the rows are the best of the index's shortlist, scored
        exactly (reaching :data:`~solace.memory.row_ann.ANN_ROWS` rows starts the index's
        build in a background thread). Remembered for the last vector and
        ``k`` (every agent of one recall asks the same); rows added since are searched
        alone and merged in (rows never change once set), so an observe landing between
        a recall's prefetch and its gathers costs a search of its rows only. Safe in a
        worker thread while the event loop adds rows: it reads the rows held when it
        starts."""
        vector = np.asarray(vector, dtype=np.float32)
        key, size = (vector.tobytes(), k), self._size
        last = self._last_top
        if last is not None and last[0] == key and last[1] == size:
            return last[2]
        if last is not None and last[0] == key and last[1] < size:
            (old_rows, old_scores), since = last[2], last[1]
            new_rows, new_scores = top_rows(list(self._blocks), size, vector, k, first=since)
            found = best_rows(np.concatenate([old_rows, new_rows]),
                              np.concatenate([old_scores, new_scores]), k)
        else:
            found = self._search(vector, k, size)
        self._last_top = (key, size, found)
        return found

    def _search(self, vector: np.ndarray, k: int, size: int) -> tuple[np.ndarray, np.ndarray]:
        """The top ``k`` of the first ``size`` rows: the index's shortlist scored exactly
        once it is ready, else every row."""
        blocks = list(self._blocks)
        if size >= ANN_ROWS and self._ann is None and not self._frozen:
            self._start_ann(blocks, size)
        ann = self._ann
        if ann is None or not ann.ready:  # every row scored: similarities() reuses them
            sims = row_scores(blocks, size, vector)
            self._last = (vector.tobytes(), size, sims)
            return best_rows(np.arange(size, dtype=np.int64), sims, k)
        return _best_scored(blocks, ann.search(blocks, size, vector), vector, k)

    def top_rows_among(self, vector: np.ndarray, among: np.ndarray, k: int
                       ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`top_rows` of just the rows flagged in ``among`` (a flag per row), from
        the approximate index (only while :attr:`approximate`): its shortlist of those
        rows, scored exactly."""
        ann = self._ann
        if ann is None or not ann.ready:
            raise RuntimeError("top_rows_among needs the approximate index, not built yet")
        vector = np.asarray(vector, dtype=np.float32)
        blocks, size = list(self._blocks), min(self._size, len(among))
        return _best_scored(blocks, ann.search(blocks, size, vector, among=among), vector, k)

    def _start_ann(self, blocks: list[RowBlock], size: int) -> None:
        with self._ann_lock:
            if self._ann is not None:
                return
            assert self._dim is not None
            self._ann = ann = RowAnn(self._dim)

        def build() -> None:
            try:
                ann.build(blocks, size)
            except (RuntimeError, MemoryError, ValueError) as exc:  # FAISS raises RuntimeError
                log.warning("the approximate index of %d event vectors could not be built "
                            "(%s); every row is still searched", size, exc)

        threading.Thread(target=build, name="solace-row-ann", daemon=True).start()


def _order_digest(entries: np.ndarray) -> bytes:
    return hashlib.sha256(np.ascontiguousarray(entries, dtype=np.int64).tobytes()).digest()


def _best_scored(blocks: list[RowBlock], rows: np.ndarray, vector: np.ndarray, k: int
                 ) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` best of an index's shortlist ``rows``, each scored exactly from its
    kept row."""
    return best_rows(rows, gather_rows(blocks, rows).scores(vector), k)

