"""The conversation layer's events: how each change is written to the substrate.

Sans-IO, like the substrate codec: these functions only build :class:`Draft` events
(agent, kind, content, attrs) and read them back; appending is the caller's business.
Every change to sessions, topics, notes, curation and facts is one of these drafts,
so the projection can always be rebuilt by replaying them in entry-id order.

Attribute values are plain strings (booleans ``"true"``/``"false"``, lists as JSON in
the content) so they round-trip through any substrate attrs encoding. Every draft
carries ``layer="conversation"``: the built-in kinds ``message``, ``fact`` and
``curation`` are shared with other parts of Solace, and the projection replays only
its own.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from solace.conversation.model import Scope

__all__ = [
    "CONVERSATION_KINDS",
    "LAYER",
    "REPLAYED_KINDS",
    "Draft",
    "LoggedEvent",
    "activate_topic",
    "curation",
    "fact_set",
    "fact_unset",
    "message",
    "note",
    "open_session",
    "open_topic",
    "relocate",
    "scope_of",
    "speaker_of",
    "summary",
    "tool_call",
    "tool_result",
]

#: Event kinds this layer adds to the substrate's built-in eight; the runtime passes
#: them to ``open_substrate(..., extra_kinds=...)``.
CONVERSATION_KINDS: tuple[str, ...] = ("session", "topic", "note")

#: Every kind the projection replays (built-in ones included).
REPLAYED_KINDS: tuple[str, ...] = (
    "session",
    "topic",
    "note",
    "message",
    "tool_call",
    "tool_result",
    "curation",
    "fact",
)

LAYER = "conversation"


class LoggedEvent(Protocol):
    """What the projection reads of a substrate ``Event``."""

    @property
    def entry_id(self) -> int: ...

    @property
    def ts(self) -> float: ...

    @property
    def agent(self) -> str: ...

    @property
    def kind(self) -> str: ...

    @property
    def content(self) -> str: ...

    @property
    def attrs(self) -> Mapping[str, Any]: ...


def speaker_of(event: LoggedEvent) -> str:
    """The speaker a record of ``event`` names: its author, or ``"user"`` for a message
    the conversation layer logged on an agent's behalf with ``role = "user"``."""
    if event.attrs.get("role") == "user":
        return "user"
    return event.agent


@dataclass(frozen=True, slots=True)
class Draft:
    """An event not yet appended: what ``Substrate.append`` takes."""

    agent: str
    kind: str
    content: str
    attrs: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Appended:
    """A draft as the substrate recorded it (entry id and timestamp assigned)."""

    entry_id: int
    ts: float
    agent: str
    kind: str
    content: str
    attrs: Mapping[str, str]


def _draft(scope: Scope, kind: str, content: str, **attrs: str) -> Draft:
    base = {"layer": LAYER, "user": scope.user, "org": scope.org}
    base.update(attrs)
    return Draft(scope.agent, kind, content, base)


def scope_of(event: LoggedEvent) -> Scope:
    """The scope an event of this layer belongs to."""
    return Scope(str(event.attrs["user"]), event.agent, str(event.attrs["org"]))


def _flag(value: bool) -> str:
    return "true" if value else "false"


def open_session(scope: Scope, session_id: str) -> Draft:
    """A new session (its first topic is opened and activated by separate events)."""
    return _draft(scope, "session", "", op="open", session=session_id)


def open_topic(
    scope: Scope, session_id: str, topic_id: str, *, origin: str, parent: str = "", title: str = ""
) -> Draft:
    """A new topic in ``session_id``; it is not active until :func:`activate_topic`."""
    return _draft(
        scope, "topic", title, op="open", session=session_id, topic=topic_id,
        origin=origin, parent=parent,
    )


def activate_topic(scope: Scope, session_id: str, topic_id: str) -> Draft:
    """Make ``topic_id`` the session's one active topic."""
    return _draft(scope, "topic", "", op="activate", session=session_id, topic=topic_id)


def relocate(
    scope: Scope, session_id: str, source: str, target: str, entry_ids: Sequence[int]
) -> Draft:
    """Move thread items (by entry id) from topic ``source`` to topic ``target``."""
    return _draft(
        scope, "topic", json.dumps(sorted(entry_ids)), op="relocate", session=session_id,
        topic=target, source=source,
    )


def summary(
    scope: Scope,
    session_id: str,
    topic_id: str,
    *,
    title: str,
    text: str,
    mode: str,
    include: bool,
    keep: bool,
    count: int,
    close: bool,
) -> Draft:
    """A generated summary and the ``keep_in_memory`` value it results in.

    ``include`` is what the summariser said (after the strict-boolean rule); ``keep``
    is the flag after the minimum-turn threshold and the user-decision guard.
    ``close`` marks the topic as left behind (fork or new topic).
    """
    return _draft(
        scope, "topic", json.dumps({"title": title, "summary": text}, ensure_ascii=False),
        op="summary", session=session_id, topic=topic_id, mode=mode,
        include=_flag(include), keep=_flag(keep), count=str(count), close=_flag(close),
    )


def message(scope: Scope, session_id: str, topic_id: str, role: str, text: str) -> Draft:
    """A chat message in the thread of ``topic_id``."""
    return _draft(scope, "message", text, session=session_id, topic=topic_id, role=role)


def tool_call(
    scope: Scope, session_id: str, topic_id: str, tool: str, call_id: str, arguments: str
) -> Draft:
    """A tool call (arguments as JSON text) in the thread."""
    return _draft(
        scope, "tool_call", arguments, session=session_id, topic=topic_id, tool=tool,
        call=call_id,
    )


def tool_result(
    scope: Scope, session_id: str, topic_id: str, tool: str, call_id: str, result: str, ok: bool
) -> Draft:
    """The result of tool call ``call_id`` in the thread."""
    return _draft(
        scope, "tool_result", result, session=session_id, topic=topic_id, tool=tool,
        call=call_id, ok=_flag(ok),
    )


def curation(scope: Scope, session_id: str, topic_id: str, op: str, *, by: str) -> Draft:
    """A curation move (promote, demote, deprecate, undeprecate) by ``user`` or ``agent``."""
    return _draft(scope, "curation", "", op=op, by=by, session=session_id, topic=topic_id)


def fact_set(scope: Scope, key: str, value: str) -> Draft:
    """Create or replace the durable fact ``key``."""
    return _draft(scope, "fact", value, op="$set", key=key)


def fact_unset(scope: Scope, key: str) -> Draft:
    """Delete the durable fact ``key``."""
    return _draft(scope, "fact", "", op="$unset", key=key)


def note(scope: Scope, session_id: str, topic_id: str, op: str, text: str = "") -> Draft:
    """A notes change: ``$set`` appends, ``update`` replaces, ``archive`` archives."""
    return _draft(scope, "note", text, op=op, session=session_id, topic=topic_id)
