"""Who perceives an event: the one routing table, a pure function of the event.

Every event is appended once to the substrate; each agent that perceives it makes
its own record of it (``AgentMemory.ingest``). Which agents those are, what speaker
the record names, and the emotional weight and tags Mood attaches are decided here
from the event alone — its ``kind``, its ``agent`` (the author) and its content —
so that rebuilding an agent's working tier from the substrate after a restart makes
exactly the records the live runtime made. Nothing is added to the caller's
``attrs``.

The author convention: ``Event.agent`` is whoever produced the content — the
``speaker`` given to ``observe`` ("user", "Caroline"), or the actor itself for what
actors write (drafts, reflections, speech, Time's cues). The one exception is the
conversation layer, which logs a session's messages under the agent's name with a
``role`` attribute: ``role = "user"`` makes the speaker ``"user"``, and
``role = "assistant"`` messages are perceived by nobody (Mouth's ``speech`` event is
the record of what was said). The conversation layer's durable facts are perceived
by nobody either: they live in its projection and the context stack's persistent
layer, and a record of one would outlive its ``$unset``. Events with empty content
are perceived by nobody.

The live runtime and a rebuild call the same :func:`perceive` on every event they
see: the runtime delivers what ``observe`` appends and every batch the conversation
layer appends (its ``on_appended`` hook), so live and rebuilt tiers agree.

Routing table (``route``):

==================================  ==============================================
event                               perceived by
==================================  ==============================================
``message`` / ``fact``              Supervisor, Main (+ Mood when it is emotional,
                                    + Time when it names a date or a time);
                                    a conversation-layer ``fact``: nobody
``speech`` (written by Mouth only)  Supervisor, Main, Mouth
``draft``                           its author only, as a private record
``reflection`` / ``tool_*``         its author when an actor (else Main)
``cue`` (Time's heartbeat)          Time (+ Main), or its author when an actor
anything else (``curation``,        nobody: bookkeeping, not experience
``fade``, ``mood``, topics, ...)
==================================  ==============================================

Perspectives (seed 002: "two agents present at the same event produce two records
— different summaries, different perspectives, different tags, different fade
weights"). Every record of an event starts from the same raw text; what differs is
what the agent weighs. Supervisor, Main, Mouth and Mood take Mood's reading: the
event's emotional weight, and its emotion tags. Time takes the event's calendar
(:func:`calendar_tags`: "yesterday", said on 8 May 2023, tags it ``2023-05-07``,
``2023-05`` and ``2023``) and no emotional weight: what it keeps is when things
happened, and a feeling does not slow its fade. How each agent's records compress is
its configured ``perspective`` (:mod:`solace.memory.ladder.extractive`).

Recall is routed too (:func:`consulted`): a question asking when is also put to
Time's own memory, whose records are the events that named a date, kept for their
dates; the runtime interleaves its hits with the asker's
(:mod:`solace.memory.hit_merge`). A query naming a day or a month puts what was said
then first (:func:`named_periods`), and a recalled turn that asked something brings
its reply up behind it (:func:`replies`: the next turn, by someone else), since the
question a query resembles is rarely where the answer is (:mod:`solace.recall_order`).

Caller overrides (``observe(..., emotional_weight=0.9, tags=("x",))``) cannot be
derived from the event, so ``observe`` writes them as a separate ``mood`` event
(author ``Mood``, content empty, ``attrs = {"offset": "1", "emotional_weight",
"tags"}``) in the same atomic write as the event, right after it (``offset`` counts
back to the event it annotates); :func:`annotation_of` reads one back and
:func:`perceive` applies it. A rebuild collects the ``mood`` events first (they are
few: only overrides are written).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

# The fields of ``substrate.Event`` that routing reads; one protocol for the package.
from solace.conversation.events import LAYER as CONVERSATION_LAYER
from solace.conversation.events import LoggedEvent as EventLike
from solace.conversation.events import speaker_of
from solace.memory.ladder.dates import resolve_relative_dates
from solace.models.affect import score_affect
from solace.models.entities import calendar_parts, salient

__all__ = [
    "ACTOR_KINDS",
    "ACTORS",
    "DRAFT_KIND",
    "MOOD_KIND",
    "MOOD_RECORD_WEIGHT",
    "PERCEIVED_KINDS",
    "Annotation",
    "EventLike",
    "Perception",
    "annotation_attrs",
    "annotation_of",
    "calendar_tags",
    "consulted",
    "named_periods",
    "perceive",
    "perceptions_for",
    "replies",
    "route",
    "speaker_of",
]

ACTORS: tuple[str, ...] = ("Supervisor", "Main", "Mood", "Time", "Mouth")
DRAFT_KIND = "draft"  # thought not yet spoken; private to its author
MOOD_KIND = "mood"  # a caller's emotional weight / tags for an earlier event
ACTOR_KINDS: tuple[str, ...] = (DRAFT_KIND, MOOD_KIND)  # kinds to register in the substrate
#: Every kind :func:`route` can give an agent, and the ``mood`` overrides: what a
#: rebuild of the agents' tiers reads of the substrate (the rest is never perceived).
PERCEIVED_KINDS: frozenset[str] = frozenset({
    "message", "fact", "speech", DRAFT_KIND, "reflection", "tool_call", "tool_result", "cue",
    MOOD_KIND,
})
MOOD_RECORD_WEIGHT = 0.5  # Mood keeps its own record of strongly emotional events only

_NARRATIVE = ("Supervisor", "Main")
#: Mood's reading of a content: ``route`` asks it and ``perceive`` asks it again for the
#: same event, so it is read once.
_affect = lru_cache(maxsize=64)(score_affect)



@dataclass(frozen=True, slots=True)
class Annotation:
    """A caller's override of Mood's reading of one event."""

    emotional_weight: float | None
    tags: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Perception:
    """One agent's ingest of one event: the arguments of ``AgentMemory.ingest``."""

    agent: str
    speaker: str
    emotional_weight: float
    tags: tuple[str, ...]
    private: bool


