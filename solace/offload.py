"""The one adapter between the trio event loop and blocking work.

Embedding, FAISS, the LLM and bulk crypto all block. They are written as plain
synchronous functions (numpy in, numpy out) and the async runtime calls them
through :class:`Offloader`, so no class has an async twin and the event loop never
stalls behind a matrix multiply. One limiter per runtime bounds how many threads
compete for the two cores; :func:`start` runs one call beside them (reading
files while the loop replays), for work that mostly waits or runs outside the GIL.

Recall has a lane of its own (a second :class:`Offloader`), but a lane does not make
cores: while a fade or a bulk embedding keeps both busy, a recall's threads and its
steps on the loop wait their turn. So the bulk offloader can be given a
:class:`Foreground`: while any recall holds it, a bulk call about to start waits for
the recalls to end, at most ``max_wait`` seconds (background work is delayed, never
starved), and calls already running finish as they are.
"""

from __future__ import annotations

import contextvars
import functools
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Generic, TypeVar

import outcome
import trio

__all__ = ["Foreground", "Offloader", "Pending", "concurrently", "start"]

T = TypeVar("T")
Item = TypeVar("Item")


async def concurrently(calls: Sequence[Callable[[], Awaitable[T]]]) -> list[T]:
    """Await every one of ``calls`` at once; their results, in order.

    If any raised, the first one's exception (in the order of ``calls``) is raised as
    it is, not wrapped in a group, once every call has finished.
    """
    results: list[Any] = [None] * len(calls)
    errors: dict[int, Exception] = {}

    async def one(index: int) -> None:
        try:
            results[index] = await calls[index]()
        except Exception as exc:  # re-raised below, unwrapped from the nursery's group
            errors[index] = exc

    async with trio.open_nursery() as nursery:
        for index in range(len(calls)):
            nursery.start_soon(one, index)
    if errors:
        raise errors[min(errors)]
    return results


class Foreground:
    """Spans in which a caller waits on the runtime (a recall), which background work
    steps aside for: see the module docstring. A call made inside a span (by the task
    holding it, or a task it started) never waits: the recall's own work goes first.

    Args:
        max_wait: Longest a background call waits for the foreground to clear, in
            seconds of trio's clock; past it the call starts anyway.
    """

    def __init__(self, max_wait: float = 0.25) -> None:
        if not max_wait >= 0:
            raise ValueError(f"Foreground max_wait must be >= 0 seconds, got {max_wait!r}")
        self.max_wait = max_wait
        self._inside: contextvars.ContextVar[bool] = contextvars.ContextVar(
            "inside_foreground", default=False)
        self.active = 0
        self._clear = trio.Event()
        self._clear.set()
        #: background calls that waited, and for how long in all (trio seconds)
        self.waits = 0
        self.waited_s = 0.0

    @contextmanager
    def held(self) -> Iterator[None]:
        """Hold the foreground for the ``with`` block (nested and concurrent holds
        add up; it clears when the last ends)."""
        if self.active == 0:
            self._clear = trio.Event()
        self.active += 1
        inside = self._inside.set(True)
        try:
            yield
        finally:
            self._inside.reset(inside)
            self.active -= 1
            if self.active == 0:
                self._clear.set()

    async def yielded(self) -> None:
        """Return once the foreground is clear, or after ``max_wait``; at once (without a
        checkpoint) when it is clear already, or when called inside a span."""
        if self.active == 0 or self._inside.get():
            return
        start = trio.current_time()
        with trio.move_on_after(self.max_wait):
            await self._clear.wait()
        self.waits += 1
        self.waited_s += trio.current_time() - start


class Offloader:
    """Runs blocking callables in worker threads, at most ``threads`` at a time; with
    ``defers_to``, each call waits for that :class:`Foreground` before it starts."""

    def __init__(self, threads: int = 2, *, defers_to: Foreground | None = None) -> None:
        if threads <= 0:
            raise ValueError(f"Offloader needs threads > 0, got {threads!r}")
        self.threads = threads
        self.defers_to = defers_to
        self._limiter = trio.CapacityLimiter(threads)

    async def run(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        """Call ``fn(*args, **kwargs)`` in a worker thread and return its result.

        Exceptions propagate unchanged. A started call is not cancellable: trio
        cannot interrupt a thread, so it waits for the call and returns its result
        even inside a cancelled scope — what a worker stored, the caller sees.
        """
        call = functools.partial(fn, *args, **kwargs) if kwargs else functools.partial(fn, *args)
        if self.defers_to is not None:
            await self.defers_to.yielded()
        return await trio.to_thread.run_sync(call, limiter=self._limiter)

    async def run_chunks(
        self, fn: Callable[[Sequence[Item]], T], items: Sequence[Item], *, min_chunk: int = 8,
        max_chunk: int | None = None,
    ) -> list[T]:
        """``fn`` over consecutive chunks of ``items``, up to ``threads`` chunks at once.

        For row-wise work such as embedding a batch: one call would keep one core busy
        while the others wait (each model call runs single-threaded; see
        ``models.embed_threads``). Chunks have at least ``min_chunk`` items, and with
        ``max_chunk`` at most that many (more chunks than threads: they queue for the
        threads, beside any other work queued there); results come back in order, one
        per chunk. If a chunk raises, the first such chunk's exception propagates
        unchanged once every chunk has finished.
        """
        if min_chunk < 1:
            raise ValueError(f"min_chunk must be >= 1, got {min_chunk!r}")
        if max_chunk is not None and max_chunk < 1:
            raise ValueError(f"max_chunk must be >= 1, got {max_chunk!r}")
        parts = max(1, min(self.threads, len(items) // min_chunk))
        if max_chunk is not None:
            parts = max(parts, -(-len(items) // max_chunk))
        if parts == 1:
            return [await self.run(fn, items)]
        bounds = [round(i * len(items) / parts) for i in range(parts + 1)]
        return await concurrently([
            functools.partial(self.run, fn, items[bounds[i]:bounds[i + 1]])
            for i in range(parts)])


class Pending(Generic[T]):
    """A blocking call running in a thread of its own (:func:`start`)."""

    def __init__(self) -> None:
        self._done = trio.Event()
        self._outcome: outcome.Outcome[T] | None = None

    async def result(self) -> T:
        """Wait for the call; its return value, or its exception raised unchanged."""
        await self._done.wait()
        assert self._outcome is not None
        return self._outcome.unwrap()


def start(fn: Callable[..., T], /, *args: Any) -> Pending[T]:
    """Call ``fn(*args)`` in a new thread now, outside any limiter, and return at once
    (from inside a trio run); ``await pending.result()`` for what it returned.

    Nothing waits for the call unless asked: a caller that leaves early (an error)
    lets it finish in the background, its result dropped. So give it only work that
    touches nothing the caller goes on to change (reading files, into objects of its
    own)."""
    token = trio.lowlevel.current_trio_token()
    pending: Pending[T] = Pending()

    def deliver(result: outcome.Outcome[T]) -> None:
        pending._outcome = result
        try:
            token.run_sync_soon(pending._done.set)
        except trio.RunFinishedError:  # the run ended first: nobody is waiting
            pass

    trio.lowlevel.start_thread_soon(functools.partial(fn, *args), deliver)
    return pending
