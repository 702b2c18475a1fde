"""A topic's notes as the REPL, ``solace notes`` and ``topics show`` print them (topics
and durable facts are printed from the application API's views:
:mod:`solace.surfaces.cli.views`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

__all__ = ["NotesLike", "format_notes"]


class NotesLike(Protocol):
    """A topic's notes: :class:`~solace.conversation.model.Notes` or the application
    API's :class:`~solace.app.topics.NotesView`."""

    @property
    def active(self) -> str: ...

    @property
    def archived(self) -> Sequence[str]: ...


def format_notes(notes: NotesLike) -> str:
    """The active notes, then the archived documents."""
    parts = [notes.active or "(no active notes)"]
    for i, doc in enumerate(notes.archived, 1):
        parts.append(f"--- archived {i} ---\n{doc}")
    return "\n".join(parts)
