"""When to fsync: the three policies, group commit, and the batch flusher thread.

What an acknowledged append (one that returned) survives, per ``fsync=`` policy:

* ``"always"``: the frame is written and fsynced (and the directory, when the append
  started a new segment) before ``append`` returns. Survives a process crash and an OS
  crash or power loss. Concurrent appenders share fsyncs (group commit).
* ``"batch"`` (default): the frame is handed to the OS with ``os.write`` before
  ``append`` returns, so it survives a process crash (even SIGKILL). A background
  flusher thread fsyncs a quarter of ``batch_interval_ms`` after the first unsynced
  write, so a steady stream of appends does not wait for the fsyncs; an append still
  syncs before returning when it finds ``batch_max_events`` events unsynced or the
  first unsynced write ``batch_interval_ms`` old (the flusher fell behind). Also on
  segment rotation and in ``close()``. An OS crash or power loss can lose the events
  acknowledged in roughly the last ``batch_interval_ms`` (at most about
  ``batch_max_events`` of them; the flusher's earlier fsyncs usually leave fewer).
* ``"never"``: as ``batch`` but never fsyncs (not even in ``close()``); after an OS crash
  the kernel's writeback decides what survived.

Under every policy a crash never damages earlier frames: on open only a torn tail is cut
(see :mod:`substrate.recovery`), and anything else that is wrong raises. After each
fsync the head anchor (:mod:`substrate.anchor`) is advanced to the synced entry, so a
later loss of synced frames at the end of the log is refused on open, not missed. The
anchor is written by a background thread, off the acknowledgement path (an anchor write
costs two fsyncs and a rename, several times an append's own fsync): it trails the
synced head by at most the anchor write in progress, coalescing the batches synced
meanwhile, and is current once ``close()`` returns. A trailing anchor is safe: the log
may be longer than its anchor, never shorter.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from typing import Generic, Literal, TypeAlias, TypeVar, get_args

from .errors import SubstrateError

__all__ = ["POLICIES", "FsyncPolicy", "GroupCommit"]

FsyncPolicy: TypeAlias = Literal["always", "batch", "never"]
POLICIES: tuple[str, ...] = get_args(FsyncPolicy)
_monotonic = time.monotonic
_logger = logging.getLogger("substrate")
H = TypeVar("H")


class GroupCommit(Generic[H]):
    """fsync bookkeeping for one substrate.

    Args:
        policy: The fsync policy.
        lock: The substrate's lock; :meth:`wrote` is called holding it.
        head: Called under ``lock``: ``(last id written, fd to fsync or None, note)``.
        synced: Called on the anchor thread after fsyncs, without ``lock``, with the
            ``note`` that came with the newest synced id (the substrate advances its
            anchor there). Calls are serialised and in id order; notes synced while a
            call runs are coalesced into the next. An ``OSError`` (a full disk) is
            logged and the next note retries; a :class:`SubstrateError` (another
            writer) sets :attr:`failure`, so appends stop.
        synced_id: The last id already durable (the last id found on open).
        interval_s, max_events: The ``batch`` limits.
        name: For the flusher thread's name.
    """

    def __init__(
        self,
        policy: FsyncPolicy,
        lock: threading.Lock,
        head: Callable[[], tuple[int, int | None, H]],
        synced: Callable[[H], None],
        *,
        synced_id: int,
        interval_s: float,
        max_events: int,
        name: str,
    ) -> None:
        self.policy = policy
        self._synced = synced
        self.synced_id = synced_id
        #: Set when an fsync failed; the substrate refuses appends from then on.
        self.failure: SubstrateError | None = None
        self._lock, self._head = lock, head
        self._cv = threading.Condition(lock)
        self._sync_lock = threading.Lock()
        self._interval, self._max_events = interval_s, max_events
        # the flusher's delay: early enough that it, not an append, usually syncs
        self._flush_after = interval_s / 4
        self._first_unsynced: float | None = None
        self._stopping = self._stopped = False
        self._flusher: threading.Thread | None = None
        if policy == "batch":
            self._flusher = threading.Thread(
                target=self._flush_loop, name=f"substrate-flusher:{name}", daemon=True
            )
            self._flusher.start()
        self._note_cv = threading.Condition(threading.Lock())
        self._note: tuple[int, H] | None = None  # newest synced, not yet anchored
        self._notes_done = False
        self._anchorer: threading.Thread | None = None
        if policy != "never":
            self._anchorer = threading.Thread(
                target=self._anchor_loop, name=f"substrate-anchor:{name}", daemon=True
            )
            self._anchorer.start()

    def wrote(self, last_id: int) -> bool:
        """Called under the lock after a write: must the writer :meth:`sync` before
        returning?"""
        if self.policy == "always":
            return True
        if self.policy == "never":
            return False
        now = _monotonic()
        if self._first_unsynced is None:
            self._first_unsynced = now
            self._cv.notify()
        return (
            last_id - self.synced_id >= self._max_events
            or now - self._first_unsynced >= self._interval
        )

    def sync(self, upto: int) -> None:
        """Make entries up to ``upto`` durable (called without the lock). One fsync covers
        every appender waiting at that moment.

        Then hands the synced head to the anchor thread.

        Raises:
            SubstrateError: the fsync failed (also kept in :attr:`failure`).
        """
        with self._sync_lock:
            if self.synced_id >= upto or self._stopped:
                return
            with self._lock:
                target, fd, note = self._head()
                self._first_unsynced = None
            if fd is not None:
                try:
                    os.fsync(fd)
                except OSError as exc:
                    self.failure = SubstrateError(
                        f"fsync failed ({exc}): events after entry {self.synced_id} may not "
                        "be durable; close and reopen the substrate"
                    )
                    raise self.failure from exc
            self.synced_id = target
            with self._note_cv:
                self._note = (target, note)
                self._note_cv.notify_all()

    def _anchor_loop(self) -> None:
        failing = False
        while True:
            with self._note_cv:
                while self._note is None and not self._notes_done:
                    self._note_cv.wait()
                if self._note is None:
                    return
                (target, note), self._note = self._note, None
            try:
                self._synced(note)
            except OSError as exc:  # a full disk: the anchor trails, which is safe
                if not failing:  # once per streak, not once per append
                    _logger.warning(
                        "could not advance the anchor to entry %d (%s); it trails the "
                        "log until a later sync succeeds", target, exc,
                    )
                failing = True
                continue
            except SubstrateError as exc:  # another writer: stop appending
                self.failure = SubstrateError(
                    f"the head anchor could not be advanced to entry {target} ({exc}); "
                    "close and reopen the substrate"
                )
                return
            if failing:
                _logger.warning("the anchor caught up with the log at entry %d", target)
                failing = False

    def _flush_loop(self) -> None:
        while True:
            with self._lock:
                while not self._stopping and self._first_unsynced is None:
                    self._cv.wait()
                if self._stopping:
                    return
                first = self._first_unsynced
                assert first is not None  # the wait loop above ends only when it is set
                delay = first + self._flush_after - _monotonic()
                if delay > 0:
                    self._cv.wait(delay)
                    continue
                target = self._head()[0]
            try:
                self.sync(target)
            except SubstrateError:
                return  # kept in self.failure; appends now raise it

    def close(self, last_id: int) -> None:
        """Stop the flusher, sync up to ``last_id`` (unless ``never``, or after a
        failure), let the anchor thread write the final head, and refuse further syncs
        (so the caller may close the files).

        Raises:
            SubstrateError: the final fsync or an anchor update failed (a failure
                reported earlier, by an append, is not raised again).
        """
        earlier = self.failure
        with self._lock:
            self._stopping = True
            self._cv.notify_all()
        if self._flusher is not None:
            self._flusher.join()
        try:
            if self.policy != "never" and self.failure is None:
                self.sync(last_id)
        finally:
            with self._sync_lock:
                self._stopped = True
            with self._note_cv:
                self._notes_done = True
                self._note_cv.notify_all()
            if self._anchorer is not None:
                self._anchorer.join()
        if self.failure is not None and self.failure is not earlier:
            raise self.failure
