"""Clocks: every piece of Solace that ages, debounces or ticks reads one of these.

Runtime code never calls ``time.time()``. Three clocks cover the uses:

* :class:`WallClock` — production: seconds since the epoch.
* :class:`TrioClock` — tests: the epoch seconds at start plus trio's virtual time,
  so ``trio.testing.MockClock(autojump_threshold=0)`` runs a week of fading in
  milliseconds and assertions can name exact virtual instants.
* :class:`ReplayClock` — benchmarks and imports: ``now()`` is the latest timestamp
  observed, so a dated conversation replays at its real dates.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Protocol

import trio

__all__ = ["Clock", "ReplayClock", "TrioClock", "WallClock", "to_epoch"]


class Clock(Protocol):
    """Anything with ``now() -> float`` (seconds since the Unix epoch, UTC)."""

    def now(self) -> float: ...


def to_epoch(at: float | datetime) -> float:
    """Seconds since the epoch for ``at``; a naive datetime is taken as UTC."""
    if isinstance(at, datetime):
        if at.tzinfo is None:
            at = at.replace(tzinfo=UTC)
        return at.timestamp()
    return float(at)


class WallClock:
    """The system clock."""

    def now(self) -> float:
        return time.time()


class TrioClock:
    """Epoch seconds that advance with trio's clock (virtual under ``MockClock``).

    Must be read inside ``trio.run``. ``epoch`` is the wall time at trio time 0.
    """

    def __init__(self, epoch: float = 1_700_000_000.0) -> None:
        self._epoch = epoch

    def now(self) -> float:
        return self._epoch + trio.current_time()


class ReplayClock:
    """A settable clock: ``now()`` is the latest instant observed or advanced to.

    It never runs backwards: observing an earlier instant leaves it where it is,
    so events replayed slightly out of order cannot make records younger.
    """

    def __init__(self, start: float | datetime = 0.0) -> None:
        self._now = to_epoch(start)

    def now(self) -> float:
        return self._now

    def observe(self, at: float | datetime) -> float:
        """Move to ``at`` if it is later than now; return the clock's time."""
        self._now = max(self._now, to_epoch(at))
        return self._now

    def advance(self, seconds: float) -> float:
        """Move forward by ``seconds`` (>= 0); return the clock's time."""
        if seconds < 0:
            raise ValueError(f"ReplayClock.advance needs seconds >= 0, got {seconds!r}")
        self._now += seconds
        return self._now
