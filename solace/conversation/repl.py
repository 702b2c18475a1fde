"""The text the REPL and the ``solace topics|facts|notes`` commands print.

The REPL itself (its commands and loop) is :mod:`solace.surfaces.repl`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from solace.conversation.model import Fact, Notes, Topic

__all__ = ["format_facts", "format_notes", "format_topics"]

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
