"""Opening a substrate: options, the directory lock, keys, recovery, the anchor check."""

from __future__ import annotations

import fcntl
import logging
import os
from collections.abc import Iterable
from pathlib import Path

from .anchor import AnchorFile, Head, describe_loss
from .codec import open_frame
from .crypto import Cipher, KeyRing
from .durability import POLICIES, FsyncPolicy
from .errors import (
    AnchorMismatchError,
    SubstrateError,
    SubstrateLockedError,
)
from .event import kinds_with
from .kept_index import read_kept_index, remove_stale_kept_temps, segment_identities
from .keys import KeySource, LoadedKeys
from .recovery import LoadedLog, cut_tails, load_log
from .segments import SegmentFiles, fsync_dir, list_segments
from .store import Substrate

__all__ = ["open_substrate"]

_logger = logging.getLogger("substrate")


def _lock_directory(directory: Path, *, shared: bool) -> int:
    """flock the directory itself: unlike a lock file, it cannot be unlinked from under
    us, so a second writer is refused for as long as the descriptor stays open."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
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


def _head_of(log: LoadedLog) -> Head:
    last_id = len(log.index)
    if not last_id:
        return Head(0, log.last_hash, 0, 0)
    segment, offset, size = log.index.locate(last_id)
    return Head(last_id, log.last_hash, segment, offset + size)


def _advance(anchor: AnchorFile, head: Head | None, current: Head, ring: KeyRing,
             files: SegmentFiles, log: LoadedLog, sync: bool) -> int:
    """Anchor the head found on open (after syncing the frames it names); returns the
    entry the anchor now records. A failure (a full disk) leaves the old anchor, which
    is safe, and is logged: the substrate still opens, and the next sync retries."""
    try:
        if sync:  # the anchor may only name durable frames
            after = head.segment if head is not None else 1
            for number in log.sizes:
                if number >= after:
                    os.fsync(files.fd(number))
        anchor.write(current, ring, sync=sync)
    except OSError as exc:
        old = 0 if head is None else head.last_id
        _logger.warning(
            "could not advance the anchor of %s to entry %d (%s); it stays at entry %d, "
            "which is safe (a log may be longer than its anchor); the next sync retries",
            anchor.directory, current.last_id, exc, old,
        )
        return old
    return current.last_id


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
    accept_loss: bool = False,
    read_only: bool = False,
) -> Substrate:
    """Open (creating if needed) the substrate in directory ``path``.

    Opening indexes every frame header (no decryption), checks the hash chain, decrypts
    the last frame sealed under each key id (so a wrong key fails here rather than
    later), and checks the log against its head anchor (:mod:`substrate.anchor`): a log
    shorter than the anchor, or not holding the anchored entry, is refused. Then a torn
    tail left by a crash is cut (saved beside the segment, logged at WARNING, reported
    in :attr:`Substrate.recovered`) and the anchor is advanced to the head found.

    Args:
        path: The substrate directory (created if missing, unless ``read_only``).
        key: 32 raw bytes (key id 1) or a :class:`KeyRing`; None means ``key_source``.
        fsync: Durability policy: what an acknowledged append survives, see
            :mod:`substrate.durability`.
        batch_interval_ms: ``batch``: longest time an acknowledged event stays unsynced.
        batch_max_events: ``batch``: an append returns with fewer than this many events unsynced.
        key_source: Where keys come from when ``key`` is None (default ``KeySource()``:
            ``$SOLACE_SUBSTRATE_KEY``, else ``<path>/substrate.key``, created for a new
            substrate).
        extra_kinds: Kinds accepted besides the built-in ones.
        segment_bytes: Start a new segment file when one would grow past this.
        accept_loss: Open although the log contradicts its anchor (events lost at the
            end, a replaced log, a damaged anchor): log the loss at WARNING, keep it in
            :attr:`Substrate.accepted_loss`, and re-anchor at the head found.
        read_only: Change no file: no directory, key file or anchor is created, no torn
            tail is cut (it is reported with ``cut=False`` and left out of the index);
            appends raise. Takes a shared lock, so it fails while a writer is open.

    Raises:
        ValueError: a bad option (the message names it).
        SubstrateError: ``read_only`` and ``path`` is not a directory.
        SubstrateLockedError: the directory is already open (a reader: open for writing).
        MissingKeyError, WrongKeyError: the keys cannot read the existing frames.
        AnchorMismatchError: the log ends before its anchor (naming the missing entries
            and segment), is not the log the anchor records, or the anchor is damaged.
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
        if read_only:
            raise SubstrateError(f"{directory} is not a directory")
        directory.mkdir(parents=True, exist_ok=True)
        if fsync != "never":
            fsync_dir(directory.parent)
    lock_fd = _lock_directory(directory, shared=read_only)
    files: SegmentFiles | None = None
    opened = False
    try:
        numbers = list_segments(directory)
        anchor = AnchorFile(directory)
        if key is None:
            may_create = not numbers and not anchor.exists() and not read_only
            keys = (key_source or KeySource()).load(directory, may_create=may_create)
        else:
            ring = key if isinstance(key, KeyRing) else KeyRing.single(key)
            keys = LoadedKeys(ring, "the key argument", None)
        problem: str | None = None
        try:  # anchor errors are raised after the key check: a wrong key fails the
            head = anchor.read(keys.ring)  # anchor too, and the frames say so better
        except AnchorMismatchError as exc:
            head, problem = None, str(exc)
        kept = read_kept_index(directory, keys.ring, numbers)
        log = load_log(directory, numbers, head.last_id if head is not None else 0, kept)
        sync = fsync != "never" and not read_only
        files = SegmentFiles(directory, log.sizes, int(segment_bytes), sync,
                             read_only=read_only)
        cipher = Cipher(keys.ring)
        for entry_id in sorted(log.last_by_key.values()):
            segment, offset, size = log.index.locate(entry_id)
            frame = files.read(segment, offset, size)
            open_frame(cipher, frame, segment=files.path(segment), offset=offset,
                       entry_id=entry_id)
        if head is not None:
            problem = describe_loss(directory, head, len(log.index), log.hash_at, log.sizes)
        if problem is not None:
            if not accept_loss:
                raise AnchorMismatchError(problem)
            _logger.warning("accept_loss: opening %s although %s", directory, problem)
        recovered = tuple(cut_tails(log, apply=not read_only))
        current = _head_of(log)
        anchored = current.last_id
        if not read_only:
            anchor.remove_stale_temps()
            remove_stale_kept_temps(directory)
            if head is None and problem is None and numbers:
                _logger.warning(
                    "%s has no anchor file (a log written before anchors, or the anchor "
                    "was deleted): anchoring it at entry %d", directory, current.last_id,
                )
            if head != current:
                anchored = _advance(anchor, head, current, keys.ring, files, log, sync)
        sub = Substrate(
            directory, lock_fd, log, keys, cipher, files, fsync, batch_interval_ms / 1000,
            int(batch_max_events), kinds, recovered=recovered,
            anchor=None if read_only else anchor, accepted_loss=problem, anchored_id=anchored,
            opened_as=None if read_only else segment_identities(directory),
        )
        opened = True
        return sub
    finally:
        if not opened:
            if files is not None:
                files.close()
            os.close(lock_fd)
