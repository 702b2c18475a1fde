"""The application calls only the web console needs, over a :class:`~solace.app.Solace`.

Kept apart from :mod:`solace.app.api` (a wrapper, not a mixin) so the console's calls
never touch the core API: the memory prefix the agent is shown, an agent's curation
move through the user-decision guard (the same tool call Main makes), a substrate
event's raw text by entry id, and the substrate's verify status. Views are frozen
dataclasses of plain values (:func:`dataclasses.asdict` makes them JSON).

Errors: a bad argument raises :class:`~solace.app.AppError` (an unknown entry or
topic: :class:`~solace.app.NotFoundError`) naming the bad value; nothing is written
when a call is refused. A substrate that fails verification is a *result*
(``ok=False`` naming the problem), not an error: showing it is the point.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from solace.actors.routing import speaker_of
from solace.app.api import AppError, NotFoundError, Solace, TopicView, _iso
from substrate.errors import SubstrateError, UnknownEntryError

__all__ = [
    "AGENT_CURATIONS",
    "AgentCuration",
    "ConsoleCalls",
    "MemoryPrefix",
    "SourceEvent",
    "VerifyStatus",
]

AGENT_CURATIONS = ("promote", "demote", "deprecate")
"""The moves seed 000's ``manage_topic_memory`` tool offers the agent."""


@dataclass(frozen=True, slots=True)
class MemoryPrefix:
    """The scope's persistent memory block, as the agent's context shows it.

    Attributes:
        text: one line per topic in memory (``- title: summary``; a deprecated
            topic as ``- [DEPRECATED] title``), oldest first; "" when empty.
        topic_ids: the topics shown, in order.
        dropped: topics left out by FIFO truncation to the token budget.
        tokens: the block's token count.
    """

    text: str
    topic_ids: tuple[str, ...]
    dropped: tuple[str, ...]
    tokens: int


@dataclass(frozen=True, slots=True)
class AgentCuration:
    """What the agent's ``manage_topic_memory`` move did: ``ok`` False with the guard's
    ``message`` when refused; ``topic`` as it now is either way."""

    ok: bool
    message: str
    topic: TopicView


@dataclass(frozen=True, slots=True)
class SourceEvent:
    """One substrate event exactly as appended (``text`` unaltered)."""

    entry_id: int
    date: str
    ts: float
    agent: str
    speaker: str
    kind: str
    text: str
    attrs: dict[str, str]


@dataclass(frozen=True, slots=True)
class VerifyStatus:
    """The substrate's full verification: ``ok`` with the counts, or the first problem.

    Attributes:
        ok: every frame, the hash chain and the anchor checked out.
        error: the failing check's class name ("" when ok).
        detail: the problem, naming segment, offset and entry id ("" when ok).
        frames, segments, bytes, last_id, anchored_id, seconds: what was checked
            (zeros when it failed).
    """

    ok: bool
    error: str
    detail: str
    frames: int
    segments: int
    bytes: int
    last_id: int
    anchored_id: int | None
    seconds: float


class ConsoleCalls:
    """The console's calls over ``app`` (one per served process)."""

    def __init__(self, app: Solace) -> None:
        self.app = app

    async def memory_prefix(self) -> MemoryPrefix:
        """The scope's memory block: what every turn's context stack opens with."""
        block = await self.app._conversations().memory_block(self.app.scope)
        return MemoryPrefix(block.text, tuple(block.topic_ids), tuple(block.dropped),
                            int(block.tokens))

    async def agent_curate(self, topic_id: str, action: str) -> AgentCuration:
        """The agent's move on ``topic_id``: the ``manage_topic_memory`` tool call Main
        makes, recorded in the topic's session like Main's own calls, through the
        user-decision guard. A refusal is returned (``ok`` False, the seed's message).

        Raises:
            AppError: an action the agent does not have. NotFoundError: an unknown topic.
        """
        if action not in AGENT_CURATIONS:
            raise AppError(f"unknown agent curation {action!r} (one of "
                           f"{', '.join(AGENT_CURATIONS)})")
        topic = self.app._topic(topic_id)
        conv = self.app._conversations()
        outcome = await conv.dispatch_tool(
            "manage_topic_memory", {"action": action, "topic_id": topic_id},
            session=topic.session_id)
        if outcome is None:  # manage_topic_memory is built in; None would be a wiring bug
            raise AppError("the conversation layer does not own manage_topic_memory")
        result: dict[str, Any] = dict(outcome.result)
        view = next(t for t in self.app.topics() if t.topic_id == topic_id)
        return AgentCuration(bool(outcome.ok), str(result.get("error", "")), view)

    async def source_event(self, entry_id: int) -> SourceEvent:
        """The substrate event ``entry_id``, read off the event loop.

        Raises:
            NotFoundError: no event has that id.
        """
        if entry_id < 1:
            raise NotFoundError(f"no event {entry_id!r}: entry ids start at 1")
        rt = self.app.runtime
        try:
            event = await rt.offloader.run(rt.event, entry_id)
        except UnknownEntryError:
            raise NotFoundError(f"no event {entry_id!r} in the substrate "
                                f"(last id {rt.substrate.last_id})") from None
        return SourceEvent(event.entry_id, _iso(event.ts), event.ts, event.agent,
                           speaker_of(event), event.kind, event.content, dict(event.attrs))

    async def verify(self) -> VerifyStatus:
        """Re-read and check the whole substrate (frames, chain, anchor) off the loop."""
        try:
            report = await self.app.runtime.substrate.verify()
        except SubstrateError as exc:
            return VerifyStatus(False, type(exc).__name__, str(exc), 0, 0, 0, 0, None, 0.0)
        return VerifyStatus(True, "", "", report.frames, report.segments, report.bytes,
                            report.last_id, report.anchored_id, round(report.seconds, 4))
