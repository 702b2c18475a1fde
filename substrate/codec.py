"""Seal events into frames and open frames back into events (sans-IO, no files).

``seal`` = XML record → msgpack header → AES-256-GCM (header as associated data) →
checksummed frame + chain hash. ``open_frame`` reverses it and checks every layer,
raising a precise error that names the segment file and entry id. It never returns an
event whose bytes did not authenticate.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from cryptography.exceptions import InvalidTag

from .crypto import Cipher
from .errors import CorruptFrameError, MissingKeyError, WrongKeyError
from .event import Event
from .frame import (
    Damage,
    FrameHeader,
    build_frame,
    check_frame,
    pack_header,
    split_body,
    unpack_header,
)
from .xmlcodec import decode_event, decode_events, encode_event

__all__ = [
    "RESTORE_HINT",
    "check_agrees",
    "decode_checked",
    "decrypt",
    "open_frame",
    "open_frames",
    "open_sealed",
    "seal",
    "unseal",
]

RESTORE_HINT = "restore the segment file from a backup, or run `solace substrate verify`"


def seal(
    cipher: Cipher,
    entry_id: int,
    ts: float,
    agent: str,
    kind: str,
    content: str,
    attrs: Mapping[str, str] | None,
    prev_hash: bytes,
    nonce: bytes,
    *,
    compiled: bool = True,
) -> tuple[bytes, bytes]:
    """Return ``(frame bytes, frame hash)`` for one event, sealed with the current key.

    In one compiled call when ``substrate._native`` was built, ``compiled`` is true and
    the event is on its common path (exact str fields, a dict of attrs, characters XML
    can carry); else in Python, which gives the same bytes (the compiled path's tests
    compare the two) and raises the error that names a bad field.

    Raises:
        InvalidEventError: a field cannot be stored (see :func:`encode_event`).
    """
    native = cipher.native if compiled else None
    if native is not None:
        sealed: tuple[bytes, bytes] | None = native.seal(
            entry_id, ts, agent, kind, content, attrs, prev_hash, nonce)
        if sealed is not None:
            return sealed
    xml = encode_event(entry_id, ts, agent, kind, content, attrs)
    header = pack_header(entry_id, float(ts), agent, kind, cipher.current_id, nonce, prev_hash)
    return build_frame(header, cipher.current.encrypt(nonce, xml, header))


def _where(segment: str | os.PathLike[str], offset: int) -> str:
    return f"{segment} offset {offset}"


def unseal(
    cipher: Cipher,
    header: bytes,
    ciphertext: bytes,
    *,
    segment: str | os.PathLike[str],
    offset: int,
    expect_id: int | None = None,
) -> tuple[FrameHeader, bytes]:
    """Authenticate and decrypt one frame's header and ciphertext; return the XML record.

    Args:
        segment, offset: Where the frame is (its segment file path), for error messages.
        expect_id: If given, the header must carry this entry id.

    Raises:
        CorruptFrameError: the header is unreadable or holds another entry id.
        MissingKeyError: the frame's key id is not in the ring.
        WrongKeyError: AES-GCM rejects the frame under the key with its id.
    """
    try:
        h = unpack_header(header)
    except CorruptFrameError as exc:
        raise CorruptFrameError(f"{_where(segment, offset)}: {exc}; {RESTORE_HINT}") from None
    if expect_id is not None and h.entry_id != expect_id:
        raise CorruptFrameError(
            f"{_where(segment, offset)} holds entry {h.entry_id} where entry {expect_id} was "
            f"indexed; the file changed after it was opened. {RESTORE_HINT}"
        )
    return h, decrypt(cipher, h, header, ciphertext, segment=segment, offset=offset)


def decrypt(
    cipher: Cipher,
    h: FrameHeader,
    header: bytes,
    ciphertext: bytes,
    *,
    segment: str | os.PathLike[str],
    offset: int,
) -> bytes:
    """Decrypt a frame whose header ``header`` was already parsed into ``h``.

    Raises:
        MissingKeyError, WrongKeyError: as :func:`unseal`.
    """
    aead = cipher.aead(h.key_id)
    if aead is None:
        raise MissingKeyError(
            f"entry {h.entry_id} in {_where(segment, offset)} was sealed with key id "
            f"{h.key_id}, which is not in the key ring (ids {sorted(cipher.ring.keys)}); "
            "restore the key file that holds it or add the key to SOLACE_SUBSTRATE_KEY as "
            "'id:hex'"
        )
    try:
        return aead.decrypt(h.nonce, ciphertext, header)
    except InvalidTag:
        raise WrongKeyError(
            f"entry {h.entry_id} in {_where(segment, offset)}: AES-GCM authentication failed "
            f"under key id {h.key_id} although the checksum is fine, so the key with that id "
            "is not the one that wrote it (or the frame was re-checksummed after tampering); "
            "check SOLACE_SUBSTRATE_KEY / the key file"
        ) from None


def check_agrees(
    h: FrameHeader, event: Event, segment: str | os.PathLike[str], offset: int
) -> Event:
    """Return ``event`` if its XML fields match its frame header, else raise CorruptFrameError."""
    if (event.entry_id, event.ts, event.agent, event.kind) != (h.entry_id, h.ts, h.agent, h.kind):
        raise CorruptFrameError(
            f"entry {h.entry_id} in {_where(segment, offset)}: the XML record disagrees with "
            f"the frame header. {RESTORE_HINT}"
        )
    return event


def open_sealed(
    cipher: Cipher,
    header: bytes,
    ciphertext: bytes,
    *,
    segment: str | os.PathLike[str],
    offset: int,
    expect_id: int | None = None,
) -> tuple[FrameHeader, Event]:
    """:func:`unseal`, then parse the XML and check it agrees with the header.

    Raises:
        CorruptFrameError, MissingKeyError, WrongKeyError: see :func:`unseal`; also
            CorruptFrameError for XML that breaks the schema.
    """
    h, xml = unseal(cipher, header, ciphertext, segment=segment, offset=offset,
                    expect_id=expect_id)
    try:
        event = decode_event(xml)
    except CorruptFrameError as exc:
        raise CorruptFrameError(f"entry {h.entry_id} in {_where(segment, offset)}: {exc}") from None
    return h, check_agrees(h, event, segment, offset)


def _checked_body(
    frame: bytes | memoryview, segment: str | os.PathLike[str], offset: int, entry_id: int
) -> tuple[bytes, bytes]:
    size = check_frame(frame, 0, len(frame))
    if isinstance(size, Damage) or size != len(frame):
        why = size.value if isinstance(size, Damage) else "the length field changed"
        raise CorruptFrameError(
            f"entry {entry_id} in {_where(segment, offset)} is damaged: {why}; {RESTORE_HINT}"
        )
    return split_body(frame, 0, size)


def open_frame(
    cipher: Cipher, frame: bytes, *, segment: str | os.PathLike[str], offset: int, entry_id: int
) -> Event:
    """Check and open one whole frame (as read from disk) that should hold ``entry_id``.

    Raises:
        CorruptFrameError, MissingKeyError, WrongKeyError: see :func:`open_sealed`.
    """
    header, ciphertext = _checked_body(frame, segment, offset, entry_id)
    return open_sealed(
        cipher, header, ciphertext, segment=segment, offset=offset, expect_id=entry_id
    )[1]


def open_frames(
    cipher: Cipher, frames: Sequence[tuple[bytes | memoryview, str | os.PathLike[str], int, int]]
) -> list[Event]:
    """:func:`open_frame` for many ``(frame, segment, offset, entry_id)``, one XML parse.

    Raises:
        As :func:`open_frame`, for the first bad frame.
    """
    headers, records = [], []
    for frame, segment, offset, entry_id in frames:
        header, ciphertext = _checked_body(frame, segment, offset, entry_id)
        h, xml = unseal(cipher, header, ciphertext, segment=segment, offset=offset,
                        expect_id=entry_id)
        headers.append(h)
        records.append(xml)
    places = [(segment, offset) for _, segment, offset, _ in frames]
    return decode_checked(headers, records, places)


def decode_checked(
    headers: Sequence[FrameHeader],
    records: Sequence[bytes],
    places: Sequence[tuple[str | os.PathLike[str], int]],
) -> list[Event]:
    """Parse decrypted XML records (one lxml parse) and check each against its header.

    Raises:
        CorruptFrameError: a record breaks the schema or disagrees with its header (the
            message names its segment, offset and entry id).
    """
    try:
        events = decode_events(records)
    except CorruptFrameError:
        for (segment, offset), h, xml in zip(places, headers, records, strict=True):
            try:
                decode_event(xml)
            except CorruptFrameError as exc:
                raise CorruptFrameError(
                    f"entry {h.entry_id} in {_where(segment, offset)}: {exc}"
                ) from None
        raise  # pragma: no cover - decode_events fails only if one record does
    return [
        check_agrees(h, event, segment, offset)
        for (segment, offset), h, event in zip(places, headers, events, strict=True)
    ]
