"""The conversation layer's door to the substrate: append drafts, replay its events.

The substrate is the truth. Everything this layer changes is appended here first (in
one atomic ``append_many`` batch per change, so a fork's five events land together
or not at all) and only then folded into the projection. Timestamps come from the
injected clock and are passed explicitly, so a replayed event equals the live one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Protocol

from solace.conversation.events import REPLAYED_KINDS, Appended, Draft
from solace.conversation.projection import Projection, is_conversation_event
from substrate import Event, KeyRing, NewEvent

__all__ = ["AsyncSubstrate", "EventStore", "LayerReplay"]


class AsyncSubstrate(Protocol):
    """What this layer uses of ``substrate.aio.TrioSubstrate``."""

    async def append_many(self, items: Sequence[NewEvent]) -> list[int]: ...

    @property
    def last_id(self) -> int: ...

    @property
    def key_ring(self) -> KeyRing: ...

    async def scan(
        self,
        agent: str | None = None,
        kind: str | None = None,
        since_id: int | None = None,
        until_ts: float | None = None,
        *,
        kinds: Iterable[str] | Mapping[str, int] | None = None,
    ) -> list[Event]: ...


class LayerReplay:
    """The conversation layer as a :class:`~solace.projections.Projection`: a
    :class:`~solace.conversation.projection.Projection` (empty, or a kept snapshot)
    folded from the layer's events after its checkpoint, handed to ``install`` when
    the replay is complete."""

    name = "conversation layer"
    kinds: frozenset[str] = frozenset(REPLAYED_KINDS)

    def __init__(self, install: Callable[[Projection], None], *,
                 kept: tuple[Projection, int] | None = None) -> None:
        """``kept``: a snapshot and its checkpoint to fold the tail onto (None: the
        whole log is folded into an empty projection)."""
        self._projection, self.checkpoint = kept if kept is not None else (Projection(), 0)
        self._install = install

    def apply(self, event: Event) -> None:
        if is_conversation_event(event):
            self._projection.apply(event)

    async def finish(self, head: int) -> None:
        self._install(self._projection)


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
        return [e for e in await self.substrate.scan(since_id=since_id, kinds=REPLAYED_KINDS)
                if is_conversation_event(e)]
