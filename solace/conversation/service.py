"""``Conversations``: sessions, topics, tools, curation, the context stack, the lifecycle.

The one object the runtime wires in (``rt.conversations``), built by
:func:`open_conversations`, which rebuilds the projection from the substrate. Every
change goes the same way: decide the events from the current projection, append
them to the substrate in one atomic batch, fold them into the projection; the three
steps run under one write lock, so decisions never race and the live state is exactly
what a replay of the substrate produces.

Evaluations (drift, fork, summaries) run in :meth:`Conversations.run`, a background
task the runtime starts in its nursery; callers only schedule them.
"""

from __future__ import annotations

import functools
import json
import secrets
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import trio

from solace.clock import Clock
from solace.config import ConversationConfig
from solace.conversation import curation, events, facts, notes
from solace.conversation.context import ContextStack, assemble, fifo_fit, prior_entry
from solace.conversation.drift import DriftSettings
from solace.conversation.errors import InvalidArgumentError
from solace.conversation.evaluation import EvaluationReport, Evaluator, closing_drafts
from solace.conversation.events import Appended, Draft
from solace.conversation.lifecycle import EvaluatedGuard, Lifecycle
from solace.conversation.memory import MemoryBlock, MemoryCache, render_memory_block
from solace.conversation.model import Fact, Notes, Scope, Session, ThreadItem, Topic, Trigger
from solace.conversation.projection import Projection
from solace.conversation.snapshot import encode, read_snapshot, write_encoded
from solace.conversation.statements import statement_facts
from solace.conversation.store import AsyncSubstrate, EventStore, LayerReplay
from solace.conversation.summarise import Summariser
from solace.conversation.toolrun import run_tool
from solace.conversation.tools import BUILTIN_TOOLS, ToolOutcome, ToolSpec
from solace.models.embedder import Embedder
from solace.models.guard import Guard
from solace.models.llm import LLM
from solace.models.tokenizer import Tokenizer
from solace.offload import Offloader
from solace.projections import replay

__all__ = ["Conversations", "open_conversations"]

ROLES = ("user", "assistant", "system")


async def open_conversations(
    *,
    substrate: AsyncSubstrate,
    config: ConversationConfig,
    llm: LLM,
    embedder: Embedder,
    tokenizer: Tokenizer,
    guard: Guard,
    offloader: Offloader,
    clock: Clock,
    working_memory: Callable[[], str] | None = None,
    on_appended: Callable[[Sequence[Appended]], Awaitable[None]] | None = None,
    replayed: bool = True,
    snapshot: Path | None = None,
) -> Conversations:
    """Open the conversation layer over ``substrate`` (a ``substrate.aio`` wrapper
    opened with ``extra_kinds`` including :data:`CONVERSATION_KINDS`).

    The projection is rebuilt from the substrate before this returns, unless
    ``replayed`` is False: then the caller passes :meth:`Conversations.replaying` to
    :func:`solace.projections.replay` with the other projections it opens. Start
    :meth:`Conversations.run` in a nursery for evaluations and debounce timers.
    ``on_appended`` receives every batch this layer appends, after it is folded in:
    the runtime delivers it to the agents with the same routing a rebuild replays.
    ``snapshot``: where the projection is kept across restarts
    (:meth:`Conversations.snapshot` writes it); when it holds a usable snapshot,
    only the layer's events after its checkpoint are folded.
    """
    conv = Conversations(
        store=EventStore(substrate), config=config, llm=llm, embedder=embedder,
        tokenizer=tokenizer, guard=guard, offloader=offloader, clock=clock,
        working_memory=working_memory, on_appended=on_appended, snapshot=snapshot,
    )
    if snapshot is not None:
        conv.kept = await offloader.run(functools.partial(
            read_snapshot, snapshot, ring=substrate.key_ring, last_id=int(substrate.last_id)))
    if replayed:
        await conv.rebuild()
    return conv


