"""Opening a substrate: options, the directory lock, keys, recovery, the key check."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterable
from pathlib import Path

from .codec import open_frame
from .crypto import Cipher, KeyRing
from .durability import POLICIES, FsyncPolicy
from .errors import SubstrateLockedError
from .event import kinds_with
from .keys import KeySource, LoadedKeys
from .recovery import load_log
from .segments import SegmentFiles, fsync_dir, list_segments
from .store import Substrate

__all__ = ["open_substrate"]


def _lock_directory(directory: Path) -> int:
    fd = os.open(directory / "substrate.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise SubstrateLockedError(
            f"the substrate at {directory} is already open (in this or another process); "
            "close it there first"
        ) from None
    return fd


def _positive(name: str, value: object, minimum: float) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < minimum:
        raise ValueError(f"{name} must be a number >= {minimum}, got {value!r}")


def open_substrate(
    path: str | os.PathLike[str],
    key: bytes | KeyRing | None = None,
    *,
    fsync: FsyncPolicy = "batch",
    batch_interval_ms: float = 50,
    batch_max_events: int = 1000,
    key_source: KeySource | None = None,
    extra_kinds: Iterable[str] = (),
    segment_bytes: int = 64 << 20,
) -> Substrate:
    """Open (creating if needed) the substrate in directory ``path``.

    Opening indexes every frame header (no decryption), checks the hash chain, cuts a torn
    tail left by a crash (reported in :attr:`Substrate.recovered`), and decrypts the last
    frame sealed under each key id, so a wrong key fails here rather than later.

    Args:
        path: The substrate directory (created if missing).
        key: 32 raw bytes (key id 1) or a :class:`KeyRing`; None means ``key_source``.
        fsync: Durability policy: what an acknowledged append survives, see
            :mod:`substrate.durability`.
        batch_interval_ms: ``batch``: longest time an acknowledged event stays unsynced.
        batch_max_events: ``batch``: most events that stay unsynced.
        key_source: Where keys come from when ``key`` is None (default ``KeySource()``:
            ``$SOLACE_SUBSTRATE_KEY``, else ``<path>/substrate.key``, created for a new
            substrate).
        extra_kinds: Kinds accepted besides the built-in ones.
        segment_bytes: Start a new segment file when one would grow past this.

    Raises:
        ValueError: a bad option (the message names it).
        SubstrateLockedError: the directory is already open.
        MissingKeyError, WrongKeyError: the keys cannot read the existing frames.
        CorruptFrameError, ChainBrokenError: the files are damaged beyond a torn tail.
    """
    if fsync not in POLICIES:
        raise ValueError(f"fsync must be one of {', '.join(map(repr, POLICIES))}, got {fsync!r}")
    _positive("batch_interval_ms", batch_interval_ms, 0.001)
    _positive("batch_max_events", batch_max_events, 1)
    _positive("segment_bytes", segment_bytes, 512)
    kinds = kinds_with(extra_kinds)
    if key is not None and key_source is not None:
        raise ValueError("pass key or key_source, not both")
    directory = Path(path)
    if not directory.is_dir():
        directory.mkdir(parents=True, exist_ok=True)
        if fsync != "never":
            fsync_dir(directory.parent)
    lock_fd = _lock_directory(directory)
    files: SegmentFiles | None = None
    opened = False
    try:
        numbers = list_segments(directory)
        if key is None:
            keys = (key_source or KeySource()).load(directory, may_create=not numbers)
        else:
            ring = key if isinstance(key, KeyRing) else KeyRing.single(key)
            keys = LoadedKeys(ring, "the key argument", None)
        log = load_log(directory, numbers)
        files = SegmentFiles(directory, log.sizes, int(segment_bytes), fsync != "never")
        cipher = Cipher(keys.ring)
        for entry_id in sorted(log.last_by_key.values()):
            segment, offset, size = log.index.locate(entry_id)
            frame = files.read(segment, offset, size)
            open_frame(cipher, frame, segment=files.path(segment), offset=offset,
                       entry_id=entry_id)
        sub = Substrate(
            directory, lock_fd, log, keys, cipher, files, fsync, batch_interval_ms / 1000,
            int(batch_max_events), kinds,
        )
        opened = True
        return sub
    finally:
        if not opened:
            if files is not None:
                files.close()
            os.close(lock_fd)
