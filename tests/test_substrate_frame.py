"""Frames (sans-IO): layout, checksum, and that every single-byte change is detected."""

from __future__ import annotations

import hashlib
import os
import struct
import zlib
from pathlib import Path

import msgpack
import pytest

from substrate import CorruptFrameError, InvalidEventError
from substrate.frame import (
    GENESIS_HASH,
    Damage,
    FrameHeader,
    build_frame,
    check_frame,
    frame_hash,
    pack_header,
    split_body,
    unpack_header,
)

NONCE = bytes(range(12))


def _frame(entry_id: int = 1, prev: bytes = GENESIS_HASH) -> tuple[bytes, bytes, bytes]:
    header = pack_header(entry_id, 1.5, "Main", "message", 1, NONCE, prev)
    frame, digest = build_frame(header, b"ciphertext and a 16-byte tag....")
    return header, frame, digest


def test_header_round_trips() -> None:
    header = pack_header(9, 2.25, "Mood", "cue", 3, NONCE, b"h" * 32)
    assert unpack_header(header) == FrameHeader(9, 2.25, "Mood", "cue", 3, NONCE, b"h" * 32)
    assert msgpack.unpackb(header) == [9, 2.25, "Mood", "cue", 3, NONCE, b"h" * 32]


def test_layout_is_length_crc_hlen_header_ciphertext_and_hash_covers_the_body() -> None:
    header, frame, digest = _frame()
    length, crc = struct.unpack_from("<II", frame)
    body = frame[8:]
    assert length == len(body) and crc == zlib.crc32(body)
    assert struct.unpack_from("<H", body)[0] == len(header)
    assert split_body(frame, 0, len(frame)) == (header, b"ciphertext and a 16-byte tag....")
    assert digest == hashlib.sha256(body).digest() == frame_hash(frame, 0, len(frame))


def test_check_frame_finds_the_frame_inside_a_larger_buffer() -> None:
    _, frame, _ = _frame()
    buf = b"junk" + frame + b"more"
    assert check_frame(buf, 4, len(buf)) == len(frame)


def test_every_single_byte_change_is_detected() -> None:
    _, frame, _ = _frame()
    for pos in range(len(frame)):
        for delta in (1, 0x80, 0xFF):
            damaged = bytearray(frame)
            damaged[pos] ^= delta
            assert isinstance(check_frame(bytes(damaged), 0, len(damaged)), Damage), pos


def test_short_buffers_are_truncated_frames() -> None:
    _, frame, _ = _frame()
    for cut in range(len(frame)):
        assert check_frame(frame[:cut], 0, cut) in (Damage.TRUNCATED, Damage.BAD_LENGTH)


def test_zero_filled_space_is_a_bad_length_not_a_frame() -> None:
    assert check_frame(bytes(64), 0, 64) is Damage.BAD_LENGTH


@pytest.mark.parametrize(
    "fields",
    [
        [1, 1.0, "a", "k", 1, NONCE],  # too short
        [0, 1.0, "a", "k", 1, NONCE, GENESIS_HASH],  # id 0
        [1, 1, "a", "k", 1, NONCE, GENESIS_HASH],  # int ts
        [1, 1.0, "a", "k", 1, NONCE[:8], GENESIS_HASH],  # short nonce
        [1, 1.0, "a", "k", 1, NONCE, GENESIS_HASH[:31]],  # short hash
    ],
)
def test_malformed_headers_are_corrupt(fields: list[object]) -> None:
    with pytest.raises(CorruptFrameError):
        unpack_header(msgpack.packb(fields))


def test_garbage_headers_are_corrupt() -> None:
    for _ in range(200):
        with pytest.raises(CorruptFrameError):
            unpack_header(os.urandom(20))


def test_an_absurd_agent_name_is_refused_before_writing() -> None:
    with pytest.raises(InvalidEventError, match="agent"):
        pack_header(1, 1.0, "a" * 70000, "k", 1, NONCE, GENESIS_HASH)


def test_frame_spans_walks_an_intact_segment_and_names_damage(tmp_path: Path) -> None:
    from substrate import KeyRing, open_substrate
    from substrate.frame import MAGIC, frame_spans

    with open_substrate(tmp_path, KeyRing.single(b"k" * 32), fsync="never") as sub:
        for i in range(3):
            sub.append("Main", "message", f"line {i}", ts=float(i + 1))
    segment = (tmp_path / "seg-000001.sol").read_bytes()
    spans = frame_spans(segment)
    assert len(spans) == 3 and spans[0][0] == len(MAGIC)
    assert sum(size for _, size in spans) == len(segment) - len(MAGIC)
    with pytest.raises(ValueError, match=f"offset {spans[-1][0]}"):
        frame_spans(segment[:-1])


def test_a_sealed_frame_is_byte_for_byte_what_earlier_versions_wrote() -> None:
    """One frame (fixed key, nonce and previous hash) as sealed before the append path
    was made faster: the format on disk did not change."""
    from substrate.codec import seal
    from substrate.crypto import Cipher, KeyRing

    frame, digest = seal(Cipher(KeyRing.single(bytes(range(32)))), 7, 1700000000.5, "Main",
                         "message", "h\u00e9llo & <world>\n", {"dia_id": "D0:1"},
                         bytes(range(32, 64)), NONCE)
    assert len(frame) == 263
    assert hashlib.sha256(frame).hexdigest() == (
        "02aabbc156acc853026d9697963127a7880dfd45ae9b5e48353cffa0ca734456")
    assert digest.hex() == "4b3e3be1520b083560004a31380c3ba79f1562b3b5e142fca7812a6c9d043b22"
