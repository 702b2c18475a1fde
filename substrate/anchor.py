"""The head anchor: an authenticated record of where the log ended at its last fsync.

Loss at the end of a log leaves no broken link behind: a deleted last segment, a tail
truncated at a frame boundary, or every segment deleted, all still read as a valid
(shorter) chain. So the head is recorded apart from the segments, in
``substrate.anchor``, and checked on open::

    anchor := MAGIC body_len:u16 body tag                 MAGIC = b"SOLANC\\x00\\x01"
    body   := msgpack [1, key_id, last_id, last_hash:bin(32), segment, size]
    tag    := HMAC-SHA256(ring.derive("substrate-anchor", key_id), MAGIC body_len body)

``segment`` and ``size`` say where frame ``last_id`` ends (0, 0 for an empty log); they
only make error messages precise. The key id is stored, so the anchor stays readable
after a key rotation (the ring keeps old keys), and the key is derived from whatever
ring opened the substrate (key file, ``SOLACE_SUBSTRATE_KEY`` or ``key=``).

Guarantees:

* The anchor is written after the segment data it names is fsynced (each group-commit
  batch, see :mod:`substrate.durability`, and on close; on open when the log is longer
  than the anchor), atomically (temp file, fsync, rename, directory fsync), mode 0600.
  So the durable log is never shorter than the anchor; it may be longer by the batch
  not yet synced, which is fine. Under ``fsync="never"`` the anchor is written on open
  and close without fsyncs, so after an OS crash it may run ahead of what the kernel
  kept, and the open refuses (the loss is real; ``accept_loss`` accepts it).
* A log shorter than its anchor, a log whose entry ``last_id`` does not hash to
  ``last_hash`` (replaced or forked), or an anchor that fails its HMAC, is refused on
  open with :class:`AnchorMismatchError` naming what is missing, unless ``accept_loss``.

Not detected: deleting (or rolling back) the anchor together with the tail it covers.
A log with no anchor (written before anchors existed) is accepted with a warning and
anchored at its current head.
"""

from __future__ import annotations

import hmac
import os
import struct
from dataclasses import dataclass
from hashlib import sha256
from pathlib import Path
from typing import Final

import msgpack

from .crypto import KeyRing
from .errors import AnchorMismatchError, SubstrateError
from .frame import GENESIS_HASH, HASH_BYTES
from .segments import remove_stale_temps, replace_file, segment_name

__all__ = ["ANCHOR_FILE", "ANCHOR_PURPOSE", "AnchorFile", "Head", "describe_loss"]

ANCHOR_FILE: Final = "substrate.anchor"
ANCHOR_PURPOSE: Final = "substrate-anchor"
_MAGIC: Final = b"SOLANC\x00\x01"
_LEN: Final = struct.Struct("<H")
_TAG_BYTES: Final = 32
_VERSION: Final = 1
_RECOVER_HINT = (
    "Restore the missing data from a backup, or accept the loss: "
    "open_substrate(..., accept_loss=True) or `python -m substrate recover {dir} "
    "--accept-loss`"
)


@dataclass(frozen=True, slots=True)
class Head:
    """A chain head: the last entry id, its chain hash, and where its frame ends."""

    last_id: int
    last_hash: bytes
    segment: int
    size: int


EMPTY_HEAD: Final = Head(0, GENESIS_HASH, 0, 0)
_Stamp = tuple[int, int, int]  # (st_ino, st_size, st_mtime_ns) of the file we wrote


def _stamp(st: os.stat_result) -> _Stamp:
    return st.st_ino, st.st_size, st.st_mtime_ns


