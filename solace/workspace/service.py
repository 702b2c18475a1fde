"""The workspace: markdown files under the home, a projection of the substrate and an
input to it (seed 003, issue 10).

:class:`Workspace` owns ``<home>/<[workspace] path>``. It is fed the substrate's
events (:meth:`Workspace.on_events`, or :meth:`Workspace.catch_up` to read them
itself), re-renders the daily logs they touch, synthesises MEMORY.md and the
roll-ups on demand or on the heartbeat, rewrites NOW.md each cycle, and tells a
session what to load. Before it overwrites any file it checks whether a human edited
it since its last write; an edit is diffed and appended to the substrate as a
``workspace`` event first, so it is folded into every later render.

Guarantees: every file is written atomically (:func:`solace.sealed.write_private`)
and passes the one secret detector first; a fact deleted from fact memory leaves
every daily log, roll-up and MEMORY.md at the render its deletion triggers; no
``message`` text ever reaches a file. Blocking work goes through the offloader;
time comes from the injected clock; one lock serialises everything that writes.
"""

from __future__ import annotations

import functools
import logging
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import UTC, date, tzinfo
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import trio

from solace.config.schema import Config
from solace.conversation.store import EventStore
from solace.offload import Offloader
from solace.projections import Batched, replay
from solace.sealed import write_private
from solace.workspace import files as fs
from solace.workspace.daily import LEDGER_KINDS, Ledger, render_day
from solace.workspace.digest import ImportedLine, new_digests
from solace.workspace.errors import WorkspaceDisabledError
from solace.workspace.events import digest_draft, edit_draft
from solace.workspace.markdown import Hasher, diff, item_pairs, parse, render, scrub
from solace.workspace.model import SESSION_TYPES, Doc, Edit, NowState, SessionContext
from solace.workspace.now import fill_now, render_now
from solace.workspace.overlay import HumanLayer, apply
from solace.workspace.rollup import (
    Summariser,
    month_of_week,
    monthly_rollups,
    week_key,
    weekly_rollups,
)
from solace.workspace.snapshot import encode as encode_snapshot
from solace.workspace.snapshot import read_snapshot
from solace.workspace.snapshot import write_encoded as write_snapshot
from solace.workspace.state import Version, WorkspaceState
from solace.workspace.synthesis import SynthesisCounts, synthesize_memory
from solace.workspace.templates import TEMPLATES

__all__ = ["SOURCE_KINDS", "Workspace"]

log = logging.getLogger("solace.workspace")

#: The substrate kinds the workspace reads.
SOURCE_KINDS: tuple[str, ...] = LEDGER_KINDS
_DAILY = re.compile(r"memory/(\d{4}-\d{2}-\d{2})\.md\Z")


class _Clock(Protocol):
    def now(self) -> float: ...


class _Embedder(Protocol):
    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


#: The name the workspace's part of a replay goes by (:meth:`Workspace.replaying`).
WORKSPACE_PROJECTION = "workspace"


