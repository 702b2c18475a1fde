"""Notes: each topic's scratchpad of decisions, reasoning and drafts.

One active document per topic. ``$set`` appends (decisions are logged as they
happen, never overwritten), ``update`` replaces (understanding changed), ``read``
returns the current topic's notes or any topic's of the session by id. When the
topic is forked or closed the active document is archived, only after the topic
summary has been generated from it; archived documents stay in the substrate for
traceability but are no longer injected into context.
"""

from __future__ import annotations

from solace.conversation import events
from solace.conversation.errors import InvalidArgumentError
from solace.conversation.events import Draft
from solace.conversation.model import Notes, Topic

__all__ = ["append_notes", "archive_notes", "render_notes", "replace_notes"]


def _text(text: object) -> str:
    if not isinstance(text, str) or not text.strip():
        raise InvalidArgumentError(f"notes need non-empty text, got {text!r}")
    return text.strip()


def append_notes(topic: Topic, text: object) -> Draft:
    """The event appending ``text`` to the topic's active notes.

    Raises:
        InvalidArgumentError: empty text, or the topic is closed (its notes are archived).
    """
    _open(topic)
    return events.note(topic.scope, topic.session_id, topic.topic_id, "$set", _text(text))


def replace_notes(topic: Topic, text: object) -> Draft:
    """The event replacing the topic's active notes with ``text``.

    Raises:
        InvalidArgumentError: empty text, or the topic is closed.
    """
    _open(topic)
    return events.note(topic.scope, topic.session_id, topic.topic_id, "update", _text(text))


def archive_notes(topic: Topic, notes: Notes) -> Draft | None:
    """The event archiving the active document; None if there is none to archive."""
    if not notes.active:
        return None
    return events.note(topic.scope, topic.session_id, topic.topic_id, "archive")


def _open(topic: Topic) -> None:
    if topic.closed:
        raise InvalidArgumentError(
            f"topic {topic.topic_id} is closed and its notes are archived; write notes "
            "to the active topic"
        )


def render_notes(notes: Notes) -> str:
    """The active document as injected into the semi-stable prefix ('' if none)."""
    return notes.active
