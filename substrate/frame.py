"""Frames: the length-prefixed, checksummed, hash-chained unit of a segment (sans-IO).

Segment file (``seg-000001.sol``, ``seg-000002.sol``, ...)::

    segment := MAGIC frame*                       MAGIC = b"SOLSEG\\x00\\x01" (8 bytes)
    frame   := length:u32 crc:u32 body            little-endian; length = len(body)
    body    := hlen:u16 header:hlen ciphertext
    crc     := CRC-32 (zlib) of body
    header  := msgpack array [entry_id:int, ts:float64, agent:str, kind:str,
                              key_id:int, nonce:bin(12), prev_hash:bin(32)]
    ciphertext := AES-256-GCM(key[key_id], nonce, xml_record, aad=header) (tag included)
    hash(frame) := SHA-256(body)

The header embeds the previous frame's hash (32 zero bytes for entry 1), so
``hash(frame)`` is SHA-256 over (prev_hash, header, ciphertext): changing, dropping or
reordering any frame breaks the link to the next one. Ids are consecutive across
segments. The header is authenticated (it is the AEAD's associated data) but not secret:
ids, timestamps, agents and kinds are readable without the key, which is what lets the
index be built on open without decrypting anything.
"""

from __future__ import annotations

import hashlib
import struct
import zlib
from enum import Enum
from typing import Final, NamedTuple

import msgpack

from .crypto import NONCE_BYTES
from .errors import CorruptFrameError, InvalidEventError

__all__ = [
    "GENESIS_HASH",
    "HASH_BYTES",
    "MAGIC",
    "NONCE_BYTES",
    "HLEN",
    "PREFIX",
    "Damage",
    "FrameHeader",
    "build_frame",
    "check_frame",
    "frame_hash",
    "frame_spans",
    "pack_header",
    "split_body",
    "unpack_header",
]

MAGIC: Final = b"SOLSEG\x00\x01"
PREFIX: Final = struct.Struct("<II")  # length, crc
HLEN: Final = struct.Struct("<H")
HASH_BYTES: Final = 32
GENESIS_HASH: Final = bytes(HASH_BYTES)
MIN_BODY: Final = HLEN.size + 16  # hlen, a few header bytes, at least a GCM tag
MAX_BODY: Final = (1 << 32) - 1
MAX_HEADER: Final = (1 << 16) - 1

_HEADER_TYPES = (int, float, str, str, int, bytes, bytes)
_unpackb = msgpack.unpackb
_packb = msgpack.Packer(use_bin_type=True, autoreset=True).pack
_crc32 = zlib.crc32
_sha256 = hashlib.sha256


class FrameHeader(NamedTuple):
    """The plaintext (authenticated) header of a frame (a tuple: cheap to build on open)."""

    entry_id: int
    ts: float
    agent: str
    kind: str
    key_id: int
    nonce: bytes
    prev_hash: bytes


def pack_header(
    entry_id: int, ts: float, agent: str, kind: str, key_id: int, nonce: bytes, prev_hash: bytes
) -> bytes:
    """Return the msgpack header bytes (also the AEAD associated data).

    Raises:
        InvalidEventError: the header would exceed 65535 bytes (an absurdly long agent).
    """
    header: bytes = _packb([entry_id, ts, agent, kind, key_id, nonce, prev_hash])
    if len(header) > MAX_HEADER:
        raise InvalidEventError(
            f"frame header of {len(header)} bytes is over {MAX_HEADER}; shorten the agent name"
        )
    return header


def unpack_header(header: bytes) -> FrameHeader:
    """Parse header bytes written by :func:`pack_header`.

    Raises:
        CorruptFrameError: the bytes are not a well-formed header.
    """
    try:
        fields = _unpackb(header, use_list=False, raw=False, strict_map_key=True)
    except (ValueError, TypeError, msgpack.UnpackException) as exc:
        raise CorruptFrameError(f"unreadable frame header: {exc}") from None
    if (
        type(fields) is not tuple
        or tuple(map(type, fields)) != _HEADER_TYPES
        or fields[0] < 1
        or len(fields[5]) != NONCE_BYTES
        or len(fields[6]) != HASH_BYTES
    ):
        raise CorruptFrameError("frame header has the wrong fields")
    return FrameHeader._make(fields)


def build_frame(header: bytes, ciphertext: bytes) -> tuple[bytes, bytes]:
    """Return ``(frame bytes, frame hash)`` for a packed header and its ciphertext."""
    body = b"".join((HLEN.pack(len(header)), header, ciphertext))
    if len(body) > MAX_BODY:
        raise InvalidEventError(f"event of {len(body)} bytes is over the 4 GiB frame limit")
    return PREFIX.pack(len(body), _crc32(body)) + body, _sha256(body).digest()


class Damage(Enum):
    """Why :func:`check_frame` found no intact frame at an offset."""

    TRUNCATED = "the data ends inside the frame"
    BAD_LENGTH = "the length field is impossible"
    BAD_CHECKSUM = "the CRC-32 does not match"


def check_frame(buf: bytes | memoryview, offset: int, end: int) -> int | Damage:
    """Return the total size of the intact frame at ``buf[offset:end]``, or its damage.

    Intact means: the prefix and whole body are inside ``end``, and the CRC matches.
    """
    if end - offset < PREFIX.size:
        return Damage.TRUNCATED
    length: int
    length, crc = PREFIX.unpack_from(buf, offset)
    if length < MIN_BODY:
        return Damage.BAD_LENGTH
    stop = offset + PREFIX.size + length
    if stop > end:
        return Damage.TRUNCATED
    if _crc32(memoryview(buf)[offset + PREFIX.size : stop]) != crc:
        return Damage.BAD_CHECKSUM
    return PREFIX.size + length


def frame_spans(segment: bytes) -> list[tuple[int, int]]:
    """``(offset, size)`` of every frame of an intact segment file's bytes, in order.

    Raises:
        ValueError: the segment is damaged (naming the offset and the damage).
    """
    pos, out = len(MAGIC), []
    while pos < len(segment):
        size = check_frame(segment, pos, len(segment))
        if isinstance(size, Damage):
            raise ValueError(f"no intact frame at offset {pos}: {size.value}")
        out.append((pos, size))
        pos += size
    return out


def split_body(buf: bytes | memoryview, offset: int, size: int) -> tuple[bytes, bytes]:
    """Split the intact frame at ``offset`` (of total ``size``) into ``(header, ciphertext)``.

    Raises:
        CorruptFrameError: the header length field points outside the frame.
    """
    view = memoryview(buf)[offset + PREFIX.size : offset + size]
    (hlen,) = HLEN.unpack_from(view, 0)
    if HLEN.size + hlen > len(view):
        raise CorruptFrameError(f"header length {hlen} runs past the end of the frame")
    return bytes(view[HLEN.size : HLEN.size + hlen]), bytes(view[HLEN.size + hlen :])


def frame_hash(buf: bytes | memoryview, offset: int, size: int) -> bytes:
    """The chain hash of the frame at ``offset`` (SHA-256 of its body)."""
    return _sha256(memoryview(buf)[offset + PREFIX.size : offset + size]).digest()
