"""The frame index kept across a close, so an open walks only the frames written since.

An open indexes the log (:func:`substrate.recovery.load_log`): every frame's CRC, header
and SHA-256 chain link. That walk grows with the log (about 1.5 s at 165k events), so a
clean close writes the index beside the segments (``index.kept``), with the chain hash
and the segment lengths it covers, sealed with an HMAC under a key derived from the
substrate key (purpose ``substrate-kept-index``). The next open takes it only when all
of this holds, and then walks just the frames after it:

* it parses, and its HMAC verifies under a key in the ring;
* every segment it covers is on disk and is the very file it indexed: same size, inode
  and modification time (a segment appended to, cut, rewritten or replaced since fails
  this, as does a log that crashed after appending past it);
* the frame of its last entry is where it says, intact (its CRC), and hashes to its
  chain hash (one read: the log goes on from the same chain).

Anything else (no file, another version, altered, written for another log, a segment
touched since) is a full walk, as before, with one INFO line saying why. Segment files
that are byte for byte what was indexed need no second walk; a change that also restores
a segment's size and modification time is not seen at open, but each frame is still
authenticated (AES-GCM) whenever it is read, the head anchor still checks the end of the
log, and ``python -m substrate verify`` checks the whole chain.
"""

from __future__ import annotations

import contextlib
import hmac
import logging
import os
import struct
import sys
from dataclasses import dataclass
from hashlib import sha256
from pathlib import Path
from typing import Final

import msgpack

from .crypto import KeyRing
from .frame import HASH_BYTES, PREFIX, check_frame
from .index import FrameIndex
from .segments import list_segments, remove_stale_temps, replace_file, segment_name

__all__ = ["KEPT_INDEX_FILE", "KEPT_INDEX_PURPOSE", "Identity", "KeptIndex",
           "drop_kept_index", "read_kept_index", "remove_stale_kept_temps",
           "segment_identities", "write_kept_index"]

KEPT_INDEX_FILE: Final = "index.kept"
KEPT_INDEX_PURPOSE: Final = "substrate-kept-index"
_MAGIC: Final = b"SUBSTRATE-KEPT-INDEX\n"
_LEN: Final = struct.Struct(">Q")
_TAG_BYTES: Final = 32
_VERSION: Final = 1

_logger = logging.getLogger(__name__)

#: A segment file's (size, inode, modification time in ns).
Identity = tuple[int, int, int]


@dataclass(frozen=True, slots=True)
class KeptIndex:
    """A kept index that checked out against the log on disk.

    Attributes:
        index: entries 1..``last_id``. last_hash: the chain hash after ``last_id``.
        sizes: segment number -> the length it covers (every segment up to the last
            entry's). last_by_key: key id -> the last of those entries sealed with it.
    """

    index: FrameIndex
    last_hash: bytes
    sizes: dict[int, int]
    last_by_key: dict[int, int]

    @property
    def last_id(self) -> int:
        return len(self.index)


def segment_identities(directory: Path, numbers: list[int] | None = None
                       ) -> dict[int, Identity]:
    """Each segment file's identity now: number -> (size, inode, modification time ns),
    of ``numbers`` (default: every segment in ``directory``).

    Raises:
        OSError: a segment could not be stat'ed. ChainBrokenError: one is missing.
    """
    out = {}
    for number in list_segments(directory) if numbers is None else numbers:
        st = os.stat(directory / segment_name(number))
        out[number] = (st.st_size, st.st_ino, st.st_mtime_ns)
    return out


def write_kept_index(directory: Path, index: FrameIndex, last_hash: bytes,
                     identities: dict[int, Identity], ring: KeyRing) -> None:
    """Keep ``index`` (every entry of the log, whose chain ends at ``last_hash``, in the
    segments ``identities`` describes) for the next open, sealed with the ring's current
    key. Not fsynced: one lost or torn in a crash fails its check, and the next open
    walks the whole log.

    Raises:
        OSError: it could not be written (any old one is left as it was).
    """
    key_id = ring.current_id
    agents, kinds, arrays = index.state()
    last = len(index)
    covered = [[n, *ident] for n, ident in sorted(identities.items())
               if last and n <= index.locate(last)[0]]
    header = msgpack.packb(
        [_VERSION, key_id, last, last_hash, covered, sorted(index.last_by_key().items()),
         agents, kinds, [len(a) for a in arrays], sys.byteorder],
        use_bin_type=True,
    )
    data = b"".join([_MAGIC, _LEN.pack(len(header)), header, *arrays])
    data += hmac.new(ring.derive(KEPT_INDEX_PURPOSE, key_id), data, sha256).digest()
    replace_file(directory / KEPT_INDEX_FILE, data, sync=False)


