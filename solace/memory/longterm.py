"""The long-term tier: an agent's compressed past (rungs 1–3), searchable by embedding.

Three parts, kept in step by every method:

* a FAISS index over the records' embeddings (:mod:`solace.memory.index`): exact
  (``IndexIDMap2(IndexFlatIP)``) while the tier is small, replaced past
  ``hnsw_threshold`` by an approximate one (IVF by default, HNSW by config), and
  rebuilt — retrained, for IVF — each time the tier has grown fourfold since, so the
  number of lists keeps up with ``4·sqrt(n)``; embeddings are L2-normalised, so scores
  are cosines;
* a tag index (casefolded tag -> record ids);
* the metadata: the :class:`MemoryRecord` objects themselves.

FAISS labels are not record ids but a counter that never repeats: a record that
leaves (a used cue returning to working) leaves its vector behind as a tombstone that
searches over-fetch past and skip, and a record that comes back later gets a fresh
label. So :meth:`remove` never touches FAISS and is safe on the event loop while a
search or a snapshot reads the index in a worker thread; a rebuild drops tombstones
once they exceed a tenth of the index.

:meth:`search`, :meth:`add` and :meth:`replace` may block (FAISS, rebuilds): the
runtime calls them through :class:`~solace.offload.Offloader`. Searches and index
changes hold :attr:`index_lock`, so they never meet inside FAISS; a snapshot holds it
while it writes. A rebuild is built *outside* the lock from a copy of the live
vectors and swapped in under it, so searches go on (on the old index) meanwhile.
One writer at a time: :meth:`add`/:meth:`replace` are called by the agent's fade
only, under its state lock.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from typing import Any, Protocol

import faiss
import numpy as np

from solace.memory.changes import ChangeLog
from solace.memory.index import (
    IndexParams,
    add_in_batches,
    build_approximate,
    build_flat,
    configure,
    kind_of,
    one_omp_thread,
    reconstruct_all,
)
from solace.memory.record import MemoryRecord, check_record

__all__ = ["IndexParams", "LongTermStore", "LongTermTier", "open_longterm_store"]

_TOMBSTONE_SHARE = 0.1
_REGROW = 4  # rebuild the approximate index each time the tier has grown this much


class LongTermStore(Protocol):
    """What the runtime asks of a long-term store: records by id and by tag, vector
    search, and changes made by the fade. :class:`LongTermTier` (FAISS) is one
    implementation; a vector database can be another. Snapshots of a store are its
    implementation's business (:mod:`solace.memory.snapshot` handles FAISS's)."""

    #: Changes with every add, replace and remove (retrieval rebuilds what it derives
    #: from the records only when it has moved).
    version: int
    #: The ids each version bump changed (see :mod:`solace.memory.changes`).
    changes: ChangeLog

    def __len__(self) -> int: ...
    def __contains__(self, record_id: object) -> bool: ...
    def get(self, record_id: int) -> MemoryRecord | None: ...
    def records(self) -> Iterator[MemoryRecord]: ...
    def newest(self, n: int) -> list[MemoryRecord]: ...
    def by_tags(self, tags: Iterable[str], *, match_all: bool = False) -> set[int]: ...
    def tag_counts(self) -> dict[str, int]: ...
    def count_by_rung(self) -> dict[int, int]: ...
    def search(self, vector: np.ndarray, k: int) -> list[tuple[MemoryRecord, float]]: ...
    def add(self, records: Iterable[MemoryRecord]) -> None: ...
    def replace(self, record: MemoryRecord) -> MemoryRecord: ...
    def remove(self, record_id: int) -> MemoryRecord: ...
    def touch(self, record_id: int, now: float) -> None: ...


def open_longterm_store(*, dim: int, params: IndexParams | None = None) -> LongTermTier:
    """The long-term store the runtime uses (FAISS today): the one place one is made."""
    return LongTermTier(dim=dim, params=params)


class LongTermTier:
    """One agent's long-term tier, on FAISS (a :class:`LongTermStore`).

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
        self._index: Any = build_flat(dim)
        self._kind = "flat"
        self._built_at = 0  # records when the approximate index was last built
        self.index_lock = threading.Lock()
        #: Bumped after every add, replace and remove (not by touch): equal versions,
        #: the same records (what retrieval's indexes were built from).
        self.version = 0
        #: Which records each bump changed (retrieval follows the tier by it).
        self.changes = ChangeLog()

    # ------------------------------------------------------------------ reading

    def __len__(self) -> int:
        return len(self._records)

    def __contains__(self, record_id: object) -> bool:
        return record_id in self._records

    @property
    def index_kind(self) -> str:
        """``"flat"``, ``"ivf"`` or ``"hnsw"``."""
        return self._kind

    @property
    def index(self) -> Any:
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

        Exact while the index is flat; approximate (IVF or HNSW) past the threshold.
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
        with self.index_lock, one_omp_thread():
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

        All records are checked before any is added. May replace the index (flat to
        approximate past the threshold, a rebuild after fourfold growth or too many
        tombstones): seconds at 50k records, minutes at 1M — in this thread, while
        searches go on against the old index.

        Raises:
            ValueError: a record id is already present (or repeated), a rung is not
                1–3, or an embedding is missing or of the wrong shape.
        """
        batch = list(records)
        seen: set[int] = set()
        for record in batch:
            check_record(record, tier="longterm", dim=self.dim)
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
        n = len(self._records)
        if self._kind == "flat" and n > self.params.threshold:
            self._rebuild(approximate=True)
        elif self._kind != "flat" and n > _REGROW * self._built_at:
            self._rebuild(approximate=True)
        elif self._tombstones > _TOMBSTONE_SHARE * max(self._index.ntotal, 1):
            self._rebuild(approximate=self._kind != "flat")
        else:
            with self.index_lock:
                add_in_batches(self._index, vectors, labels)
        self.version += 1
        self.changes.note(self.version, (r.record_id for r in batch))

    def replace(self, record: MemoryRecord) -> MemoryRecord:
        """Put ``record`` in place of the long-term record with the same id; return the old.

        A record whose embedding is unchanged (a rung-2 summary fading to rung 3 keeps
        its vector) only changes metadata; otherwise its vector is replaced too.

        Raises:
            KeyError: no record with that id is in long-term.
            ValueError: as :meth:`add`.
        """
        check_record(record, tier="longterm", dim=self.dim)
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
        self.version += 1
        self.changes.note(self.version, (rid,))
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
        self.version += 1
        self.changes.note(self.version, (record_id,))
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
        configure(index, params)
        index_labels = faiss.vector_to_array(index.id_map)
        position = {int(label): i for i, label in enumerate(index_labels.tolist())}
        missing = [int(label) for label in labels.tolist() if int(label) not in position]
        if missing:
            raise ValueError(f"snapshot index lacks labels {missing[:5]} of live records")
        vectors = reconstruct_all(index)
        for rid, label in zip(record_ids.tolist(), labels.tolist(), strict=True):
            record = by_id[rid]
            record.embedding = np.ascontiguousarray(vectors[position[label]], dtype=np.float32)
            tier._records[rid] = record
            tier._label[rid] = label
            tier._rid[label] = rid
            for tag in record.tags:
                tier._tags.setdefault(tag.casefold(), set()).add(rid)
        tier._index = index
        tier._kind = kind_of(index)
        tier._built_at = int(index.ntotal) if tier._kind != "flat" else 0
        tier._tombstones = int(index.ntotal) - len(tier._records)
        tier._next_label = max(int(next_label), int(index_labels.max(initial=-1)) + 1)
        return tier

    # ---------------------------------------------------------------- internals

    def _rebuild(self, *, approximate: bool) -> None:
        """Build a new index from the live records (no tombstones) and swap it in.

        Built outside :attr:`index_lock` from a copy of the live vectors; records
        removed meanwhile become tombstones of the new index.
        """
        live = list(self._label.items())
        if live:
            vectors = np.stack([_vector(self._records[rid]) for rid, _ in live])
            labels = np.array([label for _, label in live], dtype=np.int64)
        else:
            vectors, labels = np.zeros((0, self.dim), np.float32), np.zeros(0, np.int64)
        kind: str
        if approximate and len(live):
            index = build_approximate(vectors, labels, self.params)
            kind = self.params.kind
        else:
            index = build_flat(self.dim)
            add_in_batches(index, vectors, labels)
            kind = "flat"
        with self.index_lock:
            self._index = index
            self._kind = kind
            self._built_at = len(live)
            self._tombstones = int(index.ntotal) - len(self._rid)


def _vector(record: MemoryRecord) -> np.ndarray:
    if record.embedding is None:  # _check refuses these; a record changed since
        raise ValueError(f"record {record.record_id} lost its embedding")
    return record.embedding