class Workspace:
    """One home's workspace. Open with :meth:`open`; see the module for guarantees.

    ``counters`` counts files written, edits recorded, items withheld as secrets,
    syntheses and roll-ups.
    """

    def __init__(self, *, root: Path, state_path: Path, config: Config, substrate: Any,
                 clock: _Clock, facts: Any, embedder: _Embedder | None, tokenizer: Any,
                 offloader: Offloader, llm: Any, guard: Any, state: WorkspaceState,
                 snapshot: Path | None = None) -> None:
        self.root = root
        #: Where the ledger and layers are kept across restarts (:meth:`snapshot`), or None.
        self.snapshot_path = snapshot
        self.config = config
        self.settings = config.workspace
        self.tz: tzinfo = _zone(self.settings.timezone)
        self.clock = clock
        self.facts = facts
        self._state_path = state_path
        self._substrate = substrate
        self._store = EventStore(substrate)
        self._ring = substrate.key_ring
        self._hasher = Hasher(self._ring.derive("workspace-items"))
        self._embedder = embedder
        self._tokenizer = tokenizer
        self._offloader = offloader
        self._summarise = Summariser(tokenizer, llm if self.settings.summary_mode == "llm"
                                     else None, guard)
        self.state = state
        self.ledger = Ledger(self.tz)
        self.layers: dict[str, HumanLayer] = {}
        self.counters: Counter[str] = Counter()
        self._vectors: dict[str, np.ndarray] = {}  # bullet text -> vector, for synthesis
        self._scanned = 0  # the substrate's head at the last scan
        self._lock = trio.Lock()

    # ------------------------------------------------------------------ opening
    @classmethod
    async def open(cls, home_dir: str | Path, config: Config, substrate: Any, clock: _Clock, *,
                   facts: Any = None, embedder: _Embedder | None = None, tokenizer: Any = None,
                   offloader: Offloader | None = None, llm: Any = None, guard: Any = None,
                   render_all: bool = True, replayed: bool = True,
                   snapshot: Path | None = None) -> Workspace:
        """Open (creating it on first use) the workspace of the home at ``home_dir``.

        Creates SOUL.md, USER.md and AGENTS.md from their templates if missing, replays
        the substrate (kinds :data:`SOURCE_KINDS`; it must have been opened with the
        ``workspace`` kind), records any human edit made while nothing ran, and
        (``render_all``) re-renders every daily log.

        Args:
            facts: the home's :class:`~solace.facts.FactMemory` (fact texts come from its
                projection), or None when fact memory is off.
            embedder: for MEMORY.md's classification (the runtime's embedder).
            tokenizer: the token counter (default :class:`WordPieceTokenizer`).
            llm, guard: roll-ups by the LLM when ``summary_mode = "llm"``.
            replayed: False leaves the replay to the caller, who passes
                :meth:`replaying` to :func:`solace.projections.replay` with the other
                projections it opens (one read of the substrate for all of them).
            snapshot: where the ledger is kept across restarts (:meth:`snapshot`); a
                usable one there is loaded and only the events after it are replayed.

        Raises:
            WorkspaceDisabledError: ``[workspace] enabled = false``.
            WorkspaceStateError: the sealed state file exists but cannot be opened.
        """
        settings = config.workspace
        if not settings.enabled:
            raise WorkspaceDisabledError("the workspace is switched off ([workspace] "
                                         "enabled = false)")
        if tokenizer is None:
            from solace.models.tokenizer import WordPieceTokenizer

            tokenizer = WordPieceTokenizer()
        home = Path(home_dir).expanduser()
        root = Path(settings.path).expanduser()
        root = root if root.is_absolute() else home / root
        state_path = home / "memory" / "workspace" / "state.sealed"
        offloader = offloader or Offloader(1)
        state = await offloader.run(WorkspaceState.load, state_path, substrate.key_ring)
        ws = cls(root=root, state_path=state_path, config=config, substrate=substrate,
                 clock=clock, facts=facts, embedder=embedder, tokenizer=tokenizer,
                 offloader=offloader, llm=llm, guard=guard, state=state or WorkspaceState(),
                 snapshot=snapshot)
        await ws._load_snapshot()
        async with ws._lock:
            await ws._create_identity_files()
        if replayed:
            await replay(substrate, [ws.replaying(render_all=render_all)])
        return ws

    async def _load_snapshot(self) -> bool:
        """Start from the kept snapshot (:mod:`solace.workspace.snapshot`) if there is a
        usable one: the replay then folds only the events after its checkpoint."""
        if self.snapshot_path is None:
            return False
        kept = await self._offloader.run(functools.partial(
            read_snapshot, self.snapshot_path, ring=self._ring, tz=self.tz,
            zone=self.settings.timezone, last_id=int(self._substrate.last_id)))
        if kept is None:
            return False
        restored, checkpoint = kept
        self.ledger, self.layers, self._scanned = restored.ledger, restored.layers, checkpoint
        return True

    async def snapshot(self) -> bool:
        """Keep the ledger and the human layers for the next open (taken under the lock),
        with the checkpoint :meth:`_folded_to` gives. Returns False without a snapshot
        path.

        Raises:
            solace.sealed.StorageFullError, OSError: not written; the file holds what
            it held (a cache: the next open replays more).
        """
        if self.snapshot_path is None:
            return False
        async with self._lock:
            data = await self._offloader.run(functools.partial(
                encode_snapshot, self.ledger, self.layers, await self._folded_to(),
                zone=self.settings.timezone))
        await self._offloader.run(functools.partial(
            write_snapshot, self.snapshot_path, data, ring=self._ring))
        return True

    async def _folded_to(self) -> int:
        """(Under the lock.) The last id up to which every event of :data:`SOURCE_KINDS`
        is folded in: the last scan's mark, or up to the log's head when every such event
        after it was delivered (:meth:`on_events`) or written here (edits, digests)."""
        top = int(self._substrate.last_id)
        later = await self._substrate.scan(since_id=self._scanned or None, kinds=SOURCE_KINDS)
        unseen = [e.entry_id for e in later if not self.ledger.seen(e.entry_id)]
        return min(top, min(unseen, default=top + 1) - 1)

    def replaying(self, *, render_all: bool = True) -> Batched:
        """The opening's part of a replay (:func:`solace.projections.replay`): every
        event of :data:`SOURCE_KINDS` folded into the ledger, then the human's edits
        recorded and (``render_all``) every daily log rendered."""
        return Batched(WORKSPACE_PROJECTION, frozenset(SOURCE_KINDS), self._scanned,
                       functools.partial(self._opened, render_all=render_all))

    async def _opened(self, events: list[Any], head: int, *, render_all: bool) -> None:
        async with self._lock:
            await self._absorb(events, render=False)
            self._scanned = max(self._scanned, head)
            await self._reload_locked()
            if render_all:
                await self._render_days(set(self.ledger.days))

    async def _create_identity_files(self) -> None:
        writes = [(name, text) for name, text in TEMPLATES.items()
                  if not (self.root / name).exists()]
        if writes:
            await self._commit([(n, t, Version(self._hasher.file(t), tuple(
                item_pairs(parse(t), self._hasher)))) for n, t in writes])

    # ------------------------------------------------------------------ events
    async def _scan(self) -> list[Any]:
        """Every event of :data:`SOURCE_KINDS` after the last scan. The mark is the log's
        head read *before* scanning, and is kept apart from :meth:`on_events`: an event
        delivered early never makes a scan skip an older one it was not given."""
        top = self._substrate.last_id
        found: list[Any] = await self._substrate.scan(since_id=self._scanned or None,
                                                      kinds=SOURCE_KINDS)
        self._scanned = top
        return found

    async def catch_up(self) -> int:
        """Read the substrate's new events of :data:`SOURCE_KINDS` and apply them as
        :meth:`on_events` does. Returns how many were read."""
        async with self._lock:  # scanned and folded at once: see :meth:`snapshot`
            events = await self._scan()
            await self._absorb(events, render=True)
        return len(events)

    async def on_events(self, events: Iterable[Any]) -> None:
        """Apply a batch of substrate events (any kinds; a repeat is ignored): the daily
        logs of the days they touch are re-rendered; a fact deletion re-renders every
        file derived from the deleted fact's day (its daily log, its roll-ups, MEMORY.md)."""
        async with self._lock:
            await self._absorb(list(events), render=True)

    async def _absorb(self, events: list[Any], *, render: bool) -> None:
        change = self.ledger.apply_all(events)
        for ts, edit in change.edits:
            self._layer(edit.file).fold(edit, ts, self._hasher)
        if not render:
            return
        await self._render_days(change.days)
        if change.shredded:
            self._vectors.clear()  # no deleted fact's text outlives its deletion here either
            await self._rerender_derived(change.days)

    def _layer(self, rel: str) -> HumanLayer:
        return self.layers.setdefault(rel, HumanLayer())

    # ------------------------------------------------------------------ rendering
    def _fact_text(self, memory_id: str, fact_id: str) -> str | None:
        if self.facts is None:
            return None
        fact = self.facts.projection.get(memory_id, fact_id)
        return fact.text if fact is not None else None

    def _machine_day(self, day: date) -> Doc:
        return render_day(day, self.ledger.days.get(day, ()), self._fact_text, self.tz)

    async def _render_days(self, days: Iterable[date]) -> None:
        docs = [(fs.daily(day), self._machine_day(day)) for day in sorted(days)]
        await self._write_docs([(rel, doc, True) for rel, doc in docs])

    async def _rerender_derived(self, days: set[date]) -> None:
        if (self.root / fs.MEMORY).exists():
            await self._synthesize_locked()
        weeks = {week_key(d) for d in days}
        if any((self.root / fs.weekly(w)).exists() for w in weeks):
            await self._rollup_locked(weeks)

    async def _write_docs(self, docs: Sequence[tuple[str, Doc, bool]]) -> list[str]:
        """Write machine ``docs`` (rel, doc, lay the human layer over it): human edits
        first recorded, then each document layered, scrubbed, and written if changed;
        an empty document is not written (no file for a day without bullets).
        Returns the files written."""
        writes: list[tuple[str, str, Version]] = []
        for rel, machine, layered in docs:
            await self._record_edit(rel, machine if _DAILY.match(rel) else None)
            doc = apply(machine, self.layers.get(rel), self._hasher) if layered else machine
            doc, withheld = scrub(doc)
            self.counters["withheld"] += withheld
            if not doc.sections and not (self.root / rel).exists():
                continue
            text = render(doc)
            current = await self._offloader.run(fs.read, self.root / rel)
            if current == text:
                continue
            writes.append((rel, text, Version(self._hasher.file(text),
                                              tuple(item_pairs(doc, self._hasher)))))
        await self._commit(writes)
        return [rel for rel, _, _ in writes]

    async def _commit(self, writes: Sequence[tuple[str, str, Version]]) -> None:
        """State first (the new version beside the old), then each file atomically."""
        if not writes:
            return
        for rel, _, version in writes:
            self.state.wrote(rel, version)
        await self._offloader.run(self._save_and_write, list(writes))
        self.counters["files_written"] += len(writes)

    def _save_and_write(self, writes: list[tuple[str, str, Version]]) -> None:
        self.state.save(self._state_path, self._ring)
        for rel, text, version in writes:
            write_private(self.root / rel, text.encode(), what=f"workspace file {rel}")
            self.state.adopt(rel, version)  # on disk now: the older version is history

    async def digest_import(self, lines: Iterable[ImportedLine]) -> int:
        """Record one ``digest`` event for each day of imported ``lines`` (a day's
        lines: all it holds, earlier imports' included) whose digest the ledger lacks
        for exactly those import keys, and render those days. The same lines never
        yield a second digest; a day with new lines gets one that supersedes the old.
        Returns how many digests were recorded (see :mod:`solace.workspace.digest`)."""
        async with self._lock:
            digests = new_digests(lines, self.ledger, self._tokenizer)
            if not digests:
                return 0
            appended = await self._store.append([digest_draft(d) for d in digests],
                                                self.clock.now())
            await self._absorb(appended, render=True)
            self.counters["digests"] += len(digests)
            return len(digests)

    # ------------------------------------------------------------------ human edits
    async def reload(self) -> list[Edit]:
        """Detect human edits in every workspace file (identity files, daily logs,
        roll-ups, MEMORY.md) and record each as a ``workspace`` event; the next render
        or synthesis keeps them. Call at session start and on ``/reload``."""
        async with self._lock:
            return await self._reload_locked()

    async def _reload_locked(self) -> list[Edit]:
        rels = await self._offloader.run(fs.tracked, self.root, list(self.state.files))
        edits = []
        for rel in rels:
            m = _DAILY.match(rel)
            machine = self._machine_day(date.fromisoformat(m.group(1))) if m else None
            edit = await self._record_edit(rel, machine)
            if edit is not None:
                edits.append(edit)
        return edits

    async def _record_edit(self, rel: str, machine: Doc | None) -> Edit | None:
        """If ``rel`` differs from every version the workspace wrote, diff it against the
        newest (or, with no baseline, against ``machine``, the render the workspace would
        make; with neither, adopt it silently), append the edit, fold it in, and adopt
        the file as the baseline."""
        text = await self._offloader.run(fs.read, self.root / rel)
        if text is None:
            return None
        fh = self._hasher.file(text)
        known = self.state.known(rel, fh)
        if known is not None:  # the workspace's own write (after a crash: the older one)
            self.state.adopt(rel, known)
            return None
        doc = parse(text)
        versions = self.state.versions(rel)
        # The newest version is what the last write left on disk (a crash before its
        # rename leaves the older one, whose hash is known and so never reaches here).
        base = versions[-1].items if versions else (
            tuple(item_pairs(machine, self._hasher)) if machine is not None else None)
        edit = diff(rel, base, doc, self._hasher) if base is not None else None
        if edit is not None and not edit.empty:
            (appended,) = await self._store.append([edit_draft(edit)], self.clock.now())
            self.ledger.apply_all([appended])  # seen: a later on_events skips it
            self._layer(rel).fold(edit, appended.ts, self._hasher)
            self.counters["edits_recorded"] += 1
            log.info("workspace: recorded a human edit of %s (+%d -%d ~%d)", rel,
                     len(edit.added), len(edit.removed), len(edit.changed))
        self.state.adopt(rel, Version(fh, tuple(item_pairs(doc, self._hasher))))
        await self._offloader.run(self.state.save, self._state_path, self._ring)
        return edit if edit is not None and not edit.empty else None

    # ------------------------------------------------------------------ synthesis
    def _embed(self, texts: list[str]) -> np.ndarray:
        """Vectors of ``texts`` (blocking), each bullet embedded once per process."""
        missing = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if missing:
            embed = self._embedder.embed if self._embedder is not None else _lexical_embed
            for text, vector in zip(missing, np.asarray(embed(missing), np.float32),
                                    strict=True):
                self._vectors[text] = vector
        return np.stack([self._vectors[t] for t in texts])

    async def synthesize(self, now: float | None = None) -> SynthesisCounts:
        """Synthesise MEMORY.md from the daily logs (see :mod:`.synthesis`), after
        recording any human edit; written atomically. ``now`` defaults to the clock."""
        async with self._lock:
            counts = await self._synthesize_locked()
            self.state.synthesized_at = self.clock.now() if now is None else now
            await self._offloader.run(self.state.save, self._state_path, self._ring)
            return counts

    async def _synthesize_locked(self) -> SynthesisCounts:
        await self._reload_locked()
        daily = await self._offloader.run(fs.daily_docs, self.root)
        store = self.config.stores["default"]
        doc, counts = await self._offloader.run(
            synthesize_memory, daily, self._layer(fs.MEMORY), self._hasher, self._embed,
            tz=self.tz,
            dedup_threshold=store.deduplication_threshold,
            update_similarity=self.config.facts.update_similarity,
            lexical_weight=self.config.facts.lexical_weight)
        await self._write_docs([(fs.MEMORY, doc, False)])
        self.counters["syntheses"] += 1
        return counts

    async def rollup(self, now: float | None = None) -> list[str]:
        """Write the weekly roll-up of every week up to ``now``'s with daily logs, and
        the monthly roll-up of every month with weekly ones. Returns the files written."""
        async with self._lock:
            now = self.clock.now() if now is None else now
            current = week_key(self.ledger.day_of(now))
            weeks = {week_key(d) for d, _ in await self._offloader.run(fs.daily_docs, self.root)}
            written = await self._rollup_locked({w for w in weeks if w <= current})
            self.state.rolled_at = now
            await self._offloader.run(self.state.save, self._state_path, self._ring)
            return written

    async def _rollup_locked(self, weeks: set[str]) -> list[str]:
        run, root = self._offloader.run, self.root
        docs = await run(weekly_rollups, await run(fs.daily_docs, root), weeks,
                         self.settings.weekly_budget_tokens, self._summarise)
        written = await self._write_docs([(fs.weekly(k), d, True) for k, d in docs])
        months = {month_of_week(k) for k in weeks}
        docs = await run(monthly_rollups, await run(fs.weekly_docs, root), months,
                         self.settings.monthly_budget_tokens, self._summarise)
        written += await self._write_docs([(fs.monthly(m), d, True) for m, d in docs])
        self.counters["rollups"] += 1
        return written

    async def heartbeat(self, now: float | None = None) -> bool:
        """One cycle (the Time actor's heartbeat): catch up with the substrate, rewrite
        NOW.md, and synthesise MEMORY.md and the roll-ups when ``synthesize_every_hours``
        have passed since the last synthesis. Returns True if it synthesised."""
        now = self.clock.now() if now is None else now
        await self.catch_up()
        await self.write_now(now=now)
        if now - self.state.synthesized_at < self.settings.synthesize_every_hours * 3600:
            return False
        await self.synthesize(now)
        await self.rollup(now)
        return True

    # ------------------------------------------------------------------ NOW.md
    def now_state(self, state: NowState | None = None) -> NowState:
        """``state`` with its empty fields filled from the substrate (:func:`fill_now`)."""
        return fill_now(state or NowState(), self.ledger)

    async def write_now(self, state: NowState | None = None, *, now: float | None = None) -> str:
        """Overwrite NOW.md with the current state (at most ``now_max_tokens``); returns
        its text. NOW.md is volatile: edits to it are not recorded."""
        now = self.clock.now() if now is None else now
        full = self.now_state(state)
        text = await self._offloader.run(render_now, now, self.tz, full,
                                         self.settings.now_max_tokens, self._tokenizer.count)
        await self._offloader.run(write_private, self.root / fs.NOW, text.encode(),
                                  what="workspace file NOW.md")
        self.counters["now_written"] += 1
        return text

    # ------------------------------------------------------------------ sessions
    async def session_context(self, now: float | None = None,
                              session_type: str = "main") -> SessionContext:
        """What a session of ``session_type`` loads at its start (see
        :class:`SessionContext`): MEMORY.md only when ``main``.

        Raises:
            ValueError: ``session_type`` is not ``main`` or ``shared``.
        """
        if session_type not in SESSION_TYPES:
            raise ValueError(f"session_type must be 'main' or 'shared', got {session_type!r}")
        today = self.ledger.day_of(self.clock.now() if now is None else now)
        return await self._offloader.run(
            fs.session_context, self.root, today, session_type == "main",
            self.settings.daily_budget_tokens, self.settings.memory_budget_tokens,
            self._tokenizer.count)

    async def export(self, directory: str | Path) -> list[Path]:
        """Copy the whole workspace tree (markdown only) to ``directory``, for a repo;
        a line that looks like a secret is left out. Returns the files written."""
        return await self._offloader.run(fs.export, self.root, Path(directory))


def _zone(name: str) -> tzinfo:
    if name == "UTC":
        return UTC
    import zoneinfo

    return zoneinfo.ZoneInfo(name)


def _lexical_embed(texts: Sequence[str]) -> np.ndarray:
    from solace.models import HashingEmbedder

    return HashingEmbedder().embed(list(texts))

