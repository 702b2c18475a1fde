"""The conversation commands of the ``solace run`` REPL, and the text they print.

``handle_repl_line(conv, session_id, line)`` returns the reply for one of
:data:`REPL_COMMANDS`, or None if the line is not one of them (the runtime then
handles it). User-side curation from here sets the manual flags, like the CLI.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from solace.conversation.errors import ConversationError
from solace.conversation.model import Fact, Notes, Scope, Topic
from solace.conversation.service import Conversations

__all__ = ["REPL_COMMANDS", "format_facts", "format_notes", "format_topics", "handle_repl_line"]

REPL_COMMANDS: Mapping[str, str] = {
    "/topics": "list this scope's topics (* marks the active one)",
    "/promote": "/promote ID: keep a topic in memory (your decision sticks)",
    "/demote": "/demote ID: take a topic out of memory",
    "/deprecate": "/deprecate ID: mark a topic's decision reversed (title only in memory)",
    "/undeprecate": "/undeprecate ID: lift a deprecation",
    "/newtopic": "/newtopic [TITLE]: close the current topic and start a new one",
    "/facts": "/facts | /facts set KEY VALUE | /facts unset KEY",
    "/notes": "/notes [ID]: the notes of the active topic or of topic ID",
}

_STATE = {"not-in-memory": "-", "promoted": "memory", "deprecated": "DEPRECATED"}


def format_topics(topics: Iterable[Topic], active: Iterable[str] = ()) -> str:
    """One line per topic: marker, id, state, session, message count, title."""
    marks = set(active)
    lines = []
    for t in topics:
        flags = "".join(
            flag for flag, on in (
                ("K", t.keep_in_memory_manually_set), ("D", t.deprecated_manually_set)
            ) if on
        )
        lines.append(
            f"{'*' if t.topic_id in marks else ' '} {t.topic_id:<5} {_STATE[t.state.value]:<10} "
            f"{t.session_id:<5} {t.message_count:>4} msgs  {t.label}"
            + (f"  [user-set {flags}]" if flags else "")
        )
    return "\n".join(lines) if lines else "(no topics)"


def format_facts(facts: Mapping[str, Fact]) -> str:
    """``key = value`` lines sorted by key."""
    return "\n".join(f"{k} = {facts[k].value}" for k in sorted(facts)) or "(no durable facts)"


def format_notes(notes: Notes) -> str:
    """The active notes, then the archived documents."""
    parts = [notes.active or "(no active notes)"]
    for i, doc in enumerate(notes.archived, 1):
        parts.append(f"--- archived {i} ---\n{doc}")
    return "\n".join(parts)


async def handle_repl_line(conv: Conversations, session_id: str, line: str) -> str | None:
    """Run one REPL line if it is a conversation command.

    Args:
        conv: the runtime's conversation layer.
        session_id: the REPL's session.
        line: the line as typed.

    Returns:
        The text to print, or None if the line is not one of :data:`REPL_COMMANDS`.
        Errors (unknown topic, bad arguments) are returned as text, not raised.
    """
    words = line.strip().split(maxsplit=1)
    if not words or words[0] not in REPL_COMMANDS:
        return None
    command, rest = words[0], (words[1].strip() if len(words) > 1 else "")
    session = conv.session(session_id)
    try:
        if command == "/topics":
            return format_topics(conv.topics_of(session.scope), [session.active_topic_id])
        if command in ("/promote", "/demote", "/deprecate", "/undeprecate"):
            if not rest:
                return f"usage: {REPL_COMMANDS[command]}"
            topic = conv.topic(rest)
            if topic.scope != session.scope:
                return f"unknown topic {rest!r}"
            topic = await conv.curate(rest, command[1:])
            return f"{topic.topic_id}: {topic.state.value}"
        if command == "/newtopic":
            topic = await conv.new_topic(session_id, title=rest)
            return f"new topic {topic.topic_id} is active"
        if command == "/facts":
            return await _facts(conv, session.scope, rest)
        topic_id = rest or session.active_topic_id
        if conv.topic(topic_id).scope != session.scope:
            return f"unknown topic {topic_id!r}"
        return format_notes(conv.notes(topic_id))
    except ConversationError as exc:
        return f"error: {exc}"


async def _facts(conv: Conversations, scope: Scope, rest: str) -> str:
    if not rest:
        return format_facts(conv.facts(scope))
    parts = rest.split(maxsplit=2)
    if parts[0] == "set" and len(parts) == 3:
        fact = await conv.set_fact(scope, parts[1], parts[2])
        return f"{fact.key} = {fact.value}"
    if parts[0] == "unset" and len(parts) == 2:
        await conv.unset_fact(scope, parts[1])
        return f"{parts[1]} unset"
    return f"usage: {REPL_COMMANDS['/facts']}"
