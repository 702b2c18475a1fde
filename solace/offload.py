"""The one adapter between the trio event loop and blocking work.

Embedding, FAISS, the LLM and bulk crypto all block. They are written as plain
synchronous functions (numpy in, numpy out) and the async runtime calls them
through :class:`Offloader`, so no class has an async twin and the event loop never
stalls behind a matrix multiply. One limiter per runtime bounds how many threads
compete for the two cores.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import trio

__all__ = ["Offloader"]

T = TypeVar("T")
Item = TypeVar("Item")


class Offloader:
    """Runs blocking callables in worker threads, at most ``threads`` at a time."""

    def __init__(self, threads: int = 2) -> None:
        if threads <= 0:
            raise ValueError(f"Offloader needs threads > 0, got {threads!r}")
        self.threads = threads
        self._limiter = trio.CapacityLimiter(threads)

    async def run(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        """Call ``fn(*args, **kwargs)`` in a worker thread and return its result.

        Exceptions propagate unchanged. A started call is not cancellable: trio
        cannot interrupt a thread, so it waits for the call and returns its result
        even inside a cancelled scope — what a worker stored, the caller sees.
        """
        call = functools.partial(fn, *args, **kwargs) if kwargs else functools.partial(fn, *args)
        return await trio.to_thread.run_sync(call, limiter=self._limiter)

    async def run_chunks(
        self, fn: Callable[[Sequence[Item]], T], items: Sequence[Item], *, min_chunk: int = 8
    ) -> list[T]:
        """``fn`` over consecutive chunks of ``items``, up to ``threads`` chunks at once.

        For row-wise work such as embedding a batch: one call would keep one core busy
        while the others wait (each model call runs single-threaded; see
        ``models.embed_threads``). Chunks have at least ``min_chunk`` items; results
        come back in order, one per chunk. If a chunk raises, the first exception
        propagates unchanged once every chunk has finished.
        """
        if min_chunk < 1:
            raise ValueError(f"min_chunk must be >= 1, got {min_chunk!r}")
        parts = max(1, min(self.threads, len(items) // min_chunk))
        if parts == 1:
            return [await self.run(fn, items)]
        bounds = [round(i * len(items) / parts) for i in range(parts + 1)]
        results: list[Any] = [None] * parts
        errors: list[Exception] = []

        async def one(index: int) -> None:
            try:
                results[index] = await self.run(fn, items[bounds[index]:bounds[index + 1]])
            except Exception as exc:  # re-raised below, unwrapped from the nursery's group
                errors.append(exc)

        async with trio.open_nursery() as nursery:
            for index in range(parts):
                nursery.start_soon(one, index)
        if errors:
            raise errors[0]
        return results
