"""The long-term tier's FAISS indexes: which one, built how, searched how.

Every index is an ``IndexIDMap2`` (labels chosen by the tier) over inner product on
L2-normalised vectors, so scores are cosines:

* ``flat`` — ``IndexFlatIP``: exact; what the tier uses below ``hnsw_threshold``;
* ``ivf`` (the default past it) — ``IndexIVFFlat`` with ``nlist = 4·sqrt(n)`` lists
  (capped so each list has ~39 training points), trained on the vectors themselves,
  ``nprobe = ivf_nprobe``;
* ``hnsw`` — ``IndexHNSWFlat(M = hnsw_m)``, ``efConstruction``/``efSearch`` as
  configured.

Why IVF by default: on vectors shaped like real MiniLM embeddings
(``benchmarks/longterm_search.py``), at 1M records IVF with nprobe 32 answers one
query in ~1.4 ms (one thread) with recall@10 0.986 and builds in ~110 s on 2 cores,
while HNSW (M=32, efConstruction=40) built in ~210 s and reached recall@10 0.74 at
efSearch 256 and 0.93 at efSearch 1024 (2.4 ms).

Plain synchronous functions, numpy in and out; the tier calls them in worker threads.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal

import faiss
import numpy as np

__all__ = [
    "IndexParams",
    "add_in_batches",
    "build_approximate",
    "build_flat",
    "build_hnsw",
    "build_ivf",
    "configure",
    "ivf_lists",
    "kind_of",
    "one_omp_thread",
    "reconstruct_all",
]

IndexKind = Literal["flat", "ivf", "hnsw"]
_ADD_BATCH = 65_536
_POINTS_PER_LIST = 39  # FAISS's minimum for k-means without a warning
_TRAIN_POINTS_PER_LIST = 64


@dataclass(frozen=True, slots=True)
class IndexParams:
    """How the long-term index is built (from ``MemoryConfig``).

    Attributes:
        kind: the approximate index used past ``threshold``: ``"ivf"`` or ``"hnsw"``.
        threshold: record count past which the exact flat index is replaced.
        ivf_nprobe: IVF lists searched per query.
        hnsw_m: HNSW graph degree.
        hnsw_ef_search: HNSW search breadth.
        hnsw_ef_construction: HNSW build breadth.
    """

    kind: Literal["ivf", "hnsw"] = "ivf"
    threshold: int = 50_000
    ivf_nprobe: int = 32
    hnsw_m: int = 32
    hnsw_ef_search: int = 64
    hnsw_ef_construction: int = 40

    def __post_init__(self) -> None:
        if self.kind not in ("ivf", "hnsw"):
            raise ValueError(f"kind must be 'ivf' or 'hnsw', got {self.kind!r}")
        for name in ("threshold", "ivf_nprobe", "hnsw_m", "hnsw_ef_search",
                     "hnsw_ef_construction"):
            value = getattr(self, name)
            if value <= 0:
                raise ValueError(f"{name} must be > 0, got {value!r}")


@contextmanager
def one_omp_thread() -> Iterator[None]:
    """Run FAISS single-threaded in this thread for the block (OpenMP settings are per
    thread). One query gains nothing from OpenMP, and on a busy 2-core machine its
    spinning threads cost 10-20x: flat search over 10k vectors took 16 ms with two
    threads and 0.9 ms with one, measured here."""
    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        yield
    finally:
        faiss.omp_set_num_threads(before)


def add_in_batches(index: Any, vectors: np.ndarray, labels: np.ndarray) -> None:
    """``index.add_with_ids`` in batches (bounded temporary memory)."""
    for start in range(0, len(labels), _ADD_BATCH):
        stop = start + _ADD_BATCH
        index.add_with_ids(
            np.ascontiguousarray(vectors[start:stop], dtype=np.float32),
            np.ascontiguousarray(labels[start:stop], dtype=np.int64),
        )


def build_flat(dim: int) -> Any:
    """An empty ``IndexIDMap2(IndexFlatIP)``."""
    return faiss.IndexIDMap2(faiss.IndexFlatIP(dim))


def build_hnsw(dim: int, params: IndexParams) -> Any:
    """An empty ``IndexIDMap2(IndexHNSWFlat)`` over inner product with ``params``."""
    inner = faiss.IndexHNSWFlat(dim, params.hnsw_m, faiss.METRIC_INNER_PRODUCT)
    inner.hnsw.efConstruction = params.hnsw_ef_construction
    inner.hnsw.efSearch = params.hnsw_ef_search
    return faiss.IndexIDMap2(inner)


def ivf_lists(n: int) -> int:
    """``4·sqrt(n)`` lists, at most one per 39 vectors, at least one."""
    return max(1, min(int(4 * math.sqrt(n)), n // _POINTS_PER_LIST))


def build_ivf(vectors: np.ndarray, params: IndexParams, *, seed: int = 0) -> Any:
    """An ``IndexIDMap2(IndexIVFFlat)`` trained on (a sample of) ``vectors``, empty.

    Raises:
        ValueError: ``vectors`` is empty.
    """
    if len(vectors) == 0:
        raise ValueError("an IVF index needs vectors to train on")
    dim = vectors.shape[1]
    nlist = ivf_lists(len(vectors))
    quantizer = faiss.IndexFlatIP(dim)
    inner = faiss.IndexIVFFlat(quantizer, dim, nlist, faiss.METRIC_INNER_PRODUCT)
    take = min(len(vectors), _TRAIN_POINTS_PER_LIST * nlist)
    rows = np.random.default_rng(seed).choice(len(vectors), take, replace=False)
    inner.train(np.ascontiguousarray(vectors[np.sort(rows)], dtype=np.float32))
    inner.nprobe = params.ivf_nprobe
    inner.make_direct_map()  # so snapshots can read vectors back (reconstruct)
    return faiss.IndexIDMap2(inner)  # faiss's wrappers keep inner and quantizer alive


def build_approximate(vectors: np.ndarray, labels: np.ndarray, params: IndexParams) -> Any:
    """The approximate index ``params.kind`` holding ``vectors`` under ``labels``."""
    if params.kind == "ivf":
        index = build_ivf(vectors, params)
    else:
        index = build_hnsw(vectors.shape[1], params)
    add_in_batches(index, vectors, labels)
    return index


def kind_of(index: Any) -> IndexKind:
    """Which kind an ``IndexIDMap2`` (e.g. read from a snapshot) wraps."""
    inner = faiss.downcast_index(index.index)
    if isinstance(inner, faiss.IndexHNSW):
        return "hnsw"
    if isinstance(inner, faiss.IndexIVF):
        return "ivf"
    return "flat"


def configure(index: Any, params: IndexParams) -> None:
    """Apply the search-time parameters (nprobe, efSearch) to a loaded index; make an
    IVF index able to reconstruct vectors."""
    inner = faiss.downcast_index(index.index)
    if isinstance(inner, faiss.IndexHNSW):
        inner.hnsw.efSearch = params.hnsw_ef_search
    elif isinstance(inner, faiss.IndexIVF):
        inner.nprobe = params.ivf_nprobe
        inner.make_direct_map()


def reconstruct_all(index: Any) -> np.ndarray:
    """Every vector of ``index`` in insertion order (flat, IVF or HNSW)."""
    inner = faiss.downcast_index(index.index)
    if index.ntotal == 0:
        return np.zeros((0, index.d), dtype=np.float32)
    return np.asarray(inner.reconstruct_n(0, index.ntotal), dtype=np.float32)