def drop_kept_index(directory: Path) -> None:
    """Remove the kept index (the next open walks the whole log)."""
    with contextlib.suppress(FileNotFoundError):
        (directory / KEPT_INDEX_FILE).unlink()


def remove_stale_kept_temps(directory: Path) -> None:
    """Delete temporary files a writer killed mid-write left."""
    remove_stale_temps(directory / KEPT_INDEX_FILE)


def read_kept_index(directory: Path, ring: KeyRing, numbers: list[int]) -> KeptIndex | None:
    """The kept index of ``directory`` if it checks out against the log's segments
    ``numbers`` (see the module docstring), else None (logged at INFO, saying why).

    Raises:
        OSError: a segment could not be read.
    """
    path = directory / KEPT_INDEX_FILE
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        _logger.info("not using %s (%s): the whole log is walked", path, exc.strerror)
        return None
    try:
        return _checked(directory, data, ring, numbers)
    except _Unusable as exc:
        _logger.info("not using %s (%s): the whole log is walked", path, exc)
        return None


class _Unusable(Exception):
    """Why a kept index cannot be used."""


def _checked(directory: Path, data: bytes, ring: KeyRing, numbers: list[int]) -> KeptIndex:
    start = len(_MAGIC) + _LEN.size
    if len(data) < start + _TAG_BYTES or not data.startswith(_MAGIC):
        raise _Unusable("not a kept index")
    (n,) = _LEN.unpack_from(data, len(_MAGIC))
    try:
        fields = msgpack.unpackb(data[start:start + n], use_list=True, raw=False)
        (version, key_id, last_id, last_hash, covered, last_by_key, agents, kinds,
         lengths, byteorder) = fields
    except (ValueError, TypeError, msgpack.UnpackException):
        raise _Unusable("its header does not parse") from None
    if version != _VERSION or byteorder != sys.byteorder:
        raise _Unusable(f"version {version!r}, {byteorder!r}-endian")
    if key_id not in ring.keys:
        raise _Unusable(f"sealed with key id {key_id!r}, not in the key ring")
    body = start + n + sum(lengths)
    if len(data) != body + _TAG_BYTES:
        raise _Unusable(f"{len(data)} bytes where its header implies {body + _TAG_BYTES}")
    tag = hmac.new(ring.derive(KEPT_INDEX_PURPOSE, key_id), data[:body], sha256).digest()
    if not hmac.compare_digest(tag, data[body:]):
        raise _Unusable("it fails authentication (HMAC mismatch)")
    arrays, at = [], start + n
    for length in lengths:
        arrays.append(data[at:at + length])
        at += length
    try:
        index = FrameIndex.from_state(agents, kinds, arrays)
    except ValueError as exc:
        raise _Unusable(str(exc)) from None
    if len(index) != last_id or not last_id or len(last_hash) != HASH_BYTES:
        raise _Unusable(f"it holds {len(index)} entries for entry {last_id}")
    try:
        identities = {int(n): (int(z), int(i), int(t)) for n, z, i, t in covered}
    except (TypeError, ValueError):
        raise _Unusable("its segment list does not parse") from None
    _check_segments(directory, index, last_hash, identities, numbers)
    return KeptIndex(index, bytes(last_hash), {n: ident[0] for n, ident in identities.items()},
                     {int(k): int(v) for k, v in last_by_key})


def _check_segments(directory: Path, index: FrameIndex, last_hash: bytes,
                    identities: dict[int, tuple[int, int, int]], numbers: list[int]) -> None:
    segment, offset, size = index.locate(len(index))
    kept = sorted(identities)
    on_disk = [n for n in numbers if n <= segment]
    if kept != on_disk:
        raise _Unusable(f"it covers segments {kept}, the log has {on_disk} up to {segment}")
    now = segment_identities(directory, kept)
    for number in kept:
        if now.get(number) != identities[number]:
            raise _Unusable(f"{segment_name(number)} is not the file it indexed (size, "
                            f"inode or modification time changed)")
    if offset + size > identities[segment][0]:
        raise _Unusable("its last entry ends past the segment it covered")
    with open(directory / segment_name(segment), "rb") as f:
        f.seek(offset)
        frame = f.read(size)
    if check_frame(frame, 0, len(frame)) != size or \
            sha256(frame[PREFIX.size:]).digest() != last_hash:
        raise _Unusable(f"entry {len(index)} in {segment_name(segment)} is not the one it "
                        f"indexed (chain hash mismatch)")
