"""One agent's memory: its two tiers, its fade coroutine, its snapshots.

:class:`AgentMemory` is what an actor holds. Events come in through :meth:`ingest`
(a rung-0 record per event, embedded off the event loop); the fade coroutine
(:meth:`run`, owned by the actor's nursery) wakes on new records, on a retune and
every ``tick_seconds``, and runs :meth:`fade_step`, which

1. scores every working record at once (:func:`~solace.memory.fade.fade_score`) and
   plans one round (:func:`~solace.memory.fade.plan_round`): the records past their
   rung's threshold, plus — while the tier would stay over budget — the most faded
   of the rest;
2. demotes the rung-0/1 records of the round one rung through the ladder (in a worker
   thread; records of one episode may merge) and moves the rung-2 ones to long-term:
   the record as it is — summary, embedding, tags, entry ids — with fresh ``created``;
3. writes one ``fade`` event per resulting record to the substrate, *then* changes
   the tiers, so a crash between the two loses nothing (the events replay);
4. repeats rounds until no record is due and the tier is within budget;
5. fades long-term summaries older than ``longterm_summary_hours`` to rung 3 (the
   ladder's tag line; the vector is kept).

Nothing is deleted: every entry id ever ingested is in exactly one record of one tier.
The substrate must accept the ``fade`` kind (``extra_kinds=("fade",)``).

Locks: ``_step_lock`` serialises fade steps (planning and compression);
``_lock`` guards the short sections that write events and change tiers, which
snapshots, :meth:`add_record` and :meth:`warm_up` also take — so compression never
holds up a cue re-entering working.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import trio

from solace.clock import Clock
from solace.config import AgentConfig, FadeWeights, MemoryConfig
from solace.memory import restore, snapshot
from solace.memory.chunks import (
    RECENT_SPLITS,
    SPLIT_ABOVE_TOKENS,
    Chunk,
    is_chunk_id,
    record_events,
    split_rung0,
)
from solace.memory.entry_index import EntryIndex
from solace.memory.fade import FadeCounters
from solace.memory.fading import FULL_PAUSE_FIRST, FULL_PAUSE_MAX, Fading, tracking
from solace.memory.ladder import Ladder, format_raw, rehydrate_text
from solace.memory.longterm import IndexParams, open_longterm_store
from solace.memory.rebuild import (
    EXTRA_ID_BASE,
    Perceiver,
    fade_attrs,
    rung0_records,
)
from solace.memory.record import MemoryRecord
from solace.memory.references import PendingReferences
from solace.memory.working import WorkingTier
from solace.models.embedder import Embedder
from solace.models.tokenizer import Tokenizer
from solace.offload import Offloader
from solace.projections import replay
from solace.sealed import StorageFullError
from substrate import KeyRing

__all__ = ["FULL_PAUSE_FIRST", "FULL_PAUSE_MAX", "AgentMemory", "index_params"]

log = logging.getLogger(__name__)

#: How many chunks of a large event one embedding call gets (see ``_embed_chunks``).
CHUNK_EMBED_BATCH = 16

#: Points of working tokens against budget kept for the fade view (``stats``).
FADE_HISTORY = 240


class AgentMemory(Fading):
    """One agent's working and long-term tiers, faded by one coroutine.

    Build it with :meth:`open`. Attributes: ``agent``, ``config`` (current, after
    :meth:`tune`), ``memory_config``, ``working``, ``longterm``, ``ladder``, ``counters``.
    """

    def __init__(self, agent: str, *, config: AgentConfig, memory_config: MemoryConfig,
                 directory: Path, substrate: Any, ladder: Ladder, embedder: Embedder,
                 tokenizer: Tokenizer, offloader: Offloader, clock: Clock, dim: int,
                 perceive: Perceiver | None = None, key_ring: KeyRing | None = None) -> None:
        self.agent = agent
        self.config = config
        self.memory_config = memory_config
        self.directory = Path(directory)
        self.substrate = substrate
        self.ladder = ladder
        self.embedder = embedder
        self.tokenizer = tokenizer
        self.offloader = offloader
        self.clock = clock
        self.perceive = perceive
        self._key_ring = key_ring
        self.dim = dim
        self.working = WorkingTier(config.budget_tokens, dim=dim)
        self.index_params = index_params(memory_config)  # for every long-term store made
        self.longterm = open_longterm_store(dim=dim, params=self.index_params)
        self.counters = FadeCounters()
        self._entries = EntryIndex()  # entry id -> record id standing for it
        self._references = PendingReferences()  # written before the next fade event
        self._next_extra_id = EXTRA_ID_BASE
        self._lt_queue: deque[tuple[float, int]] = deque()  # (created, id) of long-term rung 2
        self._lock = trio.Lock()
        self._step_lock = trio.Lock()
        self._wake = trio.Event()
        self._changed = trio.Event()  # set (and replaced) at each change: next_change()
        self.full_since: float | None = None  # clock time fading paused on a full disk
        # (clock time, working tokens, budget) after each change, newest last
        self.history: deque[tuple[float, int, int]] = deque(maxlen=FADE_HISTORY)
        self.storage_failures = 0  # fade steps that failed on a full disk

    # ------------------------------------------------------------------ opening

    @classmethod
    async def open(cls, agent: str, *, config: AgentConfig, memory_config: MemoryConfig,
                   directory: Path, substrate: Any, ladder: Ladder, embedder: Embedder,
                   tokenizer: Tokenizer, offloader: Offloader, clock: Clock,
                   perceive: Perceiver | None = None,
                   key_ring: KeyRing | None = None) -> AgentMemory:
        """Open ``agent``'s memory: load its snapshot and replay the substrate after it,
        or rebuild both tiers from the substrate if the snapshot is missing, unreadable,
        made by another embedder, or newer than the substrate.

        (:meth:`opening` then :meth:`finish_opening` do the same in two steps, so that
        every projection opened together reads the substrate once:
        :func:`~solace.memory.restore.tier_projection`.)

        Args:
            agent: the agent's name (author of its fade events).
            config, memory_config: the agent's and the shared memory configuration.
            directory: where its snapshots live (created if missing).
            substrate: the trio substrate wrapper; must accept the ``fade`` kind.
            ladder, embedder, tokenizer, offloader, clock: shared runtime parts.
            perceive: which events this agent ingests, with what speaker, weight, tags
                and privacy (see :data:`~solace.memory.rebuild.Perceiver`). Without it,
                rung-0 records not yet faded when the process stopped are restored only
                from a snapshot, not from the substrate.
            key_ring: seals and opens the snapshots (``ring.derive("snapshot")``);
                default ``substrate.key_ring``.

        Guarantees: afterwards every record the agent had at its last snapshot or fade
        event is back, at the same rung, in the same tier, with the references written
        by then (touch events). The directory is 0700 and its files 0600, temporary
        files of an interrupted snapshot are removed, and a snapshot that fails
        authentication is refused (logged as a WARNING naming the file and why) and
        rebuilt. A disk too full to take the new snapshot does not stop the opening
        (logged; the next snapshot tries again).
        """
        memory, loaded = await cls.opening(
            agent, config=config, memory_config=memory_config, directory=directory,
            substrate=substrate, ladder=ladder, embedder=embedder, tokenizer=tokenizer,
            offloader=offloader, clock=clock, perceive=perceive, key_ring=key_ring)
        await replay(substrate, [restore.tier_projection(memory, loaded)])
        return memory

    @classmethod
    async def opening(cls, agent: str, **kwargs: Any) -> tuple[AgentMemory, restore.Loaded]:
        """The first half of :meth:`open` (same arguments): the memory, not usable yet,
        and its snapshot as loaded; it needs the substrate's events after
        ``loaded.since`` (:meth:`finish_opening`)."""
        embedder, offloader = kwargs["embedder"], kwargs["offloader"]
        dim = int(await offloader.run(lambda: embedder.dim))
        memory = cls(agent, dim=dim, **kwargs)
        for stale in await offloader.run(snapshot.prepare, memory.directory):
            log.info("%s: removed %s, left by an interrupted snapshot", agent, stale)
        return memory, await restore.load(memory)

    async def finish_opening(self, loaded: restore.Loaded, events: Sequence[Any]) -> None:
        """The second half of :meth:`open`: replay ``events`` (id order; any superset
        of those after ``loaded.since``: the ones this agent does not need are skipped),
        then snapshot if anything was replayed or rebuilt."""
        restored = await restore.complete(self, loaded, events)
        for record in restored.working:
            self.working.add(record)
        self.longterm = restored.longterm
        self._entries = restored.entries
        self._next_extra_id = restored.next_extra_id
        self.counters = FadeCounters.from_dict(restored.counters)
        self._lt_queue.extend(sorted(
            (r.created, r.record_id) for r in restored.longterm.records() if r.rung == 2))
        if restored.source == "rebuild" or restored.replayed:
            try:
                await self.snapshot()  # the next start need not replay it again
            except StorageFullError as exc:  # a cache: the substrate has everything
                log.warning("%s: opened without a fresh snapshot: %s", self.agent, exc)

    @property
    def key_ring(self) -> KeyRing:
        """The ring snapshots are sealed with: as given to :meth:`open`, else the
        substrate's (read when needed, so a rotation on the substrate is followed)."""
        if self._key_ring is not None:
            return self._key_ring
        ring: KeyRing = self.substrate.key_ring
        return ring

    # --------------------------------------------------------------- ingesting

    async def ingest(self, event: Any, *, speaker: str | None, emotional_weight: float = 0.0,
                     tags: Sequence[str] = (), private: bool = False) -> MemoryRecord:
        """Make the agent's rung-0 record of ``event`` and add it to working.

        The record's text is ``format_raw(speaker or event.agent, event.content)``, its id
        the event's entry id; nothing is written to the substrate (the event is there,
        and ``perceive`` says who ingests it). Wakes the fade coroutine.

        A large event (more than :data:`~solace.memory.chunks.SPLIT_ABOVE_TOKENS`) becomes
        several rung-0 records of bounded size, its chunks, all citing the event (see
        :mod:`~solace.memory.chunks`); the first is returned, all enter working, and the
        fade takes whatever exceeds the budget down the ladder as for any record.

        Raises:
            ValueError: the event was already ingested by this agent, or
                ``emotional_weight`` is outside [0, 1].
        """
        (record,) = await self.ingest_many([event], speakers=[speaker],
                                           emotional_weights=[emotional_weight],
                                           tags=[tuple(tags)], private=[private])
        return record

    async def ingest_many(self, events: Sequence[Any], *, speakers: Sequence[str | None],
                          emotional_weights: Sequence[float] | None = None,
                          tags: Sequence[Sequence[str]] | None = None,
                          private: Sequence[bool] | None = None) -> list[MemoryRecord]:
        """:meth:`ingest` for many events with one embedding call (replays, imports).

        The events are embedded first; then, if working holds more than
        :data:`~solace.memory.fading.BACKLOG_BUDGETS` budgets (the fade has fallen
        behind a fast caller), the fade catches up before the records go in. So a
        caller that never settles still keeps working bounded, and the next batch's
        embedding overlaps the last batch's fade.

        Returns:
            One record per event, in order: its rung-0 record, or its first chunk.

        Raises:
            ValueError: mismatched lengths, an event ingested twice, a weight outside [0, 1].
        """
        n = len(events)
        weights = list(emotional_weights) if emotional_weights is not None else [0.0] * n
        tag_lists = [tuple(t) for t in tags] if tags is not None else [()] * n
        privacy = list(private) if private is not None else [False] * n
        if not len(speakers) == len(weights) == len(tag_lists) == len(privacy) == n:
            raise ValueError(f"ingest_many needs one speaker/weight/tags/private per event "
                             f"({n} events)")
        for weight in weights:
            if not 0.0 <= weight <= 1.0:
                raise ValueError(f"emotional_weight must be within [0, 1], got {weight!r}")
        self._check_new([e.entry_id for e in events])
        names = [s or e.agent for e, s in zip(events, speakers, strict=True)]
        texts = [format_raw(name, e.content) for e, name in zip(events, names, strict=True)]
        # Only a text longer (in characters) than the split threshold can have more tokens
        # than it: those are counted and split first, off the loop; the rest as before.
        big = [i for i, t in enumerate(texts) if len(t) > SPLIT_ABOVE_TOKENS]
        split: dict[int, list[Chunk] | None] = {}
        if big:
            split = await self.offloader.run(functools.partial(
                self._split, {i: (names[i], str(events[i].content)) for i in big}))
        whole = [i for i in range(n) if split.get(i) is None]
        whole_vectors = np.zeros((0, self.dim), dtype=np.float32)
        whole_counts: list[int] = []
        if whole:
            parts = await self.offloader.run_chunks(self._embed_and_count,
                                                    [texts[i] for i in whole])
            whole_vectors = np.concatenate([v for v, _ in parts])
            whole_counts = [c for _, part in parts for c in part]
        vectors_of: dict[int, np.ndarray] = {}
        for i, chunks in split.items():
            if chunks is None:
                continue
            key = (self.embedder, self.tokenizer, names[i], str(events[i].content))
            known = RECENT_SPLITS.get(key)
            if known is not None and known[0] == chunks and known[1] is not None:
                vectors_of[i] = known[1]
            else:
                vectors_of[i] = np.concatenate(await self.offloader.run_chunks(
                    self._embed_chunks, [c.text for c in chunks]))
                RECENT_SPLITS.put(key, chunks, vectors_of[i])
        await self.catch_up()  # the fade, if it has fallen behind, before adding more
        self._check_new([e.entry_id for e in events])  # a concurrent ingest of the same event
        made: dict[int, list[MemoryRecord]] = {}
        for i, tokens, vector in zip(whole, whole_counts, whole_vectors, strict=True):
            made[i] = self._rung0(events[i], names[i], texts[i], tokens, None, weights[i],
                                  tag_lists[i], privacy[i])
            made[i][0].embedding = vector
        for i, chunks in split.items():
            if chunks is not None:
                made[i] = self._rung0(events[i], names[i], texts[i], 0, chunks,
                                      weights[i], tag_lists[i], privacy[i])
                for record, vector in zip(made[i], vectors_of[i], strict=True):
                    record.embedding = vector
        out = []
        for i, event in enumerate(events):
            for record in made[i]:
                self.working.add(record)
            self._entries[int(event.entry_id)] = made[i][0].record_id
            out.append(made[i][0])
        self.counters.ingested += n
        self._sample()
        self._poke()
        return out

    def _rung0(self, event: Any, name: str, text: str, tokens: int,
               chunks: list[Chunk] | None, weight: float, tags: tuple[str, ...],
               private: bool) -> list[MemoryRecord]:
        return rung0_records(self.agent, event, text=text, tokens=tokens, chunks=chunks,
                             speaker=name, emotional_weight=weight, tags=tags, private=private)

    def _split(self, items: dict[int, tuple[str, str]]) -> dict[int, list[Chunk] | None]:
        """Split the texts over the threshold into chunks (a worker thread), reusing
        another agent's split of the same event."""
        out: dict[int, list[Chunk] | None] = {}
        for i, (name, content) in items.items():
            known = RECENT_SPLITS.get((self.embedder, self.tokenizer, name, content))
            out[i] = known[0] if known is not None else split_rung0(name, content,
                                                                    self.tokenizer)
        return out

    def _check_new(self, entry_ids: Sequence[int]) -> None:
        seen: set[int] = set()
        for entry in entry_ids:
            if entry in self._entries or entry in seen:
                raise ValueError(f"{self.agent} already has a record of event {entry}")
            seen.add(entry)

    def _embed_chunks(self, texts: Sequence[str]) -> np.ndarray:
        """Embed chunk texts :data:`CHUNK_EMBED_BATCH` at a time: every chunk is near the
        model's 256-token window, so a batch of the embedder's usual size would hold
        hundreds of MB of activations per worker thread (measured: 1.7 GB peak RSS for a
        500 KB paste with batches of 64)."""
        return np.concatenate([self.embedder.embed(texts[i:i + CHUNK_EMBED_BATCH])
                               for i in range(0, len(texts), CHUNK_EMBED_BATCH)])

    def _embed_and_count(self, texts: Sequence[str]) -> tuple[np.ndarray, list[int]]:
        return self.embedder.embed(texts), self.tokenizer.count_many(texts)

    async def add_record(self, record: MemoryRecord) -> None:
        """Put ``record`` (rung 0–2) into working with the tracking it carries — a used
        cue, a warm-up record. If a record with its id is in long-term, it leaves.

        Writes an ``add`` fade event first. A record without an embedding is embedded
        (its text). Wakes the fade coroutine.

        Raises:
            ValueError: the id is already in working, the rung is not 0–2, or one of its
                entry ids belongs to another record.
        """
        if record.rung not in (0, 1, 2):
            raise ValueError(f"record {record.record_id} has rung {record.rung!r}; "
                             "working holds rungs 0-2")
        mode: Literal["kept", "text"] = "kept" if record.embedding is not None else "text"
        if record.embedding is None:
            vectors = await self.offloader.run(self.embedder.embed, [record.text])
            record.embedding = np.asarray(vectors[0], dtype=np.float32)
        async with self._lock:
            self._check_add(record)
            old = self.longterm.get(record.record_id)
            written = tracking([old] if old is not None else [])
            await self._append([(record, fade_attrs(
                "add", record, tier="working", sources=(record.record_id,), embedding=mode))])
            if old is not None:
                self._inherit_references(record, [old], written, rekey=True)
            self._enter_working(record)
        self._poke()

    def _check_add(self, record: MemoryRecord) -> None:
        rid = record.record_id
        if rid in self.working:
            raise ValueError(f"record {rid} is already in {self.agent}'s working tier")
        for entry in record.entry_ids:
            owner = self._entries.get(entry)
            held = None if owner is None else (self.working.get(owner)
                                               or self.longterm.get(owner))
            if record.span and held is not None and held.span:
                continue  # chunks of one event: each stands for its own part of it
            if owner is not None and owner != rid and held is not None:
                raise ValueError(f"event {entry} already belongs to {self.agent}'s record "
                                 f"{owner}, not {rid}")

    def _enter_working(self, record: MemoryRecord) -> None:
        if record.record_id in self.longterm:
            self.longterm.remove(record.record_id)
        self.working.add(record)
        for entry in record.entry_ids:
            self._entries[entry] = record.record_id
        if not is_chunk_id(record.record_id):
            self._next_extra_id = max(self._next_extra_id, record.record_id + 1)
        self.counters.added += 1

    def touch(self, record_id: int, now: float) -> None:
        """Count a reference to a working or long-term record (written to the
        substrate with the agent's next fade events or snapshot: a touch event).

        Raises:
            KeyError: the record is in neither tier.
        """
        if record_id in self.working:
            self.working.touch(record_id, now)
        else:
            self.longterm.touch(record_id, now)
        self._references.add(record_id, now)

    def next_record_id(self) -> int:
        """A record id no record of this agent has, and no entry id can be."""
        rid = self._next_extra_id
        self._next_extra_id += 1
        return rid

    def next_extra_id_peek(self) -> int:
        """The id :meth:`next_record_id` would return next (for snapshots)."""
        return self._next_extra_id

    # ------------------------------------------------------------ tuning, I/O

    def tune(self, *, budget_tokens: int | None = None, weights: FadeWeights | None = None) -> None:
        """Retune at run time (hyperfocus, an operator); wakes the fade coroutine.

        Raises:
            ValueError: a budget that is not a positive int (nothing changes then).
        """
        changes: dict[str, Any] = {}
        if budget_tokens is not None:
            if isinstance(budget_tokens, bool) or not isinstance(budget_tokens, int):
                raise ValueError(f"budget_tokens must be a positive int, got {budget_tokens!r}")
            changes["budget_tokens"] = budget_tokens
        if weights is not None:
            if not isinstance(weights, FadeWeights):
                raise TypeError(f"weights must be FadeWeights, got {type(weights).__name__}")
            changes["fade"] = weights
        config = dataclasses.replace(self.config, **changes)  # validates
        self.working.budget_tokens = config.budget_tokens
        self.config = config
        self._poke()

    async def snapshot(self) -> None:
        """Write both tiers atomically, sealed (see :mod:`~solace.memory.snapshot`).

        Raises:
            StorageFullError: the disk is full; the previous snapshot is intact and no
                temporary file is left (the substrate still holds everything).
        """
        async with self._lock:
            await self._append([])  # the references made since the last fade event
            await snapshot.save(self)

    async def aclose(self) -> None:
        """Snapshot; the memory stays usable (closing is the substrate's business)."""
        await self.snapshot()

    async def warm_up(self, n: int, rung: int) -> list[MemoryRecord]:
        """Bring the newest ``n`` long-term records back into working at ``rung`` (0–2),
        text rebuilt from their substrate events, with fresh tracking (``created`` now).

        Warm-up is best-effort: if the disk is too full to write its ``add`` events it
        changes nothing, logs a WARNING and returns ``[]`` (so a restart on a full disk
        still opens).

        Returns:
            The records now in working, newest first.

        Raises:
            ValueError: ``rung`` is not 0, 1 or 2, or ``n`` is negative.
        """
        if rung not in (0, 1, 2):
            raise ValueError(f"warm-up rung must be 0, 1 or 2, got {rung!r}")
        if n < 0:
            raise ValueError(f"warm-up count must be >= 0, got {n!r}")
        async with self._lock:
            chosen = self.longterm.newest(n)
            now = self.clock.now()
            revived = []
            for record in chosen:
                if record.rung == rung:
                    text = record.text
                else:
                    events = record_events(
                        record, [await self.substrate.get(e) for e in record.entry_ids])
                    text = await self.offloader.run(functools.partial(
                        rehydrate_text, events, rung, tokenizer=self.tokenizer,
                        config=self.memory_config, perspective=self.config.perspective))
                revived.append(dataclasses.replace(
                    record, rung=rung, text=text, tokens=self.tokenizer.count(text),
                    created=now))
            if revived:
                try:
                    await self._append([(r, fade_attrs("add", r, tier="working",
                                                       sources=(r.record_id,), embedding="kept"))
                                        for r in revived], now)
                except StorageFullError as exc:
                    log.warning("%s: warm-up skipped: %s", self.agent, exc)
                    return []
            for record in revived:
                self._enter_working(record)
        self._poke()
        return revived

    def stats(self) -> dict[str, object]:
        """For ``/inspect``: budget, tokens and counts per tier and rung, counters."""
        return {
            "agent": self.agent,
            "budget_tokens": self.working.budget_tokens,
            "working_tokens": self.working.total_tokens,
            "working_tokens_by_rung": self.working.tokens_by_rung(),
            "working_records": len(self.working),
            "working_by_rung": self.working.count_by_rung(),
            "longterm_records": len(self.longterm),
            "longterm_by_rung": self.longterm.count_by_rung(),
            "longterm_index": self.longterm.index_kind,
            "counters": self.counters.as_dict(),
            "fade_paused_since": self.full_since,
            "storage_failures": self.storage_failures,
            "fade_history": [list(point) for point in self.history],
        }


def index_params(memory_config: MemoryConfig) -> IndexParams:
    """The long-term index parameters of ``memory_config``."""
    return IndexParams(
        kind=memory_config.longterm_index,
        threshold=memory_config.hnsw_threshold,
        ivf_nprobe=memory_config.ivf_nprobe,
        hnsw_m=memory_config.hnsw_m,
        hnsw_ef_search=memory_config.hnsw_ef_search,
        hnsw_ef_construction=memory_config.hnsw_ef_construction,
    )
