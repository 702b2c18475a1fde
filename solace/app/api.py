"""The application API: every call a surface (CLI, REPL, HTTP, MCP) makes of Solace.

One object over a running :class:`~solace.runtime.Runtime`: a chat turn, observe,
recall, topics and curation, durable facts, notes, inspect and stats, seed 000's
exit triggers, and fact memory's calls (:mod:`solace.app.memory`: remember, recall,
list, delete, forget, consolidate, export, import). The markdown workspace's calls
(:mod:`solace.app.workspace`), the topic calls of ``topics show`` and ``notes replace``
(:mod:`solace.app.topics`) and the web console's (:mod:`solace.app.console`) wrap this
object. Surfaces translate their own
input into these calls and the returned views into their own output; none of them
reaches into the runtime. Views are frozen dataclasses of plain values, so a
surface can turn one into JSON with :func:`dataclasses.asdict`.

Errors: bad arguments raise :class:`AppError` subclasses whose message names the bad
value; nothing is written when a call is refused.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, cast

from solace.actors.routing import ACTORS, speaker_of
from solace.app.memory import MemoryCalls
from solace.conversation import DEFAULT_SCOPE
from solace.conversation.model import EXIT_TRIGGERS, Scope, Trigger
from solace.conversation.sessions import current_session
from solace.memory.record import Hit
from solace.runtime import Runtime

if TYPE_CHECKING:
    from solace.clock import Clock
    from solace.conversation.service import Conversations
    from solace.facts.service import FactMemory
    from solace.offload import Offloader
    from solace.workspace.service import Workspace

__all__ = [
    "AppError",
    "ChatReply",
    "Layers",
    "FactView",
    "NotFoundError",
    "RecallHit",
    "Solace",
    "TopicView",
    "UnknownAgentError",
]

CURATIONS = ("promote", "demote", "deprecate", "undeprecate")
MAX_RECALL_TAGS = 32
"""The most tags one recall may narrow by."""
MAX_TAG_CHARS = 128


class AppError(ValueError):
    """A call to the application API was refused; the message names what was wrong."""


class UnknownAgentError(AppError):
    """An agent name that is not one of the five actors."""


class NotFoundError(AppError):
    """A topic, session or fact that does not exist (in this scope)."""


@dataclass(frozen=True, slots=True)
class ChatReply:
    """What a chat turn said aloud: ``text`` ("" when Mouth found nothing sayable)."""

    text: str
    entry_id: int | None
    draft_id: int | None
    redacted_lines: int


@dataclass(frozen=True, slots=True)
class RecallHit:
    """One recall hit with what a person needs to cite it.

    Attributes:
        text: the record's text as it would be injected.
        agent / owner: whose memory it is (``owner`` set for read-through hits).
        tier, rung: where it sits on the ladder (0 raw ... 3 embedding + tags).
        score, relevance, lexical, recency, emotion, tags, context: the composite score
            and its parts (they sum to it; ``context`` last, 0 from a server without it).
        entry_ids: the substrate events it stands for (``solace substrate dump`` shows them).
        date: ISO date-time (UTC) of the newest event it stands for.
        speakers: who said the events, in order of first appearance.
        dia_ids: the events' ``dia_id`` attributes, where they have one.
    """

    text: str
    agent: str
    owner: str | None
    tier: str
    rung: int
    score: float
    relevance: float
    lexical: float
    recency: float
    emotion: float
    tags: float
    tokens: int
    entry_ids: tuple[int, ...]
    date: str
    speakers: tuple[str, ...]
    dia_ids: tuple[str, ...]
    context: float = 0.0


@dataclass(frozen=True, slots=True)
class TopicView:
    """A topic as a person reads it (seed 000's tri-state is ``state``)."""

    topic_id: str
    session_id: str
    title: str
    summary: str
    state: str
    active: bool
    keep_in_memory_manually_set: bool
    deprecated_manually_set: bool
    messages: int


@dataclass(frozen=True, slots=True)
class FactView:
    """A durable fact: ``key`` = ``value``."""

    key: str
    value: str


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=UTC).isoformat(timespec="seconds")


