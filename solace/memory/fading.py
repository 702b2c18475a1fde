"""The fade pipeline of an agent's memory (see :mod:`solace.memory.agent_memory`).

:class:`Fading` is the part of :class:`~solace.memory.agent_memory.AgentMemory` that
fades: the coroutine (:meth:`Fading.run`), one step of rounds (:meth:`Fading.fade_step`),
the long-term fade to rung 3, and the one writer of fade events (:meth:`Fading._append`,
which writes the references made since the last write first: touch events). It holds
no state of its own; every attribute it uses is the memory's, declared below.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import trio

from solace.clock import Clock
from solace.config import AgentConfig
from solace.memory.entry_index import EntryIndex
from solace.memory.fade import FadeColumns, FadeCounters, FadeReport, fade_score, plan_round
from solace.memory.ladder import Demotion, Ladder
from solace.memory.longterm import LongTermStore
from solace.memory.rebuild import FADE_KIND, fade_attrs
from solace.memory.record import MemoryRecord
from solace.memory.references import PendingReferences, touch_event
from solace.memory.working import WorkingTier
from solace.models.llm import ModelError
from solace.offload import Offloader
from solace.sealed import StorageFullError, is_storage_full, storage_full

__all__ = ["BACKLOG_BUDGETS", "FULL_PAUSE_FIRST", "FULL_PAUSE_MAX", "ROUND_CHUNKS", "Fading",
           "tracking"]

log = logging.getLogger("solace.memory.agent_memory")

#: The most chunks of large events one fade round demotes (see ``_bounded``).
ROUND_CHUNKS = 64

#: After a write fails for lack of space, the fade coroutine pauses this long before
#: trying again, doubling up to the maximum while the disk stays full (clock seconds).
FULL_PAUSE_FIRST = 5.0
FULL_PAUSE_MAX = 300.0
# Ingest waits for the fade once working holds more than this many budgets: the fade
# runs beside ingest (a bulk import embeds its next batch while the last one fades) but
# never falls further behind than that, whoever calls settle() or not.
BACKLOG_BUDGETS = 2.0


class Fading:
    """The fade pipeline, mixed into ``AgentMemory`` (which sets every attribute)."""

    agent: str
    config: AgentConfig
    working: WorkingTier
    longterm: LongTermStore
    ladder: Ladder
    offloader: Offloader
    clock: Clock
    substrate: Any
    counters: FadeCounters
    history: deque[tuple[float, int, int]]
    full_since: float | None
    storage_failures: int
    _lock: trio.Lock
    _step_lock: trio.Lock
    _wake: trio.Event
    _changed: trio.Event
    _entries: EntryIndex
    _lt_queue: deque[tuple[float, int]]
    _references: PendingReferences

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
        self._tell_changed()

    def _tell_changed(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    async def next_change(self) -> None:
        """Return at the tiers' next change made on the event loop: an event delivered
        (or a record re-entering working) or a fade step that changed something. Every
        change bumps a tier's ``version`` too; this is for a task that follows the
        tiers without polling them (the actor's index keeper)."""
        await self._changed.wait()

    async def still_for(self, seconds: float, busy: Callable[[], bool]) -> None:
        """Return once the tiers have not changed for ``seconds`` and ``busy()`` is
        false (the runtime delivering events or an agent fading: an import embedding
        its next batch for another agent, or a step compressing for seconds, changes
        nothing meanwhile and is not still)."""
        while True:
            with trio.move_on_after(seconds) as quiet:
                await self.next_change()
            if quiet.cancelled_caught and not busy():
                return

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

    async def catch_up(self) -> None:
        """Back-pressure for ingest: if working holds more than :data:`BACKLOG_BUDGETS`
        budgets, fade as :meth:`settle` does before returning. A step that cannot write
        for lack of space is left to the fade coroutine (it pauses and retries); the
        caller's records still go in."""
        if self.working.total_tokens <= BACKLOG_BUDGETS * self.working.budget_tokens:
            return
        try:
            await self.settle()
        except StorageFullError as exc:
            log.debug("%s: ingest did not wait for the fade: %s", self.agent, exc)

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
        if report.changed:
            self._tell_changed()
        report.failed = tuple(sorted(failed))
        report.working_tokens = self.working.total_tokens
        report.budget_tokens = self.working.budget_tokens
        return report

    async def _demote(self, records: list[MemoryRecord], now: float,
                      failed: set[int]) -> list[Demotion]:
        if not records:
            return []
        try:
            return await self.offloader.run(functools.partial(
                self.ladder.demote, records, now=now, perspective=self.config.perspective))
        except ModelError as exc:  # records stay as they are; nothing was written
            failed.update(r.record_id for r in records)
            self.counters.ladder_failures += 1
            log.warning("%s: ladder failed on %d records (%s); they keep their rung",
                        self.agent, len(records), exc)
            return []

    async def _round(self, chosen: list[MemoryRecord], now: float, failed: set[int],
                     report: FadeReport) -> None:
        planned = tracking(chosen)
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
            written = tracking([*moving, *(r for rs in sources_of.values() for r in rs)])
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
        planned = tracking(due)
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
            written = tracking(olds.values())
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


def tracking(records: Iterable[MemoryRecord]) -> dict[int, int]:
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
