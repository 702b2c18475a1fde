"""Sealed, atomic snapshots of one agent's tiers: the FAISS index plus msgpack metadata.

A snapshot is a cache of what the substrate already says (every record can be
rebuilt from it, see :mod:`solace.memory.rebuild`), kept so a restart does not
re-embed and re-index everything. Layout, in the agent's directory (0700)::

    snapshot.sealed                     metadata: records of both tiers, labels, covered id
    longterm-<generation>.faiss.sealed  the long-term index named by that metadata

Both are sealed files (:mod:`solace.sealed`): AES-256-GCM under
``ring.derive("snapshot")``, mode 0600, each authenticated for its role — the metadata
for ``memory/<agent>/snapshot``, the index for its agent *and generation* — so an
edited byte, a truncation, another agent's file, an older index generation or a
plaintext snapshot of an older Solace is refused (:class:`SnapshotError`), and the
agent rebuilds from the substrate. The key id is stored, so a rotated ring still opens
snapshots sealed before the rotation.

Writes are atomic as a pair: the index goes to a new file (tmp + fsync + rename + dir
fsync), then the metadata naming it replaces the old metadata the same way, then the
previous index file is deleted. A crash at any point leaves either the old pair or the
new one; a failed write (a full disk) removes its temporary file and the new index.
A snapshot records ``covered_id``: the substrate's last entry id when it was taken, so
the events after it — fade events and new perceptions — are replayed on load, and a
snapshot newer than the substrate (a different or restored substrate) is detected and
ignored.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import faiss
import msgpack
import numpy as np

from solace.memory.record import MemoryRecord
from solace.memory.record_codec import record_from_row, record_to_row
from solace.sealed import (
    SealedFileRefused,
    read_sealed,
    remove_stale_tmp,
    secure_dir,
    tighten,
    write_sealed,
)
from substrate import KeyRing

if TYPE_CHECKING:
    from solace.memory.agent_memory import AgentMemory

__all__ = [
    "FORMAT_VERSION",
    "META_NAME",
    "PURPOSE",
    "Snapshot",
    "SnapshotError",
    "index_role",
    "meta_role",
    "prepare",
    "read_snapshot",
    "save",
    "snapshot_files",
    "write_snapshot",
]

FORMAT_VERSION = 1
META_NAME = "snapshot.sealed"
#: The key-derivation purpose of snapshot files (``KeyRing.derive``).
PURPOSE = "snapshot"
_INDEX_PREFIX = "longterm-"
_INDEX_SUFFIX = ".faiss.sealed"
#: Plaintext metadata of Solace before sealed snapshots (its indexes start with
#: ``longterm-`` too): refused on read, deleted by the next snapshot.
_LEGACY_NAMES = frozenset({"snapshot.msgpack"})


class SnapshotError(Exception):
    """Raised by :func:`read_snapshot` when a snapshot exists but cannot be used
    (damaged, another format version, index missing); the agent then rebuilds."""


@dataclass(slots=True)
class Snapshot:
    """Everything one agent's tiers need to come back without re-embedding.

    Attributes:
        agent: whose tiers.
        covered_id: the substrate's ``last_id`` when the snapshot was taken.
        embedder: name of the embedder that made the vectors (a different one forces
            a rebuild: vectors of two models do not mix).
        dim: embedding width.
        working: working records, with embeddings.
        longterm: long-term records (embeddings come back from the index).
        index: the long-term FAISS index.
        record_ids, labels: the live long-term records' FAISS labels.
        next_label: the long-term tier's label counter.
        next_extra_id: the agent's counter for record ids not taken from entry ids.
        counters: the fade counters, as a plain mapping.
    """

    agent: str
    covered_id: int
    embedder: str
    dim: int
    working: list[MemoryRecord]
    longterm: list[MemoryRecord]
    index: Any
    record_ids: np.ndarray
    labels: np.ndarray
    next_label: int
    next_extra_id: int
    counters: dict[str, Any] = field(default_factory=dict)


def write_snapshot(directory: str | os.PathLike[str], snapshot: Snapshot, *,
                   ring: KeyRing) -> Path:
    """Write ``snapshot`` atomically into ``directory`` (created 0700 if missing),
    both files sealed (:mod:`solace.sealed`) with ``ring.derive("snapshot")``.

    The index is sealed for the role ``memory/<agent>/longterm-index/<generation>`` and
    the metadata, which names that generation, for ``memory/<agent>/snapshot``: neither
    opens as another agent's, and an index of another generation is refused.
    Blocking (FAISS serialisation, AES-GCM, fsync): call through the offloader.

    Returns:
        The metadata file's path.

    Raises:
        StorageFullError: the disk is full; the previous snapshot is intact and neither
            a temporary file nor the new index file is left — except when only the
            final directory fsync failed: the new pair is then in place, whole, and the
            previous index file stays until the next snapshot.
        OSError: another write failure, with the same guarantee.
    """
    directory = secure_dir(directory)
    generation = secrets.token_hex(8)
    index_name = f"{_INDEX_PREFIX}{generation}{_INDEX_SUFFIX}"
    index_bytes = faiss.serialize_index(snapshot.index).tobytes()
    meta = {
        "version": FORMAT_VERSION,
        "agent": snapshot.agent,
        "covered_id": int(snapshot.covered_id),
        "embedder": snapshot.embedder,
        "dim": int(snapshot.dim),
        "index_file": index_name,
        "working": [record_to_row(r, with_embedding=True) for r in snapshot.working],
        "longterm": [record_to_row(r, with_embedding=False) for r in snapshot.longterm],
        "record_ids": np.asarray(snapshot.record_ids, dtype=np.int64).tobytes(),
        "labels": np.asarray(snapshot.labels, dtype=np.int64).tobytes(),
        "next_label": int(snapshot.next_label),
        "next_extra_id": int(snapshot.next_extra_id),
        "counters": snapshot.counters,
    }
    agent = snapshot.agent
    index_path, meta_path = directory / index_name, directory / META_NAME
    old_meta = _identity(meta_path)
    try:
        write_sealed(index_path, index_bytes, ring=ring, purpose=PURPOSE,
                     role=index_role(agent, index_name), what=f"{agent}'s long-term index")
        write_sealed(meta_path, msgpack.packb(meta, use_bin_type=True), ring=ring,
                     purpose=PURPOSE, role=meta_role(agent), what=f"{agent}'s snapshot")
    except Exception:
        if _identity(meta_path) == old_meta:  # an index no metadata names is garbage
            index_path.unlink(missing_ok=True)
        raise
    _remove_stale(directory, keep=index_name)
    return meta_path


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return st.st_dev, st.st_ino


def meta_role(agent: str) -> str:
    """The sealed-file role of ``agent``'s snapshot metadata."""
    return f"memory/{agent}/snapshot"


