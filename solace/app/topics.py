"""A topic in full, and its notes replaced: what ``solace topics show`` and ``solace
notes replace`` need, locally or from a serving process (one view, one format).

:func:`topic_detail` reads a topic from the conversation layer; :class:`TopicCalls`
wraps a :class:`~solace.app.Solace` for the surfaces (``GET /topics/{id}``,
``PUT /topics/{id}/notes``). Views are frozen dataclasses of plain values
(:func:`dataclasses.asdict` makes them JSON; :meth:`TopicDetail.from_json` reads it
back). An unknown topic, or one of another scope, is a
:class:`~solace.app.NotFoundError`; blank notes an :class:`~solace.app.AppError`;
nothing is written when a call is refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from solace.app.api import AppError, Solace
from solace.conversation.formatting import format_notes

__all__ = ["NotesView", "TopicCalls", "TopicDetail", "format_topic_detail", "topic_detail"]


@dataclass(frozen=True, slots=True)
class NotesView:
    """A topic's notes: the active document and the archived ones, oldest first."""

    topic_id: str
    active: str
    archived: tuple[str, ...]

    @classmethod
    def of(cls, notes: Any) -> NotesView:
        return cls(str(notes.topic_id), str(notes.active), tuple(map(str, notes.archived)))

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> NotesView:
        return cls(str(body["topic_id"]), str(body["notes"]),
                   tuple(map(str, body.get("archived", ()))))

    def as_json(self) -> dict[str, Any]:
        """The notes endpoints' body: ``notes`` is the active document."""
        return {"topic_id": self.topic_id, "notes": self.active, "archived": list(self.archived)}


@dataclass(frozen=True, slots=True)
class TopicDetail:
    """Everything ``topics show`` prints about one topic; ``thread`` is one rendered
    line per item (``role: text`` or the tool exchange), in order."""

    topic_id: str
    session_id: str
    origin: str
    parent: str | None
    title: str
    state: str
    keep_in_memory_manually_set: bool
    deprecated_manually_set: bool
    summary_mode: str | None
    summary: str
    messages: int
    notes: NotesView
    thread: tuple[str, ...]

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> TopicDetail:
        fields = dict(body)
        fields["notes"] = NotesView(**{**body["notes"],
                                       "archived": tuple(body["notes"]["archived"])})
        fields["thread"] = tuple(body["thread"])
        return cls(**fields)


def topic_detail(conv: Any, topic_id: str) -> TopicDetail:
    """The topic ``topic_id`` of the conversation layer ``conv``, in full.

    Raises:
        LookupError: no such topic (the conversation layer's own error).
    """
    t = conv.topic(topic_id)
    return TopicDetail(
        topic_id=str(t.topic_id), session_id=str(t.session_id), origin=str(t.origin),
        parent=None if t.parent is None else str(t.parent), title=str(t.label),
        state=str(t.state.value),
        keep_in_memory_manually_set=bool(t.keep_in_memory_manually_set),
        deprecated_manually_set=bool(t.deprecated_manually_set),
        summary_mode=None if t.summary_mode is None else str(t.summary_mode),
        summary=str(t.summary or ""), messages=int(t.message_count),
        notes=NotesView.of(conv.notes(t.topic_id)),
        thread=tuple(item.render() for item in conv.thread(t.topic_id)),
    )


def format_topic_detail(t: TopicDetail) -> str:
    """``topics show``'s text: the topic's line, title, state and flags, summary,
    message count, notes and thread."""
    return "\n".join([
        f"topic {t.topic_id} (session {t.session_id}, {t.origin}"
        + (f" from {t.parent}" if t.parent else "") + ")",
        f"title: {t.title}",
        f"state: {t.state}"
        f"  keepInMemoryManuallySet={str(t.keep_in_memory_manually_set).lower()}"
        f"  deprecatedManuallySet={str(t.deprecated_manually_set).lower()}",
        f"summary ({t.summary_mode or 'none yet'}): {t.summary or '-'}",
        f"messages: {t.messages}",
        "notes:",
        format_notes(t.notes),
        "thread:",
        *t.thread,
    ])


class TopicCalls:
    """The topic calls of ``topics show`` and ``notes replace`` over ``app``'s scope."""

    def __init__(self, app: Solace) -> None:
        self.app = app

    def topic(self, topic_id: str) -> TopicDetail:
        """The topic in full (:class:`~solace.app.NotFoundError` if unknown here)."""
        self.app._topic(topic_id)  # the scope check, one implementation
        return topic_detail(self.app._conversations(), topic_id)

    def notes(self, topic_id: str) -> NotesView:
        """The topic's notes, active and archived."""
        self.app._topic(topic_id)
        return NotesView.of(self.app._conversations().notes(topic_id))

    async def replace_notes(self, topic_id: str, text: str) -> NotesView:
        """Make ``text`` the topic's active notes."""
        if not text.strip():
            raise AppError("notes need some text")
        self.app._topic(topic_id)
        conv = self.app._conversations()
        return NotesView.of(await conv.replace_notes(topic_id, text))
