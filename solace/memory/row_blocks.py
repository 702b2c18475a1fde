"""Blocks of float16 rows that FAISS searches in place: the event vector store's storage.

A :class:`RowBlock` is a FAISS ``IndexScalarQuantizer`` (``QT_fp16``, inner product)
whose code buffer is sized for a whole block up front and never grows, so it never
moves. ``QT_fp16``'s code for a vector is exactly the vector's IEEE float16 bytes, so
the store writes rows through :attr:`RowBlock.rows`, a numpy view of that buffer, and
keeps one copy of each vector that numpy reads and FAISS scores. FAISS widens float16
with SIMD while it scores: a top-256 search over 100k 384-d rows takes ~10 ms on one
core, where numpy's widening and matvec over every row take ~21 ms
(``benchmarks/row_search.py``).

A view does not keep its block alive: whoever holds :attr:`RowBlock.rows` must hold the
block too.

:func:`top_rows` mutates nothing (a block's index always counts its whole capacity; the
rows not filled yet are left out by an ``IDSelectorRange``), so it may run in a worker
thread while the event loop appends rows past ``size``. Over :data:`PARALLEL_BLOCKS`
blocks or more, half of them are searched in a second thread (FAISS releases the GIL):
5.5 instead of 9.6 ms at 100k rows on two idle cores.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import faiss
import numpy as np

__all__ = ["PARALLEL_BLOCKS", "RowBlock", "best_rows", "gather_rows", "top_rows"]

#: From this many blocks on, :func:`top_rows` searches half of them in a second thread.
PARALLEL_BLOCKS = 4


class RowBlock:
    """``capacity`` rows of ``dim`` float16 values, zeroed, that FAISS can search."""

    __slots__ = ("index", "rows")

    def __init__(self, capacity: int, dim: int) -> None:
        index = faiss.IndexScalarQuantizer(dim, faiss.ScalarQuantizer.QT_fp16,
                                           faiss.METRIC_INNER_PRODUCT)
        size = capacity * dim * 2
        index.codes.resize(size)  # value-initialised: zeros
        index.ntotal = capacity  # searches select the filled rows (never mutated after)
        self.index = index
        self.rows: np.ndarray = faiss.rev_swig_ptr(index.codes.data(), size).view(
            np.float16).reshape(capacity, dim)


def top_rows(blocks: Sequence[RowBlock], size: int, vector: np.ndarray, k: int,
             first: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` of rows ``first`` to ``size`` - 1 (counted across ``blocks``, each full
    but the last) with the highest ``row @ vector``.

    Returns:
        ``(rows, scores)``: row numbers (int64) and their float32 scores, best first,
        ties by row ascending. Every row left out scores at most the last one returned.
    """
    query = np.ascontiguousarray(vector, dtype=np.float32).reshape(1, -1)
    k = min(k, size - first)
    spans = []  # (block, its first row, first row searched in it, rows filled)
    start = 0
    for block in blocks:
        filled = min(len(block.rows), size - start)
        if filled <= 0:
            break
        if start + filled > first:
            spans.append((block, start, max(first - start, 0), filled))
        start += len(block.rows)
    if not spans or k <= 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    if len(spans) >= PARALLEL_BLOCKS:
        other = _helper().submit(_search, spans[1::2], query, k)
        found = _search(spans[0::2], query, k) + other.result()
    else:
        found = _search(spans, query, k)
    return best_rows(np.concatenate([r for r, _ in found]),
                     np.concatenate([s for _, s in found]), k)


def gather_rows(blocks: Sequence[RowBlock], rows: np.ndarray) -> np.ndarray:
    """``rows`` (row numbers counted across ``blocks``, each held) as kept: float16, in
    their order, one copy per block touched."""
    dim = blocks[0].rows.shape[1] if blocks else 0
    out = np.empty((len(rows), dim), dtype=np.float16)
    if not len(rows):
        return out
    size = blocks[0].rows.shape[0]
    block_of = rows // size
    for b in np.unique(block_of).tolist():
        at = block_of == b
        out[at] = blocks[b].rows[rows[at] % size]
    return out


def best_rows(rows: np.ndarray, scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` best of ``rows`` (any ids) by ``scores``, best first, ties by id
    ascending (what sorting all of them would give, in linear time plus ``k log k``):
    ``(ids as int64, their scores as float32)``."""
    if len(rows) > k > 0:
        kth = np.partition(-scores, k - 1)[k - 1]
        keep = np.flatnonzero(-scores <= kth)  # the top k and any tied with the k-th
        rows, scores = rows[keep], scores[keep]
    best = np.lexsort((rows, -scores))[:k]
    return rows[best].astype(np.int64), scores[best].astype(np.float32)


def _search(spans: Sequence[tuple[RowBlock, int, int, int]], query: np.ndarray, k: int
            ) -> list[tuple[np.ndarray, np.ndarray]]:
    out = []
    for block, start, low, filled in spans:
        params = None
        if low or filled < len(block.rows):
            params = faiss.SearchParameters(sel=faiss.IDSelectorRange(low, filled))  # type: ignore[call-arg]
        scores, rows = block.index.search(query, min(k, filled - low), params=params)
        out.append((rows[0] + start, scores[0]))
    return out


_lock = threading.Lock()
_executor: ThreadPoolExecutor | None = None


def _helper() -> ThreadPoolExecutor:
    """The one helper thread of :func:`top_rows` (started on first use)."""
    global _executor
    with _lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(1, thread_name_prefix="solace-row-search")
        return _executor
