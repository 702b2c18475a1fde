"""Rebuilding an agent's tiers from the substrate: fade events and perceived events.

The substrate is the truth; the tiers are a projection of two kinds of events in it:

* **perceived events** — every event the agent ingested became a rung-0 record whose
  id is the event's entry id. Which events an agent ingests is not written down
  again: it is decided by a pure function of the events (the runtime's routing), which
  the caller passes as ``perceive``; replaying it makes the same rung-0 records.
* **fade events** (kind ``"fade"``, author = the agent) — written by the fade
  pipeline *before* it changes a tier, one per resulting record. Each is
  self-contained: content = the record's new text, attrs = everything else (below).
  Replaying one removes its ``sources`` from wherever they are and puts the record in
  its ``tier``.

Fade event attrs (all strings): ``op`` (``demote`` one rung, ``to_longterm`` the
working → long-term move, ``add`` a record entering working: a used cue, warm-up,
``add_record``), ``tier``, ``record_id``, ``rung``, ``sources`` and ``entry_ids``
(JSON lists), ``tokens``, ``source_tokens``, ``kind``, ``speakers`` and ``tags``
(JSON), ``emotional_weight``, ``created``, ``last_referenced``, ``references``,
``first_event_ts``, ``event_ts``, ``private`` (``"1"``/``"0"``) and ``embedding``:
``kept`` (the vector of the record it replaces), ``mean`` (the ladder's
``mean_embedding`` of its sources' vectors — a merge) or ``text`` (the embedding of
this event's content).

Vectors are not stored in events; the replay tracks, for each record, how to make
its vector — one it already has (from a snapshot), the text whose embedding it is,
or a weighted mean of such — and the caller embeds all pending texts in one
batched, offloaded pass. Reference tracking rides in ``touch`` fade events (see
:mod:`~solace.memory.references`), written before the fade events that follow them.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal, Protocol

import numpy as np

from solace.memory.chunks import (
    Chunk,
    chunk_record_id,
    is_chunk_id,
)
from solace.memory.entry_index import EntryIndex
from solace.memory.ladder import EmbeddingSource, mean_embedding
from solace.memory.record import MemoryRecord
from solace.memory.record_codec import record_from_attrs, record_to_attrs
from solace.memory.references import Reference

if TYPE_CHECKING:
    pass

__all__ = [
    "EXTRA_ID_BASE",
    "FADE_KIND",
    "FadeOp",
    "Perceiver",
    "Perception",
    "ReplayState",
    "fade_attrs",
    "parse_fade_event",
    "rung0_record",
    "rung0_records",
]

log = logging.getLogger(__name__)

FADE_KIND = "fade"
#: Record ids below this are entry ids (of the event a rung-0 record was ingested
#: from, or the smallest one of a merge); ids handed out by ``next_record_id`` start
#: here, so they never collide with an entry id.
EXTRA_ID_BASE = 1 << 40

FadeOp = Literal["demote", "to_longterm", "add"]
TierName = Literal["working", "longterm"]
_OPS = ("demote", "to_longterm", "add")


class Perception(Protocol):
    """One agent's reading of one event: the arguments of ``AgentMemory.ingest``."""

    @property
    def speaker(self) -> str: ...

    @property
    def emotional_weight(self) -> float: ...

    @property
    def tags(self) -> tuple[str, ...]: ...

    @property
    def private(self) -> bool: ...


#: ``perceive(events) -> (event, perception)`` pairs for the events this agent ingests,
#: in any order; a pure function of the events (the runtime's routing, with its
#: ``mood`` annotations read from the same batch).
Perceiver = Callable[[Sequence[Any]], Iterable[tuple[Any, Perception]]]


def rung0_record(
    agent: str,
    event: Any,
    *,
    text: str,
    tokens: int,
    speaker: str,
    emotional_weight: float,
    tags: Sequence[str],
    private: bool,
    embedding: np.ndarray | None = None,
    record_id: int | None = None,
    span: tuple[int, int] | tuple[()] = (),
) -> MemoryRecord:
    """The rung-0 record ``agent`` keeps of ``event`` (live ingest and replay alike).

    Its id is the event's entry id (a chunk's: ``record_id``, see
    :func:`~solace.memory.chunks.chunk_record_id`) and its age counts from the event's
    time, so a replay makes exactly the record the live ingest made.
    """
    return MemoryRecord(
        record_id=int(event.entry_id) if record_id is None else int(record_id),
        agent=agent,
        rung=0,
        text=text,
        tokens=int(tokens),
        source_tokens=int(tokens),
        entry_ids=(int(event.entry_id),),
        kind=str(event.kind),
        speakers=(speaker,),
        first_event_ts=float(event.ts),
        event_ts=float(event.ts),
        created=float(event.ts),
        last_referenced=0.0,
        references=0,
        emotional_weight=float(emotional_weight),
        tags=tuple(tags),
        private=bool(private),
        span=tuple(span),  # type: ignore[arg-type]
        embedding=embedding,
    )


