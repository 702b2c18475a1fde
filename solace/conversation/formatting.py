"""The text the REPL and the ``solace topics|facts|notes`` commands print.

The REPL itself (its commands and loop) is :mod:`solace.surfaces.repl`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from solace.conversation.model import Fact, Notes, Topic

__all__ = ["format_facts", "format_notes", "format_topics"]

_STATE = {"not-in-memory": "-", "promoted": "memory", "deprecated": "DEPRECATED"}


def format_topics(
    topics: Iterable[Topic], active: Iterable[str] = (), *, summaries: bool = True
) -> str:
    """One line per topic, then its summary indented under it.

    The line: ``*`` on the active topic, id, memory state, session, message count,
    title, and the user's standing decision (``[you: kept]``, ``[you: dropped]``,
    ``[you: deprecated]``) while it is the topic's current state: once the user
    lifts a deprecation nothing says "deprecated" any more. Topics that never held
    anything (no thread, no summary) and are not active are left out: a session
    opened and left empty is no topic. At most one topic is marked active: the last
    of ``active`` that is listed (callers pass sessions oldest first, so it is the
    current session's).
    """
    topics = list(topics)
    ids = {t.topic_id for t in topics}
    current = next((a for a in reversed(list(active)) if a in ids), None)
    lines = []
    for t in topics:
        if t.topic_id != current and not t.items and not t.summary:
            continue
        mark = "*" if t.topic_id == current else " "
        decision = _user_decision(t)
        lines.append(
            f"{mark} {t.topic_id:<5} {_STATE[t.state.value]:<10} "
            f"{t.session_id:<5} {t.message_count:>4} msgs  "
            + (t.label if t.title or t.items else "(new topic, nothing said yet)")
            + (f"  [you: {decision}]" if decision else "")
        )
        if summaries and t.summary and not t.deprecated:
            lines.append(f"        {' '.join(t.summary.split())}")
    return "\n".join(lines) if lines else "(no topics)"


def _user_decision(topic: Topic) -> str:
    if topic.deprecated:
        return "deprecated" if topic.deprecated_manually_set else ""
    if topic.keep_in_memory_manually_set:
        return "kept" if topic.keep_in_memory else "dropped"
    return ""


def format_facts(facts: Mapping[str, Fact]) -> str:
    """``key: value`` lines sorted by key."""
    return "\n".join(f"{k}: {facts[k].value}" for k in sorted(facts)) or "(no durable facts)"


def format_notes(notes: Notes) -> str:
    """The active notes, then the archived documents."""
    parts = [notes.active or "(no active notes)"]
    for i, doc in enumerate(notes.archived, 1):
        parts.append(f"--- archived {i} ---\n{doc}")
    return "\n".join(parts)
