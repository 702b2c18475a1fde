"""Events: the immutable records the substrate stores, and the kinds they may have."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

__all__ = ["BUILTIN_KINDS", "Event", "NewEvent", "check_kind_name", "kinds_with"]

#: The kinds every substrate accepts; ``open_substrate(extra_kinds=...)`` adds more.
BUILTIN_KINDS: frozenset[str] = frozenset(
    {"reflection", "cue", "message", "tool_call", "tool_result", "speech", "fact", "curation"}
)

_KIND_NAME = re.compile(r"[a-z][a-z0-9_]*\Z")
_MAX_KIND_LEN = 64


def check_kind_name(name: object) -> str:
    """Return ``name`` if it is a well-formed kind name (``[a-z][a-z0-9_]*``, ≤ 64 chars).

    Raises:
        TypeError: ``name`` is not a str.
        ValueError: ``name`` does not match the pattern; the message names it.
    """
    if not isinstance(name, str):
        raise TypeError(f"kind names are str, got {type(name).__name__}: {name!r}")
    if len(name) > _MAX_KIND_LEN or not _KIND_NAME.match(name):
        raise ValueError(
            f"bad kind name {name!r}: kinds match [a-z][a-z0-9_]* and have at most "
            f"{_MAX_KIND_LEN} characters"
        )
    return name


def kinds_with(extra_kinds: Iterable[str]) -> frozenset[str]:
    """Return the built-in kinds plus ``extra_kinds``, each checked by :func:`check_kind_name`.

    Raises:
        TypeError, ValueError: an extra kind is malformed (a bare ``str`` is refused too,
            since iterating it would add one kind per letter).
    """
    if isinstance(extra_kinds, str):
        raise TypeError(f"extra_kinds must be an iterable of names, not the str {extra_kinds!r}")
    return BUILTIN_KINDS | {check_kind_name(k) for k in extra_kinds}


@dataclass(frozen=True, slots=True)
class Event:
    """One entry of the substrate, as read back.

    Attributes:
        entry_id: Position in the log; ids start at 1 and increase by one per event.
        ts: When the event happened, unix seconds (UTC), exactly as appended.
        agent: Who produced it, e.g. ``"Supervisor"``.
        kind: One of the substrate's kinds, e.g. ``"message"``.
        content: The text, exactly as appended (every ``\\r``, ``\\n`` and space kept).
        attrs: Caller metadata, str to str, exactly as appended; read-only.

    Events compare and hash by value (``attrs`` by its items).
    """

    entry_id: int
    ts: float
    agent: str
    kind: str
    content: str
    attrs: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.attrs, MappingProxyType):
            object.__setattr__(self, "attrs", MappingProxyType(dict(self.attrs)))

    def __hash__(self) -> int:
        return hash(
            (self.entry_id, self.ts, self.agent, self.kind, self.content,
             frozenset(self.attrs.items()))
        )


@dataclass(frozen=True, slots=True)
class NewEvent:
    """One item for :meth:`Substrate.append_many`: an event that has no id yet.

    ``ts=None`` means "now" (read once per batch); ``attrs=None`` means no metadata.
    """

    agent: str
    kind: str
    content: str
    attrs: Mapping[str, str] | None = None
    ts: float | None = None
