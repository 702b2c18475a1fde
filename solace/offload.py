"""The one adapter between the trio event loop and blocking work.

Embedding, FAISS, the LLM and bulk crypto all block. They are written as plain
synchronous functions (numpy in, numpy out) and the async runtime calls them
through :class:`Offloader`, so no class has an async twin and the event loop never
stalls behind a matrix multiply. One limiter per runtime bounds how many threads
compete for the two cores.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import trio

__all__ = ["Offloader"]

T = TypeVar("T")


class Offloader:
    """Runs blocking callables in worker threads, at most ``threads`` at a time."""

    def __init__(self, threads: int = 2) -> None:
        if threads <= 0:
            raise ValueError(f"Offloader needs threads > 0, got {threads!r}")
        self._limiter = trio.CapacityLimiter(threads)

    async def run(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        """Call ``fn(*args, **kwargs)`` in a worker thread and return its result.

        Exceptions propagate unchanged. Cancellation abandons the wait but the
        thread finishes its call (trio cannot interrupt a thread), so callers
        that store data must not treat a cancelled call as not having happened.
        """
        call = functools.partial(fn, *args, **kwargs) if kwargs else functools.partial(fn, *args)
        return await trio.to_thread.run_sync(call, limiter=self._limiter)
