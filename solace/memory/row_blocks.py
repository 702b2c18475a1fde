"""Blocks of int8 rows, one scale each: the event vector store's storage, scored in place.

A row is kept as int8 codes and one float32 scale: ``codes = round(x / scale)`` with
``scale = max|x| / 127``, so each value is off by at most half a scale step, and a row
costs ``dim + 4`` bytes (388 B at 384-d, half of float16's 768). A row's score is
``(codes · q) * scale``. Rows are widened to float32 :data:`CHUNK_ROWS` at a time into
a scratch buffer (numpy casts int8 to float32 quickly, unlike float16), multiplied by
the query, then scaled; every way of scoring a row computes that same product
(:meth:`Quantized.scores`), so paths agree to float32 rounding. Against float32 rows,
on LoCoMo's turns and 200 of its questions, the top 10 share 99.5 % of their ids and
evidence recall@10 moves from 39.6 to 39.5 (``benchmarks/vector_precision.py``).

A :class:`RowBlock` is allocated whole and never moves, so growing copies nothing and
a reader in another thread sees the rows it was told about. :func:`row_scores` and
:func:`top_rows` mutate nothing, so they may run in a worker thread while the event
loop appends rows past ``size``. Over :data:`PARALLEL_BLOCKS` blocks or more, half of
the blocks are scored in a second thread (numpy releases the GIL while it casts and
multiplies).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

__all__ = ["CHUNK_ROWS", "CODE_LIMIT", "PARALLEL_BLOCKS", "Quantized", "RowBlock",
           "best_rows", "gather_rows", "quantize", "row_scores", "top_rows"]

#: From this many blocks on, scoring runs half of them in a second thread.
PARALLEL_BLOCKS = 4
#: Rows widened to float32 at a time (the scratch buffer, 768 KB at 384-d, stays in
#: cache); must divide a block's capacity.
CHUNK_ROWS = 512
#: The largest code's magnitude: a row's largest value maps to +-127.
CODE_LIMIT = 127


@dataclass(frozen=True, slots=True, eq=False)
class Quantized:
    """Rows as kept: ``codes`` (n, dim) int8 and one float32 ``scales`` (n,) per row."""

    codes: np.ndarray
    scales: np.ndarray

    def __len__(self) -> int:
        return len(self.scales)

    def widened(self) -> np.ndarray:
        """The rows as float32 values (``codes * scale``)."""
        out: np.ndarray = self.codes.astype(np.float32)
        out *= self.scales[:, None]
        return out

    def scores(self, vector: np.ndarray) -> np.ndarray:
        """``(codes · vector) * scale`` for each row, float32."""
        out: np.ndarray = self.codes.astype(np.float32) @ np.asarray(vector, dtype=np.float32)
        out *= self.scales
        return out


def quantize(matrix: np.ndarray) -> Quantized:
    """``matrix`` (n, dim, finite floats) as int8 codes and one scale a row; an all-zero
    row gets scale 0.

    Raises:
        ValueError: a value is not finite (the message says which row).
    """
    values = np.asarray(matrix, dtype=np.float32)
    if values.ndim != 2:
        raise ValueError(f"rows to quantize must be a matrix, got shape {values.shape}")
    finite = np.isfinite(values).all(axis=1)
    if not finite.all():
        raise ValueError(f"row {int(np.argmin(finite))} is not finite")
    scales = np.abs(values).max(axis=1, initial=0.0) / np.float32(CODE_LIMIT)
    inverse = np.divide(1.0, scales, out=np.zeros_like(scales), where=scales > 0)
    codes = np.rint(values * inverse[:, None])
    np.clip(codes, -CODE_LIMIT, CODE_LIMIT, out=codes)
    return Quantized(codes.astype(np.int8), scales.astype(np.float32))


class RowBlock:
    """``capacity`` rows of ``dim`` int8 codes and their scales, zeroed."""

    __slots__ = ("codes", "scales")

    def __init__(self, capacity: int, dim: int) -> None:
        if capacity % CHUNK_ROWS:
            raise ValueError(f"a block's capacity ({capacity}) must be a multiple of "
                             f"CHUNK_ROWS ({CHUNK_ROWS})")
        self.codes = np.zeros((capacity, dim), dtype=np.int8)
        self.scales = np.zeros(capacity, dtype=np.float32)

    def __len__(self) -> int:
        return len(self.scales)

    def put(self, offset: int, rows: Quantized) -> None:
        """Write ``rows`` from row ``offset`` of this block on."""
        self.codes[offset:offset + len(rows)] = rows.codes
        self.scales[offset:offset + len(rows)] = rows.scales


def gather_rows(blocks: Sequence[RowBlock], rows: np.ndarray) -> Quantized:
    """``rows`` (row numbers counted across ``blocks``, each held) as kept, in their
    order, one copy per block touched."""
    rows = np.asarray(rows, dtype=np.int64)
    dim = blocks[0].codes.shape[1] if blocks else 0
    out = Quantized(np.empty((len(rows), dim), dtype=np.int8),
                    np.empty(len(rows), dtype=np.float32))
    if not len(rows):
        return out
    size = len(blocks[0])
    block_of = rows // size
    for b in np.unique(block_of).tolist():
        at = block_of == b
        within = rows[at] % size
        out.codes[at] = blocks[b].codes[within]
        out.scales[at] = blocks[b].scales[within]
    return out


def row_scores(blocks: Sequence[RowBlock], size: int, vector: np.ndarray, first: int = 0,
               out: np.ndarray | None = None) -> np.ndarray:
    """``(codes · vector) * scale`` of rows ``first`` to ``size`` - 1 (counted across
    ``blocks``, each full but the last), float32, in row order (into ``out`` if given)."""
    query = np.ascontiguousarray(vector, dtype=np.float32)
    if out is None:
        out = np.empty(max(size - first, 0), dtype=np.float32)
    spans = []  # (block, first row searched in it, rows filled, where its scores go)
    start = 0
    for block in blocks:
        filled = min(len(block), size - start)
        if filled <= 0:
            break
        if start + filled > first:
            low = max(first - start, 0)
            spans.append((block, low, filled, start + low - first))
        start += len(block)
    if len(spans) >= PARALLEL_BLOCKS:
        other = _helper().submit(_score_spans, spans[1::2], query, out)
        _score_spans(spans[0::2], query, out)
        other.result()
    else:
        _score_spans(spans, query, out)
    return out


def top_rows(blocks: Sequence[RowBlock], size: int, vector: np.ndarray, k: int,
             first: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` of rows ``first`` to ``size`` - 1 with the highest score.

    Returns:
        ``(rows, scores)``: row numbers (int64) and their float32 scores, best first,
        ties by row ascending. Every row left out scores at most the last one returned.
    """
    if size <= first or k <= 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    scores = row_scores(blocks, size, vector, first)
    return best_rows(np.arange(first, size, dtype=np.int64), scores, k)


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


def _score_spans(spans: Sequence[tuple[RowBlock, int, int, int]], query: np.ndarray,
                 out: np.ndarray) -> None:
    """Each span's rows widened :data:`CHUNK_ROWS` at a time into one scratch buffer
    (per call: two threads never share it), multiplied and scaled into ``out``."""
    scratch = np.empty((CHUNK_ROWS, len(query)), dtype=np.float32)
    for block, low, filled, at in spans:
        for offset in range(low, filled, CHUNK_ROWS):
            stop = min(offset + CHUNK_ROWS, filled)
            wide = scratch[:stop - offset]
            np.copyto(wide, block.codes[offset:stop])
            target = out[at + offset - low:at + stop - low]
            np.matmul(wide, query, out=target)
            target *= block.scales[offset:stop]


_lock = threading.Lock()
_executor: ThreadPoolExecutor | None = None


def _helper() -> ThreadPoolExecutor:
    """The one helper thread of :func:`row_scores` (started on first use)."""
    global _executor
    with _lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(1, thread_name_prefix="solace-row-search")
        return _executor
