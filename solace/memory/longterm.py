"""The long-term tier: an agent's compressed past (rungs 1–3), searchable by embedding.

Three parts, kept in step by every method:

* a FAISS index over the records' embeddings — ``IndexIDMap2(IndexFlatIP)`` (exact)
  while the tier is small, switching once to ``IndexIDMap2(IndexHNSWFlat)`` (inner
  product, ``M = hnsw_m``, ``efSearch = hnsw_ef_search``) when it grows past
  ``hnsw_threshold``; embeddings are L2-normalised, so scores are cosines;
* a tag index (casefolded tag -> record ids);
* the metadata: the :class:`MemoryRecord` objects themselves.

FAISS labels are not record ids but a counter that never repeats, because HNSW cannot
remove vectors: a record that leaves (a used cue returning to working) leaves its
vector behind as a tombstone that searches over-fetch past and skip, and a record
that comes back later gets a fresh label. The flat index is treated the same way, so
that :meth:`remove` never touches FAISS and is safe on the event loop while a search
or a snapshot reads the index in a worker thread; the next :meth:`add` compacts the
index once tombstones exceed a tenth of it.

:meth:`search`, :meth:`add` and :meth:`replace` may block (FAISS, the HNSW switch):
the runtime calls them through :class:`~solace.offload.Offloader`. They hold
:attr:`index_lock` while they use the index, so a search in one worker thread and an
add in another never meet inside FAISS; a snapshot holds it while it writes.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import faiss
import numpy as np

from solace.memory.record import MemoryRecord

__all__ = ["IndexParams", "LongTermTier"]

_TOMBSTONE_SHARE = 0.1
_ADD_BATCH = 65_536


@dataclass(frozen=True, slots=True)
class IndexParams:
    """How the long-term index is built (from ``MemoryConfig``).

    Attributes:
        hnsw_threshold: record count past which the flat index becomes HNSW.
        hnsw_m: HNSW graph degree.
        hnsw_ef_search: HNSW search breadth (recall vs latency).
        hnsw_ef_construction: HNSW build breadth (recall vs build time).
    """

    hnsw_threshold: int = 50_000
    hnsw_m: int = 32
    hnsw_ef_search: int = 64
    hnsw_ef_construction: int = 40

    def __post_init__(self) -> None:
        for name in ("hnsw_threshold", "hnsw_m", "hnsw_ef_search", "hnsw_ef_construction"):
            value = getattr(self, name)
            if value <= 0:
                raise ValueError(f"{name} must be > 0, got {value!r}")


@contextmanager
def _one_omp_thread() -> Iterator[None]:
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


def build_hnsw(dim: int, params: IndexParams) -> faiss.Index:
    """An empty ``IndexIDMap2(IndexHNSWFlat)`` over inner product with ``params``."""
    inner = faiss.IndexHNSWFlat(dim, params.hnsw_m, faiss.METRIC_INNER_PRODUCT)
    inner.hnsw.efConstruction = params.hnsw_ef_construction
    inner.hnsw.efSearch = params.hnsw_ef_search
    return faiss.IndexIDMap2(inner)


def build_flat(dim: int) -> faiss.Index:
    """An empty ``IndexIDMap2(IndexFlatIP)``."""
    return faiss.IndexIDMap2(faiss.IndexFlatIP(dim))


def add_in_batches(index: faiss.Index, vectors: np.ndarray, labels: np.ndarray) -> None:
    """``index.add_with_ids`` in batches (bounded temporary memory for HNSW builds)."""
    for start in range(0, len(labels), _ADD_BATCH):
        stop = start + _ADD_BATCH
        index.add_with_ids(
            np.ascontiguousarray(vectors[start:stop], dtype=np.float32),
            np.ascontiguousarray(labels[start:stop], dtype=np.int64),
        )


class LongTermTier:
    """One agent's long-term tier.

    Args:
        dim: embedding width; every record must carry an embedding of this width.
        params: index parameters.

    Guarantees: record ids are unique; every record has rung 1–3 and an embedding;
    :meth:`search` sees exactly the records present (no removed one, no missing one).
    """

    def __init__(self, *, dim: int, params: IndexParams | None = None) -> None:
        if dim <= 0:
            raise ValueError(f"dim must be > 0, got {dim!r}")
        self.dim = dim
        self.params = params or IndexParams()
        self._records: dict[int, MemoryRecord] = {}
        self._label: dict[int, int] = {}  # record id -> FAISS label
        self._rid: dict[int, int] = {}  # FAISS label -> record id (live only)
        self._next_label = 0
        self._tombstones = 0
        self._tags: dict[str, set[int]] = {}
        self._index: faiss.Index = build_flat(dim)
        self._hnsw = False
        self.index_lock = threading.Lock()

    # ------------------------------------------------------------------ reading

    def __len__(self) -> int:
        return len(self._records)

    def __contains__(self, record_id: object) -> bool:
        return record_id in self._records

    @property
    def index_kind(self) -> str:
        """``"flat"`` or ``"hnsw"``."""
        return "hnsw" if self._hnsw else "flat"

    @property
    def index(self) -> faiss.Index:
        """The FAISS index (for snapshots); do not modify it."""
        return self._index

    def get(self, record_id: int) -> MemoryRecord | None:
        """The record with ``record_id``, or None if it is not in long-term."""
        return self._records.get(record_id)

    def records(self) -> Iterator[MemoryRecord]:
        """Every record (a snapshot of the tier at the call; insertion order)."""
        return iter(list(self._records.values()))

    def newest(self, n: int) -> list[MemoryRecord]:
        """The ``n`` records standing for the newest events (``event_ts``), newest first;
        ties by record id, higher first."""
        if n <= 0:
            return []
        ordered = sorted(self._records.values(), key=lambda r: (r.event_ts, r.record_id))
        return ordered[::-1][:n]

    def by_tags(self, tags: Iterable[str], *, match_all: bool = False) -> set[int]:
        """Ids of records carrying any (or, with ``match_all``, every) of ``tags``.

        Tags compare casefolded. No tags: the empty set.
        """
        sets = [self._tags.get(t.casefold(), set()) for t in tags]
        if not sets:
            return set()
        if match_all:
            return set.intersection(*sets)
        return set().union(*sets)

    def tag_counts(self) -> dict[str, int]:
        """Casefolded tag -> number of records carrying it."""
        return {tag: len(ids) for tag, ids in self._tags.items()}

    def count_by_rung(self) -> dict[int, int]:
        """Number of long-term records at each rung (1, 2, 3)."""
        counts = {1: 0, 2: 0, 3: 0}
        for record in self._records.values():
            counts[record.rung] += 1
        return counts

    def search(self, vector: np.ndarray, k: int) -> list[tuple[MemoryRecord, float]]:
        """The ``k`` records most similar to ``vector`` (cosine), best first.

        Exact while the index is flat; approximate (HNSW) past ``hnsw_threshold``.
        Blocking: call through the offloader.

        Raises:
            ValueError: ``vector`` is not of shape ``(dim,)`` or ``k < 1``.
        """
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k!r}")
        query = np.asarray(vector, dtype=np.float32)
        if query.shape != (self.dim,):
            raise ValueError(f"query vector must have shape ({self.dim},), got {query.shape}")
        if not self._records:
            return []
        with self.index_lock, _one_omp_thread():
            fetch = min(self._index.ntotal, k + self._tombstones)
            scores, labels = self._index.search(query.reshape(1, -1), fetch)
        out: list[tuple[MemoryRecord, float]] = []
        for label, score in zip(labels[0].tolist(), scores[0].tolist(), strict=True):
            rid = self._rid.get(label)
            record = None if rid is None else self._records.get(rid)
            if record is None:  # -1 (not enough results), a tombstone, or just removed
                continue
            out.append((record, float(score)))
            if len(out) == k:
                break
        return out

    # ----------------------------------------------------------------- changing

    def add(self, records: Iterable[MemoryRecord]) -> None:
        """Add records (rung 1–3, each with an embedding of width ``dim``).

        All records are checked before any is added. May switch the index to HNSW
        (blocking for a while: seconds at 50k records).

        Raises:
            ValueError: a record id is already present (or repeated), a rung is not
                1–3, or an embedding is missing or of the wrong shape.
        """
        batch = list(records)
        seen: set[int] = set()
        for record in batch:
            self._check(record)
            if record.record_id in self._records or record.record_id in seen:
                raise ValueError(f"record {record.record_id} is already in the long-term tier")
            seen.add(record.record_id)
        if not batch:
            return
        labels = np.arange(self._next_label, self._next_label + len(batch), dtype=np.int64)
        self._next_label += len(batch)
        vectors = np.stack([_vector(r) for r in batch]).astype(np.float32, copy=False)
        for record, label in zip(batch, labels.tolist(), strict=True):
            self._records[record.record_id] = record
            self._label[record.record_id] = label
            self._rid[label] = record.record_id
            for tag in record.tags:
                self._tags.setdefault(tag.casefold(), set()).add(record.record_id)
        with self.index_lock:
            if not self._hnsw and len(self._records) > self.params.hnsw_threshold:
                self._rebuild(hnsw=True)
            elif self._tombstones > _TOMBSTONE_SHARE * max(self._index.ntotal, 1):
                self._rebuild(hnsw=self._hnsw)  # includes the new records
            else:
                add_in_batches(self._index, vectors, labels)

    def replace(self, record: MemoryRecord) -> MemoryRecord:
        """Put ``record`` in place of the long-term record with the same id; return the old.

        A record whose embedding is unchanged (a rung-2 summary fading to rung 3 keeps
        its vector) only changes metadata; otherwise its vector is replaced too.

        Raises:
            KeyError: no record with that id is in long-term.
            ValueError: as :meth:`add`.
        """
        self._check(record)
        rid = record.record_id
        old = self._records.get(rid)
        if old is None:
            raise KeyError(f"record {rid} is not in the long-term tier")
        assert old.embedding is not None and record.embedding is not None
        if not np.array_equal(old.embedding, record.embedding):
            self.remove(rid)
            self.add([record])
            return old
        self._untag(old)
        self._records[rid] = record
        for tag in record.tags:
            self._tags.setdefault(tag.casefold(), set()).add(rid)
        return old

    def remove(self, record_id: int) -> MemoryRecord:
        """Take the record out of long-term and return it (metadata only: never blocks).

        Raises:
            KeyError: naming the id, if it is not in long-term.
        """
        try:
            record = self._records.pop(record_id)
        except KeyError:
            raise KeyError(f"record {record_id} is not in the long-term tier") from None
        label = self._label.pop(record_id)
        del self._rid[label]
        self._untag(record)
        self._tombstones += 1  # its vector stays in FAISS, unreachable (see module doc)
        return record

    def _untag(self, record: MemoryRecord) -> None:
        for tag in record.tags:
            ids = self._tags.get(tag.casefold())
            if ids is not None:
                ids.discard(record.record_id)
                if not ids:
                    del self._tags[tag.casefold()]

    def touch(self, record_id: int, now: float) -> None:
        """Count one reference to a long-term record (references, last_referenced).

        Raises:
            KeyError: naming the id, if it is not in long-term.
        """
        record = self._records.get(record_id)
        if record is None:
            raise KeyError(f"record {record_id} is not in the long-term tier")
        record.references += 1
        record.last_referenced = now

    # --------------------------------------------------------------- persistence

    def label_map(self) -> tuple[np.ndarray, np.ndarray]:
        """``(record ids, labels)`` of the live records, for snapshots."""
        rids = np.fromiter(self._label.keys(), dtype=np.int64, count=len(self._label))
        labels = np.fromiter(self._label.values(), dtype=np.int64, count=len(self._label))
        return rids, labels

    @property
    def next_label(self) -> int:
        """The label the next added record gets."""
        return self._next_label

    @classmethod
    def restore(
        cls,
        *,
        dim: int,
        params: IndexParams,
        records: Iterable[MemoryRecord],
        index: Any,
        record_ids: np.ndarray,
        labels: np.ndarray,
        next_label: int,
    ) -> LongTermTier:
        """Rebuild a tier from a snapshot: records without embeddings, the index, labels.

        Embeddings are read back from the index (``reconstruct``), so the snapshot does
        not store them twice.

        Raises:
            ValueError: the index, labels and records do not match (a damaged or mixed
                snapshot); the message says what differs.
        """
        tier = cls(dim=dim, params=params)
        if index.d != dim:
            raise ValueError(f"snapshot index has dimension {index.d}, expected {dim}")
        by_id = {r.record_id: r for r in records}
        if set(by_id) != set(record_ids.tolist()):
            raise ValueError(
                f"snapshot labels cover {len(record_ids)} records but metadata holds "
                f"{len(by_id)}"
            )
        index_labels = faiss.vector_to_array(index.id_map)
        position = {int(label): i for i, label in enumerate(index_labels.tolist())}
        missing = [int(label) for label in labels.tolist() if int(label) not in position]
        if missing:
            raise ValueError(f"snapshot index lacks labels {missing[:5]} of live records")
        inner: Any = faiss.downcast_index(index.index)
        vectors = inner.reconstruct_n(0, index.ntotal) if index.ntotal else np.zeros((0, dim))
        for rid, label in zip(record_ids.tolist(), labels.tolist(), strict=True):
            record = by_id[rid]
            record.embedding = np.ascontiguousarray(vectors[position[label]], dtype=np.float32)
            tier._records[rid] = record
            tier._label[rid] = label
            tier._rid[label] = rid
            for tag in record.tags:
                tier._tags.setdefault(tag.casefold(), set()).add(rid)
        tier._index = index
        tier._hnsw = isinstance(inner, faiss.IndexHNSW)
        if tier._hnsw:
            inner.hnsw.efSearch = params.hnsw_ef_search
        tier._tombstones = int(index.ntotal) - len(tier._records)
        tier._next_label = max(int(next_label), int(index_labels.max(initial=-1)) + 1)
        return tier

    # ---------------------------------------------------------------- internals

    def _check(self, record: MemoryRecord) -> None:
        if record.rung not in (1, 2, 3):
            raise ValueError(
                f"record {record.record_id} has rung {record.rung!r}; long-term holds rungs 1-3"
            )
        emb = record.embedding
        if emb is None or emb.shape != (self.dim,):
            shape = None if emb is None else emb.shape
            raise ValueError(
                f"record {record.record_id} needs an embedding of shape ({self.dim},), "
                f"got {shape}"
            )

    def _rebuild(self, *, hnsw: bool) -> None:
        """Rebuild the index from the live records (drops tombstones)."""
        index = build_hnsw(self.dim, self.params) if hnsw else build_flat(self.dim)
        rids = list(self._records)
        if rids:
            vectors = np.stack([_vector(self._records[r]) for r in rids]).astype(np.float32)
            labels = np.array([self._label[r] for r in rids], dtype=np.int64)
            add_in_batches(index, vectors, labels)
        self._index = index
        self._hnsw = hnsw
        self._tombstones = 0


def _vector(record: MemoryRecord) -> np.ndarray:
    if record.embedding is None:  # _check refuses these; a record changed since
        raise ValueError(f"record {record.record_id} lost its embedding")
    return record.embedding
