"""The app's views (``RecallHit``, ``TopicView``, ``FactView``) as the CLI prints them.

One formatting path: the local commands (the application API over the layers they open
themselves) and the remote ones (which ask a serving process over HTTP) both get the
views of :mod:`solace.app.api` and print them with the functions here, so the two print
the same lines for the same memory.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from solace.app.api import FactView, RecallHit, TopicView

__all__ = [
    "format_fact_views",
    "format_topic_views",
    "hits_from_json",
    "topic_views_from_json",
]

_STATE = {"not-in-memory": "-", "promoted": "memory", "deprecated": "DEPRECATED"}


def hits_from_json(hits: Iterable[Mapping[str, Any]]) -> list[RecallHit]:
    """``GET /recall``'s ``hits`` back as :class:`RecallHit` (lists become tuples).

    Raises:
        TypeError: a hit lacks a field or has one the view does not know.
    """
    tuples = ("entry_ids", "speakers", "dia_ids")
    out = []
    for h in hits:
        fields: dict[str, Any] = {k: tuple(v) if k in tuples else v for k, v in h.items()}
        out.append(RecallHit(**fields))
    return out


def topic_views_from_json(topics: Iterable[Mapping[str, Any]]) -> list[TopicView]:
    """``GET /topics``'s ``topics`` (or one curated topic) back as :class:`TopicView`."""
    return [TopicView(**t) for t in topics]


def _decision(t: TopicView) -> str:
    if t.state == "deprecated":
        return "deprecated" if t.deprecated_manually_set else ""
    if t.keep_in_memory_manually_set:
        return "kept" if t.state == "promoted" else "dropped"
    return ""


def format_topic_views(topics: Sequence[TopicView]) -> str:
    """One line per topic, its summary indented under it (the REPL's ``/topics`` layout).

    The line: ``*`` on the active topic, id, memory state, session, message count,
    title, and the user's standing decision (``[you: kept]``, ``[you: dropped]``,
    ``[you: deprecated]``) while it is the topic's current state. Topics with no
    messages and no summary are left out unless active; a deprecated topic's summary
    is not shown.
    """
    lines = []
    for t in topics:
        empty = not t.messages and not t.summary
        if empty and not t.active:
            continue
        decision = _decision(t)
        lines.append(
            f"{'*' if t.active else ' '} {t.topic_id:<5} {_STATE.get(t.state, t.state):<10} "
            f"{t.session_id:<5} {t.messages:>4} msgs  "
            + ("(new topic, nothing said yet)" if empty else t.title)
            + (f"  [you: {decision}]" if decision else "")
        )
        if t.summary and t.state != "deprecated":
            lines.append(f"        {' '.join(t.summary.split())}")
    return "\n".join(lines) if lines else "(no topics)"


def format_fact_views(facts: Sequence[FactView]) -> str:
    """``key: value`` lines sorted by key, or ``(no durable facts)``."""
    return "\n".join(f"{f.key}: {f.value}" for f in sorted(facts, key=lambda f: f.key)) \
        or "(no durable facts)"