def calendar_tags(content: str, ts: float) -> tuple[str, ...]:
    """The calendar dates ``content``, said at ``ts``, names, relative ones resolved,
    each with the month and year it falls in (``2023-05-07``, ``2023-05``, ``2023``),
    sorted. A weekday, a season or "recently" anchors nothing and gives no tag."""
    tags: set[str] = set()
    for date in salient(resolve_relative_dates(content, ts)).dates:
        year, month, day = calendar_parts(date) or (None, None, None)
        if year is not None:  # a day or a month of no known year anchors nothing
            tags.add(year)
            if month:
                tags.add(f"{year}-{month}")
                if day:
                    tags.add(f"{year}-{month}-{day}")
    return tuple(sorted(tags))


def _timed(content: str) -> bool:
    """Does ``content`` name a date or a time (a day, a month, a year, "yesterday",
    "last week", a weekday)? What the Time agent keeps a record of."""
    return bool(salient(content).dates)


# A sentence that asks when: "When did ...", "What year ...", "On which day ...", "How
# long ago ...". Durations ("how long has ...") and questions naming a date were tried
# too on the LoCoMo tuning split and added nothing (benchmarks/locomo_recall.py).
_ASKS_WHEN = re.compile(
    r"(?:^|[.?!;:]\s+)(?:(?:and|so|but|then|also|ok|okay),?\s+)?"
    r"(?:when|since when|how long ago|"
    r"(?:(?:on|in|at|during)\s+)?(?:what|which)\s+(?:year|month|date|day|week|time|season))\b",
    re.IGNORECASE,
)


def consulted(asker: str, query: str) -> tuple[str, ...]:
    """The agents whose own memory a recall by ``asker`` for ``query`` also asks:
    Time, when the query asks when (and Time is not the asker); else none."""
    if asker != "Time" and _ASKS_WHEN.search(query.strip()):
        return ("Time",)
    return ()


def named_periods(query: str, now: float) -> tuple[str, ...]:
    """The days a query names (``2022-11-09``; relative ones resolved at ``now``), or,
    when it names none, its months (``2022-05``); a year alone names neither."""
    tags = calendar_tags(query, now)
    return tuple(t for t in tags if len(t) == 10) or tuple(t for t in tags if len(t) == 7)


def replies(asked: EventLike, following: Sequence[EventLike]) -> bool:
    """Does the last of ``following`` (the events right after ``asked``, in order) reply
    to ``asked``? It does when ``asked`` is a turn that asks something (a message or
    speech with a "?"), and it is the next turn anybody keeps a record of (a message or
    speech :func:`route` gives an agent, with no need of Mood's or Time's reading: a
    draft, a mood override or a reply logged by the conversation layer in between is
    not one), said by someone else."""
    if not following or not _turn(asked) or "?" not in asked.content:
        return False
    turn = next((e for e in following if _turn(e) and _table(e)), None)
    return turn is following[-1] and speaker_of(turn) != speaker_of(asked)


def _turn(event: EventLike) -> bool:
    return event.kind in ("message", "speech")


