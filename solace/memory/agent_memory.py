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
from collections.abc import Iterable, Mapping, Sequence
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
from solace.memory.fade import FadeColumns, FadeCounters, FadeReport, fade_score, plan_round
from solace.memory.ladder import Demotion, Ladder, format_raw, rehydrate_text
from solace.memory.longterm import IndexParams, open_longterm_store
from solace.memory.rebuild import (
    EXTRA_ID_BASE,
    FADE_KIND,
    Perceiver,
    fade_attrs,
    rung0_records,
)
from solace.memory.record import MemoryRecord
from solace.memory.references import PendingReferences, touch_event
from solace.memory.working import WorkingTier
from solace.models.embedder import Embedder
from solace.models.llm import ModelError
from solace.models.tokenizer import Tokenizer
from solace.offload import Offloader
from solace.sealed import StorageFullError, is_storage_full, storage_full
from substrate import KeyRing

__all__ = ["AgentMemory", "index_params"]

log = logging.getLogger(__name__)

#: How many chunks of a large event one embedding call gets (see ``_embed_chunks``).
CHUNK_EMBED_BATCH = 16

#: The most chunks of large events one fade round demotes (see ``_bounded``).
ROUND_CHUNKS = 64

#: After a write fails for lack of space, the fade coroutine pauses this long before
#: trying again, doubling up to the maximum while the disk stays full (clock seconds).
FULL_PAUSE_FIRST = 5.0
FULL_PAUSE_MAX = 300.0

#: Points of working tokens against budget kept for the fade view (``stats``).
FADE_HISTORY = 240


