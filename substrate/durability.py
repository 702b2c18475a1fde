"""When to fsync: the three policies, group commit, and the batch flusher thread.

What an acknowledged append (one that returned) survives, per ``fsync=`` policy:

* ``"always"``: the frame is written and fsynced (and the directory, when the append
  started a new segment) before ``append`` returns. Survives a process crash and an OS
  crash or power loss. Concurrent appenders share fsyncs (group commit).
* ``"batch"`` (default): the frame is handed to the OS with ``os.write`` before
  ``append`` returns, so it survives a process crash (even SIGKILL). When an append
  returns, fewer than ``batch_max_events`` events up to its own are unsynced and none of
  them was written ``batch_interval_ms`` or more before it (checked as it writes); an
  append that would break either bound waits for the fsync in progress, and fsyncs
  itself if that is not enough. A background flusher thread does the fsyncs before
  that happens: it starts one once half of ``batch_max_events`` are unsynced, or a
  quarter of ``batch_interval_ms`` after the first unsynced write, whichever comes
  first, so while it keeps up no append waits for an fsync. Also on segment rotation and
  in ``close()``. An OS crash or power loss can lose the events acknowledged in the last
  ``batch_interval_ms`` (fewer than ``batch_max_events`` of them; the flusher's earlier
  fsyncs usually leave far fewer).
* ``"never"``: as ``batch`` but never fsyncs (not even in ``close()``); after an OS crash
  the kernel's writeback decides what survived.

Under every policy a crash never damages earlier frames: on open only a torn tail is cut
(see :mod:`substrate.recovery`), and anything else that is wrong raises. After each
fsync the head anchor (:mod:`substrate.anchor`) is advanced to the synced entry, so a
later loss of synced frames at the end of the log is refused on open, not missed. The
anchor is written by a background thread, off the acknowledgement path (an anchor write
costs two fsyncs and a rename, several times an append's own fsync), at most once per
:data:`ANCHOR_GAP_S`: it trails the synced head by at most that gap and the anchor
write in progress, coalescing the batches synced meanwhile, and is current once
``close()`` returns. A trailing anchor is safe: the log may be longer than its anchor,
never shorter.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from typing import Generic, Literal, TypeAlias, TypeVar, get_args

from .errors import SubstrateError

__all__ = ["ANCHOR_GAP_S", "POLICIES", "FsyncPolicy", "GroupCommit"]

FsyncPolicy: TypeAlias = Literal["always", "batch", "never"]
POLICIES: tuple[str, ...] = get_args(FsyncPolicy)
_monotonic = time.monotonic
_logger = logging.getLogger("substrate")
#: The anchor thread starts an anchor write at most this often (seconds): at a high
#: append rate the batches synced in between are coalesced into one write. Measured
#: with ``benchmarks/substrate_bench.py``: with a write after every synced batch (~75
#: a second at ~60k appends a second), a per-call append took 5 us longer.
ANCHOR_GAP_S = 0.1
_KICKED = 1 << 62  # _wake_id once the flusher was woken for this batch (no id reaches it)
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
        anchor_gap_s: The least time between two anchor writes' starts (none while
            closing); default :data:`ANCHOR_GAP_S`.
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
        anchor_gap_s: float | None = None,
    ) -> None:
        self.policy = policy
        self._synced = synced
        #: The last id known durable (read without the lock: it only grows).
        self.synced_id = synced_id
        #: Set when an fsync failed; the substrate refuses appends from then on.
        self.failure: SubstrateError | None = None
        self._lock, self._head = lock, head
        self._cv = threading.Condition(lock)
        self._sync_lock = threading.Lock()  # held for each fsync, so one at a time
        self._interval, self._max_events = interval_s, max_events
        # the flusher starts an fsync at half the count or a quarter of the interval:
        # early enough that it ends before an append reaches a bound, late enough to
        # group many writes into each fsync
        self._flush_after = interval_s / 4
        self._flush_events = max(1, max_events // 2)
        # under the lock: when the first write no fsync covers yet happened, and when
        # the first write of the fsync in progress did (None: no such write / fsync)
        self._first_unsynced: float | None = None
        self._syncing_since: float | None = None
        # an append of this id or later wakes the flusher (_KICKED once it did)
        self._wake_id = synced_id + self._flush_events
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
        self._anchor_idle = False  # the anchor thread waits for a note (not a gap)
        self._anchor_gap = ANCHOR_GAP_S if anchor_gap_s is None else anchor_gap_s
        self._anchorer: threading.Thread | None = None
        if policy != "never":
            self._anchorer = threading.Thread(
                target=self._anchor_loop, name=f"substrate-anchor:{name}", daemon=True
            )
            self._anchorer.start()

    def wrote(self, last_id: int) -> bool:
        """Called under the lock after a write of entries up to ``last_id``: must the
        writer call :meth:`settle` before returning?"""
        policy = self.policy
        if policy == "batch":
            now = _monotonic()
            first = self._first_unsynced
            if last_id >= self._wake_id:
                self._wake_id = _KICKED
                self._cv.notify()
                if first is None:
                    self._first_unsynced = first = now
            elif first is None:
                self._first_unsynced = first = now
                self._cv.notify()  # starts the flusher's quarter-interval timer
            oldest = self._syncing_since
            return (
                last_id - self.synced_id >= self._max_events
                or now - (first if oldest is None else oldest) >= self._interval
            )
        return policy == "always"

    def settle(self, upto: int) -> None:
        """Return once the policy's promise holds for entries up to ``upto`` (called
        without the lock, after :meth:`wrote` said so): ``always``, they are durable;
        ``batch``, fewer than ``max_events`` of them are unsynced and the oldest was
        written less than ``interval_s`` ago. Waits for the fsync in progress first
        (often it is enough), then fsyncs if needed; one fsync covers every appender
        waiting at that moment.

        Raises:
            SubstrateError: the fsync failed (also kept in :attr:`failure`).
        """
        with self._sync_lock:
            if self.synced_id >= upto or self._stopped:
                return
            if self.policy == "batch":
                with self._lock:
                    first = self._first_unsynced
                    if upto - self.synced_id < self._max_events and (
                        first is None or _monotonic() - first < self._interval
                    ):
                        return
            self._sync_head()

    def _sync_head(self) -> None:
        """fsync everything written so far (holding ``_sync_lock``), then hand the
        synced head to the anchor thread."""
        with self._lock:
            target, fd, note = self._head()
            if target <= self.synced_id:
                return  # an appender synced it first
            self._syncing_since, self._first_unsynced = self._first_unsynced, None
            self._wake_id = target + self._flush_events
        if fd is not None:
            try:
                os.fsync(fd)
            except OSError as exc:
                self.failure = SubstrateError(
                    f"fsync failed ({exc}): events after entry {self.synced_id} may not "
                    "be durable; close and reopen the substrate"
                )
                raise self.failure from exc
        # no lock needed: both are true once the fsync returned, and a writer that
        # reads them in between sees an older, stricter state
        self._syncing_since = None
        self.synced_id = target
        with self._note_cv:
            self._note = (target, note)
            if self._anchor_idle:  # a thread waiting out its gap need not wake
                self._note_cv.notify_all()

    def _anchor_loop(self) -> None:
        failing = False
        written: float | None = None  # when the last anchor write started
        while True:
            with self._note_cv:
                while self._note is None and not self._notes_done:
                    self._anchor_idle = True
                    self._note_cv.wait()
                    self._anchor_idle = False
                # One write per gap at most (the syncs meanwhile coalesce), unless
                # closing: each write wakes this thread for about ten system calls, and
                # every wake costs the appending thread a handoff of the GIL.
                while written is not None and not self._notes_done:
                    wait = written + self._anchor_gap - _monotonic()
                    if wait <= 0:
                        break
                    self._note_cv.wait(wait)
                if self._note is None:
                    return
                (target, note), self._note = self._note, None
            written = _monotonic()
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
                while True:
                    if self._stopping:
                        return
                    first = self._first_unsynced
                    if first is None:
                        self._cv.wait()
                        continue
                    if self._wake_id == _KICKED:
                        break
                    delay = first + self._flush_after - _monotonic()
                    if delay <= 0:
                        break
                    self._cv.wait(delay)
            try:
                with self._sync_lock:
                    if not self._stopped:
                        self._sync_head()
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
                with self._sync_lock:
                    if self.synced_id < last_id and not self._stopped:
                        self._sync_head()
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
