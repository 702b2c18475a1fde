"""Plumbing the runtime shares between its parts: one embedding cache, batched reads.

Kept apart from :mod:`solace.runtime` so that file stays about the task tree.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np

from solace.actors.routing import speaker_of
from solace.offload import Offloader

__all__ = ["EventReader", "SharedEmbedder", "rehydrate_for", "resolved_turn"]


def rehydrate_for(
    rehydrate_text: Any, tokenizer: Any, config: Any, events: Sequence[Any], rung: int
) -> str:
    """The ladder's ``rehydrate_text`` over ``events`` with their speakers as routing
    names them (a message the conversation layer logged for the user is the user's)."""
    from substrate import Event

    named = [
        e if speaker_of(e) == e.agent
        else Event(e.entry_id, e.ts, speaker_of(e), e.kind, e.content, e.attrs)
        for e in events
    ]
    return str(rehydrate_text(named, rung, tokenizer=tokenizer, config=config))


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
        found = [self.cached(int(e)) for e in entry_ids]
        if all(event is not None for event in found):
            return found
        return await self._offloader.run(lambda: [self.get(int(e)) for e in entry_ids])



class SharedEmbedder:
    """An embedder that remembers its most recent texts' vectors.

    Two agents at one event each embed the same record text (``"Speaker: content"``),
    and two agents fading the same episode embed the same summary; with this in front
    of the model the second is a lookup. A text another thread is embedding right
    now is waited for, not embedded twice (agents fade concurrently). Vectors are
    returned as the model made them. Thread-safe (embedding runs in worker threads).
    """

    def __init__(self, inner: Any, capacity: int = 4096) -> None:
        self.inner = inner
        self.name = inner.name
        self.capacity = capacity
        self._cache: dict[str, np.ndarray] = {}
        self._in_flight: dict[str, threading.Event] = {}
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    @property
    def dim(self) -> int:
        return int(self.inner.dim)

    def cached(self, text: str) -> np.ndarray | None:
        """``text``'s vector if it is in the cache (no model call: fine on the event
        loop), else None."""
        with self._lock:
            vector = self._cache.get(text)
            if vector is not None:
                self.hits += 1
            return vector

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        found: dict[str, np.ndarray] = {}
        waits: dict[str, threading.Event] = {}  # texts another thread is embedding
        mine: list[str] = []  # texts this call embeds
        done = threading.Event()
        with self._lock:
            for text in dict.fromkeys(texts):
                if text in self._cache:
                    found[text] = self._cache[text]
                elif text in self._in_flight:
                    waits[text] = self._in_flight[text]
                else:
                    self._in_flight[text] = done
                    mine.append(text)
        try:
            if mine:
                found.update(zip(mine, self.inner.embed(mine), strict=True))
        finally:
            with self._lock:
                for text in mine:
                    del self._in_flight[text]
                    if text in found:
                        self._cache[text] = found[text]
                while len(self._cache) > self.capacity:
                    del self._cache[next(iter(self._cache))]
            done.set()
        for event in set(waits.values()):
            event.wait()
        with self._lock:
            late = {t: self._cache[t] for t in waits if t in self._cache}
            self.misses += len(mine)
            self.hits += len(texts) - len(mine)
        found.update(late)
        # The other thread failed (or the cache already let its vector go): embed here.
        lost = [t for t in waits if t not in found]
        if lost:
            found.update(zip(lost, self.inner.embed(lost), strict=True))
        return np.stack([found[t] for t in texts]).astype(np.float32, copy=False)


def resolved_turn(event: Any) -> str:
    """One event as a self-contained line: ``"Speaker: content"`` with relative dates
    ("yesterday", "last week") rewritten as the dates they meant when it was said.

    Every word of the utterance is kept (unlike the ladder's rung-1 key sentences),
    so detail is not lost; only what would be wrong out of context is fixed.
    """
    from solace.memory.ladder import format_raw, resolve_relative_dates

    return format_raw(speaker_of(event), resolve_relative_dates(event.content, event.ts))
