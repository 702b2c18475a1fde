"""Atomic snapshots of one agent's tiers: the FAISS index plus msgpack metadata.

A snapshot is a cache of what the substrate already says (every record can be
rebuilt from it, see :mod:`solace.memory.rebuild`), kept so a restart does not
re-embed and re-index everything. Layout, in the agent's directory::

    snapshot.msgpack          metadata: records of both tiers, labels, covered id
    longterm-<generation>.faiss   the long-term index named by that metadata

Writes are atomic as a pair: the index goes to a new file (tmp + fsync + rename),
then the metadata naming it replaces the old metadata (tmp + fsync + ``os.replace``
+ directory fsync), then the previous index file is deleted. A crash at any point
leaves either the old pair or the new one. A snapshot records ``covered_id``: the
substrate's last entry id when it was taken, so the events after it — fade events
and new perceptions — are replayed on load, and a snapshot newer than the substrate
(a different or restored substrate) is detected and ignored.
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

if TYPE_CHECKING:
    from solace.memory.agent_memory import AgentMemory

__all__ = [
    "FORMAT_VERSION",
    "META_NAME",
    "Snapshot",
    "SnapshotError",
    "pack_record",
    "read_snapshot",
    "save",
    "unpack_record",
    "write_snapshot",
]

FORMAT_VERSION = 1
META_NAME = "snapshot.msgpack"
_INDEX_PREFIX = "longterm-"
_INDEX_SUFFIX = ".faiss"


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


def pack_record(record: MemoryRecord, *, with_embedding: bool) -> list[Any]:
    """A record as a msgpack-ready list (fixed field order; see :func:`unpack_record`)."""
    emb = record.embedding
    return [
        record.record_id, record.agent, record.rung, record.text, record.tokens,
        record.source_tokens, list(record.entry_ids), record.kind, list(record.speakers),
        record.first_event_ts, record.event_ts, record.created, record.last_referenced,
        record.references, record.emotional_weight, list(record.tags), record.private,
        np.asarray(emb, dtype=np.float32).tobytes() if with_embedding and emb is not None
        else None,
    ]


def unpack_record(fields: list[Any]) -> MemoryRecord:
    """The inverse of :func:`pack_record`."""
    (rid, agent, rung, text, tokens, source_tokens, entry_ids, kind, speakers, first_ts,
     event_ts, created, last_ref, refs, emo, tags, private, emb) = fields
    return MemoryRecord(
        record_id=int(rid), agent=agent, rung=int(rung), text=text, tokens=int(tokens),
        source_tokens=int(source_tokens), entry_ids=tuple(int(e) for e in entry_ids),
        kind=kind, speakers=tuple(speakers), first_event_ts=float(first_ts),
        event_ts=float(event_ts), created=float(created), last_referenced=float(last_ref),
        references=int(refs), emotional_weight=float(emo), tags=tuple(tags),
        private=bool(private),
        embedding=None if emb is None else np.frombuffer(emb, dtype=np.float32).copy(),
    )


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_file(path: Path) -> None:
    with open(path, "rb+") as fh:
        os.fsync(fh.fileno())


def write_snapshot(directory: str | os.PathLike[str], snapshot: Snapshot) -> Path:
    """Write ``snapshot`` atomically into ``directory`` (created if missing).

    Blocking (FAISS serialisation, fsync): call through the offloader.

    Returns:
        The metadata file's path.

    Raises:
        OSError: the write failed; the previous snapshot is intact.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    generation = secrets.token_hex(8)
    index_name = f"{_INDEX_PREFIX}{generation}{_INDEX_SUFFIX}"
    index_tmp = directory / (index_name + ".tmp")
    faiss.write_index(snapshot.index, str(index_tmp))
    _fsync_file(index_tmp)
    os.replace(index_tmp, directory / index_name)
    meta = {
        "version": FORMAT_VERSION,
        "agent": snapshot.agent,
        "covered_id": int(snapshot.covered_id),
        "embedder": snapshot.embedder,
        "dim": int(snapshot.dim),
        "index_file": index_name,
        "working": [pack_record(r, with_embedding=True) for r in snapshot.working],
        "longterm": [pack_record(r, with_embedding=False) for r in snapshot.longterm],
        "record_ids": np.asarray(snapshot.record_ids, dtype=np.int64).tobytes(),
        "labels": np.asarray(snapshot.labels, dtype=np.int64).tobytes(),
        "next_label": int(snapshot.next_label),
        "next_extra_id": int(snapshot.next_extra_id),
        "counters": snapshot.counters,
    }
    meta_path = directory / META_NAME
    meta_tmp = directory / (META_NAME + ".tmp")
    with open(meta_tmp, "wb") as fh:
        fh.write(msgpack.packb(meta, use_bin_type=True))
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(meta_tmp, meta_path)
    _fsync_dir(directory)
    _remove_stale(directory, keep=index_name)
    return meta_path


def _remove_stale(directory: Path, keep: str) -> None:
    """Delete index files other than ``keep`` (older generations, abandoned tmp files)."""
    for path in directory.iterdir():
        name = path.name
        if name.startswith(_INDEX_PREFIX) and name != keep:
            path.unlink(missing_ok=True)
    (directory / (META_NAME + ".tmp")).unlink(missing_ok=True)


def read_snapshot(directory: str | os.PathLike[str]) -> Snapshot | None:
    """Read the snapshot in ``directory``; None if there is none.

    Blocking: call through the offloader.

    Raises:
        SnapshotError: a snapshot is there but cannot be used; the message says why.
    """
    directory = Path(directory)
    meta_path = directory / META_NAME
    try:
        raw = meta_path.read_bytes()
    except FileNotFoundError:
        return None
    try:
        meta = msgpack.unpackb(raw, raw=False, strict_map_key=False)
    except (ValueError, msgpack.UnpackException) as exc:
        raise SnapshotError(f"{meta_path} is not readable msgpack ({exc})") from exc
    if not isinstance(meta, dict) or meta.get("version") != FORMAT_VERSION:
        version = meta.get("version") if isinstance(meta, dict) else None
        raise SnapshotError(
            f"{meta_path} has format version {version!r}, this Solace reads {FORMAT_VERSION}"
        )
    index_path = directory / str(meta["index_file"])
    if not index_path.is_file():
        raise SnapshotError(f"{meta_path} names index {index_path.name}, which is missing")
    try:
        index = faiss.read_index(str(index_path))
    except RuntimeError as exc:  # faiss reports every read failure as RuntimeError
        raise SnapshotError(f"cannot read {index_path}: {exc}") from exc
    try:
        return Snapshot(
            agent=meta["agent"],
            covered_id=int(meta["covered_id"]),
            embedder=meta["embedder"],
            dim=int(meta["dim"]),
            working=[unpack_record(f) for f in meta["working"]],
            longterm=[unpack_record(f) for f in meta["longterm"]],
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
    """Snapshot ``memory``'s tiers (the caller holds the memory's state lock, so no
    fade event is half-applied). The records are listed on the event loop; packing,
    the index write and the fsyncs run in a worker thread holding the long-term
    index lock (a concurrent search waits; a concurrent ``remove`` only tombstones).

    Raises:
        OSError: the write failed; the previous snapshot is intact.
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

    def write() -> None:
        with memory.longterm.index_lock:
            write_snapshot(memory.directory, snap)

    await memory.offloader.run(write)
