"""Opening an agent's tiers: its snapshot, then the substrate after it, in one pass.

:func:`load` reads the snapshot (or decides to rebuild) and says from which entry id
the agent needs the substrate (:attr:`Loaded.since`); :func:`complete` replays those
events (:mod:`solace.memory.rebuild`'s :class:`~solace.memory.rebuild.ReplayState`),
embeds what must be embedded in one batched pass, and hands back the tiers. Between
the two, the substrate is read once for every projection opened together (each
agent's :func:`tier_projection`, the conversation layer, fact memory, the workspace:
:func:`solace.projections.replay`, from the smallest checkpoint of all of them).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from solace.memory.chunks import RECENT_SPLITS, SPLIT_ABOVE_TOKENS, Chunk, split_rung0
from solace.memory.entry_index import EntryIndex
from solace.memory.ladder import format_raw
from solace.memory.longterm import LongTermTier, open_longterm_store
from solace.memory.rebuild import (
    FADE_KIND,
    Perception,
    ReplayState,
    parse_fade_event,
    rung0_records,
)
from solace.memory.record import MemoryRecord
from solace.memory.references import TOUCH_OP, parse_touch_attrs
from solace.memory.snapshot import Snapshot, SnapshotError, read_snapshot
from solace.projections import Batched

if TYPE_CHECKING:
    from solace.memory.agent_memory import AgentMemory

__all__ = ["REPLAY_SLACK", "Loaded", "Restored", "complete", "load", "tier_projection", "wanted"]

log = logging.getLogger(__name__)

#: On load, perceived events are replayed from this many entries before the
#: snapshot's ``covered_id``: an event appended just before a snapshot may have been
#: ingested just after it (append and ingest are two awaits). Already-known entries
#: are skipped, so the overlap costs a few reads, never a duplicate.
REPLAY_SLACK = 1024


@dataclass(slots=True)
class Restored:
    """An agent's tiers as read back: what :func:`complete` hands to ``AgentMemory.finish_opening``.

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
    entries: EntryIndex
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


@dataclass(slots=True)
class Loaded:
    """An agent's snapshot as read (or nothing: a rebuild), awaiting the substrate.

    Attributes:
        state: the tiers as plain data, seeded from the snapshot.
        longterm: the long-term tier restored from the snapshot (empty: a rebuild).
        fade_since: the agent's fade events after this id are not in the snapshot.
        perceive_since: perceived events after this id may be missing from it.
        counters: the snapshot's fade counters ({} for a rebuild).
        reason: why the snapshot was not used (None if it was).
    """

    state: ReplayState
    longterm: LongTermTier
    fade_since: int
    perceive_since: int
    counters: dict[str, Any]
    reason: str | None

    @property
    def since(self) -> int:
        """Entries after this id are the ones :func:`complete` may need."""
        return min(self.fade_since, self.perceive_since)


async def load(memory: AgentMemory) -> Loaded:
    """Read ``memory``'s snapshot, or decide to rebuild.

    A snapshot that is missing, unreadable, another agent's, from another embedder or
    newer than the substrate is not used: both tiers are then rebuilt from the whole
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
            LongTermTier.restore, dim=memory.dim, params=memory.index_params,
            records=snap.longterm, index=snap.index, record_ids=snap.record_ids,
            labels=snap.labels, next_label=snap.next_label))
        state.seed(snap.working, "working")
        state.seed(longterm.records(), "longterm")
        state.next_extra_id = max(state.next_extra_id, snap.next_extra_id)
        fade_since, perceive_since = snap.covered_id, max(0, snap.covered_id - REPLAY_SLACK)
        if memory.perceive is None:
            perceive_since = fade_since  # nothing perceived is replayed
        return Loaded(state, longterm, fade_since, perceive_since, snap.counters, None)
    log.info("%s: rebuilding memory from the substrate (%s)", memory.agent, reason)
    longterm = open_longterm_store(dim=memory.dim, params=memory.index_params)
    return Loaded(state, longterm, 0, 0, {}, reason)


def wanted(memory: AgentMemory, loaded: Loaded, event: Any) -> bool:
    """Whether :func:`complete` needs ``event`` for ``memory`` (a cheap filter over a
    scan shared by every agent)."""
    eid = int(event.entry_id)
    if event.kind == FADE_KIND and event.agent == memory.agent:
        return eid > loaded.fade_since
    return memory.perceive is not None and eid > loaded.perceive_since


async def complete(memory: AgentMemory, loaded: Loaded, events: Sequence[Any]) -> Restored:
    """Replay ``events`` (any superset of what the agent needs, in id order; the rest
    are skipped) on ``loaded``, embed what is pending, and return the tiers."""
    mine = [e for e in events if wanted(memory, loaded, e)]
    state, longterm = loaded.state, loaded.longterm
    replayed = await _replay(memory, state, mine, loaded.fade_since)
    vectors = await _embed_pending(memory, state)
    working = state.records_of("working", vectors)
    await memory.offloader.run(_sync_longterm, longterm, state.records_of("longterm", vectors))
    return Restored(working, longterm, state.entries.copy(), state.next_extra_id,
                    loaded.counters, "snapshot" if loaded.reason is None else "rebuild",
                    loaded.reason, replayed)


def tier_projection(memory: AgentMemory, loaded: Loaded, *,
                    perceived: frozenset[str] | None = None,
                    into: dict[str, Any] | None = None) -> Batched:
    """An agent's tiers as a :class:`~solace.projections.Projection`: its snapshot as
    loaded, the events after it that the agent needs (:func:`wanted`) replayed and
    embedded in one batch when the replay finishes (``AgentMemory.finish_opening``).

    Args:
        memory, loaded: the memory and its snapshot (``AgentMemory.opening``).
        perceived: the kinds its perceiver ingests (None: every kind); its own fade
            events are read either way.
        into: where the opened memory is filed (agent name -> memory).
    """
    kinds: frozenset[str] | None = frozenset({FADE_KIND})
    if memory.perceive is not None:
        kinds = None if perceived is None else perceived | {FADE_KIND}

    async def fold(events: list[Any], head: int) -> None:
        await memory.finish_opening(loaded, events)
        if into is not None:
            into[memory.agent] = memory

    return Batched(f"{memory.agent}'s tiers", kinds, loaded.since, fold,
                   keep=functools.partial(wanted, memory, loaded))


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
