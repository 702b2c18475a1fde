"""The memory record: one agent's view of one or more substrate events.

A record is what fades. It carries the form it has at its current rung, the
bookkeeping the fade score reads, and ``entry_ids`` — the substrate events it
stands for (the seed's ``originalEntryId``), kept at every rung so that the raw
text is always one read away, however far the record has faded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np

__all__ = ["RUNG_NAMES", "Hit", "MemoryRecord", "ScoreParts", "Tier"]

Tier = Literal["working", "longterm"]

RUNG_NAMES = ("raw", "extractive", "abstractive", "embedding+tags")


@dataclass(slots=True, eq=False)
class MemoryRecord:
    """One agent's record. Mutable: fading rewrites ``rung``, ``text`` and ``tokens``.

    Invariants: ``entry_ids`` is non-empty and ascending and only ever grows (a
    merge keeps every id of the records it merges); working records have rung
    0–2, long-term records rung 1–3; ``tokens`` counts ``text`` with the runtime
    tokenizer; ``source_tokens`` counts the raw events the record stands for.
    """

    record_id: int
    agent: str
    rung: int
    text: str
    tokens: int
    source_tokens: int
    entry_ids: tuple[int, ...]
    kind: str = "message"
    speakers: tuple[str, ...] = ()
    first_event_ts: float = 0.0
    event_ts: float = 0.0  # the newest event it stands for
    created: float = 0.0  # entered its tier, or was given fresh fade tracking
    last_referenced: float = 0.0
    references: int = 0
    emotional_weight: float = 0.0  # 0..1, set by the Mood advisor or the caller
    tags: tuple[str, ...] = ()
    private: bool = False  # a draft: never visible to another agent's recall
    embedding: np.ndarray | None = field(default=None, repr=False)  # float32, L2-normalised

    @property
    def original_entry_id(self) -> int:
        """The first substrate event this record stands for."""
        return self.entry_ids[0]


@dataclass(frozen=True, slots=True)
class ScoreParts:
    """The composite retrieval score and its parts (each already weighted)."""

    relevance: float = 0.0
    lexical: float = 0.0
    recency: float = 0.0
    emotion: float = 0.0
    tags: float = 0.0

    @property
    def total(self) -> float:
        return self.relevance + self.lexical + self.recency + self.emotion + self.tags


@dataclass(frozen=True, slots=True)
class Hit:
    """One retrieval result, in the form it would be injected into a prompt.

    ``agent`` is the agent that asked; ``owner`` is the agent whose memory the hit
    came from when that is another agent (read-through, with attribution), else
    ``None``. ``text`` is the injected form: a rung-3 hit is rehydrated from the
    substrate, so its text and ``tokens`` are those of the rehydrated form.
    """

    record_id: int
    agent: str
    tier: Tier
    rung: int
    text: str
    tokens: int
    entry_ids: tuple[int, ...]
    score: float
    parts: ScoreParts
    owner: str | None = None
