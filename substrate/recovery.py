"""Walking segment bytes frame by frame, and crash recovery on open.

A crash can leave the last segment ending in a partial or garbled frame (a *torn
tail*): bytes of a write that was never acknowledged, or, under ``fsync="batch"`` or
``"never"`` after an OS crash, of writes not yet synced. :func:`load_log` only finds
the torn tail; the opener first checks the log without it against the head anchor
(:mod:`substrate.anchor`: damage to synced frames is refused, not cut), then
:func:`cut_tails` copies the torn bytes to ``<segment>.torn-<offset>`` (mode 0600, for
forensics), cuts them off, logs a WARNING naming the byte count and the copy, and they
are reported in :attr:`Substrate.recovered`. A read-only open cuts nothing.

Damage is only treated as a torn tail when it is in the last segment *and no intact
frame follows it* (the rest of the file is searched byte by byte for a frame whose
CRC matches). Anything else — a bad frame followed by good ones, a bad non-last
segment, frames out of order — is corruption and raises; good data is never cut.
Damage confined to the very last frame is indistinguishable from a torn write, so it is
recovered (and reported), not raised.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .errors import ChainBrokenError, CorruptFrameError
from .frame import (
    GENESIS_HASH,
    HLEN,
    MAGIC,
    MIN_BODY,
    PREFIX,
    Damage,
    FrameHeader,
    check_frame,
    unpack_header,
)
from .index import FrameIndex
from .kept_index import KeptIndex
from .segments import fsync_dir, segment_name, write_all

__all__ = ["FrameWalk", "LoadedLog", "TornTail", "cut_tails", "load_log"]

_logger = logging.getLogger("substrate")
_HINT = "restore the segment from a backup; nothing was changed on disk"


@dataclass(frozen=True, slots=True)
class TornTail:
    """A torn tail cut off on open.

    Attributes:
        segment: Path of the segment file.
        offset: Where the cut was made (the file's new length; 0 if it was removed).
        bytes_dropped: How many bytes were cut.
        saved_to: Path of the copy of the cut bytes, or None if there were none (or
            nothing was cut).
        removed: Whether the whole segment file was (or, if not ``cut``, would be)
            removed: it held no intact frame.
        cut: False when a read-only open found the tail and left the files unchanged.
    """

    segment: str
    offset: int
    bytes_dropped: int
    saved_to: str | None
    removed: bool
    cut: bool = True


_HEADER_START = PREFIX.size + HLEN.size  # where a frame's msgpack header begins
_FIXARRAY_7 = 0x97  # every header is a msgpack array of 7 fields


def _intact_frame_after(buf: bytes, start: int, end: int) -> bool:
    """Whether any offset in ``buf[start+1:end]`` begins a frame whose CRC matches."""
    unpack = PREFIX.unpack_from
    last = end - PREFIX.size - MIN_BODY
    for pos in range(start + 1, last + 1):
        if buf[pos + _HEADER_START] != _FIXARRAY_7:  # cheap filter before the CRC
            continue
        length = unpack(buf, pos)[0]
        if MIN_BODY <= length <= end - pos - PREFIX.size and isinstance(
            check_frame(buf, pos, end), int
        ):
            return True
    return False


class FrameWalk:
    """Iterate the intact, correctly chained frames of one segment's bytes.

    Yields ``(offset, size, header, body view)``. Raises on corruption;
    if ``tail_ok`` and the damage is a torn tail, stops and sets :attr:`torn_at`.
    After iteration, :attr:`next_id` and :attr:`prev_hash` continue the chain.
    """

    def __init__(
        self, buf: bytes, path: Path, *, next_id: int, prev_hash: bytes, tail_ok: bool,
        start: int = 0,
    ) -> None:
        self.buf, self.path, self.tail_ok = buf, path, tail_ok
        self.next_id, self.prev_hash = next_id, prev_hash
        self.start = start  # 0: from the segment's magic; else the offset of a frame
        self.torn_at: int | None = None

    def _damaged(self, pos: int, why: str) -> bool:
        if self.tail_ok and not _intact_frame_after(self.buf, pos, len(self.buf)):
            self.torn_at = pos
            return True
        place = "intact frames follow it" if self.tail_ok else "it is not the last segment"
        raise CorruptFrameError(
            f"{self.path} at offset {pos} (where entry {self.next_id} should start): {why}; "
            f"{place}, so this is corruption, not a torn write. {_HINT}"
        )

    def __iter__(self) -> Iterator[tuple[int, int, FrameHeader, memoryview]]:
        buf, end = self.buf, len(self.buf)
        if not self.start and buf[: len(MAGIC)] != MAGIC:
            if self._damaged(0, "the file does not start with the segment magic"):
                return
        view = memoryview(buf)
        unpack_prefix, unpack_hlen, crc32, sha256 = PREFIX.unpack_from, HLEN.unpack_from, \
            zlib.crc32, hashlib.sha256
        pos = self.start or len(MAGIC)
        while pos < end:
            # check_frame() inlined: this loop indexes every frame on open
            damage = None
            if end - pos < PREFIX.size:
                damage = Damage.TRUNCATED
            else:
                length, crc = unpack_prefix(buf, pos)
                stop = pos + PREFIX.size + length
                if length < MIN_BODY:
                    damage = Damage.BAD_LENGTH
                elif stop > end:
                    damage = Damage.TRUNCATED
                else:
                    body = view[pos + PREFIX.size : stop]
                    if crc32(body) != crc:
                        damage = Damage.BAD_CHECKSUM
            if damage is not None:
                if self._damaged(pos, damage.value):
                    return
                continue  # pragma: no cover - _damaged raises otherwise
            (hlen,) = unpack_hlen(body)
            try:
                if HLEN.size + hlen > length:
                    raise CorruptFrameError(f"header length {hlen} runs past the frame")
                h = unpack_header(bytes(body[HLEN.size : HLEN.size + hlen]))
            except CorruptFrameError as exc:
                raise CorruptFrameError(f"{self.path} at offset {pos}: {exc}; {_HINT}") from None
            if h.entry_id != self.next_id:
                raise ChainBrokenError(
                    f"{self.path} at offset {pos} holds entry {h.entry_id} where entry "
                    f"{self.next_id} should be: frames were reordered, removed or "
                    f"duplicated. {_HINT}"
                )
            if h.prev_hash != self.prev_hash:
                raise ChainBrokenError(
                    f"entry {h.entry_id} in {self.path} at offset {pos} does not link to "
                    f"the frame before it (hash chain mismatch): a frame was replaced, "
                    f"removed or reordered. {_HINT}"
                )
            yield pos, stop - pos, h, body
            self.prev_hash = sha256(body).digest()
            self.next_id += 1
            pos = stop


@dataclass
class LoadedLog:
    """What :func:`load_log` found: the index, the chain head and the torn tail (not
    yet cut; see :func:`cut_tails`).

    ``sizes`` are the segment lengths without the torn tail; ``hash_at`` is the chain
    hash after the entry :func:`load_log` was asked about (None if the log is shorter).
    """

    index: FrameIndex
    last_hash: bytes = GENESIS_HASH
    sizes: dict[int, int] = field(default_factory=dict)
    torn: list[tuple[Path, bytes, int]] = field(default_factory=list)
    last_by_key: dict[int, int] = field(default_factory=dict)
    hash_at: bytes | None = None


def load_log(directory: Path, numbers: list[int], hash_at: int = 0,
             kept: KeptIndex | None = None) -> LoadedLog:
    """Index every segment (no decryption) and find a torn tail of the last one.

    Changes no file.

    Args:
        hash_at: Also record the chain hash after this entry (0: the genesis hash).
        kept: The index kept at the last close, checked against these segments
            (:mod:`substrate.kept_index`): its entries are taken as they are and only
            the frames after them are walked. Ignored when ``hash_at`` is an entry
            before its last (that chain hash is not kept).

    Raises:
        CorruptFrameError, ChainBrokenError: damage that is not a torn tail.
        OSError: a file could not be read.
    """
    log = LoadedLog(FrameIndex())
    if hash_at == 0:
        log.hash_at = GENESIS_HASH
    next_id, resume = 1, (0, 0)  # the walk starts at (segment, offset): 0 is its magic
    if kept is not None and (hash_at == 0 or hash_at >= kept.last_id):
        log.index, log.last_hash = kept.index, kept.last_hash
        log.last_by_key = dict(kept.last_by_key)
        if hash_at == kept.last_id:
            log.hash_at = kept.last_hash
        segment, offset, size = kept.index.locate(kept.last_id)
        next_id, resume = kept.last_id + 1, (segment, offset + size)
        log.sizes.update((n, z) for n, z in kept.sizes.items() if n < segment)
    for number in numbers:
        if number < resume[0]:
            continue
        path = directory / segment_name(number)
        buf = path.read_bytes()
        walk = FrameWalk(
            buf, path, next_id=next_id, prev_hash=log.last_hash, tail_ok=number == numbers[-1],
            start=resume[1] if number == resume[0] else 0,
        )
        add, last_by_key = log.index.add, log.last_by_key
        for pos, size, h, body in walk:
            add(number, pos, size, h.ts, h.agent, h.kind, h.key_id)
            last_by_key[h.key_id] = h.entry_id
            if h.entry_id == hash_at:
                log.hash_at = hashlib.sha256(body).digest()
        next_id, log.last_hash = walk.next_id, walk.prev_hash
        if walk.torn_at is None:
            log.sizes[number] = len(buf)
            continue
        log.torn.append((path, buf, walk.torn_at))
        if walk.torn_at > len(MAGIC):
            log.sizes[number] = walk.torn_at
    return log


def cut_tails(log: LoadedLog, *, apply: bool) -> list[TornTail]:
    """Cut the torn tails :func:`load_log` found (if ``apply``), or just describe them.

    Each cut saves the bytes beside the segment first (fsynced, mode 0600), then
    truncates (or removes) the segment, fsyncs it and the directory, and logs a WARNING
    naming the segment, offset, byte count and the copy.

    Raises:
        OSError: a tail could not be saved or cut.
    """
    out = []
    for path, buf, offset in log.torn:
        if not apply:
            out.append(TornTail(str(path), offset, len(buf) - offset, None,
                                offset <= len(MAGIC), cut=False))
            continue
        torn = _cut(path, buf, offset)
        _logger.warning(
            "cut a torn tail of %d bytes from %s at offset %d%s; %s",
            torn.bytes_dropped, torn.segment, offset,
            " (it held no intact frame: the file was removed)" if torn.removed else "",
            "nothing to save" if torn.saved_to is None
            else f"the bytes were saved to {torn.saved_to}",
        )
        out.append(torn)
    return out


def _cut(path: Path, buf: bytes, offset: int) -> TornTail:
    dropped = buf[offset:]
    saved: Path | None = None
    if dropped:
        saved = path.with_name(f"{path.name}.torn-{offset}")
        n = 0
        while saved.exists():
            n += 1
            saved = path.with_name(f"{path.name}.torn-{offset}.{n}")
        fd = os.open(saved, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            write_all(fd, dropped)
            os.fsync(fd)
        finally:
            os.close(fd)
    removed = offset <= len(MAGIC)
    if removed:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
    else:
        fd = os.open(path, os.O_RDWR)
        try:
            os.ftruncate(fd, offset)
            os.fsync(fd)
        finally:
            os.close(fd)
    fsync_dir(path.parent)
    return TornTail(
        str(path), 0 if removed else offset, len(dropped), None if saved is None else str(saved),
        removed,
    )
