"""AES-256-GCM sealing and the key ring (sans-IO).

A key ring maps small positive integer key ids to 256-bit keys; the highest id is the
current key, used for new frames. Every frame records its key id, so after a rotation
old frames still open with their old key.

Key ring text format (the key file, or ``SOLACE_SUBSTRATE_KEY`` when it holds several
keys)::

    # comment lines and blank lines are ignored
    1:<64 hex digits>
    2:<64 hex digits>

A bare key (64 hex digits, or base64 of 32 bytes) is read as a ring holding key id 1.
Entries may also be separated by commas or whitespace.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

if TYPE_CHECKING:
    from . import _native

Sealer: type[_native.Sealer] | None
try:
    from ._native import Sealer
except ImportError:  # not built (no OpenSSL headers): codec.seal's Python path seals
    Sealer = None

__all__ = [
    "KEY_BYTES",
    "MAX_KEY_ID",
    "NONCE_BYTES",
    "Cipher",
    "KeyRing",
    "NoncePool",
    "format_ring",
    "parse_key",
    "parse_ring",
]

KEY_BYTES = 32
NONCE_BYTES = 12
MAX_KEY_ID = 0xFFFF
_ENTRY = re.compile(r"(\d+):(\S+)\Z")


@dataclass(frozen=True, slots=True)
class KeyRing:
    """Keys by id; the highest id is current. Read-only; ``with_new_key`` makes a new ring.

    Raises:
        ValueError: the ring is empty, an id is not a positive int, or a key is not 32 bytes.
    """

    keys: Mapping[int, bytes] = field(repr=False)

    def __post_init__(self) -> None:
        keys = dict(self.keys)
        if not keys:
            raise ValueError("a key ring needs at least one key")
        for kid, key in keys.items():
            if type(kid) is not int or not 1 <= kid <= MAX_KEY_ID:
                raise ValueError(f"key ids are ints in 1..{MAX_KEY_ID}, got {kid!r}")
            if not isinstance(key, bytes) or len(key) != KEY_BYTES:
                raise ValueError(f"key {kid} must be {KEY_BYTES} raw bytes (AES-256)")
        object.__setattr__(self, "keys", MappingProxyType(keys))

    @classmethod
    def single(cls, key: bytes) -> KeyRing:
        """A ring holding ``key`` as key id 1."""
        return cls({1: key})

    @classmethod
    def generate(cls) -> KeyRing:
        """A ring holding one fresh random key (id 1)."""
        return cls({1: os.urandom(KEY_BYTES)})

    @property
    def current_id(self) -> int:
        """The id new frames are sealed with (the highest)."""
        return max(self.keys)

    def derive(self, purpose: str, key_id: int | None = None) -> bytes:
        """A 32-byte key for ``purpose`` derived (HKDF-SHA256) from key ``key_id``.

        Files kept beside the substrate (snapshots, indexes, the head anchor) are sealed
        with derived keys, never with the frame key itself, so one key serves many uses
        without its ciphertexts being interchangeable. ``key_id`` defaults to the
        current key; store it with what you seal so a rotation keeps it readable.

        Raises:
            KeyError: ``key_id`` is not in the ring. ValueError: ``purpose`` is empty.
        """
        if not purpose:
            raise ValueError("a derived key needs a non-empty purpose")
        kid = self.current_id if key_id is None else key_id
        if kid not in self.keys:
            raise KeyError(f"key id {kid} is not in the key ring (ids {sorted(self.keys)})")
        return HKDF(
            algorithm=hashes.SHA256(), length=KEY_BYTES, salt=None,
            info=b"solace/" + purpose.encode("utf-8"),
        ).derive(self.keys[kid])

    def with_new_key(self, key: bytes | None = None) -> KeyRing:
        """Return a ring with ``key`` (default: fresh random) added as the new current key."""
        new = dict(self.keys)
        new[self.current_id + 1] = os.urandom(KEY_BYTES) if key is None else key
        return KeyRing(new)


def parse_key(text: str) -> bytes:
    """Decode one key written as 64 hex digits or base64 (standard or URL-safe) of 32 bytes.

    Raises:
        ValueError: the text is neither (the message never echoes the text).
    """
    text = text.strip()
    if len(text) == 2 * KEY_BYTES:
        try:
            return bytes.fromhex(text)
        except ValueError:
            pass
    for altchars in (None, b"-_"):
        try:
            raw = base64.b64decode(text.encode("ascii"), altchars=altchars, validate=True)
        except (binascii.Error, UnicodeEncodeError):
            continue
        if len(raw) == KEY_BYTES:
            return raw
    raise ValueError(f"a key must be {2 * KEY_BYTES} hex digits or base64 of {KEY_BYTES} bytes")


def parse_ring(text: str) -> KeyRing:
    """Parse the key ring text format (see module docstring).

    Raises:
        ValueError: a line is malformed or an id repeats (the message gives the entry
            number, never key material).
    """
    lines = [ln for ln in text.splitlines() if not ln.lstrip().startswith("#")]
    entries = " ".join(lines).replace(",", " ").split()
    if len(entries) == 1 and ":" not in entries[0]:
        return KeyRing.single(parse_key(entries[0]))
    keys: dict[int, bytes] = {}
    for n, entry in enumerate(entries, 1):
        m = _ENTRY.match(entry)
        if m is None:
            raise ValueError(f"key ring entry {n} is not 'id:key'")
        kid = int(m.group(1))
        if kid in keys:
            raise ValueError(f"key ring entry {n} repeats key id {kid}")
        try:
            keys[kid] = parse_key(m.group(2))
        except ValueError as exc:
            raise ValueError(f"key ring entry {n} (id {kid}): {exc}") from None
    return KeyRing(keys)


def format_ring(ring: KeyRing) -> str:
    """Return the key file text for ``ring`` (ids ascending, hex keys)."""
    lines = [
        "# Solace substrate key ring: id:hex-key, one per line; the highest id is current.",
        "# Keep this file secret and backed up: without it the substrate cannot be read.",
    ]
    lines += [f"{kid}:{ring.keys[kid].hex()}" for kid in sorted(ring.keys)]
    return "\n".join(lines) + "\n"


class NoncePool:
    """Random 96-bit AES-GCM nonces from ``os.urandom``, drawn 256 at a time.

    Each nonce is fresh CSPRNG output, exactly as ``os.urandom(12)`` per frame would be;
    buffering only saves system calls. A forked child empties every pool, so it never
    reuses nonces its parent buffered. Not thread-safe: the substrate calls it under its
    lock.
    """

    __slots__ = ("__weakref__", "_buf", "_pos")
    _BATCH = 256

    def __init__(self) -> None:
        self._buf = b""
        self._pos = 0
        _POOLS.add(self)

    def take(self) -> bytes:
        """One fresh nonce."""
        pos = self._pos
        if pos >= len(self._buf):
            self._buf, pos = os.urandom(NONCE_BYTES * self._BATCH), 0
        self._pos = pos + NONCE_BYTES
        return self._buf[pos : pos + NONCE_BYTES]

    def empty(self) -> None:
        """Forget buffered nonces."""
        self._buf, self._pos = b"", 0


_POOLS: weakref.WeakSet[NoncePool] = weakref.WeakSet()


def _empty_pools_after_fork() -> None:
    for pool in list(_POOLS):
        pool.empty()


os.register_at_fork(after_in_child=_empty_pools_after_fork)


class Cipher:
    """Pre-built AES-256-GCM objects for every key of a ring.

    Not a security boundary by itself: callers choose a fresh random 96-bit nonce per
    frame (``os.urandom``), never one derived from entry ids.
    """

    __slots__ = ("_aeads", "current", "current_id", "native", "ring")

    def __init__(self, ring: KeyRing) -> None:
        self.ring = ring
        self._aeads = {kid: AESGCM(key) for kid, key in ring.keys.items()}
        self.current_id = ring.current_id
        self.current = self._aeads[self.current_id]
        #: The compiled sealer for the current key (``substrate/_native.c``), or None
        #: when it was not built.
        self.native = None if Sealer is None else Sealer(ring.keys[self.current_id],
                                                         self.current_id)

    def aead(self, key_id: int) -> AESGCM | None:
        """The AEAD for ``key_id``, or None if that id is not in the ring."""
        return self._aeads.get(key_id)
