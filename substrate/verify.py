"""Full verification: every frame's checksum, chain link, key and AES-GCM tag, and XML."""

from __future__ import annotations

import hashlib
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .anchor import Head, describe_loss
from .codec import decode_checked, decrypt
from .crypto import Cipher
from .errors import AnchorMismatchError, ChainBrokenError, CorruptFrameError
from .frame import GENESIS_HASH, PREFIX, FrameHeader, split_body
from .recovery import FrameWalk
from .segments import list_segments, segment_name

__all__ = ["VerifyReport", "verify_log"]

_HINT = "restore it from a backup"
_BATCH = 256  # records per XML parse


@dataclass(frozen=True, slots=True)
class VerifyReport:
    """What :meth:`Substrate.verify` checked; returned only when everything passed.

    Attributes:
        frames: Frames checked (= events).
        segments: Segment files checked.
        bytes: Segment bytes read.
        last_id: The last entry id checked (0 for an empty substrate).
        key_ids: Frames per key id.
        seconds: Time taken (``time.perf_counter``).
        anchored_id: The entry the anchor file records (None: no anchor file yet).
    """

    frames: int
    segments: int
    bytes: int
    last_id: int
    key_ids: Mapping[int, int] = field(default_factory=dict)
    seconds: float = 0.0
    anchored_id: int | None = None

    @property
    def mb_per_s(self) -> float:
        """Throughput in MB/s (10**6 bytes)."""
        return self.bytes / 1e6 / self.seconds if self.seconds > 0 else 0.0


def verify_log(
    directory: Path, sizes: Mapping[int, int], cipher: Cipher, last_id: int, last_hash: bytes,
    anchor: Head | None = None,
) -> VerifyReport:
    """Read the segments back from disk (up to ``sizes``) and check every layer.

    Reads files only; changes none.

    Args:
        sizes: Segment number → length, as the substrate last wrote them.
        last_id, last_hash: Chain head the substrate holds; the files must end there.
        anchor: The authenticated head anchor, if any: the chain must hold its entry.

    Raises:
        CorruptFrameError, ChainBrokenError, WrongKeyError, MissingKeyError: the first
            problem found, naming segment file, offset and entry id.
        AnchorMismatchError: the chain ends before, or forks from, the anchor.
    """
    anchored = None if anchor is None else anchor.last_id
    hash_at = GENESIS_HASH if anchored == 0 else None
    start = time.perf_counter()
    numbers = sorted(sizes)
    on_disk = list_segments(directory)
    if on_disk[: len(numbers)] != numbers:
        raise ChainBrokenError(f"segment files in {directory} were removed: {_HINT}")
    next_id, prev_hash, total = 1, GENESIS_HASH, 0
    keys: Counter[int] = Counter()
    for number in numbers:
        path = directory / segment_name(number)
        with open(path, "rb") as f:
            buf = f.read(sizes[number])
        if len(buf) < sizes[number]:
            raise CorruptFrameError(
                f"{path} is {len(buf)} bytes but {sizes[number]} were written: it was "
                f"truncated; {_HINT}"
            )
        total += len(buf)
        walk = FrameWalk(buf, path, next_id=next_id, prev_hash=prev_hash, tail_ok=False)
        headers: list[FrameHeader] = []
        records: list[bytes] = []
        places: list[tuple[Path, int]] = []
        for pos, _, h, body in walk:
            header, ct = split_body(buf, pos, len(body) + PREFIX.size)
            headers.append(h)
            records.append(decrypt(cipher, h, header, ct, segment=path, offset=pos))
            places.append((path, pos))
            keys[h.key_id] += 1
            if h.entry_id == anchored:
                hash_at = hashlib.sha256(body).digest()
            if len(records) == _BATCH:
                decode_checked(headers, records, places)
                headers, records, places = [], [], []
        decode_checked(headers, records, places)
        next_id, prev_hash = walk.next_id, walk.prev_hash
    if next_id - 1 != last_id or prev_hash != last_hash:
        raise ChainBrokenError(
            f"the segments in {directory} end at entry {next_id - 1} but the substrate "
            f"wrote up to entry {last_id}: frames were removed from the end; {_HINT}"
        )
    if anchor is not None:
        loss = describe_loss(directory, anchor, last_id, hash_at, dict(sizes))
        if loss is not None:
            raise AnchorMismatchError(loss)
    return VerifyReport(
        frames=last_id, segments=len(numbers), bytes=total, last_id=last_id,
        key_ids=dict(keys), seconds=time.perf_counter() - start, anchored_id=anchored,
    )
