"""What appends take and what ``stats`` returns: the event item forms, argument checks."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias

from .event import NewEvent

__all__ = ["EventItem", "Stats", "check_ts", "unpack_item"]

EventItem: TypeAlias = (
    NewEvent
    | tuple[str, str, str]
    | tuple[str, str, str, Mapping[str, str] | None]
    | tuple[str, str, str, Mapping[str, str] | None, float | None]
)


@dataclass(frozen=True, slots=True)
class Stats:
    """Counts from the index (no decryption).

    Attributes:
        events: Number of events (= ``last_id``).
        by_agent, by_kind: Events per agent and per kind.
        key_ids: Events per key id; ``current_key_id`` seals new events.
        segments, bytes: Segment files and their total size.
    """

    events: int
    by_agent: Mapping[str, int]
    by_kind: Mapping[str, int]
    key_ids: Mapping[int, int]
    current_key_id: int
    segments: int
    bytes: int


def check_ts(ts: object) -> float:
    if isinstance(ts, bool) or not isinstance(ts, int | float):
        raise TypeError(f"ts must be unix seconds as a float, got {ts!r}")
    return float(ts)


def unpack_item(
    item: EventItem,
) -> tuple[str, str, str, Mapping[str, str] | None, float | None]:
    if type(item) is NewEvent:
        return item.agent, item.kind, item.content, item.attrs, item.ts
    if type(item) is tuple and len(item) == 5:
        return item
    if isinstance(item, NewEvent):
        return item.agent, item.kind, item.content, item.attrs, item.ts
    if isinstance(item, tuple) and 3 <= len(item) <= 5:
        attrs: Any = item[3] if len(item) > 3 else None
        ts: Any = item[4] if len(item) > 4 else None
        return item[0], item[1], item[2], attrs, ts
    raise TypeError(
        f"append_many items are NewEvent or (agent, kind, content[, attrs[, ts]]), got {item!r}"
    )
