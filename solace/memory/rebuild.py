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

import functools
import json
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal, Protocol

import numpy as np

from solace.memory.chunks import (
    RECENT_SPLITS,
    SPLIT_ABOVE_TOKENS,
    Chunk,
    chunk_record_id,
    is_chunk_id,
    split_rung0,
)
from solace.memory.ladder import EmbeddingSource, format_raw, mean_embedding
from solace.memory.longterm import LongTermTier, open_longterm_store
from solace.memory.record import MemoryRecord
from solace.memory.record_codec import record_from_attrs, record_to_attrs
from solace.memory.references import TOUCH_OP, Reference, parse_touch_attrs
from solace.memory.snapshot import Snapshot, SnapshotError, read_snapshot

if TYPE_CHECKING:
    from solace.memory.agent_memory import AgentMemory

__all__ = [
    "EXTRA_ID_BASE",
    "FADE_KIND",
    "FadeOp",
    "Perceiver",
    "Perception",
    "REPLAY_SLACK",
    "ReplayState",
    "Restored",
    "fade_attrs",
    "parse_fade_event",
    "restore",
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
        self.entries: dict[int, int] = {}  # entry id -> record id
        self.next_extra_id = EXTRA_ID_BASE
        self.applied = 0

    def seed(self, records: Iterable[MemoryRecord], tier: TierName) -> None:
        """Add records that already carry their embeddings (from a snapshot)."""
        for record in records:
            self._put(record, tier)
            vector = record.embedding
            self.recipe_of[record.record_id] = vector if vector is not None else record.text

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

    def _put(self, record: MemoryRecord, tier: TierName) -> None:
        rid = record.record_id
        self.records[rid] = record
        self.tier[rid] = tier
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

#: On load, perceived events are replayed from this many entries before the
#: snapshot's ``covered_id``: an event appended just before a snapshot may have been
#: ingested just after it (append and ingest are two awaits). Already-known entries
#: are skipped, so the overlap costs a few reads, never a duplicate.
REPLAY_SLACK = 1024


@dataclass(slots=True)
class Restored:
    """An agent's tiers as read back: what :func:`restore` hands to ``AgentMemory.open``.

    Attributes:
        working: working records, with embeddings.
        longterm: the long-term tier, ready.
        entries: entry id -> record id, for every entry the agent ever ingested.
        next_extra_id: first free id for ``next_record_id``.
        counters: the fade counters of the snapshot ({} after a full rebuild).
        source: ``"snapshot"`` (plus replay of the events after it) or ``"rebuild"``.
        reason: why the snapshot was not used (None if it was).
        replayed: events applied on top of the snapshot (or of nothing).
    """

    working: list[MemoryRecord]
    longterm: LongTermTier
    entries: dict[int, int]
    next_extra_id: int
    counters: dict[str, Any]
    source: Literal["snapshot", "rebuild"]
    reason: str | None
    replayed: int


def _unusable(snap: Snapshot | None, memory: AgentMemory, last_id: int) -> str | None:
    if snap is None:
        return "no snapshot"
    if snap.agent != memory.agent:
        return f"snapshot belongs to {snap.agent!r}"
    if snap.embedder != memory.embedder.name or snap.dim != memory.dim:
        return f"snapshot vectors are from {snap.embedder!r} ({snap.dim}-d)"
    if snap.covered_id > last_id:
        return f"snapshot covers entry {snap.covered_id}, the substrate ends at {last_id}"
    return None


async def restore(memory: AgentMemory) -> Restored:
    """Load ``memory``'s snapshot and replay the substrate after it, or rebuild.

    A snapshot that is missing, unreadable, another agent's, from another embedder or
    newer than the substrate is not used: both tiers are rebuilt from the whole
    substrate (fade events, plus perceived events when ``memory.perceive`` is set).
    """
    offload = memory.offloader.run
    snap: Snapshot | None = None
    reason: str | None = None
    try:
        snap = await offload(functools.partial(read_snapshot, memory.directory,
                                               agent=memory.agent, ring=memory.key_ring))
    except SnapshotError as exc:  # a damaged cache: the substrate still has everything
        reason = str(exc)
        log.warning("%s: snapshot refused, rebuilding from the substrate: %s",
                    memory.agent, reason)
    if reason is None:
        reason = _unusable(snap, memory, int(memory.substrate.last_id))
    state = ReplayState(memory.agent)
    if reason is None and snap is not None:
        longterm = await offload(functools.partial(
            LongTermTier.restore, dim=memory.dim, params=memory.longterm.params,
            records=snap.longterm, index=snap.index, record_ids=snap.record_ids,
            labels=snap.labels, next_label=snap.next_label))
        state.seed(snap.working, "working")
        state.seed(longterm.records(), "longterm")
        state.next_extra_id = max(state.next_extra_id, snap.next_extra_id)
        fade_since, perceive_since = snap.covered_id, max(0, snap.covered_id - REPLAY_SLACK)
        counters = snap.counters
    else:
        log.info("%s: rebuilding memory from the substrate (%s)", memory.agent, reason)
        longterm = open_longterm_store(dim=memory.dim, params=memory.longterm.params)
        fade_since = perceive_since = 0
        counters = {}
    if memory.perceive is not None:
        events = await memory.substrate.scan(since_id=perceive_since)
    else:
        events = await memory.substrate.scan(agent=memory.agent, kind=FADE_KIND,
                                             since_id=fade_since)
    replayed = await _replay(memory, state, events, fade_since)
    vectors = await _embed_pending(memory, state)
    working = state.records_of("working", vectors)
    await offload(_sync_longterm, longterm, state.records_of("longterm", vectors))
    return Restored(working, longterm, dict(state.entries), state.next_extra_id, counters,
                    "snapshot" if reason is None else "rebuild", reason, replayed)


async def _replay(memory: AgentMemory, state: ReplayState, events: Sequence[Any],
                  fade_since: int) -> int:
    """Feed ``events`` (id order) to ``state``; return how many changed it."""
    perceived: dict[int, Perception] = {}
    if memory.perceive is not None:
        for event, perception in memory.perceive(events):
            if not state.knows_entry(int(event.entry_id)):
                perceived[int(event.entry_id)] = perception
    by_id = {int(e.entry_id): e for e in events}
    texts = {eid: format_raw(p.speaker or by_id[eid].agent, by_id[eid].content)
             for eid, p in perceived.items()}
    speakers = {eid: p.speaker or by_id[eid].agent for eid, p in perceived.items()}

    def split() -> dict[int, list[Chunk] | None]:
        out: dict[int, list[Chunk] | None] = {}
        for eid, text in texts.items():
            if len(text) <= SPLIT_ABOVE_TOKENS:
                continue
            key = (memory.embedder, memory.tokenizer, speakers[eid], str(by_id[eid].content))
            known = RECENT_SPLITS.get(key)
            if known is not None:
                out[eid] = known[0]
                continue
            chunks = split_rung0(speakers[eid], str(by_id[eid].content), memory.tokenizer)
            out[eid] = chunks
            if chunks is not None:
                RECENT_SPLITS.put(key, chunks)  # the next agent's replay reuses it
        return out

    chunks = await memory.offloader.run(split)
    order = sorted(e for e in texts if chunks.get(e) is None)
    counts = dict(zip(order, await memory.offloader.run(
        memory.tokenizer.count_many, [texts[e] for e in order]), strict=True))
    changed = 0
    for event in sorted(events, key=lambda e: e.entry_id):
        eid = int(event.entry_id)
        if event.kind == FADE_KIND and event.agent == memory.agent:
            if eid <= fade_since:
                continue
            if event.attrs.get("op") == TOUCH_OP:
                state.touch(parse_touch_attrs(eid, event.attrs))
            else:
                state.apply(parse_fade_event(event))
            changed += 1
        elif eid in perceived and not state.knows_entry(eid):
            p = perceived[eid]
            state.ingest_event(rung0_records(
                memory.agent, event, text=texts[eid], tokens=counts.get(eid, 0),
                chunks=chunks.get(eid),
                speaker=speakers[eid], emotional_weight=p.emotional_weight,
                tags=p.tags, private=p.private))
            changed += 1
    return changed


async def _embed_pending(memory: AgentMemory, state: ReplayState) -> dict[str, np.ndarray]:
    texts = state.pending_texts()
    if not texts:
        return {}
    vectors = np.concatenate(await memory.offloader.run_chunks(memory.embedder.embed, texts))
    return {text: np.asarray(v, dtype=np.float32) for text, v in zip(texts, vectors, strict=True)}


def _sync_longterm(tier: LongTermTier, records: list[MemoryRecord]) -> None:
    """Make ``tier`` hold exactly ``records`` (unchanged objects are left alone)."""
    wanted = {r.record_id: r for r in records}
    for record in list(tier.records()):
        if record.record_id not in wanted:
            tier.remove(record.record_id)
    new = []
    for rid, record in wanted.items():
        current = tier.get(rid)
        if current is None:
            new.append(record)
        elif current is not record:
            tier.replace(record)
    tier.add(new)
