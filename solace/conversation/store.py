"""The conversation layer's door to the substrate: append drafts, replay its events.

The substrate is the truth. Everything this layer changes is appended here first (in
one atomic ``append_many`` batch per change, so a fork's five events land together
or not at all) and only then folded into the projection. Timestamps come from the
injected clock and are passed explicitly, so a replayed event equals the live one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from solace.conversation.events import REPLAYED_KINDS, Appended, Draft
from solace.conversation.projection import is_conversation_event
from substrate import Event, NewEvent

__all__ = ["AsyncSubstrate", "EventStore"]


class AsyncSubstrate(Protocol):
    """What this layer uses of ``substrate.aio.TrioSubstrate``."""

    async def append_many(self, items: Sequence[NewEvent]) -> list[int]: ...

    async def scan(
        self,
        agent: str | None = None,
        kind: str | None = None,
        since_id: int | None = None,
        until_ts: float | None = None,
    ) -> list[Event]: ...


class EventStore:
    """Appends this layer's drafts and replays its events, in entry-id order."""

    def __init__(self, substrate: AsyncSubstrate) -> None:
        self.substrate = substrate

    async def append(self, drafts: Sequence[Draft], ts: float) -> list[Appended]:
        """Append ``drafts`` as one batch stamped ``ts``; all or nothing.

        Returns:
            The events as stored, in order, with their entry ids.

        Raises:
            Whatever the substrate raises (e.g. ``InvalidEventError`` for a kind it was
            not opened with); nothing was appended then.
        """
        ids = await self.substrate.append_many(
            [NewEvent(d.agent, d.kind, d.content, dict(d.attrs), ts) for d in drafts]
        )
        return [
            Appended(entry_id, ts, d.agent, d.kind, d.content, dict(d.attrs))
            for entry_id, d in zip(ids, drafts, strict=True)
        ]

    async def replay(self, since_id: int | None = None) -> list[Event]:
        """Every event of this layer after ``since_id``, ascending by entry id."""
        found: list[Event] = []
        for kind in REPLAYED_KINDS:
            found.extend(
                e for e in await self.substrate.scan(kind=kind, since_id=since_id)
                if is_conversation_event(e)
            )
        found.sort(key=lambda e: e.entry_id)
        return found