def _recall_tags(tags: object) -> tuple[str, ...]:
    """``tags`` checked for :meth:`Solace.recall` (see there), as a tuple."""
    if isinstance(tags, str | bytes) or not isinstance(tags, Sequence):
        raise AppError(f"tags must be a list of strings, got {type(tags).__name__}: {tags!r}")
    if len(tags) > MAX_RECALL_TAGS:
        raise AppError(f"at most {MAX_RECALL_TAGS} tags may narrow a recall, got {len(tags)}")
    for tag in tags:
        if not isinstance(tag, str):
            raise AppError(f"each tag must be a string, got {type(tag).__name__}: {tag!r}")
        if not tag.strip() or len(tag) > MAX_TAG_CHARS:
            raise AppError(f"each tag must be 1..{MAX_TAG_CHARS} characters and not blank, "
                           f"got {tag[:MAX_TAG_CHARS + 1]!r}")
    return tuple(tags)


def _cite(hit: Hit, events: Sequence[Any]) -> RecallHit:
    """``hit`` with what a person needs to cite it, read from its ``events``."""
    speakers = tuple(dict.fromkeys(speaker_of(e) for e in events))
    dia_ids = tuple(e.attrs["dia_id"] for e in events if "dia_id" in e.attrs)
    newest = max((e.ts for e in events), default=0.0)
    p = hit.parts
    return RecallHit(
        hit.text, hit.agent, hit.owner, str(getattr(hit.tier, "value", hit.tier)),
        hit.rung, hit.score, p.relevance, p.lexical, p.recency, p.emotion, p.tags,
        hit.tokens, hit.entry_ids, _iso(newest), speakers, dia_ids, p.context,
    )


@dataclass(frozen=True, slots=True)
class Layers:
    """The parts of a runtime a surface opened alone, without models or actors (the CLI,
    when no process holds the home): the conversation layer for the topic, fact and
    note calls, fact memory (and a clock) for fact memory's calls, the workspace (and an
    offloader) for the workspace's. :class:`Solace` over it makes only the calls whose
    layer is given."""

    conversations: Conversations | None = None
    facts: FactMemory | None = None
    clock: Clock | None = None
    workspace: Workspace | None = None
    offloader: Offloader | None = None