class Conversations:
    """Sessions -> topics -> messages, per (user, agent, org) scope. See the module doc."""

    def __init__(
        self,
        *,
        store: EventStore,
        config: ConversationConfig,
        llm: LLM,
        embedder: Embedder,
        tokenizer: Tokenizer,
        guard: Guard,
        offloader: Offloader,
        clock: Clock,
        working_memory: Callable[[], str] | None = None,
        on_appended: Callable[[Sequence[Appended]], Awaitable[None]] | None = None,
        snapshot: Path | None = None,
    ) -> None:
        self.store = store
        self.snapshot_path = snapshot
        #: The snapshot the next :meth:`replaying` starts from (taken by it).
        self.kept: tuple[Projection, int] | None = None
        self.on_appended = on_appended
        self.config = config
        self.tokenizer = tokenizer
        self.offloader = offloader
        self.clock = clock
        self.working_memory = working_memory
        self.projection = Projection()
        self.memory_cache = MemoryCache()
        self.summariser = Summariser(
            llm, guard, tokenizer, mode=config.summary_mode,
            max_tokens=config.summary_max_tokens, weak_after=config.summary_weak_after,
        )
        self._embedder = embedder
        self._write_lock = trio.Lock()
        self._evaluator = self._make_evaluator()
        self.lifecycle = Lifecycle(self._evaluator, config.debounce_ms / 1000)
        self._last_stable: dict[str, str] = {}
        self._line_tokens: dict[str, int] = {}
        self.stable_reused = 0

    def _make_evaluator(self) -> Evaluator:
        c = self.config
        return Evaluator(
            projection=self.projection, write=self._write, new_topic_id=self._new_topic_id,
            offloader=self.offloader, embedder=self._embedder, summariser=self.summariser,
            drift=DriftSettings(c.drift_scan_back, c.drift_context, c.drift_min_segment,
                                c.drift_threshold),
            min_turns=c.min_memory_turns,
        )

    # -- the write path ----------------------------------------------------------

    async def rebuild(self) -> None:
        """Replace the projection by a replay of the substrate (caches dropped)."""
        await replay(self.store.substrate, [self.replaying()])

    def replaying(self) -> LayerReplay:
        """This layer's part of a replay (:func:`solace.projections.replay`): when it
        finishes, its projection replaces the current one (caches dropped). It starts
        from the snapshot read at open, if any (once: a later rebuild replays all)."""
        kept, self.kept = self.kept, None
        return LayerReplay(self._install, kept=kept)

    async def snapshot(self) -> bool:
        """Keep the projection for the next open (at ``snapshot``, given to
        :func:`open_conversations`): taken under the write lock, so it holds every
        event of this layer up to the log's head at that moment. Returns False when
        the layer has no snapshot path.

        Raises:
            solace.sealed.StorageFullError, OSError: not written; the file holds
            what it held (a cache: the next open replays more).
        """
        if self.snapshot_path is None:
            return False
        async with self._write_lock:  # no write folds in while it is encoded off the loop
            head = int(self.store.substrate.last_id)
            data = await self.offloader.run(encode, self.projection, head)
        await self.offloader.run(functools.partial(
            write_encoded, self.snapshot_path, data, ring=self.store.substrate.key_ring))
        return True

    def _install(self, projection: Projection) -> None:
        self.projection = projection
        self.memory_cache = MemoryCache()
        self._evaluator = self.lifecycle.evaluator = self._make_evaluator()
        self.lifecycle.guard = EvaluatedGuard()
        for session in projection.sessions.values():
            topic = projection.topics.get(session.active_topic_id)
            if topic is not None and topic.summary_count == topic.message_count:
                self.lifecycle.guard.mark(session.session_id)  # nothing new since its summary

    async def _write(self, make: Callable[[], list[Draft]]) -> list[Appended]:
        """Decide, append, fold: atomically with respect to every other write."""
        async with self._write_lock:
            drafts = make()
            if not drafts:
                return []
            appended = await self.store.append(drafts, self.clock.now())
            for event in appended:
                scope = self.projection.apply(event)
                if scope is not None:
                    self.memory_cache.invalidate(scope)
        if self.on_appended is not None:
            await self.on_appended(appended)
        return appended

    def _new_topic_id(self) -> str:
        return f"t{self.projection.max_topic_no + 1}"

    # -- reading -------------------------------------------------------------

    def session(self, session_id: str) -> Session:
        """The session; :class:`UnknownSessionError` if there is none."""
        return self.projection.session(session_id)

    def sessions(self, scope: Scope) -> list[Session]:
        """The scope's sessions, oldest first."""
        return self.projection.sessions_of(scope)

    def topic(self, topic_id: str) -> Topic:
        """The topic; :class:`UnknownTopicError` if there is none."""
        return self.projection.topic(topic_id)

    def topics(self, session_id: str) -> list[Topic]:
        """The session's topics in creation order."""
        return [self.projection.topic(t) for t in self.session(session_id).topic_ids]

    def topics_of(self, scope: Scope) -> list[Topic]:
        """Every topic of the scope, across sessions, in creation order."""
        return list(self.projection.topics_of(scope))

    def active_topic(self, session_id: str) -> Topic:
        """The session's one active topic."""
        return self.projection.active_topic(session_id)

    def thread(self, topic_id: str) -> list[ThreadItem]:
        """The topic's thread: messages, tool calls and results, in order."""
        return self.projection.thread(topic_id)

    def notes(self, topic_id: str) -> Notes:
        """The topic's notes (active document and archived ones)."""
        return self.projection.notes_of(topic_id)

    def facts(self, scope: Scope) -> Mapping[str, Fact]:
        """The scope's durable facts by key."""
        return self.projection.facts_of(scope)

    # -- sessions, topics, messages ------------------------------------------

    async def open_session(self, scope: Scope, *, title: str = "") -> Session:
        """Start a session with its first topic active."""
        sid = ""

        def make() -> list[Draft]:
            nonlocal sid
            sid = f"s{self.projection.max_session_no + 1}"
            tid = self._new_topic_id()
            return [
                events.open_session(scope, sid),
                events.open_topic(scope, sid, tid, origin="initial", title=title),
                events.activate_topic(scope, sid, tid),
            ]

        await self._write(make)
        return self.session(sid)

    async def add_message(self, session_id: str, role: str, content: str) -> ThreadItem:
        """Record a message in the session's active topic.

        A user message stating durable facts ("My dog's name is Rex") also sets them,
        in the same batch (:func:`~solace.conversation.statements.statement_facts`).
        Resets the session's ``hasEvaluated`` guard, and every ``drift_interval``
        messages of the topic schedules an evaluation (drift check) in the background.

        Raises:
            InvalidArgumentError: an unknown role. UnknownSessionError: no such session.
        """
        if role not in ROLES:
            raise InvalidArgumentError(f"role must be one of {', '.join(ROLES)}, got {role!r}")
        self.session(session_id)

        def make() -> list[Draft]:
            topic = self.active_topic(session_id)
            drafts = [events.message(topic.scope, session_id, topic.topic_id, role, content)]
            if role == "user":  # what the user states about themselves: durable facts
                drafts += statement_facts(topic.scope, content, self.facts(topic.scope))
            return drafts

        event, *_facts = await self._write(make)
        self.lifecycle.guard.reset(session_id)
        topic = self.active_topic(session_id)
        if topic.message_count % self.config.drift_interval == 0:
            self.lifecycle.evaluate(session_id, "interval")
        return self.projection.items[event.entry_id]

    async def new_topic(self, session_id: str, *, title: str = "") -> Topic:
        """Start a new topic (the user's choice): the prior topic is summarised and its
        notes archived before the new topic becomes active, in one batch."""
        result = None
        for _ in range(3):  # if the prior topic changes while summarising, summarise again
            snap = self._evaluator.snapshot(session_id)
            prior = self.topic(snap.topic_id)
            thread = self.thread(prior.topic_id)
            note_text = self.notes(prior.topic_id).active
            result = None
            if thread or note_text:
                result = await self._evaluator.summarise(thread, note_text)
            if self._evaluator.snapshot(session_id) == snap:
                break
        new_id = ""

        def make() -> list[Draft]:
            nonlocal new_id
            prior = self.active_topic(session_id)
            new_id = self._new_topic_id()
            drafts = []
            if result is not None:
                drafts += closing_drafts(
                    self.projection, prior, result, count=prior.message_count,
                    min_turns=self.config.min_memory_turns,
                )
            return [
                *drafts,
                events.open_topic(prior.scope, session_id, new_id, origin="manual",
                                  parent=prior.topic_id, title=title),
                events.activate_topic(prior.scope, session_id, new_id),
            ]

        await self._write(make)
        self.lifecycle.guard.reset(session_id)
        return self.topic(new_id)

    # -- tools -----------------------------------------------------------------

    @property
    def tools(self) -> tuple[ToolSpec, ...]:
        """The built-in tools, dispatched ahead of any external one."""
        return BUILTIN_TOOLS

    async def dispatch_tool(
        self, name: str, args: Mapping[str, Any], *, session: str
    ) -> ToolOutcome | None:
        """Run built-in tool ``name`` if it is one; None means "not mine, dispatch it
        externally". The call and its result are recorded in the active topic's thread.

        A bad argument or a refused move is returned as ``ok=False`` with the reason
        (the seed's exact guard messages); it is not raised.
        """
        if name not in {t.name for t in BUILTIN_TOOLS}:
            return None
        call_id = await self.record_tool_call(session, name, args)
        outcome = await run_tool(self, name, args, session_id=session, call_id=call_id)
        await self.record_tool_result(session, call_id, name, outcome.content, ok=outcome.ok)
        return outcome

    async def record_tool_call(
        self, session_id: str, tool: str, args: Mapping[str, Any] | str
    ) -> str:
        """Record a (built-in or external) tool call in the thread; returns its call id."""
        text = (
            args if isinstance(args, str)
            else json.dumps(dict(args), ensure_ascii=False, sort_keys=True)
        )
        call_id = secrets.token_hex(4)

        def make() -> list[Draft]:
            topic = self.active_topic(session_id)
            return [events.tool_call(topic.scope, session_id, topic.topic_id, tool, call_id, text)]

        await self._write(make)
        return call_id

    async def record_tool_result(
        self, session_id: str, call_id: str, tool: str, result: str, *, ok: bool = True
    ) -> ThreadItem:
        """Record a tool result in the thread (the volatile layer shows the active ones)."""

        def make() -> list[Draft]:
            topic = self.active_topic(session_id)
            return [events.tool_result(
                topic.scope, session_id, topic.topic_id, tool, call_id, result, ok
            )]

        (event,) = await self._write(make)
        return self.projection.items[event.entry_id]

    # -- facts and notes ---------------------------------------------------------

    async def set_fact(self, scope: Scope, key: str, value: object) -> Fact:
        """Create or replace durable fact ``key`` (``important_info`` ``$set``)."""
        (event,) = await self._write(lambda: [facts.set_fact(scope, key, value)])
        return self.facts(scope)[event.attrs["key"]]

    async def unset_fact(self, scope: Scope, key: str) -> None:
        """Delete durable fact ``key``; :class:`UnknownFactError` if it is not set."""
        await self._write(lambda: [facts.unset_fact(scope, key, self.facts(scope))])

    async def append_notes(self, topic_id: str, text: str) -> Notes:
        """Append to the topic's active notes (``notes`` ``$set``)."""
        await self._write(lambda: [notes.append_notes(self.topic(topic_id), text)])
        return self.notes(topic_id)

    async def replace_notes(self, topic_id: str, text: str) -> Notes:
        """Replace the topic's active notes (``notes`` ``update``)."""
        await self._write(lambda: [notes.replace_notes(self.topic(topic_id), text)])
        return self.notes(topic_id)

    # -- curation ------------------------------------------------------------------

    async def curate(self, topic_id: str, action: str) -> Topic:
        """The user's move (promote, demote, deprecate, undeprecate, cycle); always
        allowed; sets ``keepInMemoryManuallySet`` / ``deprecatedManuallySet``."""
        await self._write(lambda: curation.user_curation(self.topic(topic_id), action))
        return self.topic(topic_id)

    async def agent_curate(self, topic_id: str, action: str) -> Topic:
        """The agent's move, through the user-decision guard.

        Raises:
            CurationRejected: with the seed's message when the user decided already.
        """
        await self._write(lambda: curation.agent_curation(
            self.topic(topic_id), action, min_turns=self.config.min_memory_turns
        ))
        return self.topic(topic_id)

    # -- the context stack ---------------------------------------------------------

    async def memory_block(self, scope: Scope) -> MemoryBlock:
        """The scope's memory block, from the cache or rendered (off the loop) on a miss."""
        block = self.memory_cache.get(scope)
        if block is None:
            topics = list(self.projection.topics_of(scope))
            block = await self.offloader.run(
                render_memory_block, topics, self.config.memory_budget_tokens, self.tokenizer
            )
            self.memory_cache.put(scope, block)
        return block

    async def build_context(
        self,
        session_id: str,
        *,
        identity: str = "",
        skills: Sequence[str] = (),
        tools: Sequence[ToolSpec] = (),
        recall: str = "",
        recall_tokens: int = 0,
        daily: str = "",
        durable_facts: bool = True,
    ) -> ContextStack:
        """Assemble this turn's context stack for the session (see :mod:`.context`).

        Args:
            identity: the SOUL text. skills: skill descriptions.
            tools: external tools, listed after the built-in ones.
            recall, recall_tokens: the turn's fact-memory recall block and its tokens.
            daily: the workspace's recent daily logs (semi-stable layer).
            durable_facts: False leaves the scope's durable facts out (a shared session).
        """
        session = self.session(session_id)
        active = self.active_topic(session_id)
        prior = [
            topic for topic in (self.topic(t) for t in session.topic_ids)
            if topic.topic_id != active.topic_id and topic.summary and not topic.in_memory_block
        ]
        counts = [self._count(prior_entry(t)) for t in prior]
        prior = prior[fifo_fit(counts, self.config.prior_topics_budget_tokens):]
        stack = assemble(
            identity=identity, skills=skills, tools=(*BUILTIN_TOOLS, *tools),
            memory=await self.memory_block(session.scope),
            facts=self.facts(session.scope) if durable_facts else {},
            active=active, parent=self.projection.topics.get(active.parent),
            notes=self.notes(active.topic_id), prior=prior, thread=self.thread(active.topic_id),
            trailing_requests=self.config.trailing_requests,
            working_memory=self.working_memory() if self.working_memory is not None else "",
            recall=recall, recall_tokens=recall_tokens, daily=daily,
        )
        if self._last_stable.get(session_id) == stack.stable:
            self.stable_reused += 1
        self._last_stable[session_id] = stack.stable
        return stack

    def _count(self, line: str) -> int:
        """Token count of a prior-topic line, cached (the same lines recur every turn)."""
        count = self._line_tokens.get(line)
        if count is None:
            if len(self._line_tokens) >= 4096:
                self._line_tokens.clear()
            count = self._line_tokens[line] = self.tokenizer.count(line)
        return count

    # -- lifecycle -------------------------------------------------------------------

    def has_evaluated(self, session_id: str) -> bool:
        """The ``hasEvaluated`` guard of the session's active topic."""
        return session_id in self.lifecycle.guard

    def evaluate(self, session_id: str, trigger: Trigger = "manual") -> None:
        """Schedule an evaluation; returns at once and never raises (fire-and-forget).
        It runs in :meth:`run`'s task; its errors are logged there."""
        self.lifecycle.evaluate(session_id, trigger)

    async def evaluate_now(
        self, session_id: str, trigger: Trigger = "manual"
    ) -> EvaluationReport | None:
        """Run the pipeline now; never raises (errors are logged; None is returned)."""
        return await self.lifecycle.evaluate_now(session_id, trigger)

    def exit_trigger(self, session_id: str, trigger: Trigger) -> None:
        """An exit trigger (navigation, visibility_hidden, disconnect): debounced."""
        self.lifecycle.exit_trigger(session_id, trigger)

    def on_navigation(self, session_id: str) -> None:
        """The chat page unmounted on an in-app route change."""
        self.exit_trigger(session_id, "navigation")

    def on_visibility_hidden(self, session_id: str) -> None:
        """The tab was switched or minimised (visibilityState -> hidden)."""
        self.exit_trigger(session_id, "visibility_hidden")

    def on_disconnect(self, session_id: str) -> None:
        """The real-time socket disconnected."""
        self.exit_trigger(session_id, "disconnect")

    async def settle(self) -> None:
        """Wait for every scheduled evaluation to finish (needs :meth:`run`)."""
        await self.lifecycle.settle()

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """The background task (evaluation queue, debounce timers); start it in a nursery."""
        await self.lifecycle.run(task_status=task_status)

    def stats(self) -> dict[str, object]:
        """Counters for status lines and benchmarks."""
        p = self.projection
        return {
            "sessions": len(p.sessions),
            "topics": len(p.topics),
            "thread_items": len(p.items),
            "evaluations": self.lifecycle.queue.completed,
            "evaluation_errors": self.lifecycle.errors,
            "debounced": self.lifecycle.debouncer.fired,
            "summaries": dict(self.summariser.counts),
            "summary_guard": dict(self.summariser.guard.counts),
            "memory_cache": {
                "hits": self.memory_cache.hits,
                "misses": self.memory_cache.misses,
                "invalidations": self.memory_cache.invalidations,
            },
            "stable_prefix_reused": self.stable_reused,
        }
