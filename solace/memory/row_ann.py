"""An approximate index over the event vector store's rows, for stores too big to scan.

An exact top-256 over every row costs time in proportion to the rows: ~10 ms at 100k
384-d rows on one core, ~100 ms at a million (``benchmarks/row_ann.py``), against
issue 12's 40 ms for a whole recall at a million events. From :data:`ANN_ROWS` rows on,
:class:`RowAnn` keeps an IVF-PQ index (FAISS ``IndexIVFPQ``, inner product:
:data:`ANN_LISTS` lists, :data:`ANN_CODE_BYTES`-byte codes, 56 bytes a row with its id)
beside the blocks: a query probes :data:`ANN_PROBE` lists for a shortlist of
:data:`ANN_SHORTLIST` rows, and the store scores that shortlist exactly from its kept
rows, so every score it returns is the row's true score; only a row the shortlist
missed can be missing from the top.

The index is built off the event loop, in one background thread, once the store
reaches :data:`ANN_ROWS`: trained on :data:`ANN_TRAIN` rows spread evenly over the
store, then given every row, in row order (a row's id in the index is its row). Until
it is ready the store keeps scanning every row. The index is kept across a restart
with the store's files (:mod:`~solace.memory.event_vector_files`): a restart whose
rows come back in the same order takes it as it was (at a million events, the 20
recalls after a restart took 21-30 ms p50 with it and 84 without; the rebuild took
24-48 s, ``benchmarks/scale_bench.py --restarts-of``), else it is built again. Rows
added later are given to the index by the next search (:meth:`RowAnn.search` catches
up first). Searches and additions hold one lock: FAISS does not allow them at once.

A search can be limited to some rows (an agent's units, when the store-wide shortlist
holds too few of them): the probed lists' other rows are skipped (a FAISS ID selector),
so it costs about what a plain search does. At a million rows, scoring such an agent's
every row instead (a random 8.6 %, Time's share) took 160 ms, more than scanning every
row (100 ms); the limited search took 4.9 ms and held 98.6 % of that exact top 64
(``benchmarks/row_ann.py``, LoCoMo-derived set).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import Any

import faiss
import numpy as np

from solace.memory.row_blocks import RowBlock, gather_rows

__all__ = ["ANN_CODE_BYTES", "ANN_LISTS", "ANN_PROBE", "ANN_ROWS", "ANN_SHORTLIST",
           "ANN_TRAIN", "RowAnn"]

log = logging.getLogger(__name__)

#: From this many rows on, the store searches the index instead of every row.
ANN_ROWS = 262_144
#: Inverted lists (k-means cells) of the index, and how many a query probes.
ANN_LISTS = 1024
ANN_PROBE = 32
#: Bytes of a row's product-quantised code (8-bit sub-quantizers; divides 384).
ANN_CODE_BYTES = 48
#: Rows a query takes from the index, then scored exactly from the kept rows.
ANN_SHORTLIST = 1024
#: Rows the index is trained on.
ANN_TRAIN = 65_536
#: Rows given to the index at a time (widened to float32 first).
_CHUNK = 65_536


class RowAnn:
    """The IVF-PQ index of a store's rows (see the module docstring).

    Args:
        dim: the rows' width (a multiple of the code's bytes: 384 is of 48).
        kept: a trained index and how many rows it holds (:meth:`load`); without it
            the index is empty until :meth:`build`.

    The index's shape is the module's constants as they are when it is made.
    """

    def __init__(self, dim: int, *, kept: tuple[Any, int] | None = None) -> None:
        if dim % ANN_CODE_BYTES:
            raise ValueError(f"{dim}-d rows cannot be cut into {ANN_CODE_BYTES} sub-vectors")
        self.dim = dim
        self.train_rows = ANN_TRAIN
        self.shortlist = ANN_SHORTLIST
        self._lock = threading.Lock()
        if kept is not None:  # (a trained index holding the first rows, those rows)
            self._index, self.rows = kept
            self._quantizer = self._index.quantizer
            self.ready = True
        else:
            self._quantizer = faiss.IndexFlatIP(dim)
            self._index = faiss.IndexIVFPQ(self._quantizer, dim, ANN_LISTS, ANN_CODE_BYTES,
                                           8, faiss.METRIC_INNER_PRODUCT)
            self.rows = 0  # rows 0 .. rows - 1 are in the index
            self.ready = False
        self._index.nprobe = ANN_PROBE

    def build(self, blocks: Sequence[RowBlock], size: int) -> None:
        """Train on rows spread over the first ``size`` and add them all (blocking: the
        store runs it in a background thread)."""
        step = max(1, size // self.train_rows)
        sample = gather_rows(blocks, np.arange(0, size, step)).widened()
        with self._lock:
            self._index.train(sample)
            self._add(blocks, size)
            self.ready = True

    def search(self, blocks: Sequence[RowBlock], size: int, vector: np.ndarray,
               among: np.ndarray | None = None) -> np.ndarray:
        """The rows (of the first ``size``) the index ranks best for ``vector``, at most
        :data:`ANN_SHORTLIST`, in no order that matters; rows added since the last call
        are given to the index first. ``among`` (a flag per row, at least ``size``):
        only flagged rows are ranked (the probed lists' rows filtered, not more lists)."""
        query = vector.reshape(1, -1).astype(np.float32)
        params = None
        if among is not None:
            bitmap = np.packbits(np.asarray(among[:size], dtype=bool), bitorder="little")
            params = faiss.SearchParametersIVF(
                sel=faiss.IDSelectorBitmap(size, faiss.swig_ptr(bitmap)),
                nprobe=self._index.nprobe)
        with self._lock:
            self._add(blocks, size)
            _, found = self._index.search(query, self.shortlist, params=params)
        rows = np.asarray(found[0], dtype=np.int64)
        kept: np.ndarray = rows[(rows >= 0) & (rows < size)]
        return kept

    def dump(self) -> tuple[int, bytes]:
        """``(rows, the index serialized)``, to keep across a restart (:meth:`load`).
        Only once :attr:`ready`; blocking (FAISS copies the index under the lock)."""
        if not self.ready:
            raise RuntimeError("the approximate index is not built yet")
        with self._lock:
            return self.rows, faiss.serialize_index(self._index).tobytes()

    @classmethod
    def load(cls, dim: int, rows: int, data: bytes) -> RowAnn:
        """The index :meth:`dump` gave, ready, holding the store's first ``rows`` rows.

        Raises:
            ValueError: ``data`` is not an index of this module's shape (its constants
                or ``dim`` changed since it was kept) holding ``rows`` rows.
        """
        try:
            found: Any = faiss.deserialize_index(np.frombuffer(data, dtype=np.uint8))
        except RuntimeError as exc:  # FAISS raises RuntimeError on a damaged index
            raise ValueError(f"not a FAISS index ({exc})") from exc
        index: Any = faiss.downcast_index(found)
        found.this.disown()  # the downcast wrapper owns the index from now on
        index.this.own(True)
        shape = (type(index).__name__, index.d, getattr(index, "nlist", None),
                 getattr(getattr(index, "pq", None), "M", None), index.ntotal,
                 index.is_trained)
        wanted = ("IndexIVFPQ", dim, ANN_LISTS, ANN_CODE_BYTES, rows, True)
        if shape != wanted:
            raise ValueError(f"an index of shape {shape}, not {wanted}")
        return cls(dim, kept=(index, rows))

    def _add(self, blocks: Sequence[RowBlock], size: int) -> None:
        while self.rows < size:  # caller holds the lock
            stop = min(size, self.rows + _CHUNK)
            self._index.add(gather_rows(blocks, np.arange(self.rows, stop)).widened())
            self.rows = stop
