"""The substrate's errors: one flat set, each raised for one kind of problem.

Every message names what went wrong, where (directory, segment file, entry id) and what
to do about it. Bad arguments are plain ``ValueError``/``TypeError`` (or
:class:`InvalidEventError`, which is a ``ValueError``).
"""

from __future__ import annotations

__all__ = [
    "AnchorMismatchError",
    "ChainBrokenError",
    "CorruptFrameError",
    "InvalidEventError",
    "MissingKeyError",
    "SubstrateError",
    "SubstrateLockedError",
    "UnknownEntryError",
    "WrongKeyError",
]


class SubstrateError(Exception):
    """Base class of every error the substrate raises on purpose."""


class InvalidEventError(SubstrateError, ValueError):
    """Raised by append when a field cannot be stored (unknown kind, XML-illegal char, bad ts)."""


class UnknownEntryError(SubstrateError, KeyError):
    """Raised by get() for an entry id that was never written."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


class CorruptFrameError(SubstrateError):
    """Raised when a frame's checksum, length or layout is wrong: bytes changed on disk."""


class ChainBrokenError(SubstrateError):
    """Raised when frames do not link: reordered, removed, or a segment file is missing."""


class AnchorMismatchError(ChainBrokenError):
    """Raised on open when the log ends before, or does not contain, the head its anchor
    records (events lost at the end), or the anchor file fails authentication."""


class WrongKeyError(SubstrateError):
    """Raised when a frame's checksum is fine but AES-GCM rejects it under its key id."""


class MissingKeyError(SubstrateError):
    """Raised when no key is configured, or a frame's key id is not in the key ring."""


class SubstrateLockedError(SubstrateError):
    """Raised by open_substrate when another open substrate holds the directory's lock."""
