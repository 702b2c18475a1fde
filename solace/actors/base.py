"""The actor skeleton: an inbox, a reasoning loop, a fade coroutine, one nursery.

Every actor owns one nursery (started by the runtime's nursery with
``await nursery.start(actor.run)``) holding its inbox (a trio memory channel), the
loop that reasons over what arrives in it, its memory's fade coroutine and its index
keeper (its retriever's indexes brought in line once the tiers are still). So one
actor's slow reasoning never stalls another's inbox, and cancelling the runtime's
nursery stops everything in order.

The memory-facing API the issue fixes lives here too, because every actor has it:
``observe`` (append an event, deliver it to the agents that perceive it),
``recall`` (both tiers in parallel, plus read-through), ``reasoning_step`` (the
rehydration scope), and fact memory's ``remember`` / ``recall_facts`` tools.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import trio

from solace.actors.context import ActorContext
from solace.config import RetrievalWeights
from solace.memory.candidates import Retriever
from solace.memory.record import Hit
from solace.memory.rehydration import ReasoningStep, open_reasoning_step

__all__ = ["Actor", "Message"]

log = logging.getLogger(__name__)

INBOX_SIZE = 64  # bounded: a flooded actor applies back-pressure instead of growing


@dataclass(frozen=True, slots=True)
class Message:
    """Base of what travels through inboxes (each actor defines its own subclasses)."""


class Actor:
    """One of the five actors. Subclasses override :meth:`handle` (and may add tasks).

    Args:
        name: the agent name ("Main", ...).
        ctx: what it may reach outside itself (observe, recall, peers, clock, publish).
        memory: its ``AgentMemory``.
        retriever: its side of retrieval.
    """

    def __init__(self, name: str, ctx: ActorContext, memory: Any, retriever: Retriever) -> None:
        self.name = name
        self.ctx = ctx
        self.memory = memory
        self.retriever = retriever
        self.retrieval_weights: RetrievalWeights = ctx.config.agent(name).retrieval
        self._send, self._receive = trio.open_memory_channel[Message](INBOX_SIZE)
        self.handled = 0
        self._sent = 0  # messages put in the inbox; handled == _sent: nothing in flight
        self._caught_up = trio.Event()

    # ------------------------------------------------------------ task tree

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Run the actor until cancelled: fade coroutine, reasoning loop, index keeper,
        own tasks."""
        async with trio.open_nursery() as nursery:
            await nursery.start(self.memory.run)
            nursery.start_soon(self._reason)
            every = self.ctx.config.runtime.index_refresh_seconds
            if every:
                nursery.start_soon(self._keep_indexes, every)
            await self.start_tasks(nursery)
            task_status.started()

    async def _keep_indexes(self, every: float) -> None:
        """Bring the retriever's indexes in line with the tiers once they have been
        still for ``every`` seconds with no observe under way and no agent fading. A
        recall after a burst of observes then finds them in line instead of indexing
        the burst itself (after 50k observes with no recall, the first recall took
        about a minute). Nothing runs while an import goes on: following the tiers every
        second through one cost a fifth to a quarter of its throughput (records
        indexed, then faded and indexed again). Once in line, idle tiers wake nothing.
        """
        while True:  # from the start too: a reopened home's indexes, before a recall
            await self.memory.still_for(every, self.ctx.busy)
            await self.retriever.refresh()
            if self.retriever.in_line:  # else the tiers changed while it awaited
                await self.memory.next_change()

    async def start_tasks(self, nursery: trio.Nursery) -> None:
        """Start any extra task the actor needs (Time's heartbeat); none by default."""

    async def send(self, message: Message) -> None:
        """Put ``message`` in the inbox (waits while the inbox is full)."""
        self._sent += 1
        try:
            await self._send.send(message)
        except BaseException:
            self._sent -= 1
            raise

    def idle(self) -> bool:
        """Whether every message sent so far has been handled."""
        return self.handled >= self._sent

    async def drained(self) -> None:
        """Return once every message sent so far has been handled to its end (a turn's
        fact extraction after its reply included)."""
        while not self.idle():
            await self._caught_up.wait()

    async def _reason(self) -> None:
        async for message in self._receive:
            try:
                await self.handle(message)
            finally:
                self.handled += 1
                if self.handled >= self._sent:
                    self._caught_up.set()
                    self._caught_up = trio.Event()

    async def handle(self, message: Message) -> None:
        """React to one inbox message. The default refuses: an actor must say what it takes."""
        raise TypeError(f"{self.name} does not handle {type(message).__name__}")

    # ------------------------------------------------------- memory-facing API

    async def observe(
        self,
        text: str,
        *,
        kind: str = "message",
        speaker: str | None = None,
        at: float | datetime | None = None,
        attrs: Mapping[str, str] | None = None,
        emotional_weight: float | None = None,
        tags: Sequence[str] = (),
    ) -> int:
        """Append an event and deliver it to every agent that perceives it.

        The event's author (``Event.agent``) is ``speaker`` or, if None, this actor;
        who perceives it follows :func:`solace.actors.routing.route`. Returns once the
        event is in the substrate and every perceiving agent has its record.

        Args:
            text: the bare utterance (a record's text names its speaker itself).
            kind: a substrate kind.
            speaker: who said it; None means this actor.
            at: when it happened (default: the clock's now); a ReplayClock moves to it.
            attrs: caller metadata; round-trips exactly (``rt.event(eid).attrs``).
            emotional_weight: overrides Mood's reading (0..1); None lets Mood decide.
            tags: added to Mood's tags on every record of the event.

        Returns:
            The event's entry id.
        """
        if isinstance(tags, str):
            raise TypeError(f"tags must be a sequence of strings, not the string {tags!r}")
        return await self.ctx.observe(
            text, author=self.name if speaker is None else speaker, kind=kind, at=at,
            attrs=attrs, emotional_weight=emotional_weight, tags=tuple(tags),
        )

    async def recall(
        self,
        query: str,
        k: int = 10,
        *,
        read_through: bool | None = None,
        tags: Sequence[str] = (),
    ) -> list[Hit]:
        """At most ``k`` hits for ``query`` from this agent's memory, best first.

        Both tiers are queried in parallel and merged on one composite score with
        this agent's retrieval weights. With read-through (default: the runtime's
        ``config.runtime.read_through``) the other agents' records are candidates
        too, attributed by ``Hit.owner``; their private drafts never are. With
        ``tags``, long-term hits come only from records carrying at least one of them
        (casefolded); working records compete as ever, scored by the tags they carry.
        With read-through, a question asking when is also put to Time's own memory
        (``runtime.consult_time``;
        :func:`solace.actors.routing.consulted`): its hits, owned by Time, are
        interleaved two to one with this agent's (:mod:`solace.memory.hit_merge`).
        Then (each on by default): a query naming a day or a month gets what was said
        then first (``runtime.said_then_first``), a recalled turn that asked something
        brings its reply up behind it (``runtime.follow_replies``;
        :mod:`solace.recall_order`), and a hit saying what an earlier one said is left
        out (``runtime.distinct_hits``), the next distinct one taking its place.
        Recall does not change memory (see :meth:`reasoning_step` for that).
        """
        return await self.ctx.recall(self.name, query, k, read_through=read_through, tags=tags)

    async def remember(self, text: str, importance: float | None = None) -> dict[str, Any]:
        """Fact memory's ``remember`` tool (seed 004): save ``text`` under the turn's
        memory id, classified like any write (ADD/UPDATE/NOOP/CONFLICT) and attributed
        to this actor. Returns the tool result (``result`` says the class and reason);
        ``ok: false`` with the reason when refused or when fact memory is off."""
        return await self.ctx.remember(self.name, text, importance)

    async def recall_facts(self, query: str, k: int | None = None) -> dict[str, Any]:
        """Fact memory's ``recall`` tool (seed 004): the turn's memory id's facts best
        matching ``query`` (``facts``, and the rendered ``text``), or ``ok: false``."""
        return await self.ctx.recall_facts(self.name, query, k)

    @asynccontextmanager
    async def reasoning_step(
        self, query: str, k: int = 10, *, read_through: bool | None = None,
        tags: Sequence[str] = (),
    ) -> AsyncIterator[ReasoningStep]:
        """A rehydration scope: recall, with long-term hits above the threshold as cues.

        Inside, ``step.hits`` are the recall results and ``step.cues`` the long-term
        hits of this agent scoring above ``memory.rehydrate_threshold``. A cue marked
        with ``step.mark_used`` (or found by ``step.detect_use`` among the hits said
        to be shown with ``step.show``: see :mod:`solace.memory.rehydration`)
        re-enters working at ``runtime.cue_rung`` with fresh fade tracking when the
        block exits normally; every other cue stays in long-term unchanged. If the
        block raises, nothing moves. ``tags`` narrow the recall as in :meth:`recall`.
        """
        hits = await self.recall(query, k, read_through=read_through, tags=tags)
        async with open_reasoning_step(
            query,
            hits,
            memory=self.memory,
            retriever=self.retriever,
            threshold=self.ctx.config.memory.rehydrate_threshold,
            cue_rung=self.ctx.config.runtime.cue_rung,
            clock=self.ctx.clock,
        ) as step:
            yield step

    def stats(self) -> dict[str, object]:
        """For ``/inspect``: the memory's stats plus the actor's own counters."""
        out = dict(self.memory.stats())
        out["inbox_handled"] = self.handled
        return out
