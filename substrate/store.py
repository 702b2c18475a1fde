"""The Substrate: an encrypted, hash-chained, append-only event log in one directory.

Directory layout: ``seg-000001.sol``, ``seg-000002.sol``, ... (see :mod:`substrate.frame`),
``substrate.key`` (unless keys come from elsewhere, see :mod:`substrate.keys`),
``substrate.anchor`` (the authenticated head, see :mod:`substrate.anchor`), and
``*.torn-*`` copies of cut tails (see :mod:`substrate.recovery`). While open, the
directory itself is locked with ``flock`` (a lock that cannot be unlinked from under
us; ``substrate.lock`` files of older versions are ignored). What each fsync policy
promises is in :mod:`substrate.durability`.
"""

from __future__ import annotations

import functools
import logging
import operator
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from types import TracebackType

from .anchor import AnchorFile, Head
from .codec import open_frame, open_frames, seal
from .crypto import NONCE_BYTES, Cipher, KeyRing, NoncePool
from .durability import FsyncPolicy, GroupCommit
from .errors import InvalidEventError, SubstrateError, UnknownEntryError
from .event import Event
from .items import EventItem, Stats, check_ts, unpack_item
from .kept_index import Identity, drop_kept_index, segment_identities, write_kept_index
from .keys import LoadedKeys, _read_ring, write_key_file
from .recovery import LoadedLog, TornTail
from .segments import SegmentFiles
from .verify import VerifyReport, verify_log

__all__ = ["EventItem", "Stats", "Substrate"]

_logger = logging.getLogger("substrate")
_urandom = os.urandom
_SCAN_BATCH = 256