class AgentMemory:
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
        self.longterm = open_longterm_store(dim=dim, params=index_params(memory_config))
        self.counters = FadeCounters()
        self._entries: dict[int, int] = {}  # entry id -> record id standing for it
        self._references = PendingReferences()  # written before the next fade event
        self._next_extra_id = EXTRA_ID_BASE
        self._lt_queue: deque[tuple[float, int]] = deque()  # (created, id) of long-term rung 2
        self._lock = trio.Lock()
        self._step_lock = trio.Lock()
        self._wake = trio.Event()
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
        several agents opened together read the substrate once.)

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
        if perceive is not None:
            events = await substrate.scan(since_id=loaded.since)
        else:
            events = await substrate.scan(agent=agent, kind=FADE_KIND,
                                          since_id=loaded.fade_since)
        await memory.finish_opening(loaded, events)
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
            written = _tracking([old] if old is not None else [])
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

    # -------------------------------------------------------------- the fade

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """The fade coroutine: runs :meth:`fade_step` whenever woken and every
        ``config.tick_seconds``, until cancelled. Compression and FAISS run in worker
        threads, so the agent's own loop is never blocked.

        A step whose write fails for lack of space (:class:`StorageFullError`) changes
        nothing; the coroutine logs it once (WARNING), pauses — :data:`FULL_PAUSE_FIRST`
        seconds of the clock, doubling up to :data:`FULL_PAUSE_MAX`, pokes ignored —
        and tries again, logging when fading resumes. It never dies of a full disk,
        so its nursery (the actor's) is never cancelled by one; recall goes on.
        """
        task_status.started()
        pause = 0.0
        while True:
            if pause:
                await trio.sleep(pause)
            else:
                with trio.move_on_after(self.config.tick_seconds):
                    await self._wake.wait()
            self._wake = trio.Event()  # before the step: a poke during it runs another
            try:
                await self.fade_step()
            except StorageFullError as exc:
                pause = self._paused(exc, pause)
            else:
                if self.full_since is not None:
                    log.warning("%s: fading resumed (paused %.0f s for lack of space)",
                                self.agent, self.clock.now() - self.full_since)
                    self.full_since = None
                pause = 0.0

    def _paused(self, exc: StorageFullError, pause: float) -> float:
        """Note a fade step that failed on a full disk; return the next pause."""
        self.storage_failures += 1
        if self.full_since is None:
            self.full_since = self.clock.now()
            log.warning("%s: fading paused, the disk is full (%s); retrying every %.0f-%.0f s",
                        self.agent, exc, FULL_PAUSE_FIRST, FULL_PAUSE_MAX)
        else:
            log.debug("%s: fading still paused: %s", self.agent, exc)
        return min(FULL_PAUSE_MAX, pause * 2 if pause else FULL_PAUSE_FIRST)

    def _poke(self) -> None:
        self._wake.set()

    def _sample(self) -> None:
        """Add a point to :attr:`history` if working tokens or the budget changed."""
        point = (self.clock.now(), self.working.total_tokens, self.working.budget_tokens)
        if not self.history or self.history[-1][1:] != point[1:]:
            self.history.append(point)

    @property
    def fading(self) -> bool:
        """Whether a fade step is running right now (for ``/inspect`` and tests)."""
        return self._step_lock.locked()

    def _plan(self, now: float, failed: set[int]) -> np.ndarray:
        columns: FadeColumns = self.working.columns()
        if len(columns) == 0:
            return np.zeros(0, dtype=np.int64)
        scores = fade_score(columns, now=now, total_tokens=self.working.total_tokens,
                            budget_tokens=self.working.budget_tokens, weights=self.config.fade,
                            age_scale_hours=self.config.age_scale_hours)
        exclude = np.isin(columns.record_id, np.fromiter(failed, np.int64)) if failed else None
        return plan_round(scores, columns, threshold=self.config.demote_threshold,
                          total_tokens=self.working.total_tokens,
                          budget_tokens=self.working.budget_tokens, exclude=exclude)

    def pending(self) -> bool:
        """Whether a fade step at the clock's now would change anything."""
        now = self.clock.now()
        return len(self._plan(now, set())) > 0 or self._longterm_due(now)

    async def settle(self) -> None:
        """Return once no fade work is pending at the clock's now (or a step made no
        progress: the ladder keeps failing on what is left)."""
        while self.pending():
            report = await self.fade_step()
            if not report.changed:
                return

    async def fade_step(self) -> FadeReport:
        """Demote until nothing is due and working is within budget (see module doc).

        Returns:
            What the step did. ``report.within_budget`` is False only if the ladder
            failed on every record that could still make room.
        """
        report = FadeReport()
        async with self._step_lock:
            failed: set[int] = set()
            while True:
                now = self.clock.now()
                rows = self._plan(now, failed)
                if len(rows) == 0:
                    break
                chosen = _bounded(self.working.at_rows(rows))
                await self._round(chosen, now, failed, report)
            await self._fade_longterm(report)
            self.counters.passes += 1
            self._sample()
        report.failed = tuple(sorted(failed))
        report.working_tokens = self.working.total_tokens
        report.budget_tokens = self.working.budget_tokens
        return report

    async def _demote(self, records: list[MemoryRecord], now: float,
                      failed: set[int]) -> list[Demotion]:
        if not records:
            return []
        try:
            return await self.offloader.run(functools.partial(self.ladder.demote, records, now=now))
        except ModelError as exc:  # records stay as they are; nothing was written
            failed.update(r.record_id for r in records)
            self.counters.ladder_failures += 1
            log.warning("%s: ladder failed on %d records (%s); they keep their rung",
                        self.agent, len(records), exc)
            return []

    async def _round(self, chosen: list[MemoryRecord], now: float, failed: set[int],
                     report: FadeReport) -> None:
        planned = _tracking(chosen)
        demotions = await self._demote([r for r in chosen if r.rung < 2], now, failed)
        moving = [r for r in chosen if r.rung == 2]
        async with self._lock:
            # Only records still exactly as planned change (add_record may have run).
            demotions = [d for d in demotions
                         if all(self.working.get(s) is not None for s in d.sources)
                         and all(self.working.get(s) in chosen for s in d.sources)]
            sources_of = {d.record.record_id: [r for r in map(self.working.get, d.sources)
                                               if r is not None] for d in demotions}
            for d in demotions:
                self._inherit_references(d.record, sources_of[d.record.record_id], planned,
                                         rekey=False)
            moving = [r for r in moving if self.working.get(r.record_id) is r]
            writes = [(d.record, fade_attrs("demote", d.record, tier="working",
                                            sources=d.sources, embedding=d.embedding))
                      for d in demotions]
            moved = [dataclasses.replace(r, created=now) for r in moving]
            writes += [(r, fade_attrs("to_longterm", r, tier="longterm", sources=(r.record_id,),
                                      embedding="kept")) for r in moved]
            if not writes:  # everything changed under us: leave these records to the next step
                failed.update(r.record_id for r in chosen)
                return
            written = _tracking([*moving, *(r for rs in sources_of.values() for r in rs)])
            await self._append(writes, now)
            report.events += len(writes)
            if moved:  # into long-term before out of working: never in neither tier
                await self.offloader.run(self.longterm.add, moved)
                self._lt_queue.extend((r.created, r.record_id) for r in moved)
            for r, m in zip(moving, moved, strict=True):
                self._inherit_references(m, [r], written, rekey=True)
                self.working.remove(r.record_id)
            for d in demotions:
                self._inherit_references(d.record, sources_of[d.record.record_id], written,
                                         rekey=True)
                for source_id in d.sources:
                    self.working.remove(source_id)
                self.working.add(d.record)
                for entry in d.record.entry_ids:
                    self._entries[entry] = d.record.record_id
                self._count(report, d.record.rung, len(d.sources) > 1)
            report.to_longterm += len(moved)
            self.counters.to_longterm += len(moved)
            report.rounds += 1
            self.counters.rounds += 1

    def _count(self, report: FadeReport, rung: int, merged: bool) -> None:
        report.demotions[rung] += 1
        self.counters.demotions[rung] += 1
        report.merges += merged
        self.counters.merges += merged

    def _longterm_due(self, now: float) -> bool:
        horizon = now - self.config.longterm_summary_hours * 3600.0
        return bool(self._lt_queue) and self._lt_queue[0][0] <= horizon

    async def _fade_longterm(self, report: FadeReport) -> None:
        """Long-term summaries older than ``longterm_summary_hours`` fade to rung 3."""
        now = self.clock.now()
        horizon = now - self.config.longterm_summary_hours * 3600.0
        due: list[MemoryRecord] = []
        while self._lt_queue and self._lt_queue[0][0] <= horizon:
            created, rid = self._lt_queue.popleft()
            record = self.longterm.get(rid)
            if record is not None and record.rung == 2 and record.created == created:
                due.append(record)
        failed: set[int] = set()
        planned = _tracking(due)
        demotions = await self._demote(due, now, failed)
        if failed:  # try again at the next step
            self._requeue(due)
        async with self._lock:
            demotions = [d for d in demotions if self.longterm.get(d.sources[0]) in due]
            if not demotions:
                return
            olds = {d.record.record_id: old for d in demotions
                    if (old := self.longterm.get(d.sources[0])) is not None}
            for d in demotions:
                self._inherit_references(d.record, [olds[d.record.record_id]], planned,
                                         rekey=False)
            written = _tracking(olds.values())
            try:
                await self._append([(d.record, fade_attrs(
                    "demote", d.record, tier="longterm", sources=d.sources, embedding="kept"))
                    for d in demotions], now)
            except StorageFullError:
                self._requeue(due)  # nothing changed: due again at the next step
                raise
            report.events += len(demotions)
            for d in demotions:
                await self.offloader.run(self.longterm.replace, d.record)
                self._inherit_references(d.record, [olds[d.record.record_id]], written,
                                         rekey=True)
                self._count(report, d.record.rung, False)

    def _inherit_references(self, record: MemoryRecord, sources: Sequence[MemoryRecord],
                            since: Mapping[int, int], *, rekey: bool) -> None:
        """Give ``record`` (replacing ``sources``) the references its sources got after
        ``since`` (reference counts by id), so none is lost live or on replay.

        ``rekey=False``: references made before the replacement's event was built;
        their touch event is written before it, and replay sees them on the sources
        too. ``rekey=True``: references made while it was being written; their touch
        event comes after it, so they are re-keyed to ``record``'s id.
        """
        extra = sum(s.references - since.get(s.record_id, s.references) for s in sources)
        if extra <= 0:
            return
        record.references += extra
        record.last_referenced = max(record.last_referenced,
                                     *(s.last_referenced for s in sources))
        if rekey:
            for source in sources:
                self._references.move(source.record_id, record.record_id)

    def _requeue(self, records: list[MemoryRecord]) -> None:
        self._lt_queue.extendleft(sorted(((r.created, r.record_id) for r in records),
                                         reverse=True))

    async def _append(self, writes: list[tuple[MemoryRecord, dict[str, str]]],
                      ts: float | None = None) -> None:
        """Append one fade event per (record, attrs), in one substrate write, after
        the touch event of the references made since the last write (if any).

        Raises:
            StorageFullError: the substrate's disk is full; nothing was written.
        """
        ts = self.clock.now() if ts is None else ts
        rows = [(self.agent, FADE_KIND, record.text, attrs, ts) for record, attrs in writes]
        references = self._references.take()
        if references:
            rows.insert(0, (self.agent, FADE_KIND, *touch_event(references), ts))
        if not rows:
            return
        try:
            await self.substrate.append_many(rows)
        except BaseException as exc:
            self._references.put_back(references)
            if isinstance(exc, OSError) and is_storage_full(exc):
                raise storage_full(exc, f"{len(rows)} fade event(s) of {self.agent} "
                                        "to the substrate") from exc
            raise
        self.counters.events_written += len(rows)

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
                        config=self.memory_config))
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


def _tracking(records: Iterable[MemoryRecord]) -> dict[int, int]:
    """Each record's reference count (to see what a replacement must inherit)."""
    return {r.record_id: r.references for r in records}


def _bounded(chosen: list[MemoryRecord]) -> list[MemoryRecord]:
    """A round's records with at most :data:`ROUND_CHUNKS` chunks of large events (the
    most faded; the rest wait for the next round). Chunks never merge, so this changes
    no record; it keeps each ladder call short, so a recall waiting for a worker
    thread while a paste fades waits for one small round, not for the whole paste."""
    out: list[MemoryRecord] = []
    chunks = 0
    for record in chosen:
        if record.span:
            chunks += 1
            if chunks > ROUND_CHUNKS:
                continue
        out.append(record)
    return out


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
