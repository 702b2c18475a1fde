"""Embeddings of events' raw text, kept across restarts in sealed segment files.

Retrieval ranks the events of a faded episode (its *units*) by the embedding of each
event's raw text. The runtime keeps those vectors in one :class:`EventVectorStore`,
entry id -> vector, filled at ingest (a rung-0 record's embedding is its event's) and
by retrieval on first use, and shared by every agent. Without the files a restart
starts that store empty, and the first recall embeds every unit of every agent again:
418 s at 164k events. An event never changes, so neither does its vector: the store
is written as append-only segments, each holding the vectors not on disk yet::

    <home>/memory/event-vectors/segment-<generation>.sealed

Each segment is sealed (:mod:`solace.sealed`, ``ring.derive("snapshot")``) for the
role ``memory/event-vectors/<file name>`` and names the embedder and width its vectors
come from. Like a snapshot it is a cache: a segment that is refused (edited,
truncated, another key), unreadable or from another embedder is skipped with one
WARNING, its vectors are embedded again when retrieval needs them, and the next
:meth:`EventVectorFiles.save` writes every vector into one fresh segment and deletes
the rest. The same merge happens when more than :data:`MERGE_ABOVE` segments exist.
Each write is atomic (:func:`~solace.sealed.write_private`); a crash between a merge's
write and its deletes leaves vectors twice, which loading tolerates.
"""

from __future__ import annotations

import logging
import os
import secrets
from collections.abc import Iterator, Mapping, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path

import msgpack
import numpy as np

from solace.sealed import SealedFileRefused, read_sealed, remove_stale_tmp, write_sealed
from substrate import KeyRing

__all__ = ["BLOCK_ROWS", "FORMAT_VERSION", "MERGE_ABOVE", "PURPOSE", "EventVectorFiles",
           "EventVectorStore", "segment_role"]

log = logging.getLogger(__name__)

FORMAT_VERSION = 1
#: The key-derivation purpose (shared with snapshots: both are caches of the substrate).
PURPOSE = "snapshot"
#: More segments than this are merged into one by the next save.
MERGE_ABOVE = 8
#: Rows per block of :class:`EventVectorStore` (a block is allocated whole, never moved).
BLOCK_ROWS = 4096
_PREFIX = "segment-"
_SUFFIX = ".sealed"


def segment_role(name: str) -> str:
    """The sealed-file role of the segment file ``name``."""
    return f"memory/event-vectors/{name}"


@dataclass(slots=True)
class EventVectorFiles:
    """The segment files of one home, and which entry ids they already hold.

    Attributes:
        directory: where the segments live (created 0700 by the first save).
        embedder, dim: the embedder the vectors are from; others' segments are skipped.
        saved: sorted entry ids whose vectors are on disk in a usable segment.
        segments: the usable segment files.
        stale: segment files to delete at the next save (refused, unreadable, another
            embedder's): their vectors are written again with the rest.
    """

    directory: Path
    embedder: str
    dim: int
    saved: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    segments: list[Path] = field(default_factory=list)
    stale: list[Path] = field(default_factory=list)

    @classmethod
    def load(cls, directory: str | os.PathLike[str], *, ring: KeyRing, embedder: str,
             dim: int) -> tuple[EventVectorFiles, EventVectorStore]:
        """Read every segment in ``directory`` (missing: none). Blocking.

        Returns:
            The files, and a store of every usable segment's vectors.
        """
        files = cls(Path(directory), embedder, dim)
        vectors = EventVectorStore()
        if not files.directory.is_dir():
            return files, vectors
        remove_stale_tmp(files.directory)
        for path in sorted(files.directory.glob(f"{_PREFIX}*{_SUFFIX}")):
            try:
                ids, matrix = files._read(path, ring)
            except SegmentUnusable as exc:
                log.warning("event vectors: %s; its events are embedded again when "
                            "retrieval needs them", exc)
                files.stale.append(path)
                continue
            files.segments.append(path)
            for eid, vector in zip(ids.tolist(), matrix, strict=True):
                if eid not in vectors:  # a merge interrupted before its deletes
                    vectors[eid] = vector
        files.saved = np.array(sorted(vectors), dtype=np.int64)
        return files, vectors

    def _read(self, path: Path, ring: KeyRing) -> tuple[np.ndarray, np.ndarray]:
        try:
            raw = read_sealed(path, ring=ring, purpose=PURPOSE, role=segment_role(path.name))
            meta = msgpack.unpackb(raw, raw=False)
        except (SealedFileRefused, ValueError, msgpack.UnpackException) as exc:
            raise SegmentUnusable(f"{path} refused ({exc})") from exc
        if not isinstance(meta, dict) or meta.get("version") != FORMAT_VERSION:
            raise SegmentUnusable(f"{path} is not format version {FORMAT_VERSION}")
        if meta.get("embedder") != self.embedder or meta.get("dim") != self.dim:
            raise SegmentUnusable(f"{path} holds vectors of {meta.get('embedder')!r} "
                                  f"({meta.get('dim')}-d), not {self.embedder!r}")
        try:
            ids = np.frombuffer(meta["ids"], dtype=np.int64)
            matrix = np.frombuffer(meta["vectors"], dtype=np.float32).reshape(-1, self.dim)
        except (KeyError, TypeError, ValueError) as exc:
            raise SegmentUnusable(f"{path} has a bad field ({exc!r})") from exc
        if len(ids) != len(matrix):
            raise SegmentUnusable(f"{path} holds {len(ids)} ids for {len(matrix)} vectors")
        return ids, matrix

    def save(self, vectors: Mapping[int, np.ndarray], *, ring: KeyRing) -> int:
        """Write the vectors of ``vectors`` that no segment holds yet as a new segment
        (or, to merge or clear stale files, all of them as one). Blocking.

        Returns:
            How many vectors were written (0: nothing was new, no file was touched).

        Raises:
            StorageFullError, OSError: as :func:`~solace.sealed.write_private`; the
                segments already there are intact.
        """
        ids = np.fromiter(vectors.keys(), dtype=np.int64, count=len(vectors))
        merge = bool(self.stale) or len(self.segments) >= MERGE_ABOVE
        if not merge:
            ids = ids[~np.isin(ids, self.saved, assume_unique=True)]
        if len(ids) == 0 and not merge:
            return 0
        ids.sort()
        matrix = (np.stack([np.asarray(vectors[int(e)], dtype=np.float32) for e in ids])
                  if len(ids) else np.zeros((0, self.dim), dtype=np.float32))
        if matrix.shape[1] != self.dim:
            raise ValueError(f"event vectors are {matrix.shape[1]}-d, the files hold {self.dim}-d")
        name = f"{_PREFIX}{secrets.token_hex(8)}{_SUFFIX}"
        meta = {"version": FORMAT_VERSION, "embedder": self.embedder, "dim": self.dim,
                "ids": ids.tobytes(), "vectors": np.ascontiguousarray(matrix).tobytes()}
        path = write_sealed(self.directory / name, msgpack.packb(meta, use_bin_type=True),
                            ring=ring, purpose=PURPOSE, role=segment_role(name),
                            what="the event vectors")
        if merge:
            for old in self.segments + self.stale:
                old.unlink(missing_ok=True)
            self.segments, self.stale, self.saved = [path], [], ids
        else:
            self.segments.append(path)
            self.saved = np.union1d(self.saved, ids)
        return len(ids)


