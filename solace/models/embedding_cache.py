"""One embedding cache in front of the model, shared by every agent of a runtime."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["SharedEmbedder"]


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
