"""The runtime: one substrate, one set of models, five actors, one task tree.

``async with open_runtime(home) as rt`` opens the home's substrate (with the
configured fsync and key settings), builds the models once, opens each actor's
memory (loading its snapshot or rebuilding it from the substrate), warms each agent
up from its long-term tail, and starts the actors in one nursery: each actor's own
nursery owns its inbox, its reasoning loop and its memory's fade coroutine. Leaving
the block (or SIGINT/SIGTERM in ``solace run``) cancels the actors, then — shielded
from cancellation — snapshots every memory and closes the substrate, which flushes
it. A crash loses nothing acknowledged: the substrate is the truth, and the tiers
are rebuilt from it.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import trio

from solace import offload
from solace.actors.base import Actor, Message
from solace.actors.context import ActorContext
from solace.actors.fact_tools import FactTools
from solace.actors.main_actor import SYSTEM_PROMPT, MainActor, UserLine
from solace.actors.mood import MoodActor
from solace.actors.mouth import Mouth, Speech
from solace.actors.routing import ACTORS, consulted
from solace.actors.session import MainSession
from solace.actors.supervisor import Supervisor
from solace.actors.timekeeper import TimeActor
from solace.assembly import (
    EventVectors,
    Models,
    Opened,
    build_models,
    build_retrievers,
    keep_retrieval_forms,
    open_projections,
    read_kept,
    seed_retrieval_forms,
)
from solace.clock import Clock, WallClock
from solace.collector import OpeningPause, paused, thaw
from solace.config import Config, FadeWeights, RetrievalWeights
from solace.event_reader import EventReader
from solace.heap import release_free_heap
from solace.home import Home
from solace.memory.event_vectors import EventVectorStore
from solace.memory.hit_merge import distinct, interleave
from solace.memory.holdings import Holdings
from solace.memory.rebuild import FADE_KIND
from solace.memory.record import Hit
from solace.memory.retrieval import recall
from solace.memory.retrieval_forms import Forms, UnitForms
from solace.recall_order import reorder
from solace.runtime_events import EventWriting, Observation, extra_kinds
from solace.runtime_workspace import (
    WorkspaceLink,
    check_session_type,
    check_turn_type,
)
from solace.supervision import TaskHealth, supervise
from solace.validation import (
    check_text,
)

if TYPE_CHECKING:
    from solace.facts import FactMemory
    from solace.workspace import Workspace

__all__ = [
    "FADE_KIND", "Observation", "Runtime", "extra_kinds", "open_runtime", "start_actors",
]

log = logging.getLogger(__name__)

_ACTOR_CLASSES: Mapping[str, type[Actor]] = {
    "Supervisor": Supervisor,
    "Main": MainActor,
    "Mood": MoodActor,
    "Time": TimeActor,
    "Mouth": Mouth,
}
_LISTENER_BUFFER = 256
#: Rounds of (actors drained, fades settled) :meth:`Runtime.settle` makes at most.
SETTLE_PASSES = 4

class Runtime(EventWriting):
    """A running Solace: use :func:`open_runtime` to get one.

    Attributes:
        config, clock, home: as opened.
        substrate: the trio substrate wrapper (the truth).
        embedder, tokenizer, llm, guard, offloader, ladder: built once, shared.
        memories: agent name -> ``AgentMemory``.
        conversations: the conversation layer (``rt.conversations``).
        session: Main's session of it (user lines, context stack, tools).
        facts: fact memory (seeds 001 and 004), or None when ``[facts] enabled =
            false`` or it failed to open (logged once; the runtime runs without it).
        fact_tools: the actors' ``remember`` / ``recall`` and Main's per-turn memory.
        workspace: the home's markdown workspace (seed 003, issue 10), or None when
            ``[workspace] enabled = false`` or it failed to open (logged once).
        workspace_link: every call the runtime makes into it, guarded
            (:class:`~solace.runtime_workspace.WorkspaceLink`).
        session_type: ``main`` (direct interaction with the human: the REPL, ``solace
            run``, the app) or ``shared`` (a group or channel: no MEMORY.md, no
            durable facts, no fact-memory recall block in Main's context).
        last_event_ts: time of the newest event not written by Time.
    """

    def __init__(self, *, config: Config, clock: Clock, home: Home, substrate: Any,
                 models: Models, memories: dict[str, Any], session_type: str = "main"
                 ) -> None:
        self.config = config
        self.clock = clock
        self.home = home
        self.substrate = substrate
        self.models = models
        self.embedder = models.embedder
        self.tokenizer = models.tokenizer
        self.llm = models.llm
        self.guard = models.guard
        self.offloader = models.offloader
        self.ladder = models.ladder
        self.memories = memories
        self.conversations: Any = None
        self.session: MainSession | None = None
        self.facts: FactMemory | None = None
        from solace.conversation import DEFAULT_SCOPE

        self.fact_tools = FactTools(lambda: self.facts, default_id=DEFAULT_SCOPE.user)
        self.session_type = check_session_type(session_type)
        self.workspace: Workspace | None = None
        self.workspace_link = WorkspaceLink(lambda: self.workspace, clock)
        self.last_event_ts: float | None = None
        self.observing = 0  # observes and deliveries under way (EventWriting._observing)
        self.actors: dict[str, Actor] = {}
        self._listeners: list[trio.MemorySendChannel[Speech]] = []
        # entry id -> rung-0 embedding; an open adopts the kept ones into it
        # (solace.memory.event_vectors, EventVectorStore.adopt)
        self.event_vectors = EventVectorStore()
        # recently read events, read on recall's lane (most reads are a recall's)
        self.events = EventReader(substrate, models.recall_offloader)
        self.holdings = Holdings(ACTORS)  # the events each agent holds (read-through)
        self.task_health: dict[str, TaskHealth] = {}  # supervised task -> how it fares
        self.context = ActorContext(
            config=config, clock=clock, observe=self.observe,
            observe_internal=self.observe_internal, recall=self.recall, send=self.send,
            publish=self.publish, last_event_ts=lambda: self.last_event_ts,
            remember=self.fact_tools.remember, recall_facts=self.fact_tools.recall,
            workspace_heartbeat=self.workspace_link.heartbeat,
            busy=self._busy,
        )

    def _busy(self) -> bool:
        """An observe under way or an agent fading (what index keepers wait out)."""
        return bool(self.observing) or any(memory.fading for memory in self.memories.values())

    # -------------------------------------------------------------- actors

    def agent(self, name: str) -> Actor:
        """The actor called ``name`` (Supervisor, Main, Mood, Time, Mouth).

        Raises:
            KeyError: naming the known agents.
        """
        try:
            return self.actors[name]
        except KeyError:
            raise KeyError(f"unknown agent {name!r} (agents are {', '.join(ACTORS)})") from None

    actor = agent

    async def send(self, agent: str, message: Message) -> None:
        """Put ``message`` in ``agent``'s inbox (an actor's way to reach a peer)."""
        await self.agent(agent).send(message)

    # ------------------------------------------------------------- recall

    async def recall(
        self,
        asker: str,
        query: str,
        k: int,
        *,
        read_through: bool | None = None,
        tags: Sequence[str] = (),
    ) -> list[Hit]:
        """See ``Actor.recall`` (``asker`` is the agent's name)."""
        with self.models.foreground.held():  # background work waits (recall_first_ms)
            return await self._recall(asker, query, k, read_through=read_through, tags=tags)

    async def _recall(self, asker: str, query: str, k: int, *, read_through: bool | None,
                      tags: Sequence[str]) -> list[Hit]:
        actor = self.agent(asker)
        if read_through is None:
            read_through = self.config.runtime.read_through
        vector = await self.embed_query(query)
        own = actor.retriever
        await own.prefetch(vector)
        peers = [self.actors[a].retriever for a in ACTORS if a != actor.name] \
            if read_through else []
        if peers:  # asked only for the events the asker lacks: skip a peer with none
            for side in (*peers, own):  # the asker's view last: it holds all they held
                await side.refresh()
            peers = [p for p in peers if self.holdings.can_add(p.agent, actor.name)]
        now = self.clock.now()
        held = self.holdings.held(actor.name)
        distinct_hits = self.config.runtime.distinct_hits
        hits = await recall(
            own, query, k, vector=vector, weights=actor.retrieval_weights,
            half_life_hours=actor.memory.config.recency_half_life_hours, now=now,
            peers=peers, held=held, query_tags=tuple(tags), between=held.between,
            distinct=distinct_hits,
        )
        consult = read_through and self.config.runtime.consult_time
        for name in consulted(actor.name, query) if consult else ():
            other = self.actors[name]  # its own memory, every event, nothing private
            theirs = await recall(
                other.retriever, query, k, vector=vector, weights=other.retrieval_weights,
                half_life_hours=other.memory.config.recency_half_life_hours, now=now,
                query_tags=tuple(tags), private=False, distinct=distinct_hits,
            )
            merged = interleave([replace(h, agent=actor.name, owner=name) for h in theirs],
                                hits, len(theirs) + len(hits))
            hits = distinct(merged, limit=k) if distinct_hits else merged[:k]
        return await reorder(hits, query, now, self.events.get_many,
                             said_then=self.config.runtime.said_then_first,
                             reply=self.config.runtime.follow_replies)

    async def embed_query(self, query: str) -> np.ndarray:
        """The query's embedding: from the embedder's cache on the loop when it was
        asked recently, else computed off the event loop."""
        vector = self.embedder.cached(query)
        if vector is not None:
            return np.asarray(vector, dtype=np.float32)
        vectors = await self.models.recall_offloader.run(self.embedder.embed, [query])
        return np.asarray(vectors[0], dtype=np.float32)

    # ------------------------------------------------------------ control

    async def settle(self) -> None:
        """Return once every actor has handled what it was sent (a chat turn's fact
        extraction, after its reply, included) and no agent has fade work pending at the
        clock's now (the agents settle concurrently: one agent's compression overlaps
        another's embedding)."""
        for _ in range(SETTLE_PASSES):  # a handled message may send another
            for actor in self.actors.values():
                await actor.drained()
            async with trio.open_nursery() as nursery:
                for name in ACTORS:
                    nursery.start_soon(self.memories[name].settle)
            if all(actor.idle() for actor in self.actors.values()):
                return

    def tune(
        self,
        agent: str,
        *,
        budget: int | None = None,
        weights: FadeWeights | RetrievalWeights | None = None,
    ) -> None:
        """Retune an agent at run time: its working budget, fade or retrieval weights.

        Raises:
            KeyError: unknown agent. TypeError: weights of another type.
        """
        actor = self.agent(agent)
        if isinstance(weights, RetrievalWeights):
            actor.retrieval_weights = weights
            weights = None
        elif weights is not None and not isinstance(weights, FadeWeights):
            raise TypeError(
                f"weights must be FadeWeights or RetrievalWeights, got {type(weights).__name__}"
            )
        if budget is not None or weights is not None:
            actor.memory.tune(budget_tokens=budget, weights=weights)

    def hyperfocus(self, on: bool) -> None:
        """Enter or leave Supervisor's hyperfocus (bigger budget, Time's heartbeat paused)."""
        supervisor = self.agent("Supervisor")
        time_actor = self.agent("Time")
        assert isinstance(supervisor, Supervisor) and isinstance(time_actor, TimeActor)
        supervisor.set_hyperfocus(on)
        if on:
            time_actor.pause()
        else:
            time_actor.resume()

    async def ask(self, text: str, *, memory: str | None = None,
                  memory_store: str | None = None, session_type: str | None = None) -> Speech:
        """Send a user line to Main and wait for what Mouth says back.

        Args:
            memory: the turn's fact-memory id (None: the conversation scope's user).
            memory_store: its store (None: Main's configured store, else ``default``).
                With fact memory off, both are accepted and the turn proceeds
                without memory.
            session_type: ``shared`` runs this turn as a shared session's (no
                MEMORY.md, durable facts or fact recall) in a process serving main
                sessions; None: the process's own type.

        Raises:
            solace.validation.InvalidObservationError: ``text`` cannot be stored (blank,
                or a character the substrate cannot carry); nothing was sent.
            solace.facts.InvalidMemoryIdError, solace.facts.UnknownStoreError: a bad
                memory id or store (fact memory on); nothing was sent.
            solace.runtime_workspace.SessionTypeError: an unknown session type, or
                ``main`` asked of a process serving shared sessions; nothing was sent.
        """
        check_text(text)
        self.fact_tools.check(memory, memory_store, "Main")
        turn_type = check_turn_type(session_type, self.session_type)
        send, receive = trio.open_memory_channel[Speech](1)
        async with receive:
            await self.agent("Main").send(UserLine(text, send, memory, memory_store, turn_type))
            return await receive.receive()

    def listen(self) -> trio.MemoryReceiveChannel[Speech]:
        """A channel that receives every :class:`Speech` from now on (oldest dropped
        if the listener falls more than a few hundred behind)."""
        send, receive = trio.open_memory_channel[Speech](_LISTENER_BUFFER)
        self._listeners.append(send)
        return receive

    async def publish(self, speech: Speech) -> None:
        """Hand ``speech`` to every listener (called by Mouth)."""
        for send in list(self._listeners):
            try:
                send.send_nowait(speech)
            except trio.WouldBlock:
                log.warning("a speech listener is not keeping up; one utterance skipped")
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                self._listeners.remove(send)

    def inspect(self, agent: str | None = None) -> dict[str, dict[str, object]]:
        """Stats per agent (tiers, rungs, budgets, counters), for ``/inspect``; with the
        health of the agent's supervised task tree (``task_failures``,
        ``task_restarts``, ``last_task_error``, ``degraded``)."""
        names = [agent] if agent else list(ACTORS)
        out = {}
        for name in names:
            stats = self.agent(name).stats()
            health = self.task_health.get(name)
            stats.update(health.as_dict() if health is not None else TaskHealth(name).as_dict())
            out[name] = stats
        return out

    def status(self) -> str:
        """One line: records per agent, working tokens / budget, long-term size."""
        parts = []
        for name in ACTORS:
            memory = self.memories[name]
            parts.append(
                f"{name} {memory.working.total_tokens}/{memory.working.budget_tokens}t "
                f"w{len(memory.working)} lt{len(memory.longterm)}"
            )
        return "; ".join(parts)

    async def _status_loop(
        self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        task_status.started()
        while True:
            await trio.sleep(self.config.runtime.status_interval_seconds)
            log.info("status: %s", self.status())

    async def _heap_loop(
        self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """Hand the heap the process freed back to the OS (:mod:`solace.heap`) now,
        after opening, and every ``runtime.release_heap_seconds``; 0: never. Real
        seconds (``time.monotonic``): under a test's jumping clock it stays as rare."""
        task_status.started()
        every = self.config.runtime.release_heap_seconds
        last = -math.inf
        while every:
            if time.monotonic() - last >= every:
                last = time.monotonic()
                await self.offloader.run(release_free_heap)
            await trio.sleep(every)

    # -------------------------------------------------- conversation layer

    async def conversation_command(self, line: str) -> str | None:
        """A REPL conversation command (``/topics`` ...) against Main's session; None if
        ``line`` is not one (or the layer is absent)."""
        if self.session is None:
            return None
        return await self.session.command(line)

    @property
    def conversation_help(self) -> str:
        """Help lines of the conversation commands ('' without the layer)."""
        return self.session.help() if self.session is not None else ""


# ------------------------------------------------------------------- opening


@asynccontextmanager
async def open_runtime(
    home: str | Path,
    config: Config | None = None,
    *,
    clock: Clock | None = None,
    warm_up: bool = True,
    session_type: str = "main",
) -> AsyncIterator[Runtime]:
    """Open a Solace runtime on ``home`` and run its five actors until the block exits.

    Three steps, each its own function: build the models once
    (:func:`~solace.assembly.build_models`), open the substrate and every projection
    of it with one replay (:func:`~solace.assembly.open_projections`: each agent's
    tiers, the conversation layer, fact memory, the workspace), then start the actors
    (:func:`start_actors`).

    Args:
        home: the home directory (created if missing); see :class:`solace.home.Home`.
        config: None for the embedded defaults.
        clock: None for the wall clock; a :class:`~solace.clock.ReplayClock` follows the
            ``at`` of observed events; a :class:`~solace.clock.TrioClock` in tests.
        warm_up: rehydrate each agent's newest ``memory.warmup_records`` long-term
            records into working at ``memory.warmup_rung`` after opening, so no agent
            starts amnesic.
        session_type: ``main`` (default: direct interaction with the human) or
            ``shared`` (a group or channel): a shared session's context holds no
            MEMORY.md, no durable facts and no fact-memory recall block.

    Yields:
        The :class:`Runtime`, with every actor started.

    Guarantees: on exit (normal, error or cancellation) every memory is snapshotted
    and the substrate is closed (flushed) before this returns.
    """
    from substrate import KeySource
    from substrate.aio import open_trio_substrate

    config = config if config is not None else Config()
    clock = clock if clock is not None else WallClock()
    session_type = check_session_type(session_type)
    where = Home.at(home, config)
    models = build_models(config)
    sub_cfg = config.substrate
    substrate = await open_trio_substrate(
        where.substrate_dir,
        fsync=sub_cfg.fsync,
        batch_interval_ms=sub_cfg.batch_interval_ms,
        batch_max_events=sub_cfg.batch_max_events,
        key_source=KeySource(key_file=where.key_file, env_var=sub_cfg.key_env or None),
        extra_kinds=extra_kinds(config),
        segment_bytes=sub_cfg.segment_mib << 20,
    )
    memories: dict[str, Any] = {}
    vectors: EventVectors | None = None
    opened: Opened | None = None
    pause = OpeningPause()  # no collections while millions of objects are built
    try:
        rt = Runtime(config=config, clock=clock, home=where, substrate=substrate,
                     models=models, memories=memories, session_type=session_type)
        # The kept vectors and forms are read in a thread of their own (decryption and
        # copies, mostly outside the GIL) while the projections open on the loop.
        reading = offload.start(read_kept, where, config, models, substrate.key_ring)
        opened = await open_projections(
            memories, where, config, models, substrate, clock,
            working_memory=lambda: rt.session.working_memory if rt.session else "",
            on_appended=rt.deliver_all)
        kept = await reading.result()
        rt.event_vectors.adopt(kept.vectors)
        vectors = EventVectors(rt.event_vectors, kept.files, substrate.key_ring,
                               models.offloader)
        rt.conversations, rt.facts, rt.workspace = (
            opened.conversations, opened.facts, opened.workspace)
        async with start_actors(rt, kept.forms, units=kept.units, warm_up=warm_up):
            del kept  # seeded: holding the kept forms too would keep a second copy
            pause.end(freeze=True)  # what was opened is never walked by a collection
            yield rt
    finally:
        pause.end(freeze=False)
        try:
            with trio.CancelScope(shield=True), paused():
                try:
                    await _snapshot_all(memories)
                    if opened is not None:
                        await _keep_projections(opened)
                    if vectors is not None:
                        await vectors.save()
                finally:
                    await substrate.aclose()
        finally:
            if pause.froze:  # after the writes: a collection now walks the whole memory
                thaw()


async def _snapshot_all(memories: Mapping[str, Any]) -> None:
    """Snapshot every memory; one that cannot be written (a full disk) is logged and
    the rest are still tried. Nothing is lost: a missing snapshot is rebuilt from the
    substrate at the next open."""
    for name, memory in memories.items():
        try:
            await memory.snapshot()
        except OSError as exc:
            log.error("%s: exit snapshot not written (%s); the next open rebuilds it "
                      "from the substrate", name, exc)


async def _keep_projections(opened: Opened) -> None:
    """Snapshot the conversation layer's, fact memory's and the workspace's projections.
    A snapshot is a cache, so a failure is logged, not raised: the next open replays the
    events after the older snapshot, or all of them. For the conversation layer and
    fact memory only a full disk (``OSError``) is such a failure; for the workspace,
    which is optional, any error is."""
    layers: tuple[tuple[str, Any, type[Exception]], ...] = (
        ("conversation", opened.conversations, OSError),
        ("fact memory", opened.facts, OSError),
        ("workspace", opened.workspace, Exception))
    for name, layer, tolerated in layers:
        if layer is None:
            continue
        try:
            await layer.snapshot()
        except tolerated as exc:
            log.error("%s snapshot not written (%s: %s); the next open replays more of the "
                      "substrate", name, type(exc).__name__, exc)


@asynccontextmanager
async def start_actors(rt: Runtime, forms: Mapping[str, Forms], *,
                       units: UnitForms | None = None, warm_up: bool = True
                       ) -> AsyncIterator[None]:
    """On ``rt`` with its projections open (:func:`~solace.assembly.open_projections`:
    ``rt.memories``, ``rt.conversations``, ``rt.facts`` and ``rt.workspace``, the last
    two None when switched off or failing to open): load Main's session context from
    the workspace, build the five actors on ``rt``'s narrow context, warm them up, and
    run them (with the layer's timers) until the block exits. ``forms``: each agent's
    kept retrieval forms and ``units`` the units' forms they were read against
    (:func:`~solace.assembly.read_kept`)."""
    config, models = rt.config, rt.models
    if rt.facts is not None:  # every fact write, delete and forget reaches the workspace
        rt.facts.on_appended = rt.workspace_link.events
    if rt.facts is None:
        rt.fact_tools.off_logged()  # its one log line was written: turns do not repeat it
    rt.session = MainSession(rt.conversations, SYSTEM_PROMPT, rt.fact_tools,
                             workspace=rt.workspace_link, session_type=rt.session_type)
    await rt.session.load_workspace()  # the session starts: SOUL/USER/AGENTS, MEMORY.md...
    retrievers = build_retrievers(rt.memories, config, models, rt.events, rt.event_vectors,
                                  rt.holdings, units)
    seed_retrieval_forms(retrievers, forms)  # as read_kept read them
    del forms  # the retrievers hold what they need (at 182k events the rest is 130 MB)
    for name in ACTORS:
        extra: dict[str, Any] = {}
        if name == "Main":
            extra = {"llm": models.llm, "offloader": models.offloader, "session": rt.session,
                     "fact_tools": rt.fact_tools}
        rt.actors[name] = _ACTOR_CLASSES[name](
            name, rt.context, rt.memories[name], retrievers[name], **extra
        )
    if warm_up and config.memory.warmup_records:
        for name in ACTORS:
            if len(rt.memories[name].longterm):
                await rt.memories[name].warm_up(
                    config.memory.warmup_records, config.memory.warmup_rung
                )
    # Every long-lived task is supervised: a failure is logged at ERROR, counted in
    # ``inspect()`` and restarted with back-off; it never cancels this nursery.
    try:
        async with trio.open_nursery() as nursery:
            for name in ACTORS:
                health = rt.task_health[name] = TaskHealth(f"{name} (actor tasks and fade)")
                await nursery.start(supervise, rt.actors[name].run, health)
            health = rt.task_health["conversations"] = TaskHealth("conversation layer")
            await nursery.start(supervise, rt.conversations.run, health)
            health = rt.task_health["status"] = TaskHealth("status line")
            await nursery.start(supervise, rt._status_loop, health)
            health = rt.task_health["heap"] = TaskHealth("freed heap returned")
            await nursery.start(supervise, rt._heap_loop, health)
            try:
                yield
            finally:
                nursery.cancel_scope.cancel()
    finally:
        with trio.CancelScope(shield=True), paused():  # the texts derived, for the next open
            await keep_retrieval_forms(retrievers, rt.home, config, models,
                                       rt.substrate.key_ring)
