"""The workspace's value types: markdown documents, human edits, session context.

Pure data, no I/O. A document is a title, an optional preamble (comment lines) and
sections; a section is a ``## header`` and its items (bullet texts without the
``- ``). An :class:`Item` may carry a mark (a clash or a conflict for the human),
rendered as an HTML comment under it and never read back as content.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

__all__ = [
    "SESSION_TYPES",
    "Doc",
    "Edit",
    "Item",
    "NowState",
    "Section",
    "SessionContext",
    "SessionType",
]

#: ``main``: direct interaction with the agent's human (MEMORY.md loads);
#: ``shared``: a group or channel context (it never does).
SessionType = Literal["main", "shared"]
SESSION_TYPES: tuple[str, ...] = ("main", "shared")


@dataclass(frozen=True, slots=True)
class Item:
    """One bullet: its text and an optional mark for the human (``CLASH: ...``)."""

    text: str
    mark: str = ""


@dataclass(frozen=True, slots=True)
class Section:
    """A ``## header`` and its bullets, in order."""

    header: str
    items: tuple[Item, ...] = ()


@dataclass(frozen=True, slots=True)
class Doc:
    """A markdown file as the workspace reads and writes it.

    Attributes:
        title: the ``# title`` line's text ('' for none).
        preamble: comment lines between the title and the first heading, kept verbatim
            (they explain the file; items above the first heading form a section whose
            header is ``""``).
        sections: in file order.
    """

    title: str = ""
    preamble: tuple[str, ...] = ()
    sections: tuple[Section, ...] = ()

    def items(self) -> list[tuple[str, str]]:
        """Every (section header, item text), in file order."""
        return [(s.header, i.text) for s in self.sections for i in s.items]


@dataclass(frozen=True, slots=True)
class Edit:
    """What a human changed in one file since the workspace last wrote it.

    Removed items are named by their keyed hash only (:class:`~solace.workspace.
    markdown.Hasher`), never by text: a removed bullet may carry a fact that is
    later deleted, and no event may keep a deleted fact's text.

    Attributes:
        file: the file, relative to the workspace (``memory/2026-09-21.md``).
        added: (section header, text) of each item the human added.
        removed: hashes of the items the human removed.
        changed: (hash of the old item, section header, new text) of each item the
            human rewrote in place.
        withheld: how many added or changed lines looked like a secret and were not
            recorded (they leave the file at its next render).
    """

    file: str
    added: tuple[tuple[str, str], ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[tuple[str, str, str], ...] = ()
    withheld: int = 0

    @property
    def empty(self) -> bool:
        """Nothing was added, removed or changed."""
        return not (self.added or self.removed or self.changed)


@dataclass(frozen=True, slots=True)
class NowState:
    """What NOW.md says besides the day and time; empty fields come from the workspace's
    own view of the substrate (the last active topic, open notes, last decisions)."""

    active_topic: str = ""
    open_notes: tuple[str, ...] = ()
    tasks: tuple[str, ...] = ()
    decisions: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SessionContext:
    """What a session loads from the workspace at its start.

    Attributes:
        stable: SOUL.md, USER.md, AGENTS.md and (main sessions only) MEMORY.md, comments
            stripped: the stable prefix of the context stack.
        semi_stable: yesterday's and today's daily logs within the daily budget (the
            oldest sections dropped first): the semi-stable layer.
        tokens: WordPiece tokens of both together.
        files: the workspace files loaded, relative paths, in order.
    """

    stable: str
    semi_stable: str
    tokens: int
    files: tuple[str, ...] = field(default=())