class AnchorFile:
    """Reads and writes one substrate's anchor file. Not thread-safe (callers serialise).

    Args:
        directory: The substrate directory.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.path = directory / ANCHOR_FILE
        self._keys: dict[tuple[int, bytes], bytes] = {}
        self._stamp: _Stamp | None = None  # what we last read or wrote

    def _key(self, ring: KeyRing, key_id: int) -> bytes:
        cache_key = (key_id, ring.keys[key_id])
        key = self._keys.get(cache_key)
        if key is None:
            key = self._keys[cache_key] = ring.derive(ANCHOR_PURPOSE, key_id)
        return key

    def exists(self) -> bool:
        """Whether an anchor file is present."""
        return self.path.exists()

    def read(self, ring: KeyRing) -> Head | None:
        """The authenticated head, or None if there is no anchor file.

        Raises:
            AnchorMismatchError: the file is malformed, names a key id not in ``ring``,
                or its HMAC does not verify.
            SubstrateError: it cannot be read (a directory, no permission).
        """
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise SubstrateError(f"cannot read the anchor {self.path}: {exc.strerror}") from None
        try:
            st = os.fstat(fd)
            data = os.read(fd, 4096)
        except OSError as exc:
            raise SubstrateError(f"cannot read the anchor {self.path}: {exc.strerror}") from None
        finally:
            os.close(fd)
        self._stamp = _stamp(st)  # the file we saw, even if it does not check out
        return self._parse(data, ring)

    def _bad(self, why: str) -> AnchorMismatchError:
        return AnchorMismatchError(
            f"the anchor {self.path} {why}: it was altered, or written with another key; "
            "the end of the log cannot be checked. "
            + _RECOVER_HINT.format(dir=self.directory)
        )

    def _parse(self, data: bytes, ring: KeyRing) -> Head:
        header = len(_MAGIC) + _LEN.size
        if len(data) < header + _TAG_BYTES or data[: len(_MAGIC)] != _MAGIC:
            raise self._bad(f"is not an anchor ({len(data)} bytes, wrong magic or too short)")
        (n,) = _LEN.unpack_from(data, len(_MAGIC))
        if len(data) != header + n + _TAG_BYTES:
            raise self._bad(f"has {len(data)} bytes where its length field implies "
                            f"{header + n + _TAG_BYTES}")
        try:
            fields = msgpack.unpackb(data[header : header + n], use_list=False, raw=False)
        except (ValueError, TypeError, msgpack.UnpackException):
            raise self._bad("does not parse") from None
        if (
            type(fields) is not tuple or len(fields) != 6 or fields[0] != _VERSION
            or any(type(f) is not int for f in fields[1:3] + fields[4:])
            or type(fields[3]) is not bytes or len(fields[3]) != HASH_BYTES
        ):
            raise self._bad("has the wrong fields")
        key_id = fields[1]
        if key_id not in ring.keys:
            raise self._bad(f"names key id {key_id}, which is not in the key ring (ids "
                            f"{sorted(ring.keys)}; if the key file lost a key, restore it)")
        tag = hmac.new(self._key(ring, key_id), data[: header + n], sha256).digest()
        if not hmac.compare_digest(tag, data[header + n :]):
            raise self._bad("fails authentication (HMAC mismatch)")
        return Head(fields[2], fields[3], fields[4], fields[5])

    def write(self, head: Head, ring: KeyRing, *, sync: bool) -> None:
        """Replace the anchor with ``head``, sealed with the ring's current key.

        Atomic: a temporary file (mode 0600), fsynced if ``sync``, renamed over the
        anchor, then the directory fsynced if ``sync``.

        The identity check is a second line of defence behind the directory lock (a
        foreign anchor renamed in between the check and our rename is overwritten).

        Raises:
            SubstrateError: the anchor changed since this object last read or wrote it
                (another process wrote it: nothing is replaced).
            OSError: the write failed (the old anchor is intact).
        """
        try:
            now: _Stamp | None = _stamp(os.stat(self.path))
        except FileNotFoundError:
            now = None
        if now != self._stamp:
            raise SubstrateError(
                f"the anchor {self.path} changed since this substrate last wrote it: "
                "another process is writing to this substrate; close it and reopen"
            )
        key_id = ring.current_id
        body = msgpack.packb(
            [_VERSION, key_id, head.last_id, head.last_hash, head.segment, head.size],
            use_bin_type=True,
        )
        data = _MAGIC + _LEN.pack(len(body)) + body
        data += hmac.new(self._key(ring, key_id), data, sha256).digest()
        self._stamp = _stamp(replace_file(self.path, data, sync=sync))

    def remove_stale_temps(self) -> None:
        """Delete temporary anchor files left by a writer killed mid-write."""
        remove_stale_temps(self.path)


def describe_loss(
    directory: Path, anchor: Head, last_id: int, hash_at_anchor: bytes | None,
    sizes: dict[int, int],
) -> str | None:
    """Why a log ending at ``last_id`` contradicts ``anchor``, or None if it does not.

    Args:
        hash_at_anchor: The log's chain hash after entry ``anchor.last_id`` (None when
            the log is shorter).
        sizes: Segment number → length of its intact frames.
    """
    where = directory / ANCHOR_FILE
    hint = _RECOVER_HINT.format(dir=directory)
    if last_id < anchor.last_id:
        if anchor.segment == 0:
            seg = ""
        elif anchor.segment not in sizes:
            seg = f" {segment_name(anchor.segment)} is missing."
        else:
            seg = (
                f" {segment_name(anchor.segment)} should hold intact frames up to byte "
                f"{anchor.size}; they end at byte {sizes[anchor.segment]}."
            )
        first = "" if not sizes else f" (the segments hold entries 1..{last_id})"
        lost = (f"entry {anchor.last_id} is" if last_id + 1 == anchor.last_id else
                f"entries {last_id + 1}..{anchor.last_id} are")
        return (
            f"the log in {directory} ends at entry {last_id} but its anchor {where} "
            f"records entry {anchor.last_id}, synced to disk: {lost} missing{first}.{seg} "
            f"{hint}"
        )
    if hash_at_anchor != anchor.last_hash:
        return (
            f"entry {anchor.last_id} of the log in {directory} is not the one its anchor "
            f"{where} records (chain hash mismatch): the log was replaced or forked, e.g. "
            f"by a second writer. {hint}"
        )
    return None