class SegmentUnusable(Exception):
    """A segment file that cannot be used (the message names it and says why)."""


class EventVectorStore(MutableMapping[int, np.ndarray]):
    """The runtime's one copy of the events' vectors: entry id -> float32 vector.

    Rows live in fixed blocks of :data:`BLOCK_ROWS` (a block never moves, so a vector
    handed out stays valid and growing copies nothing). Every agent's retrieval asks
    the same query vector of the same events, so :meth:`similarities` scores all rows
    once per query vector and the agents pick their units' rows out of that
    (:meth:`rows_of`), instead of each stacking and scoring its own copy.
    Mutated on the event loop only; a vector, once set, is not changed.
    """

    def __init__(self) -> None:
        self._dim: int | None = None
        self._blocks: list[np.ndarray] = []
        self._size = 0
        self._row_of = np.full(0, -1, dtype=np.int64)  # entry id -> row (-1: none)
        self._last: tuple[bytes, np.ndarray] | None = None  # query bytes, similarities

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
        vector: np.ndarray = self._blocks[row // BLOCK_ROWS][row % BLOCK_ROWS]
        return vector

    def __iter__(self) -> Iterator[int]:
        return iter(np.flatnonzero(self._row_of >= 0).tolist())

    def __setitem__(self, entry_id: int, vector: np.ndarray) -> None:
        vector = np.asarray(vector, dtype=np.float32)
        if self._dim is None:
            self._dim = int(vector.shape[-1])
        if vector.shape != (self._dim,):
            raise ValueError(f"event {entry_id}'s vector has shape {vector.shape}, "
                             f"the store holds {self._dim}-d vectors")
        row = self._row(entry_id)
        if row < 0:
            if entry_id < 0:
                raise KeyError(f"entry ids are >= 0, got {entry_id!r}")
            if entry_id >= len(self._row_of):
                grown = np.full(max(2 * len(self._row_of), entry_id + 1, 1024), -1,
                                dtype=np.int64)
                grown[: len(self._row_of)] = self._row_of
                self._row_of = grown
            row = self._size
            if row == len(self._blocks) * BLOCK_ROWS:
                self._blocks.append(np.zeros((BLOCK_ROWS, self._dim), dtype=np.float32))
            self._size += 1
            self._row_of[entry_id] = row
        self._blocks[row // BLOCK_ROWS][row % BLOCK_ROWS] = vector
        self._last = None

    def __delitem__(self, entry_id: int) -> None:
        raise TypeError("an event's vector is never removed (events are never changed)")

    def rows_of(self, entry_ids: np.ndarray) -> np.ndarray:
        """The rows of ``entry_ids`` in :meth:`similarities` (-1 where none is held)."""
        ids = np.asarray(entry_ids, dtype=np.int64)
        rows = np.full(len(ids), -1, dtype=np.int64)
        inside = (ids >= 0) & (ids < len(self._row_of))
        rows[inside] = self._row_of[ids[inside]]
        return rows

    def similarities(self, vector: np.ndarray) -> np.ndarray:
        """``row @ vector`` for every row (row order), remembered for the last vector
        asked (every agent of one recall asks the same one)."""
        vector = np.asarray(vector, dtype=np.float32)
        key = vector.tobytes()
        if self._last is not None and self._last[0] == key:
            return self._last[1]
        sims = np.empty(self._size, dtype=np.float32)
        for i, block in enumerate(self._blocks):
            start = i * BLOCK_ROWS
            used = min(BLOCK_ROWS, self._size - start)
            sims[start:start + used] = block[:used] @ vector
        self._last = (key, sims)
        return sims
