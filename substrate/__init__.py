"""Solace's substrate: the encrypted, append-only, hash-chained event log.

Every memory record points back to an event here (its ``original_entry_id``). Events are
XML records (:mod:`substrate.xmlcodec`), sealed with AES-256-GCM into checksummed,
hash-chained frames (:mod:`substrate.frame`) in segment files, with crash recovery that
cuts only a torn tail (:mod:`substrate.recovery`), an authenticated head anchor that
turns loss at the end of the log into an error (:mod:`substrate.anchor`), and an fsync
policy that says exactly what an acknowledged append survives
(:mod:`substrate.durability`).

This package imports nothing from ``solace``.

Example::

    with open_substrate(home / "substrate", fsync="batch") as sub:
        entry_id = sub.append("Main", "message", "hello", attrs={"dia_id": "D1:3"}, ts=now)
        assert sub.get(entry_id).content == "hello"
"""

from __future__ import annotations

from .crypto import KeyRing as KeyRing
from .durability import FsyncPolicy as FsyncPolicy
from .errors import AnchorMismatchError as AnchorMismatchError
from .errors import ChainBrokenError as ChainBrokenError
from .errors import CorruptFrameError as CorruptFrameError
from .errors import InvalidEventError as InvalidEventError
from .errors import MissingKeyError as MissingKeyError
from .errors import SubstrateError as SubstrateError
from .errors import SubstrateLockedError as SubstrateLockedError
from .errors import UnknownEntryError as UnknownEntryError
from .errors import WrongKeyError as WrongKeyError
from .event import BUILTIN_KINDS as BUILTIN_KINDS
from .event import Event as Event
from .event import NewEvent as NewEvent
from .keys import KeySource as KeySource
from .opener import open_substrate as open_substrate
from .recovery import TornTail as TornTail
from .store import EventItem as EventItem
from .store import Stats as Stats
from .store import Substrate as Substrate
from .verify import VerifyReport as VerifyReport

__all__ = [
    "AnchorMismatchError",
    "BUILTIN_KINDS",
    "ChainBrokenError",
    "CorruptFrameError",
    "Event",
    "EventItem",
    "FsyncPolicy",
    "InvalidEventError",
    "KeyRing",
    "KeySource",
    "MissingKeyError",
    "NewEvent",
    "Stats",
    "Substrate",
    "SubstrateError",
    "SubstrateLockedError",
    "TornTail",
    "UnknownEntryError",
    "VerifyReport",
    "WrongKeyError",
    "open_substrate",
]