class Solace(MemoryCalls):
    """The application API over one running runtime.

    Args:
        runtime: an open runtime (``async with open_runtime(home) as rt``), or
            :class:`Layers` for the calls of the layers it holds.
        scope: the conversation scope the topic, fact and note calls act on.
    """

    def __init__(self, runtime: Runtime | Layers,
                 scope: Scope = DEFAULT_SCOPE) -> None:
        # (over Layers: a conversation or fact call without its layer raises AppError or
        # FactsDisabledError; any other call is an AttributeError, a caller's bug)
        self.runtime = cast("Runtime", runtime)
        self.scope = scope

    # -- talking and remembering ---------------------------------------------------

    async def chat(self, text: str, memory: str | None = None,
                   memory_store: str | None = None,
                   session_type: str | None = None) -> ChatReply:
        """One chat turn with memory: Main answers, Mouth says what may be said.

        ``memory``: the fact-memory id of the turn (None: the scope's user);
        ``memory_store``: its store (None: Main's configured store, else ``default``).
        Facts recalled for it are hidden context; facts the exchange establishes are
        written under it after the reply. With fact memory off the turn proceeds
        without memory (logged once).

        Raises:
            AppError: empty text. InvalidMemoryIdError / UnknownStoreError (both
                ``ValueError``): a bad memory id or store, fact memory on; nothing
                was sent.
        """
        if not text.strip():
            raise AppError("a chat message needs some text")
        speech = await self.runtime.ask(text, memory=memory, memory_store=memory_store,
                                        session_type=session_type)
        return ChatReply(
            speech.text, speech.entry_id, speech.draft_id,
            speech.dropped_narration + speech.dropped_credentials,
        )

    async def observe(
        self,
        text: str,
        *,
        speaker: str,
        kind: str = "message",
        at: float | datetime | None = None,
        attrs: Mapping[str, str] | None = None,
        emotional_weight: float | None = None,
        tags: Sequence[str] = (),
    ) -> int:
        """Append one event and deliver it to the agents that perceive it; its entry id."""
        return await self.runtime.observe(
            text, author=speaker, kind=kind, at=at, attrs=attrs,
            emotional_weight=emotional_weight, tags=tuple(tags),
        )

    async def recall(
        self, query: str, *, agent: str = "Main", k: int = 10, tags: Sequence[str] = (),
    ) -> list[RecallHit]:
        """The ``k`` best hits for ``query`` from ``agent``'s point of view, best first.

        ``tags`` (at most :data:`MAX_RECALL_TAGS`, compared casefolded) narrow the
        search: long-term hits come only from records carrying at least one of them,
        working records compete as ever, and every hit scores by the share of the
        tags it carries. No tags: no narrowing.

        Raises:
            AppError: an unknown agent, an empty query, ``k`` outside 1..1000, or bad
                ``tags`` (a bare string, a non-string, a blank or overlong tag, too
                many), naming the bad value.
        """
        self._agent(agent)
        if not query.strip():
            raise AppError("a recall query needs some text")
        if not 1 <= k <= 1000:
            raise AppError(f"k must be within 1..1000, got {k!r}")
        hits = await self.runtime.recall(agent, query, k, tags=_recall_tags(tags))
        # One read of every hit's events (an episode stands for dozens): from memory when
        # they were read recently, else in one worker-thread hop.
        ids = [e for hit in hits for e in hit.entry_ids]
        events = dict(zip(ids, await self.runtime.events.get_many(ids), strict=True))
        return [_cite(hit, [events[e] for e in hit.entry_ids]) for hit in hits]

    # -- topics and curation ---------------------------------------------------------

    def topics(self) -> list[TopicView]:
        """The scope's topics, oldest first, with the one active topic marked."""
        conv = self._conversations()
        active = self._active_topic()
        return [self._topic_view(t, t.topic_id == active) for t in conv.topics_of(self.scope)]

    async def curate(self, topic_id: str, action: str) -> TopicView:
        """The user's curation move (``promote``, ``demote``, ``deprecate``, ``undeprecate``)."""
        if action not in CURATIONS:
            raise AppError(f"unknown curation {action!r} (one of {', '.join(CURATIONS)})")
        conv = self._conversations()
        self._topic(topic_id)
        topic = await conv.curate(topic_id, action)
        return self._topic_view(topic, topic.topic_id == self._active_topic())

    async def new_topic(self, session_id: str, title: str = "") -> TopicView:
        """Close the session's current topic (it is summarised, its notes archived) and
        start a new one, which becomes active."""
        self._session(session_id)
        topic = await self._conversations().new_topic(session_id, title=title)
        return self._topic_view(topic, topic.topic_id == self._active_topic())

    async def evaluate(self, session_id: str, trigger: Trigger = "manual") -> None:
        """Seed 000's evaluation: exit triggers are debounced, ``manual`` runs now."""
        conv = self._conversations()
        self._session(session_id)
        if trigger in EXIT_TRIGGERS:
            conv.exit_trigger(session_id, trigger)
        elif trigger == "manual":
            await conv.evaluate_now(session_id, trigger)
        else:
            raise AppError(f"unknown trigger {trigger!r} (manual or one of "
                           f"{', '.join(EXIT_TRIGGERS)})")

    # -- durable facts and notes -----------------------------------------------------

    def facts(self) -> list[FactView]:
        """The scope's durable facts, by key."""
        known = self._conversations().facts(self.scope)
        return [FactView(k, str(known[k].value)) for k in sorted(known)]

    async def set_fact(self, key: str, value: str) -> FactView:
        """Create or replace the durable fact ``key``."""
        fact = await self._conversations().set_fact(self.scope, key, value)
        return FactView(fact.key, str(fact.value))

    async def unset_fact(self, key: str) -> None:
        """Delete the durable fact ``key``; :class:`NotFoundError` if there is none."""
        conv = self._conversations()
        if key not in conv.facts(self.scope):
            raise NotFoundError(f"no durable fact {key!r} for scope {self.scope.key}")
        await conv.unset_fact(self.scope, key)

    def notes(self, topic_id: str) -> str:
        """The topic's active notes document ("" when it has none)."""
        self._topic(topic_id)
        return str(self._conversations().notes(topic_id).active)

    async def add_note(self, topic_id: str, text: str) -> str:
        """Append ``text`` to the topic's notes; the active notes as they now read."""
        if not text.strip():
            raise AppError("a note needs some text")
        self._topic(topic_id)
        return str((await self._conversations().append_notes(topic_id, text)).active)

    # -- looking inside --------------------------------------------------------------

    def inspect(self, agent: str | None = None) -> dict[str, dict[str, object]]:
        """Per-agent stats (tiers, rungs, budgets, counters)."""
        if agent is not None:
            self._agent(agent)
        return self.runtime.inspect(agent)

    def hyperfocus(self, on: bool) -> None:
        """Supervisor's hyperfocus: a bigger working budget and the Time actor paused
        (``on``), or back to normal."""
        self.runtime.hyperfocus(on)

    def stats(self) -> dict[str, Any]:
        """Process-wide numbers: events in the substrate and per-agent record counts."""
        rt = self.runtime
        return {
            "events": rt.substrate.last_id,
            "agents": {
                name: {"working": len(m.working), "longterm": len(m.longterm),
                       "working_tokens": m.working.total_tokens,
                       "budget_tokens": m.working.budget_tokens}
                for name, m in rt.memories.items()
            },
        }

    # -- helpers ---------------------------------------------------------------------

    def _agent(self, name: str) -> None:
        if name not in ACTORS:
            raise UnknownAgentError(f"unknown agent {name!r} (agents are {', '.join(ACTORS)})")

    def _active_topic(self) -> str | None:
        """The scope's one active topic: its current session's (older sessions' are not)."""
        session = current_session(self._conversations(), self.scope)
        return None if session is None else str(session.active_topic_id)

    def _conversations(self) -> Any:
        conv = self.runtime.conversations
        if conv is None:
            raise AppError("this runtime has no conversation layer")
        return conv

    def _session(self, session_id: str) -> None:
        if session_id not in {s.session_id for s in self._conversations().sessions(self.scope)}:
            raise NotFoundError(f"unknown session {session_id!r} for scope {self.scope.key}")

    def _topic(self, topic_id: str) -> Any:
        conv = self._conversations()
        try:
            topic = conv.topic(topic_id)
        except LookupError:
            topic = None
        if topic is None or topic.scope != self.scope:
            raise NotFoundError(f"unknown topic {topic_id!r} for scope {self.scope.key}")
        return topic

    @staticmethod
    def _topic_view(topic: Any, active: bool) -> TopicView:
        return TopicView(
            topic.topic_id, topic.session_id, topic.label, topic.summary, topic.state.value,
            active, topic.keep_in_memory_manually_set, topic.deprecated_manually_set,
            topic.message_count,
        )

    # -- for long-lived surfaces (HTTP) ------------------------------------------------

    def counters(self) -> dict[str, Any]:
        """Process-wide counters for monitoring: events, per-agent inspect stats, the
        LLM backend's call counters and the guard's verdict counts (plain values)."""
        rt = self.runtime
        llm_stats = getattr(rt.llm, "stats", None)
        llm = {name: getattr(llm_stats, name) for name in
               ("calls", "failures", "prompt_tokens", "generated_tokens", "seconds")
               } if llm_stats is not None else {}
        return {
            "events": rt.substrate.last_id,
            "agents": rt.inspect(None),
            "llm": llm,
            "guard": dict(getattr(rt.guard, "counts", {})),
        }

    async def flush(self) -> None:
        """Run the evaluations exit triggers scheduled, without waiting out their
        debounce: what a long-lived surface does on its way out, so nothing is dropped."""
        conv = self.runtime.conversations
        if conv is not None:
            await conv.lifecycle.flush()
