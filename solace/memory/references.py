"""References as events: the fade's reference tracking, carried by the substrate.

A record's ``references`` and ``last_referenced`` feed its fade score (what the agent
keeps coming back to stays sharp), so they are memory state like the rung, and a
rebuild from the substrate must find them. Writing an event per recall would turn
every read into a write; instead an agent's :class:`PendingReferences` collects the
references made since its last write, and they are written as one ``touch`` fade
event just *before* the agent's next fade events (in the same substrate write) and
before a snapshot. Replayed in entry-id order, a touch event therefore lands on the
records exactly as they were when the references were made, and the fade event
after it (which carries the record's tracking) supersedes it as it did live.

A touch event: kind ``fade``, author the agent, attrs ``op = "touch"`` and
``references`` = JSON ``[[record_id, count, last_referenced], ...]`` (record ids
ascending), content a one-line summary. References made after the last write are
lost on a crash, as a snapshot's would be: they only ever slow a record's fading.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["TOUCH_OP", "PendingReferences", "Reference", "parse_touch_attrs", "touch_event"]

TOUCH_OP = "touch"


@dataclass(frozen=True, slots=True)
class Reference:
    """References made to one record since the last write: how many, the newest when."""

    count: int
    last: float


class PendingReferences:
    """The references one agent made since its last fade write (see module doc)."""

    def __init__(self) -> None:
        self._pending: dict[int, Reference] = {}

    def __bool__(self) -> bool:
        return bool(self._pending)

    def add(self, record_id: int, now: float) -> None:
        """Note one reference to ``record_id`` at ``now``."""
        self.put_back({record_id: Reference(1, now)})

    def take(self) -> dict[int, Reference]:
        """What is pending, by record id; pending is empty afterwards (references
        made while the caller writes these are kept for the next write)."""
        taken, self._pending = self._pending, {}
        return taken

    def move(self, old: int, new: int) -> None:
        """References pending for record ``old`` now count for ``new`` (it replaced it)."""
        ref = self._pending.pop(old, None) if old != new else None
        if ref is not None:
            self.put_back({new: ref})

    def put_back(self, taken: Mapping[int, Reference]) -> None:
        """Add ``taken`` to what is pending (what :meth:`take` gave, its write having
        failed), merged with newer references: counts add up, the newest time wins."""
        for rid, ref in taken.items():
            newer = self._pending.get(rid)
            self._pending[rid] = ref if newer is None else Reference(
                ref.count + newer.count, max(ref.last, newer.last))


def touch_event(references: Mapping[int, Reference]) -> tuple[str, dict[str, str]]:
    """``(content, attrs)`` of the touch event carrying ``references``."""
    rows = [[rid, ref.count, ref.last] for rid, ref in sorted(references.items())]
    total = sum(ref.count for ref in references.values())
    content = f"{total} reference(s) to {len(rows)} record(s)"
    return content, {"op": TOUCH_OP, "references": json.dumps(rows)}


def parse_touch_attrs(entry_id: int, attrs: Mapping[str, str]) -> dict[int, Reference]:
    """The references a touch event carries, by record id.

    Raises:
        ValueError: the attrs are malformed; names the entry id.
    """
    try:
        rows = json.loads(attrs["references"])
        out = {}
        for rid, count, last in rows:
            if isinstance(count, bool) or not isinstance(count, int) or count < 1:
                raise ValueError(f"count {count!r}")
            out[int(rid)] = Reference(count, float(last))
        return out
    except (KeyError, ValueError, TypeError) as exc:
        raise ValueError(f"touch event {entry_id} is malformed: {exc!r}") from exc
