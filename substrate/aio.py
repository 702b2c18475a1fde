"""Trio adapter: the blocking :class:`Substrate` methods, run on worker threads.

One-line delegations through ``trio.to_thread.run_sync`` (with an optional
``CapacityLimiter``), so file I/O and fsync never block the event loop. The substrate's
own lock keeps ids monotonic across tasks and threads.

Cancellation: a call that has reached its worker thread finishes there (an append that
was cancelled may still be written; its id is then not returned to the caller).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable, Mapping
from types import TracebackType
from typing import Any, ParamSpec, TypeVar

import trio

from .crypto import KeyRing
from .event import Event
from .opener import open_substrate
from .store import EventItem, Stats, Substrate
from .verify import VerifyReport

__all__ = ["TrioSubstrate", "open_trio_substrate"]

T = TypeVar("T")
P = ParamSpec("P")


class TrioSubstrate:
    """Async view of a :class:`Substrate`; same guarantees, methods awaitable.

    Args:
        sub: The open substrate (``sync`` gives it back).
        limiter: Bounds the worker threads used (default: trio's shared limiter).
    """

    def __init__(self, sub: Substrate, limiter: trio.CapacityLimiter | None = None) -> None:
        self.sync = sub
        self._limiter = limiter

    async def _run(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        call = functools.partial(fn, *args, **kwargs)
        return await trio.to_thread.run_sync(call, limiter=self._limiter)

    @property
    def key_ring(self) -> KeyRing:
        """:attr:`Substrate.key_ring`."""
        return self.sync.key_ring

    @property
    def last_id(self) -> int:
        """Id of the newest event."""
        return self.sync.last_id

    async def append(
        self, agent: str, kind: str, content: str, *,
        attrs: Mapping[str, str] | None = None, ts: float | None = None,
    ) -> int:
        """:meth:`Substrate.append` on a worker thread."""
        return await self._run(self.sync.append, agent, kind, content, attrs=attrs, ts=ts)

    async def append_many(self, items: Iterable[EventItem]) -> list[int]:
        """:meth:`Substrate.append_many` on a worker thread."""
        return await self._run(self.sync.append_many, list(items))

    async def get(self, entry_id: int) -> Event:
        """:meth:`Substrate.get` on a worker thread."""
        return await self._run(self.sync.get, entry_id)

    async def scan(
        self, agent: str | None = None, kind: str | None = None,
        since_id: int | None = None, until_ts: float | None = None, *,
        kinds: Iterable[str] | Mapping[str, int] | None = None,
    ) -> list[Event]:
        """:meth:`Substrate.scan`, collected into a list on a worker thread."""
        return await self._run(lambda: list(self.sync.scan(agent, kind, since_id, until_ts,
                                                           kinds=kinds)))

    async def verify(self) -> VerifyReport:
        """:meth:`Substrate.verify` on a worker thread."""
        return await self._run(self.sync.verify)

    async def stats(self) -> Stats:
        """:meth:`Substrate.stats` on a worker thread."""
        return await self._run(self.sync.stats)

    async def rotate_key(self) -> int:
        """:meth:`Substrate.rotate_key` on a worker thread."""
        return await self._run(self.sync.rotate_key)

    async def aclose(self) -> None:
        """:meth:`Substrate.close` on a worker thread."""
        await self._run(self.sync.close)

    async def __aenter__(self) -> TrioSubstrate:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


async def open_trio_substrate(
    path: str | os.PathLike[str],
    key: Any = None,
    *,
    limiter: trio.CapacityLimiter | None = None,
    **options: Any,
) -> TrioSubstrate:
    """:func:`open_substrate` on a worker thread (opening indexes every frame).

    ``options`` are :func:`open_substrate`'s keyword arguments.
    """
    sub = await trio.to_thread.run_sync(
        functools.partial(open_substrate, path, key, **options), limiter=limiter
    )
    return TrioSubstrate(sub, limiter)