def index_role(agent: str, index_name: str) -> str:
    """The sealed-file role of ``agent``'s long-term index file ``index_name``."""
    return f"memory/{agent}/longterm-index/{index_name}"


def _remove_stale(directory: Path, keep: str) -> None:
    """Delete index files other than ``keep`` (older generations), plaintext files of
    an older Solace and abandoned temporary files."""
    for path in directory.iterdir():
        name = path.name
        if (name.startswith(_INDEX_PREFIX) and name != keep) or name in _LEGACY_NAMES:
            path.unlink(missing_ok=True)
    remove_stale_tmp(directory)


def prepare(directory: str | os.PathLike[str]) -> list[Path]:
    """Make ``directory`` ready before a snapshot is read: created or tightened to 0700,
    its files 0600, temporary files of an interrupted write removed. Blocking.

    Returns:
        The temporary files removed.
    """
    directory = secure_dir(directory)
    removed = remove_stale_tmp(directory)
    tighten(directory.iterdir())
    return removed


def read_snapshot(directory: str | os.PathLike[str], *, agent: str,
                  ring: KeyRing) -> Snapshot | None:
    """Read and authenticate ``agent``'s snapshot in ``directory``; None if there is none.

    Blocking: call through the offloader.

    Raises:
        SnapshotError: a snapshot is there but cannot be used — refused by
            authentication (edited, truncated, another agent's, an unknown key, a
            plaintext snapshot of an older Solace), another format version, index
            missing; the message names the file and says why. Nothing of a refused
            file is returned.
    """
    directory = Path(directory)
    meta_path = directory / META_NAME
    try:
        raw = read_sealed(meta_path, ring=ring, purpose=PURPOSE, role=meta_role(agent))
    except FileNotFoundError:
        legacy = [directory / n for n in _LEGACY_NAMES if (directory / n).exists()]
        if legacy:
            raise SnapshotError(f"{legacy[0]} is an unsealed snapshot of an older Solace; "
                                "refused") from None
        return None
    except SealedFileRefused as exc:
        raise SnapshotError(str(exc)) from exc
    try:
        meta = msgpack.unpackb(raw, raw=False, strict_map_key=False)
    except (ValueError, msgpack.UnpackException) as exc:
        raise SnapshotError(f"{meta_path} is not readable msgpack ({exc})") from exc
    if not isinstance(meta, dict) or meta.get("version") != FORMAT_VERSION:
        version = meta.get("version") if isinstance(meta, dict) else None
        raise SnapshotError(
            f"{meta_path} has format version {version!r}, this Solace reads {FORMAT_VERSION}"
        )
    index_name = str(meta.get("index_file"))
    if not index_name.startswith(_INDEX_PREFIX) or Path(index_name).name != index_name:
        raise SnapshotError(f"{meta_path} names index {index_name!r}, not a file of its own")
    index_path = directory / index_name
    try:
        index_bytes = read_sealed(index_path, ring=ring, purpose=PURPOSE,
                                  role=index_role(agent, index_name))
    except FileNotFoundError:
        raise SnapshotError(f"{meta_path} names index {index_name}, which is missing") from None
    except SealedFileRefused as exc:
        raise SnapshotError(str(exc)) from exc
    try:
        index = faiss.deserialize_index(np.frombuffer(index_bytes, dtype=np.uint8))
    except RuntimeError as exc:  # faiss reports every read failure as RuntimeError
        raise SnapshotError(f"cannot read {index_path}: {exc}") from exc
    try:
        return Snapshot(
            agent=meta["agent"],
            covered_id=int(meta["covered_id"]),
            embedder=meta["embedder"],
            dim=int(meta["dim"]),
            working=[record_from_row(f) for f in meta["working"]],
            longterm=[record_from_row(f) for f in meta["longterm"]],
            index=index,
            record_ids=np.frombuffer(meta["record_ids"], dtype=np.int64).copy(),
            labels=np.frombuffer(meta["labels"], dtype=np.int64).copy(),
            next_label=int(meta["next_label"]),
            next_extra_id=int(meta["next_extra_id"]),
            counters=dict(meta.get("counters") or {}),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise SnapshotError(f"{meta_path} is missing or has a bad field ({exc!r})") from exc


def snapshot_files(directory: str | os.PathLike[str]) -> Iterable[Path]:
    """The files a snapshot in ``directory`` consists of (for tests and tools)."""
    directory = Path(directory)
    return sorted(p for p in directory.iterdir() if p.name == META_NAME
                  or p.name.startswith(_INDEX_PREFIX))


async def save(memory: AgentMemory) -> None:
    """Snapshot ``memory``'s tiers, sealed with ``memory.key_ring`` (the caller holds
    the memory's state lock, so no fade event is half-applied). The records are listed
    on the event loop; packing, index serialisation, sealing and the fsyncs run in a
    worker thread holding the long-term index lock (a concurrent search waits; a
    concurrent ``remove`` only tombstones).

    Raises:
        StorageFullError: the disk is full; the previous snapshot is intact, nothing
            of the failed write is left.
        OSError: another write failure, with the same guarantee.
    """
    record_ids, labels = memory.longterm.label_map()
    snap = Snapshot(
        agent=memory.agent,
        covered_id=int(memory.substrate.last_id),
        embedder=memory.embedder.name,
        dim=memory.dim,
        working=memory.working.records(),
        longterm=list(memory.longterm.records()),
        index=memory.longterm.index,
        record_ids=record_ids,
        labels=labels,
        next_label=memory.longterm.next_label,
        next_extra_id=memory.next_extra_id_peek(),
        counters=memory.counters.as_dict(),
    )
    ring = memory.key_ring

    def write() -> None:
        with memory.longterm.index_lock:
            write_snapshot(memory.directory, snap, ring=ring)

    await memory.offloader.run(write)
