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

A segment's name carries its generation (``segment-<generation>-<random>.sealed``) and
holds its vectors in the store's row order, so the segments read back in the order
they were written give every vector the row it had. That lets the store's approximate
index (:mod:`~solace.memory.row_ann`, built from 262,144 rows on) be kept too, as
``row-index.sealed`` beside them (sealed like a segment, with the SHA-256 of the entry
ids of the rows it holds, in order): an open whose first rows are those takes it as it
was; any other (a segment refused, the index's shape changed) deletes it with one
WARNING and builds it again when a search needs it.
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

__all__ = ["FORMAT_VERSION", "INDEX_FILE", "INDEX_VERSION", "MERGE_ABOVE", "PURPOSE",
           "EventVectorFiles", "SegmentUnusable", "segment_role"]

log = logging.getLogger(__name__)

#: 3: int8 codes and a float32 scale a row; still read: 2 (float16), 1 (float32).
FORMAT_VERSION = 3
#: What each earlier format version holds its vectors as.
_FLOAT_FORMATS = {1: np.float32, 2: np.float16}
#: The key-derivation purpose (shared with snapshots: both are caches of the substrate).
PURPOSE = "snapshot"
#: More segments than this are merged into one by the next save.
MERGE_ABOVE = 8
#: The approximate index of the store's rows (:mod:`~solace.memory.row_ann`), kept
#: beside the segments, and its format.
INDEX_FILE = "row-index.sealed"
INDEX_VERSION = 1
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
        segments: the usable segment files, in the order they were written.
        stale: segment files to delete at the next save (refused, unreadable, another
            embedder's, an earlier format's): their vectors are written again with the
            rest.
        index_rows: how many rows the kept approximate index holds (0: none kept).
    """

    directory: Path
    embedder: str
    dim: int
    saved: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    segments: list[Path] = field(default_factory=list)
    stale: list[Path] = field(default_factory=list)
    index_rows: int = 0

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
        for path in sorted(files.directory.glob(f"{_PREFIX}*{_SUFFIX}"), key=_written):
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
        files._take_index(vectors, ring)
        return files, vectors

    def _take_index(self, vectors: EventVectorStore, ring: KeyRing) -> None:
        """Give ``vectors`` the approximate index kept with them, when there is one for
        these rows in this order (else it is built again once a search needs it)."""
        path = self.directory / INDEX_FILE
        if not path.is_file():
            return
        try:
            raw = read_sealed(path, ring=ring, purpose=PURPOSE, role=segment_role(INDEX_FILE))
            meta = msgpack.unpackb(raw, raw=False)
            if not isinstance(meta, dict) or meta.get("version") != INDEX_VERSION or (
                    meta.get("embedder"), meta.get("dim")) != (self.embedder, self.dim):
                raise ValueError("another version or embedder")
            vectors.take_index(int(meta["rows"]), bytes(meta["order"]), bytes(meta["index"]))
            self.index_rows = int(meta["rows"])
        except (SealedFileRefused, ValueError, KeyError, TypeError,
                msgpack.UnpackException) as exc:
            log.warning("event vectors: the approximate index kept in %s is not used (%s); "
                        "it is built again when a search needs it", path, exc)
            path.unlink(missing_ok=True)  # a cache: the next save keeps a fresh one

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
        (or, to merge or clear stale files, all of them as one), and, for a store whose
        approximate index holds more rows than the one kept, that index. Blocking.

        Returns:
            How many vectors were written (0: nothing was new, no file was touched).

        Raises:
            StorageFullError, OSError: as :func:`~solace.sealed.write_private`; the
                segments already there are intact.
        """
        written = self._save_segment(vectors, ring)
        if isinstance(vectors, EventVectorStore):
            self._save_index(vectors, ring)
        return written

    def _save_segment(self, vectors: Mapping[int, np.ndarray], ring: KeyRing) -> int:
        """:meth:`save`'s segment: the vectors no segment holds, in the store's row order."""
        if isinstance(vectors, EventVectorStore):  # in row order: read back in place
            ids = vectors.row_order()
        else:
            ids = np.sort(np.fromiter(vectors.keys(), dtype=np.int64, count=len(vectors)))
        merge = bool(self.stale) or len(self.segments) >= MERGE_ABOVE
        if not merge:
            ids = ids[~np.isin(ids, self.saved, assume_unique=True)]
        if len(ids) == 0 and not merge:
            return 0
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
        generation = max((_written(p)[0] for p in self.segments + self.stale), default=0) + 1
        name = f"{_PREFIX}{generation:012d}-{secrets.token_hex(8)}{_SUFFIX}"
        meta = {"version": FORMAT_VERSION, "embedder": self.embedder, "dim": self.dim,
                "ids": ids.tobytes(), "codes": np.ascontiguousarray(rows.codes).tobytes(),
                "scales": np.ascontiguousarray(rows.scales).tobytes()}
        path = write_sealed(self.directory / name, msgpack.packb(meta, use_bin_type=True),
                            ring=ring, purpose=PURPOSE, role=segment_role(name),
                            what="the event vectors")
        if merge:
            for old in self.segments + self.stale:
                old.unlink(missing_ok=True)
            self.segments, self.stale, self.saved = [path], [], np.sort(ids)
        else:
            self.segments.append(path)
            self.saved = np.union1d(self.saved, ids)
        return len(ids)

    def _save_index(self, vectors: EventVectorStore, ring: KeyRing) -> None:
        """Keep ``vectors``' approximate index beside the segments, when it is built and
        holds more rows than the one kept (56 bytes a row: ~56 MB at a million)."""
        kept = vectors.kept_index(beyond=self.index_rows)
        if kept is None:
            return
        rows, order, index = kept
        meta = {"version": INDEX_VERSION, "embedder": self.embedder, "dim": self.dim,
                "rows": rows, "order": order, "index": index}
        write_sealed(self.directory / INDEX_FILE, msgpack.packb(meta, use_bin_type=True),
                     ring=ring, purpose=PURPOSE, role=segment_role(INDEX_FILE),
                     what="the event vectors' approximate index")
        self.index_rows = rows


def _written(path: Path) -> tuple[int, str]:
    """A segment's place in the order segments were written: its generation (0 for a
    name without one, from before generations), then its name."""
    middle = path.name[len(_PREFIX):-len(_SUFFIX)]
    generation, _, _ = middle.partition("-")
    return (int(generation) if generation.isdigit() else 0), path.name


class SegmentUnusable(Exception):
    """A segment file that cannot be used (the message names it and says why)."""
