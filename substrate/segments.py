"""Segment files: naming, appending with rotation, positional reads, fsync.

The only module that writes segment bytes. Writes are ``os.write`` on an ``O_APPEND``
descriptor (no userspace buffer), so once :meth:`SegmentFiles.write` returns the bytes
are in the OS and survive a process crash. A failed write is rolled back (truncated)
so the files never hold frames the index does not know about. Before each write the tail
file's size is checked against what this object wrote: bytes written by anyone else (a
second writer) are refused, never appended after, so the chain cannot fork. The check is
one ``lseek`` to the end (a fifth of an ``fstat``'s cost on the append path; moving the
offset changes nothing, since ``O_APPEND`` writes go to the end and reads are ``pread``).
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import ChainBrokenError, CorruptFrameError, SubstrateError
from .frame import MAGIC

if TYPE_CHECKING:
    from ._native import Sealer

__all__ = ["SegmentFiles", "fsync_dir", "list_segments", "segment_name", "write_all"]

_SEGMENT = re.compile(r"seg-(\d{6,})\.sol\Z")


def segment_name(number: int) -> str:
    """File name of segment ``number`` (``seg-000001.sol``)."""
    return f"seg-{number:06d}.sol"


def list_segments(directory: Path) -> list[int]:
    """Numbers of the segment files in ``directory``, ascending.

    Raises:
        ChainBrokenError: the numbers do not run 1, 2, 3, ... (a segment is missing).
    """
    numbers = sorted(
        int(m.group(1)) for name in os.listdir(directory) if (m := _SEGMENT.match(name))
    )
    for expected, number in enumerate(numbers, 1):
        if number != expected:
            raise ChainBrokenError(
                f"{directory / segment_name(expected)} is missing (found "
                f"{segment_name(number)}); restore it from a backup"
            )
    return numbers


def fsync_dir(directory: Path) -> None:
    """fsync a directory, making file creations, renames and deletions in it durable."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to ``fd`` (os.write may write less than asked)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def replace_file(path: Path, data: bytes, *, sync: bool) -> os.stat_result:
    """Replace ``path`` with ``data`` atomically: a temporary file beside it (mode 0600,
    fsynced if ``sync``) renamed over it, then the directory fsynced if ``sync``.

    Returns:
        The stat of the file written (as it was before the rename).

    Raises:
        OSError: the write failed; ``path`` is as it was and no temporary file is left.
    """
    tmp = path.parent / f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        try:
            write_all(fd, data)
            if sync:
                os.fsync(fd)
            st = os.fstat(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    if sync:
        fsync_dir(path.parent)
    return st


def remove_stale_temps(path: Path) -> None:
    """Delete temporary files :func:`replace_file` left for ``path`` (a writer killed
    mid-write)."""
    for tmp in path.parent.glob(f".{path.name}.*.tmp"):
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


class SegmentFiles:
    """Open segment files of one substrate: the tail is appended to, all are readable.

    Not thread-safe: the substrate calls it under its lock.
    """

    def __init__(
        self, directory: Path, sizes: dict[int, int], segment_bytes: int, sync: bool,
        *, read_only: bool = False,
    ) -> None:
        """
        Args:
            directory: The substrate directory.
            sizes: Segment number → size in bytes, for the existing (recovered) segments.
            segment_bytes: Start a new segment when a frame would grow the tail past this.
            sync: fsync the old tail before rotating, and the directory after creating.
            read_only: Open the files for reading only (writes then fail with OSError).
        """
        self.directory = directory
        self._flags = os.O_RDONLY if read_only else os.O_RDWR | os.O_APPEND
        self.sizes = dict(sizes)
        self.written: set[int] = set()  # segments this process wrote to (or cut back)
        #: The write failure that left the files other than this process wrote them
        #: (another writer, or a failed write it could not undo), or None; once set,
        #: the substrate takes no more appends.
        self.failure: SubstrateError | None = None
        self.segment_bytes = segment_bytes
        self._sync = sync
        self._fds: dict[int, int] = {}
        self._paths: dict[int, Path] = {}
        self.tail: int | None = max(self.sizes) if self.sizes else None

    def path(self, number: int) -> Path:
        """Path of segment ``number`` (cached: reads name it in every error message)."""
        path = self._paths.get(number)
        if path is None:
            path = self._paths[number] = self.directory / segment_name(number)
        return path

    def fd(self, number: int) -> int:
        """The open descriptor of segment ``number`` (opened on first use)."""
        return self._fd(number)

    def _fd(self, number: int) -> int:
        fd = self._fds.get(number)
        if fd is None:
            fd = self._fds[number] = os.open(self.path(number), self._flags)
        return fd

    def _check_tail(self, fd: int, number: int, size: int) -> None:
        on_disk = os.lseek(fd, 0, os.SEEK_END)
        if on_disk != size:
            raise self._foreign(number, on_disk, size)

    def _foreign(self, number: int, on_disk: int, size: int) -> SubstrateError:
        """The :attr:`failure` (to raise) of a tail another process changed."""
        return self._fail(SubstrateError(
            f"{self.path(number)} is {on_disk} bytes but this substrate wrote {size}: "
            "another process wrote to it (a second writer) or cut it; nothing was "
            "appended. Close this substrate and reopen it"
        ))

    def _fail(self, failure: SubstrateError) -> SubstrateError:
        self.failure = failure
        return failure

    @property
    def total_bytes(self) -> int:
        """Bytes in all segments."""
        return sum(self.sizes.values())

    def write_one(self, frame: bytes) -> tuple[int, int]:
        """:meth:`write` for one frame (the per-append hot path)."""
        tail = self.tail
        if tail is not None:
            size = self.sizes[tail]
            if size + len(frame) <= self.segment_bytes or size <= len(MAGIC):
                fd = self._fds.get(tail)
                if fd is None:
                    fd = self._fd(tail)
                self._check_tail(fd, tail, size)
                self.written.add(tail)
                try:
                    if os.write(fd, frame) != len(frame):
                        raise OSError(errno.EIO, "short write")  # regular files: disk full
                except OSError:
                    self._undo(tail, size)
                    raise
                self.sizes[tail] = size + len(frame)
                return tail, size
        return self.write((frame,))[0]

    def write_sealed(
        self, sealer: Sealer, entry_id: int, ts: float, agent: str, kind: str, content: str,
        attrs: Mapping[str, str] | None, prev_hash: bytes, nonce: bytes,
    ) -> tuple[int, int, int, bytes] | None:
        """:meth:`write_one` of the frame ``sealer.append`` seals from the event (the
        arguments of :func:`~substrate.codec.seal` after the cipher), in the same call.

        Returns:
            ``(segment number, offset, frame length, frame hash)``; or None, with nothing
            written, when the tail has no room for the frame or the event is off the
            compiled path (then :func:`~substrate.codec.seal` and :meth:`write_one`).

        Raises:
            As :meth:`write_one`.
        """
        # The tail and its room, as write_one finds them, written out here rather than
        # in a shared helper: a method call more per append cost 1-3 % of its rate.
        tail = self.tail
        if tail is None:
            return None
        size = self.sizes[tail]
        fd = self._fds.get(tail)
        if fd is None:
            fd = self._fd(tail)
        room = -1 if size <= len(MAGIC) else max(0, self.segment_bytes - size)
        try:
            out = sealer.append(fd, size, room, entry_id, ts, agent, kind, content, attrs,
                                prev_hash, nonce)
        except OSError:
            self.written.add(tail)
            self._undo(tail, size)
            raise
        if out is None:
            return None
        if type(out) is int:
            raise self._foreign(tail, out, size)
        length, digest = out  # type: ignore[misc]
        self.written.add(tail)
        self.sizes[tail] = size + length
        return tail, size, length, digest

    def write(self, frames: Sequence[bytes]) -> list[tuple[int, int]]:
        """Append ``frames`` in order, rotating segments as needed; one ``os.write`` per
        segment touched.

        Returns:
            ``(segment number, offset)`` of each frame.

        Raises:
            OSError: the write failed; everything this call wrote has been removed again.
            SubstrateError: the write failed and could not be undone (the substrate must
                be closed and reopened, which recovers the tail).
        """
        first_tail = self.tail
        first_size = self.sizes.get(first_tail, 0) if first_tail is not None else 0
        out: list[tuple[int, int]] = []
        pending: list[bytes] = []
        if first_tail is not None:
            self._check_tail(self._fd(first_tail), first_tail, first_size)
        try:
            size = first_size
            for frame in frames:
                if self.tail is None or (
                    size > len(MAGIC) and size + len(frame) > self.segment_bytes
                ):
                    if pending:
                        self._append(pending)
                        pending = []
                    self._rotate()
                    pending.append(MAGIC)
                    size = len(MAGIC)
                out.append((self.tail, size))  # type: ignore[arg-type]
                pending.append(frame)
                size += len(frame)
            if pending:
                self._append(pending)
        except OSError as exc:
            self._undo(first_tail, first_size)
            if isinstance(exc, FileExistsError):
                raise self._fail(SubstrateError(
                    f"{exc.filename} appeared while this substrate was writing: another "
                    "process writes to it (a second writer); nothing was appended. Close "
                    "this substrate and reopen it"
                )) from exc
            raise
        return out

    def _append(self, parts: list[bytes]) -> None:
        assert self.tail is not None
        data = parts[0] if len(parts) == 1 else b"".join(parts)
        self.written.add(self.tail)
        write_all(self._fd(self.tail), data)
        self.sizes[self.tail] += len(data)

    def _rotate(self) -> None:
        if self.tail is not None and self._sync:
            os.fsync(self._fd(self.tail))
        number = 1 if self.tail is None else self.tail + 1
        fd = os.open(
            self.path(number), os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_EXCL, 0o600
        )
        self._fds[number] = fd
        self.sizes[number] = 0
        self.tail = number
        if self._sync:
            fsync_dir(self.directory)

    def _undo(self, first_tail: int | None, first_size: int) -> None:
        created = [n for n in self.sizes if first_tail is None or n > first_tail]
        try:
            for number in sorted(created, reverse=True):
                with contextlib.suppress(KeyError):
                    os.close(self._fds.pop(number))
                del self.sizes[number]
                os.unlink(self.path(number))
            if first_tail is not None:
                os.ftruncate(self._fd(first_tail), first_size)
                self.sizes[first_tail] = first_size
            self.tail = first_tail
        except OSError as exc:
            raise self._fail(SubstrateError(
                f"a failed write to {self.directory} could not be undone ({exc}); close "
                "and reopen the substrate, which cuts the partial tail"
            )) from exc

    def read(self, number: int, offset: int, size: int) -> bytes:
        """Read ``size`` bytes of segment ``number`` at ``offset`` (``os.pread``).

        Raises:
            CorruptFrameError: the file ends early (it was truncated after opening).
        """
        data = os.pread(self._fd(number), size, offset)
        if len(data) != size:
            raise CorruptFrameError(
                f"{self.path(number)} ends at offset {offset + len(data)} but a frame "
                f"of {size} bytes was indexed at {offset}: the file was truncated while "
                "open; restore it from a backup"
            )
        return data

    def tail_fd(self) -> int | None:
        """The descriptor to fsync for everything written so far, or None."""
        return None if self.tail is None else self._fd(self.tail)

    def close(self) -> None:
        """Close every descriptor."""
        fds, self._fds = self._fds, {}
        for fd in fds.values():
            os.close(fd)
