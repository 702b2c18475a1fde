"""The event vector store kept across restarts, in sealed segment files.

Without the files a restart starts the runtime's
:class:`~solace.memory.event_vectors.EventVectorStore` empty, and the first recall
embeds every unit of every agent again: 418 s at 164k events. An event never changes,
so neither does its vector: the store is written as append-only segments, each
holding the vectors not on disk yet::

    <home>/memory/event-vectors/segment-<generation>.sealed

Each segment is sealed (:mod:`solace.sealed`, ``ring.derive("snapshot")``) for the
role ``memory/event-vectors/<file name>`` and names the embedder and width its vectors
come from. Like a snapshot it is a cache: a segment that is refused (edited,
truncated, another key), unreadable or from another embedder is skipped with one
WARNING, its vectors are embedded again when retrieval needs them, and the next
:meth:`EventVectorFiles.save` writes every vector into one fresh segment and deletes
the rest. The same merge happens when more than :data:`MERGE_ABOVE` segments exist.
Each write is atomic (:func:`~solace.sealed.write_private`); a crash between a merge's
write and its deletes leaves vectors twice, which loading tolerates. Segments hold the
vectors as the store keeps them, int8 codes and a scale a row (format 3). A segment of
an earlier format (1: float32, 2: float16) still loads, its vectors quantized as they
enter the store, and the next save rewrites every vector as one format-3 segment.
"""

from __future__ import annotations

import logging
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import msgpack
import numpy as np

from solace.memory.event_vectors import EventVectorStore
from solace.memory.row_blocks import Quantized, quantize
from solace.sealed import SealedFileRefused, read_sealed, remove_stale_tmp, write_sealed
from substrate import KeyRing

__all__ = ["FORMAT_VERSION", "MERGE_ABOVE", "PURPOSE", "EventVectorFiles", "SegmentUnusable",
           "segment_role"]

log = logging.getLogger(__name__)

#: 3: int8 codes and a float32 scale a row; still read: 2 (float16), 1 (float32).
FORMAT_VERSION = 3
#: What each earlier format version holds its vectors as.
_FLOAT_FORMATS = {1: np.float32, 2: np.float16}
#: The key-derivation purpose (shared with snapshots: both are caches of the substrate).
PURPOSE = "snapshot"
#: More segments than this are merged into one by the next save.
MERGE_ABOVE = 8
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
            embedder's, an earlier format's): their vectors are written again with the
            rest.
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
            if isinstance(matrix, Quantized):
                files.segments.append(path)
            else:  # an earlier format's: loaded, and rewritten by the next save
                files.stale.append(path)
            vectors.add_new(ids, matrix)  # skips ids held: a merge cut before its deletes
        files.saved = np.array(sorted(vectors), dtype=np.int64)
        return files, vectors

    def _read(self, path: Path, ring: KeyRing) -> tuple[np.ndarray, Quantized | np.ndarray]:
        """A segment's ids and vectors: as kept (format 3) or floats (earlier ones)."""
        try:
            raw = read_sealed(path, ring=ring, purpose=PURPOSE, role=segment_role(path.name))
            meta = msgpack.unpackb(raw, raw=False)
        except (SealedFileRefused, ValueError, msgpack.UnpackException) as exc:
            raise SegmentUnusable(f"{path} refused ({exc})") from exc
        version = meta.get("version") if isinstance(meta, dict) else None
        known = sorted([*_FLOAT_FORMATS, FORMAT_VERSION])
        if not isinstance(version, int) or version not in known:
            raise SegmentUnusable(f"{path} is format version {version!r}, not one of {known}")
        if meta.get("embedder") != self.embedder or meta.get("dim") != self.dim:
            raise SegmentUnusable(f"{path} holds vectors of {meta.get('embedder')!r} "
                                  f"({meta.get('dim')}-d), not {self.embedder!r}")
        matrix: Quantized | np.ndarray
        try:
            ids = np.frombuffer(meta["ids"], dtype=np.int64)
            if version == FORMAT_VERSION:
                matrix = Quantized(
                    np.frombuffer(meta["codes"], dtype=np.int8).reshape(-1, self.dim),
                    np.frombuffer(meta["scales"], dtype=np.float32))
                if len(matrix.codes) != len(matrix.scales):
                    raise ValueError(f"{len(matrix.codes)} rows, {len(matrix.scales)} scales")
                if not np.isfinite(matrix.scales).all():
                    raise ValueError("a scale is not finite")
            else:
                matrix = np.frombuffer(meta["vectors"], dtype=_FLOAT_FORMATS[version]
                                       ).reshape(-1, self.dim)
        except (KeyError, TypeError, ValueError) as exc:
            raise SegmentUnusable(f"{path} has a bad field ({exc!r})") from exc
        if len(ids) != len(matrix):
            raise SegmentUnusable(f"{path} holds {len(ids)} ids for {len(matrix)} vectors")
        if not isinstance(matrix, Quantized) and not np.isfinite(matrix).all():
            raise SegmentUnusable(f"{path} holds a vector that is not finite")
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
        if not len(ids):
            rows = quantize(np.zeros((0, self.dim), dtype=np.float32))
        elif isinstance(vectors, EventVectorStore):
            rows = vectors.stored(ids)  # as kept: no float32 copy of every vector
        else:
            rows = quantize(np.stack([np.asarray(vectors[int(e)], dtype=np.float32)
                                      for e in ids]))
        if rows.codes.shape[1] != self.dim:
            raise ValueError(f"event vectors are {rows.codes.shape[1]}-d, the files hold "
                             f"{self.dim}-d")
        name = f"{_PREFIX}{secrets.token_hex(8)}{_SUFFIX}"
        meta = {"version": FORMAT_VERSION, "embedder": self.embedder, "dim": self.dim,
                "ids": ids.tobytes(), "codes": np.ascontiguousarray(rows.codes).tobytes(),
                "scales": np.ascontiguousarray(rows.scales).tobytes()}
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
