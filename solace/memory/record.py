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

__all__ = ["RUNG_NAMES", "TIER_RUNGS", "Hit", "MemoryRecord", "ScoreParts", "Tier", "check_record"]

Tier = Literal["working", "longterm"]

RUNG_NAMES = ("raw", "extractive", "abstractive", "embedding+tags")

# Working holds rungs 0-2, long-term rungs 1-3 (seed 002, "Why the fade is gradual").
TIER_RUNGS: dict[str, tuple[int, ...]] = {"working": (0, 1, 2), "longterm": (1, 2, 3)}


@dataclass(slots=True, eq=False)
class MemoryRecord:
    """One agent's record. Mutable: fading rewrites ``rung``, ``text`` and ``tokens``.

    Invariants: ``entry_ids`` is non-empty and ascending and only ever grows (a
    merge keeps every id of the records it merges); working records have rung
    0–2, long-term records rung 1–3; ``tokens`` counts ``text`` with the runtime
    tokenizer; ``source_tokens`` counts the raw events the record stands for. A
    record with a ``span`` is one chunk of a large event (see
    :mod:`~solace.memory.chunks`): its ``entry_ids`` is that one event, it never
    merges, and its raw form is the event's content within the span.
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
    # A chunk of one large event: (start, end) offsets into the event's content; the
    # record stands for that part only. Empty: the record stands for whole events.
    span: tuple[int, int] | tuple[()] = ()
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
    context: float = 0.0

    @property
    def total(self) -> float:
        return self.relevance + self.lexical + self.recency + self.emotion + self.tags \
            + self.context


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

    @property
    def event(self) -> int | None:
        """The one event it stands for, or None when it stands for several (its entry
        ids ascend, as its record's do)."""
        ids = self.entry_ids
        return ids[0] if ids and ids[0] == ids[-1] else None


def check_record(record: MemoryRecord, *, tier: Tier, dim: int) -> None:
    """Refuse a record its tier cannot hold: a rung outside the tier, or a bad embedding.

    Raises:
        ValueError: naming the record, the bad rung or the embedding's shape.
    """
    rungs = TIER_RUNGS[tier]
    if record.rung not in rungs:
        name = "long-term" if tier == "longterm" else tier
        raise ValueError(
            f"record {record.record_id} has rung {record.rung!r}; "
            f"{name} holds rungs {rungs[0]}-{rungs[-1]}"
        )
    emb = record.embedding
    if emb is None or emb.shape != (dim,):
        shape = None if emb is None else emb.shape
        raise ValueError(
            f"record {record.record_id} needs an embedding of shape ({dim},), got {shape}"
        )
