"""Batched, cached reads of substrate events for the runtime's parts (rehydration,
citations): one worker-thread call for many events, and the most recent ones kept."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from solace.offload import Offloader

__all__ = ["EventReader"]


class EventReader:
    """Reads substrate events, many in one worker-thread call (rehydration, citations),
    keeping the ``capacity`` most recently read: an event never changes once written,
    and recall cites the same few hundred over and over (each read authenticates and
    decrypts a frame). Thread-safe."""

    def __init__(self, substrate: Any, offloader: Offloader, capacity: int = 8192) -> None:
        self._substrate = substrate
        self._offloader = offloader
        self.capacity = capacity
        self._recent: OrderedDict[int, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, entry_id: int) -> Any:
        """Event ``entry_id`` (blocking: a worker thread, or one read on the loop).

        Raises:
            The substrate's errors for an id never written or a frame that fails
            authentication (nothing is cached then).
        """
        event = self.cached(entry_id)
        if event is not None:
            return event
        event = self._substrate.sync.get(entry_id)
        with self._lock:
            self._recent[entry_id] = event
            if len(self._recent) > self.capacity:
                self._recent.popitem(last=False)
        return event

    def cached(self, entry_id: int) -> Any | None:
        """Event ``entry_id`` if it was read recently (no I/O: fine on the event loop);
        it counts as read again."""
        with self._lock:
            event = self._recent.get(entry_id)
            if event is not None:
                self._recent.move_to_end(entry_id)
            return event

    async def get_many(self, entry_ids: Sequence[int]) -> list[Any]:
        """The events, in order: all from memory when they were read recently,
        otherwise in one worker-thread call."""
        recent = self._recent
        with self._lock:  # once for the batch (an episode's hit stands for dozens)
            found = [recent.get(int(e)) for e in entry_ids]
            if all(event is not None for event in found):
                for e in entry_ids:
                    recent.move_to_end(int(e))
                return found
        return await self._offloader.run(lambda: [self.get(int(e)) for e in entry_ids])