def rung0_records(
    agent: str,
    event: Any,
    *,
    text: str,
    tokens: int,
    chunks: Sequence[Chunk] | None,
    speaker: str,
    emotional_weight: float,
    tags: Sequence[str],
    private: bool,
) -> list[MemoryRecord]:
    """Every rung-0 record ``agent`` keeps of ``event``: one, or one per chunk.

    Args:
        text, tokens: the event's whole rung-0 text and its count.
        chunks: :func:`~solace.memory.chunks.split_rung0` of that text (None: one record).

    Returns:
        The records without embeddings, in content order; each cites the event alone.
    """
    if chunks is None:
        return [rung0_record(agent, event, text=text, tokens=tokens, speaker=speaker,
                             emotional_weight=emotional_weight, tags=tags, private=private)]
    eid = int(event.entry_id)
    return [rung0_record(agent, event, text=c.text, tokens=c.tokens, speaker=speaker,
                         emotional_weight=emotional_weight, tags=tags, private=private,
                         record_id=chunk_record_id(eid, i), span=c.span)
            for i, c in enumerate(chunks)]


def fade_attrs(
    op: FadeOp,
    record: MemoryRecord,
    *,
    tier: TierName,
    sources: Sequence[int],
    embedding: EmbeddingSource,
) -> dict[str, str]:
    """The attrs of the fade event describing ``record`` (its text is the content)."""
    return {
        "op": op,
        "tier": tier,
        "sources": json.dumps([int(s) for s in sources]),
        **record_to_attrs(record),
        "embedding": embedding,
    }


@dataclass(frozen=True, slots=True)
class FadeChange:
    """A parsed fade event."""

    entry_id: int
    op: FadeOp
    tier: TierName
    sources: tuple[int, ...]
    record: MemoryRecord  # embedding None
    embedding: EmbeddingSource


def parse_fade_event(event: Any) -> FadeChange:
    """Read a fade event back.

    Raises:
        ValueError: the event is not a well-formed fade event; names its entry id.
    """
    attrs: Mapping[str, str] = event.attrs
    try:
        op = attrs["op"]
        tier = attrs["tier"]
        if op not in _OPS or tier not in ("working", "longterm"):
            raise ValueError(f"op {op!r} / tier {tier!r}")
        mode = attrs["embedding"]
        if mode not in ("kept", "mean", "text"):
            raise ValueError(f"embedding {mode!r}")
        record = record_from_attrs(str(event.agent), str(event.content), attrs)
        sources = tuple(int(s) for s in json.loads(attrs["sources"]))
    except (KeyError, ValueError, TypeError) as exc:
        raise ValueError(f"fade event {event.entry_id} is malformed: {exc!r}") from exc
    return FadeChange(int(event.entry_id), op, tier, sources, record, mode)  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class _Mean:
    """A merge's vector still to compute: (weight, recipe) per source, in id order."""

    parts: tuple[tuple[float, _Recipe], ...]


#: How the replay will get a record's vector: the vector itself, the text to embed,
#: or a weighted mean of other recipes.
_Recipe = np.ndarray | str | _Mean