def route(event: EventLike) -> tuple[str, ...]:
    """The agents that perceive ``event``, in ``ACTORS`` order, without duplicates."""
    agents = _table(event)
    if agents and event.kind in ("message", "fact"):
        if _affect(event.content).weight >= MOOD_RECORD_WEIGHT:
            agents.add("Mood")
        if _timed(event.content):
            agents.add("Time")
    return tuple(a for a in ACTORS if a in agents)


def _table(event: EventLike) -> set[str]:
    """The routing table's row for ``event``, without Mood and Time, whose reading of a
    message or fact (:func:`route`) only ever adds to the narrative agents."""
    kind, author = event.kind, event.agent
    is_actor = author in ACTORS
    if not event.content.strip():
        return set()  # nothing to remember (e.g. a fact's $unset)
    if kind == "message" and event.attrs.get("role") == "assistant":
        return set()  # Main's reply as logged in its topic: Mouth's speech event is the record
    if kind == "fact" and event.attrs.get("layer") == CONVERSATION_LAYER:
        return set()  # a durable fact: its projection holds it, and forgets it on $unset
    if kind in ("message", "fact"):
        return set(_NARRATIVE)
    if kind == "speech":
        return {"Supervisor", "Main", "Mouth"} if author == "Mouth" else set()
    if kind == DRAFT_KIND:
        return {author} if is_actor else set()
    if kind in ("reflection", "tool_call", "tool_result"):
        return {author} if is_actor else {"Main"}
    if kind == "cue":
        return {"Time", "Main"} if author == "Time" else ({author} if is_actor else {"Main"})
    return set()


def perceive(event: EventLike, annotation: Annotation | None = None) -> tuple[Perception, ...]:
    """One :class:`Perception` per agent in :func:`route` (event), in the same order.

    The speaker is the event's author. The emotional weight and tags are Mood's
    reading of the content (:func:`~solace.models.affect.score_affect`); for Time, no
    weight and the content's :func:`calendar_tags` (module docstring). An
    ``annotation`` overrides the weight and adds its tags, for every agent. Drafts are
    private.
    """
    agents = route(event)
    if not agents:
        return ()
    private = event.kind == DRAFT_KIND
    speaker = speaker_of(event)
    affect = _affect(event.content)
    out = []
    for agent in agents:
        if agent == "Time" and event.kind in ("message", "fact"):
            weight, tags = 0.0, calendar_tags(event.content, event.ts)
        else:
            weight, tags = affect.weight, affect.tags
        if annotation is not None:
            if annotation.emotional_weight is not None:
                weight = annotation.emotional_weight
            tags = tuple(sorted(set(tags) | set(annotation.tags)))
        out.append(Perception(agent, speaker, weight, tags, private))
    return tuple(out)


def annotation_attrs(
    emotional_weight: float | None, tags: tuple[str, ...], offset: int = 1
) -> dict[str, str]:
    """The attrs (str to str, as the substrate keeps them) of a ``mood`` override event
    appended ``offset`` entries after the event it annotates."""
    if offset < 1:
        raise ValueError(f"offset must be >= 1, got {offset!r}")
    attrs = {"offset": str(int(offset)), "tags": json.dumps(list(tags))}
    if emotional_weight is not None:
        attrs["emotional_weight"] = repr(float(emotional_weight))
    return attrs


def annotation_of(event: EventLike) -> tuple[int, Annotation] | None:
    """``(target entry id, Annotation)`` if ``event`` is a ``mood`` override, else None."""
    if event.kind != MOOD_KIND:
        return None
    attrs = event.attrs
    weight = attrs.get("emotional_weight")
    tags = json.loads(attrs.get("tags", "[]"))
    return event.entry_id - int(attrs["offset"]), Annotation(
        None if weight is None else float(weight), tuple(str(t) for t in tags)
    )


def perceptions_for(
    agent: str, events: Sequence[EventLike]
) -> list[tuple[EventLike, Perception]]:
    """``(event, perception)`` for each of ``events`` that ``agent`` perceives, in order.

    The ``mood`` override events among ``events`` are applied to the events they
    name, exactly as ``observe`` applied them live. This is the perceiver a rebuild
    of ``agent``'s tiers replays (``functools.partial(perceptions_for, agent)``).
    """
    annotations: dict[int, Annotation] = {}
    for event in events:
        found = annotation_of(event)
        if found is not None:
            annotations[found[0]] = found[1]
    out = []
    for event in events:
        for p in perceive(event, annotations.get(event.entry_id)):
            if p.agent == agent:
                out.append((event, p))
    return out
