"""A topic's notes as the REPL, ``solace notes`` and ``topics show`` print them (topics
and durable facts are printed from the application API's views:
:mod:`solace.surfaces.cli.views`)."""

from __future__ import annotations

from solace.conversation.model import Notes

__all__ = ["format_notes"]


def format_notes(notes: Notes) -> str:
    """The active notes, then the archived documents."""
    parts = [notes.active or "(no active notes)"]
    for i, doc in enumerate(notes.archived, 1):
        parts.append(f"--- archived {i} ---\n{doc}")
    return "\n".join(parts)