class Substrate:
    """An open substrate. Create it with :func:`open_substrate`; use it as a context manager.

    Thread-safe: one lock orders appends, so ids are consecutive in the order appends
    take the lock and frames never interleave; reads may run alongside appends. For trio,
    wrap it in :class:`substrate.aio.TrioSubstrate`.

    Attributes:
        directory: The substrate directory.
        fsync: The durability policy (see :mod:`substrate.durability`).
        kinds: The kinds ``append`` accepts.
        recovered: Torn tails cut while opening (empty after a clean shutdown); on a
            read-only substrate, the torn tails found and left in place.
        read_only: Opened read-only: appends and key rotation raise, no file changes.
        accepted_loss: When ``accept_loss=True`` let the open go ahead although the log
            contradicted its anchor, the refusal it overrode (else None).
    """

    def __init__(
        self,
        directory: Path,
        lock_fd: int,
        log: LoadedLog,
        keys: LoadedKeys,
        cipher: Cipher,
        files: SegmentFiles,
        policy: FsyncPolicy,
        interval_s: float,
        max_events: int,
        kinds: frozenset[str],
        *,
        recovered: tuple[TornTail, ...] = (),
        anchor: AnchorFile | None = None,
        accepted_loss: str | None = None,
        anchored_id: int | None = None,
        opened_as: dict[int, Identity] | None = None,
    ) -> None:
        self.directory = directory
        # the segment files as this open found them (the kept index is only written
        # for files this process changed by appending, or not at all)
        self._opened_as = dict(opened_as or {})
        self.recovered = recovered
        self.read_only = anchor is None
        self.accepted_loss = accepted_loss
        self.fsync: FsyncPolicy = policy
        self.kinds = kinds
        self._anchor = anchor
        self._lock_fd = lock_fd
        self._keys = keys
        self._cipher = cipher
        self._files = files
        self._index = log.index
        self._last_id = len(log.index)
        self._last_hash = log.last_hash
        self._nonces = NoncePool()
        self._lock = threading.Lock()
        self._closing = False
        self._closed = False
        # the entry the anchor file records (the opener anchored the head it found)
        self._anchored_id = self._last_id if anchored_id is None else anchored_id
        self._commit: GroupCommit[tuple[Head, KeyRing]] = GroupCommit(
            "never" if anchor is None else policy, self._lock, self._head, self._synced,
            synced_id=self._last_id, interval_s=interval_s, max_events=max_events,
            name=str(directory),
        )

    def _head(self) -> tuple[int, int | None, tuple[Head, KeyRing]]:
        """Under the lock: the head, the fd to fsync for it, and the anchor to write."""
        last_id = self._last_id
        if last_id:
            segment, offset, size = self._index.locate(last_id)
            head = Head(last_id, self._last_hash, segment, offset + size)
        else:
            head = Head(0, self._last_hash, 0, 0)
        return last_id, self._files.tail_fd(), (head, self._cipher.ring)

    def _synced(self, note: tuple[Head, KeyRing], *, sync: bool = True) -> None:
        """Advance the anchor to a head whose frames are durable (serialised by the
        group commit)."""
        head, ring = note
        if self._anchor is None or self._files.failure is not None:
            return  # a foreign or failed write: leave the anchor at the last good head
        self._anchor.write(head, ring, sync=sync)
        self._anchored_id = head.last_id

    def __repr__(self) -> str:
        return f"<Substrate {str(self.directory)!r} last_id={self._last_id} fsync={self.fsync}>"

    def __enter__(self) -> Substrate:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def last_id(self) -> int:
        """Id of the newest event (0 when empty)."""
        return self._last_id

    # -- writing -------------------------------------------------------------------------

    def _unknown_kind(self, kind: object) -> InvalidEventError:
        return InvalidEventError(
            f"unknown kind {kind!r}; known kinds are {sorted(self.kinds)}; pass "
            f"extra_kinds=[{kind!r}] to open_substrate to allow it"
        )

    def _writable(self) -> None:
        if self.read_only:
            raise SubstrateError(f"the substrate at {self.directory} was opened read-only")
        if self._closing:
            raise SubstrateError(f"the substrate at {self.directory} is closed")
        failure = self._files.failure or self._commit.failure
        if failure is not None:
            raise SubstrateError(f"{self.directory}: {failure}")

    def append(
        self,
        agent: str,
        kind: str,
        content: str,
        *,
        attrs: Mapping[str, str] | None = None,
        ts: float | None = None,
    ) -> int:
        """Append one event and return its id (the previous ``last_id`` + 1).

        Args:
            agent: Who produced it (non-empty).
            kind: A known kind (built-in or from ``extra_kinds``).
            content: Any text XML 1.0 can carry; it reads back exactly.
            attrs: str → str metadata; reads back exactly.
            ts: Unix seconds (UTC); default ``time.time()``.

        Returns:
            The new entry id. Once returned, the event is as durable as the fsync policy
            promises (module docstring).

        Raises:
            InvalidEventError: unknown kind, XML-illegal character, empty agent, bad ts;
                nothing was written.
            TypeError: a field has the wrong type; nothing was written.
            OSError: the write failed; nothing was written.
            SubstrateError: the substrate is closed, or an fsync failed earlier.
        """
        if kind not in self.kinds:
            raise self._unknown_kind(kind)
        if attrs is not None and type(attrs) is not dict and not isinstance(attrs, Mapping):
            raise TypeError(f"attrs must be a mapping of str to str, got {type(attrs).__name__}")
        ts = time.time() if ts is None else ts if type(ts) is float else check_ts(ts)
        with self._lock:
            if (self._closing or self._files.failure or self._commit.failure
                    or self.read_only):
                self._writable()
            entry_id = self._last_id + 1
            cipher, prev, nonce = self._cipher, self._last_hash, self._nonces.take()
            # sealed and written in one compiled call, when it was built
            done = None if cipher.native is None else self._files.write_sealed(
                cipher.native, entry_id, ts, agent, kind, content, attrs, prev, nonce)
            if done is None:  # not built, or off its path: a bad field raises here
                frame, digest = seal(cipher, entry_id, ts, agent, kind, content, attrs,
                                     prev, nonce)
                segment, offset = self._files.write_one(frame)
                size = len(frame)
            else:
                segment, offset, size, digest = done
            self._index.add(segment, offset, size, ts, agent, kind, cipher.current_id)
            self._last_hash = digest
            self._last_id = entry_id
            sync = self._commit.wrote(entry_id)
        if sync:
            self._commit.settle(entry_id)
        return entry_id

    def append_many(self, items: Iterable[EventItem]) -> list[int]:
        """Append events in order with one write and at most one fsync; return their ids.

        Each item is a :class:`NewEvent` or a tuple ``(agent, kind, content[, attrs[,
        ts]])``. Items without ``ts`` share one ``time.time()`` reading. All items are
        checked before anything is written: on any error nothing is appended.

        Raises:
            InvalidEventError, TypeError, OSError, SubstrateError: as :meth:`append`.
        """
        batch: list[tuple[str, str, str, Mapping[str, str] | None, float]] = []
        now: float | None = None
        kinds = self.kinds
        for item in items:
            agent, kind, content, attrs, ts = unpack_item(item)
            if kind not in kinds:
                raise self._unknown_kind(kind)
            if attrs is not None and type(attrs) is not dict and not isinstance(attrs, Mapping):
                raise TypeError(f"attrs must be a mapping, got {type(attrs).__name__}")
            if ts is None:
                ts = now = time.time() if now is None else now
            elif type(ts) is not float:
                ts = check_ts(ts)
            batch.append((agent, kind, content, attrs, ts))
        if not batch:
            return []
        nonces = _urandom(NONCE_BYTES * len(batch))
        with self._lock:
            self._writable()
            first = self._last_id + 1
            cipher, prev = self._cipher, self._last_hash
            frames = []
            for i, (agent, kind, content, attrs, ts) in enumerate(batch):
                nonce = nonces[i * NONCE_BYTES : (i + 1) * NONCE_BYTES]
                frame, prev = seal(cipher, first + i, ts, agent, kind, content, attrs, prev, nonce)
                frames.append(frame)
            positions = self._files.write(frames)
            add, key_id = self._index.add, cipher.current_id
            for (segment, offset), frame, (agent, kind, _, _, ts) in zip(
                positions, frames, batch, strict=True
            ):
                add(segment, offset, len(frame), ts, agent, kind, key_id)
            self._last_hash = prev
            self._last_id = last = first + len(batch) - 1
            sync = self._commit.wrote(last)
        if sync:
            self._commit.settle(last)
        return list(range(first, last + 1))

    # -- reading -------------------------------------------------------------------------

    def get(self, entry_id: int) -> Event:
        """Return event ``entry_id``, read from disk and authenticated.

        Raises:
            UnknownEntryError: no event with this id was written (a ``KeyError``).
            CorruptFrameError, WrongKeyError, MissingKeyError: the frame on disk does not
                check out (never returns altered data).
            SubstrateError: the substrate is closed.
        """
        if isinstance(entry_id, bool):
            raise TypeError(f"entry ids are int, got {entry_id!r}")
        entry_id = operator.index(entry_id)
        with self._lock:
            if self._closed:
                raise SubstrateError(f"the substrate at {self.directory} is closed")
            if not 1 <= entry_id <= self._last_id:
                raise UnknownEntryError(
                    f"entry {entry_id} was never written to {self.directory} "
                    f"(ids run 1..{self._last_id})"
                )
            segment, offset, size = self._index.locate(entry_id)
            frame = self._files.read(segment, offset, size)
            cipher = self._cipher
        return open_frame(
            cipher, frame, segment=self._files.path(segment), offset=offset, entry_id=entry_id
        )

    def scan(
        self,
        agent: str | None = None,
        kind: str | None = None,
        since_id: int | None = None,
        until_ts: float | None = None,
        *,
        kinds: Iterable[str] | Mapping[str, int] | None = None,
    ) -> Iterator[Event]:
        """Iterate events in id order, filtered on the index before decrypting.

        Args:
            agent, kind: Only events with this agent / kind (None = all).
            since_id: Only ids greater than this (exclusive).
            until_ts: Only events with ``ts <= until_ts`` (timestamps are the callers';
                they need not increase with ids, so this filters rather than stops).
            kinds: Only events of one of these kinds (None = all): one pass over the
                log for several readers (:mod:`solace.projections`), with ``agent``,
                ``kind`` and ``until_ts`` left None. A mapping gives each kind its
                own ``since_id`` (exclusive; ``since_id`` is then ignored), so a reader
                whose checkpoint is recent is not read from an older one's.

        Yields events up to the ``last_id`` at the time of the call.

        Raises:
            As :meth:`get`, while iterating.
        """
        start = 1 if since_id is None else max(1, int(since_id) + 1)
        end = self._last_id
        if kinds is not None:
            if isinstance(kinds, str):
                raise TypeError(f"scan: kinds must be a collection of kinds, got {kinds!r}")
            if agent is not None or kind is not None or until_ts is not None:
                raise ValueError("scan: kinds= is not combined with agent, kind or until_ts")
            after = dict(kinds) if isinstance(kinds, Mapping) else dict.fromkeys(kinds, start - 1)
            codes = {code: int(since) for kind, since in after.items()
                     if (code := self._index.kind_code(kind)) is not None}
            first = min(codes.values(), default=end) + 1
            return self._read_matching(range(max(1, first), end + 1), functools.partial(
                self._index.matches_kinds, after=codes))
        a = None if agent is None else self._index.agent_code(agent)
        k = None if kind is None else self._index.kind_code(kind)
        if (agent is not None and a is None) or (kind is not None and k is None):
            return iter(())
        return self._scan(range(start, end + 1), a, k, until_ts)

    def _scan(
        self, ids: range, agent: int | None, kind: int | None, until_ts: float | None
    ) -> Iterator[Event]:
        matches = self._index.matches
        return self._read_matching(ids, lambda entry_id: matches(entry_id, agent, kind,
                                                                 until_ts))

    def _read_matching(self, ids: range, keep: Callable[[int], bool]) -> Iterator[Event]:
        """The events of ``ids`` that ``keep`` accepts (on the index), read in batches."""
        batch: list[int] = []
        for entry_id in ids:
            if keep(entry_id):
                batch.append(entry_id)
                if len(batch) == _SCAN_BATCH:
                    yield from self._read_many(batch)
                    batch = []
        if batch:
            yield from self._read_many(batch)

    def _read_many(self, ids: list[int]) -> list[Event]:
        """Read events ``ids`` (ascending): one pread per run of adjacent frames, one XML
        parse for all."""
        spans: list[tuple[int, int, int, list[tuple[int, int, int]]]] = []
        with self._lock:
            if self._closed:
                raise SubstrateError(f"the substrate at {self.directory} is closed")
            locate, cipher = self._index.locate, self._cipher
            for entry_id in ids:
                segment, offset, size = locate(entry_id)
                if spans and spans[-1][0] == segment and spans[-1][2] == offset:
                    last = spans[-1]
                    last[3].append((entry_id, offset, size))
                    spans[-1] = (segment, last[1], offset + size, last[3])
                else:
                    spans.append((segment, offset, offset + size, [(entry_id, offset, size)]))
            blobs = [self._files.read(seg, start, stop - start) for seg, start, stop, _ in spans]
        frames: list[tuple[memoryview, Path, int, int]] = []
        for (segment, start, _, members), blob in zip(spans, blobs, strict=True):
            path, view = self._files.path(segment), memoryview(blob)
            frames += [(view[o - start : o - start + n], path, o, i) for i, o, n in members]
        return open_frames(cipher, frames)

    def verify(self) -> VerifyReport:
        """Re-read every segment from disk and check every frame completely.

        Checks, per frame: length and CRC-32, header, id sequence and hash chain, key id,
        AES-GCM tag, XML schema and its agreement with the header; that the files end
        exactly where this substrate last wrote; and that the anchor file authenticates
        and names an entry of this chain. Changes no file. Events appended during the
        call are not covered.

        Returns:
            A :class:`VerifyReport` (counts, bytes, time) when everything passed.

        Raises:
            CorruptFrameError, ChainBrokenError, WrongKeyError, MissingKeyError: the first
                problem, naming the segment file, offset and entry id.
            AnchorMismatchError: the anchor fails authentication or names an entry this
                chain does not hold.
        """
        anchor = AnchorFile(self.directory).read(self._cipher.ring)  # before the head:
        with self._lock:  # the anchor never runs ahead of the head read after it
            if self._closed:
                raise SubstrateError(f"the substrate at {self.directory} is closed")
            sizes = dict(self._files.sizes)
            last_id, last_hash, cipher = self._last_id, self._last_hash, self._cipher
        return verify_log(self.directory, sizes, cipher, last_id, last_hash, anchor)

    def stats(self) -> Stats:
        """Counts by agent, kind and key id, and segment sizes (from the index)."""
        with self._lock:
            by_agent, by_kind, key_ids = self._index.counts()
            return Stats(
                events=self._last_id, by_agent=by_agent, by_kind=by_kind, key_ids=key_ids,
                current_key_id=self._cipher.current_id, segments=len(self._files.sizes),
                bytes=self._files.total_bytes,
            )

    # -- keys and lifetime ---------------------------------------------------------------

    @property
    def key_ring(self) -> KeyRing:
        """The key ring in use (read-only): derive keys for files kept beside the log."""
        return self._cipher.ring

    def rotate_key(self) -> int:
        """Add a fresh key to the key file; new events use it, old ones keep theirs.

        The key file is rewritten atomically (and fsynced) before the key is used.

        Returns:
            The new key id.

        Raises:
            SubstrateError: the keys did not come from a key file (env var or ``key=``),
                or the key file now disagrees with the keys in use.
        """
        with self._lock:
            self._writable()
            path = self._keys.file
            if path is None:
                raise SubstrateError(
                    f"keys for {self.directory} came from {self._keys.origin}, which cannot "
                    "be rotated here; add a new 'id:hex' key there and reopen"
                )
            on_file = _read_ring(path).keys
            ours = self._cipher.ring.keys
            if any(on_file.get(kid) != key for kid, key in ours.items()):
                raise SubstrateError(f"key file {path} changed and lost keys in use; restore it")
            ring = KeyRing(on_file).with_new_key()
            write_key_file(path, ring)
            self._cipher = Cipher(ring)
            self._keys = LoadedKeys(ring, self._keys.origin, path)
            return ring.current_id

    def _keep_index(self) -> None:
        """Keep the frame index for the next open (:mod:`substrate.kept_index`) after a
        clean close of a writable substrate; a failure is logged (the next open walks
        the whole log, as without it)."""
        if (self._anchor is None or self._commit.failure is not None
                or self._files.failure is not None or not self._last_id):
            return
        try:
            now = segment_identities(self.directory)
            changed = [n for n, ident in self._opened_as.items()
                       if n not in self._files.written and now.get(n) != ident]
            if changed:  # not by this process: index nothing it did not write
                drop_kept_index(self.directory)
                _logger.warning("segment(s) %s of %s changed on disk while open, not by "
                                "this process: the next open walks the whole log",
                                changed, self.directory)
                return
            write_kept_index(self.directory, self._index, self._last_hash, now,
                             self._cipher.ring)
        except (OSError, SubstrateError) as exc:
            _logger.warning("could not keep the frame index of %s on close (%s); the next "
                            "open walks the whole log", self.directory, exc)

    def close(self) -> None:
        """Sync (unless ``fsync="never"``), stop the flusher and release files and lock.

        The anchor is advanced to the last entry (after the final fsync; under
        ``fsync="never"`` without fsyncs). Idempotent. Appends after close raise
        :class:`SubstrateError`.

        Raises:
            SubstrateError: the final fsync failed, or another process replaced the
                anchor (files are released anyway). An anchor that cannot be written
                (a full disk) is logged, not raised: it trails, which is safe.
        """
        with self._lock:
            if self._closing:
                return
            self._closing = True
        try:
            self._commit.close(self._last_id)
            if (self.fsync == "never" and self._commit.failure is None
                    and self._anchored_id != self._last_id):
                with self._lock:
                    note = self._head()[2]
                try:
                    self._synced(note, sync=False)
                except OSError as exc:  # a full disk: the anchor trails, which is safe
                    _logger.warning("could not advance the anchor of %s on close (%s)",
                                    self.directory, exc)
            self._keep_index()
        finally:
            with self._lock:
                self._closed = True
                self._files.close()
                os.close(self._lock_fd)  # releases the directory's flock
