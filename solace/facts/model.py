"""Fact memory's value types: what a fact is, what a write became, what recall found.

Pure data, no I/O. A *memory id* names one memory (a customer, a project, a team);
a *store* names the policy its facts live under (``[stores.NAME]`` in the config).
A fact's text is kept only in the projection (decrypted from its event with the
fact's own data key); everything here is rebuilt from the substrate.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal

__all__ = [
    "MEMORY_ID_RULE",
    "Candidate",
    "Compaction",
    "Exchange",
    "Fact",
    "FactStatus",
    "RecallBlock",
    "ScoredFact",
    "Source",
    "WriteClass",
    "WriteResult",
    "is_memory_id",
]

#: The rule a memory id follows, as the error messages state it.
MEMORY_ID_RULE = "1 to 128 letters, digits, '-' or '_'"
_MEMORY_ID = re.compile(r"[A-Za-z0-9_-]{1,128}\Z")


def is_memory_id(value: object) -> bool:
    """True iff ``value`` is a str following :data:`MEMORY_ID_RULE`."""
    return isinstance(value, str) and _MEMORY_ID.match(value) is not None


class WriteClass(StrEnum):
    """What the read-first-then-classify step made of a write."""

    ADD = "ADD"  # new: no live fact says this or about this
    UPDATE = "UPDATE"  # same subject, newer value: supersedes the old fact
    NOOP = "NOOP"  # a restatement: the existing fact is confirmed, nothing new stored
    CONFLICT = "CONFLICT"  # contradicts a live fact and cannot be ordered: both kept, flagged


class FactStatus(StrEnum):
    """Where a fact stands; only ``LIVE`` and ``CONFLICTING`` facts are recalled."""

    LIVE = "live"
    SUPERSEDED = "superseded"
    CONFLICTING = "conflicting"
    EVICTED = "evicted"


#: How a fact entered: a caller's remember, the extractor after a turn, an import,
#: or an accepted compaction.
Source = Literal["remember", "extract", "import", "compact"]


@dataclass(frozen=True, slots=True)
class Candidate:
    """A fact about to be written, before classification.

    Attributes:
        text: third-person, self-contained ("prefers invoices summarised in French").
        importance: in [0, 1].
        slot: what the fact is about ("residence", "preference:drink"), when the
            extractor knows it; two facts with the same slot and different text are
            the same subject with different values. ``""`` when unknown.
        kind: the extractor's category (``preference``, ``identity``,
            ``relationship``, ``plan``, ``possession``, ``obligation``,
            ``correction``, ...); ``""`` for remembered text.
        correction: the source said this replaces an earlier value ("actually, ...").
    """

    text: str
    importance: float = 0.5
    slot: str = ""
    kind: str = ""
    correction: bool = False


@dataclass(frozen=True, slots=True)
class Exchange:
    """One turn, as the extractor reads it.

    Attributes:
        user: the user's message.
        reply: the assistant's reply ('' if none).
        tool_results: tool outputs of the turn, in order.
        ts: when the turn happened (epoch seconds), to resolve relative dates.
        speaker: how to name the user in third-person facts ('' = "the user").
    """

    user: str
    reply: str = ""
    tool_results: tuple[str, ...] = ()
    ts: float = 0.0
    speaker: str = ""


@dataclass(frozen=True, slots=True)
class Fact:
    """One fact as the projection holds it."""

    fact_id: str
    memory_id: str
    store: str
    text: str
    importance: float
    status: FactStatus
    created: float  # when it was first written (event ts)
    last_confirmed: float  # created, or the latest NOOP that restated it
    mentions: int  # 1 + the NOOPs that restated it
    source: Source
    write_class: WriteClass
    reason: str
    slot: str = ""
    superseded_by: str = ""
    conflicts_with: tuple[str, ...] = ()
    entry_id: int = 0  # the substrate entry that wrote it

    @property
    def recallable(self) -> bool:
        """Live and conflicting facts are recalled; the others are history."""
        return self.status in (FactStatus.LIVE, FactStatus.CONFLICTING)


@dataclass(frozen=True, slots=True)
class WriteResult:
    """What one write did: its class, the reason, and the fact it names.

    ``fact`` is the new fact for ADD, UPDATE and CONFLICT, and the confirmed
    existing fact for NOOP. ``affected`` lists the other facts it touched (the
    superseded one, the one it conflicts with).
    """

    write_class: WriteClass
    reason: str
    fact: Fact
    affected: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ScoredFact:
    """A recalled fact with its score parts (similarity, decay, final)."""

    fact: Fact
    similarity: float
    decay: float
    score: float


@dataclass(frozen=True, slots=True)
class RecallBlock:
    """What recall puts in front of the model: the facts and their rendered block."""

    memory_id: str
    store: str
    facts: tuple[ScoredFact, ...]
    text: str  # '' when nothing cleared min_score
    tokens: int


@dataclass(frozen=True, slots=True)
class Compaction:
    """A compactor's verdict on one proposal.

    ``accepted`` with ``outputs`` (the new entries) or refused with ``reason`` (one of
    ``unparsable``, ``empty``, ``not_smaller``, ``lost_salient``) and ``detail``.
    """

    accepted: bool
    outputs: tuple[str, ...] = ()
    reason: str = ""
    detail: str = ""
    tokens_before: int = 0
    tokens_after: int = 0
    lost: tuple[str, ...] = field(default=())