class ReplayState:
    """Both tiers of one agent as plain data, advanced event by event.

    Start empty (a full rebuild) or from a snapshot's records (:meth:`seed`), feed
    events in entry-id order (:meth:`ingest`, :meth:`apply`), then embed
    :meth:`pending_texts` and read :meth:`records_of`.
    """

    def __init__(self, agent: str) -> None:
        self.agent = agent
        self.tier: dict[int, TierName] = {}
        self.records: dict[int, MemoryRecord] = {}
        self.recipe_of: dict[int, _Recipe] = {}  # record id -> how to make its vector
        self.entries = EntryIndex()  # entry id -> record id
        self.next_extra_id = EXTRA_ID_BASE
        self.applied = 0

    def seed(self, records: Iterable[MemoryRecord], tier: TierName) -> None:
        """Add records that already carry their embeddings (from a snapshot)."""
        entries: list[int] = []
        owners: list[int] = []
        for record in records:
            self._put(record, tier, index=False)
            entries.extend(record.entry_ids)
            owners.extend([record.record_id] * len(record.entry_ids))
            vector = record.embedding
            self.recipe_of[record.record_id] = vector if vector is not None else record.text
        self.entries.set_many(entries, owners)  # in one go: a restart seeds millions

    def knows_entry(self, entry_id: int) -> bool:
        """Whether some record already stands for ``entry_id``."""
        return entry_id in self.entries

    def ingest(self, record: MemoryRecord) -> None:
        """Add a rung-0 record made by :func:`rung0_record` (embedding of its text)."""
        self.ingest_event([record])

    def ingest_event(self, records: Sequence[MemoryRecord]) -> None:
        """Add the rung-0 records of one event (:func:`rung0_records`: one, or its
        chunks), unless a record already stands for the event."""
        if not records or records[0].entry_ids[0] in self.entries:
            return
        for record in records:
            self._put(replace(record, embedding=None), "working")
            self.recipe_of[record.record_id] = record.text

    def apply(self, change: FadeChange) -> None:
        """Apply one fade event: drop its sources (and the record's old self), put the
        record in its tier."""
        rid = change.record.record_id
        recipe: _Recipe | None = None
        if change.embedding == "kept":
            recipe = self.recipe_of.get(rid)
            if recipe is None and change.sources:
                recipe = self.recipe_of.get(change.sources[0])
        elif change.embedding == "mean":
            sources = sorted(change.sources)
            if sources and all(s in self.recipe_of for s in sources):
                recipe = _Mean(tuple((float(self.records[s].source_tokens), self.recipe_of[s])
                                     for s in sources))
        for old in {*change.sources, rid}:
            self._drop(old)
        self._put(change.record, change.tier)
        # "text", or a source unknown here (nothing to keep or average): embed this text
        self.recipe_of[rid] = recipe if recipe is not None else change.record.text
        self.applied += 1

    def touch(self, references: Mapping[int, Reference]) -> None:
        """Apply one touch event: the references its records got (gone ones: none)."""
        for rid, ref in references.items():
            record = self.records.get(rid)
            if record is not None:
                record.references += ref.count
                record.last_referenced = ref.last
        self.applied += 1

    def pending_texts(self) -> list[str]:
        """The distinct texts whose embeddings :meth:`records_of` needs."""
        texts: dict[str, None] = {}
        stack = list(self.recipe_of.values())
        while stack:
            recipe = stack.pop()
            if isinstance(recipe, str):
                texts[recipe] = None
            elif isinstance(recipe, _Mean):
                stack.extend(part for _, part in recipe.parts)
        return list(texts)

    def records_of(self, tier: TierName, vectors: Mapping[str, np.ndarray]) -> list[MemoryRecord]:
        """The records of ``tier``, each with its embedding (``vectors``: text -> vector
        for :meth:`pending_texts`).

        Raises:
            KeyError: a pending text has no vector in ``vectors``.
        """
        out = []
        for rid, record in self.records.items():
            if self.tier[rid] == tier:
                record.embedding = _vector(self.recipe_of[rid], vectors)
                out.append(record)
        return out

    def _put(self, record: MemoryRecord, tier: TierName, *, index: bool = True) -> None:
        rid = record.record_id
        self.records[rid] = record
        self.tier[rid] = tier
        if index:  # else the caller indexes its entries (seed, in one go)
            for entry in record.entry_ids:
                self.entries[entry] = rid
        if rid >= self.next_extra_id and not is_chunk_id(rid):
            self.next_extra_id = rid + 1

    def _drop(self, rid: int) -> None:
        record = self.records.pop(rid, None)
        self.tier.pop(rid, None)
        self.recipe_of.pop(rid, None)
        if record is not None:
            for entry in record.entry_ids:
                if self.entries.get(entry) == rid:
                    del self.entries[entry]


def _vector(recipe: _Recipe, vectors: Mapping[str, np.ndarray]) -> np.ndarray:
    if isinstance(recipe, str):
        return np.asarray(vectors[recipe], dtype=np.float32)
    if isinstance(recipe, _Mean):
        return mean_embedding([_vector(part, vectors) for _, part in recipe.parts],
                              [weight for weight, _ in recipe.parts])
    return np.asarray(recipe, dtype=np.float32)


# ------------------------------------------------------------------ restoring
