"""Clocks: every piece of Solace that ages, debounces or ticks reads one of these.

Runtime code never calls ``time.time()``. Three clocks cover the uses:

* :class:`WallClock` — production: seconds since the epoch.
* :class:`TrioClock` — tests: the epoch seconds at start plus trio's virtual time,
  so ``trio.testing.MockClock(autojump_threshold=0)`` runs a week of fading in
  milliseconds and assertions can name exact virtual instants.
* :class:`ReplayClock` — benchmarks and imports: ``now()`` is the latest timestamp
  observed, so a dated conversation replays at its real dates.

Every instant Solace accepts lies in ``[EARLIEST, LATEST]`` (1970-01-01 to the last second
of 9999-12-31, UTC): :func:`check_instant` is the one test, used by the public observe
paths and by :class:`ReplayClock`, so no NaN, infinity or year-1e300 date can reach a
clock, a record or the fade.
"""

from __future__ import annotations

import math
import numbers
import time
from datetime import UTC, datetime
from typing import Protocol

import trio

__all__ = [
    "EARLIEST",
    "LATEST",
    "Clock",
    "ReplayClock",
    "TrioClock",
    "WallClock",
    "check_instant",
    "to_epoch",
    "utc_day",
]

#: The first instant Solace accepts: 1970-01-01T00:00:00Z.
EARLIEST: float = 0.0
#: The last instant Solace accepts: 9999-12-31T23:59:59Z.
LATEST: float = datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC).timestamp()


class Clock(Protocol):
    """Anything with ``now() -> float`` (seconds since the Unix epoch, UTC)."""

    def now(self) -> float: ...


def utc_day(ts: float) -> str:
    """The calendar day (UTC) of ``ts`` epoch seconds, as ``YYYY-MM-DD``."""
    return datetime.fromtimestamp(float(ts), UTC).date().isoformat()


def to_epoch(at: float | datetime) -> float:
    """Seconds since the epoch for ``at``; a naive datetime is taken as UTC."""
    if isinstance(at, datetime):
        if at.tzinfo is None:
            at = at.replace(tzinfo=UTC)
        return at.timestamp()
    return float(at)


def check_instant(at: object, *, name: str = "at") -> float:
    """``at`` as epoch seconds, if it is a sane instant; the value is never clamped.

    Args:
        at: a ``datetime`` (naive means UTC) or a real number of seconds since the
            epoch (``bool`` and strings are not numbers here).
        name: the argument's name, for the message.

    Returns:
        Seconds since the epoch, finite and within ``[EARLIEST, LATEST]``.

    Raises:
        TypeError: ``at`` is neither a datetime nor a real number; the message names it.
        ValueError: ``at`` is NaN, infinite or outside 1970-01-01..9999-12-31 (UTC);
            the message names the value and the range.
    """
    if isinstance(at, bool) or not isinstance(at, numbers.Real | datetime):
        raise TypeError(
            f"{name} must be a datetime or epoch seconds (a real number), "
            f"got {type(at).__name__}: {at!r}"
        )
    try:
        ts = to_epoch(at)  # type: ignore[arg-type]  # a Real: float() takes it
    except OverflowError:  # an int too large for a float
        ts = math.inf if at > 0 else -math.inf  # type: ignore[operator]
    else:
        if not math.isfinite(ts):
            raise ValueError(f"{name} must be a finite instant, got {at!r}")
    if not EARLIEST <= ts <= LATEST:
        raise ValueError(
            f"{name} must lie between 1970-01-01 and 9999-12-31 (UTC), "
            f"i.e. {EARLIEST!r}..{LATEST!r} epoch seconds, got {at!r}"
        )
    return ts


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
    so events replayed slightly out of order cannot make records younger. It never
    leaves ``[EARLIEST, LATEST]``: a refused instant (NaN, infinite, out of range)
    raises and leaves it exactly where it was.

    Raises:
        TypeError, ValueError: ``start`` is not a sane instant (see :func:`check_instant`).
    """

    def __init__(self, start: float | datetime = 0.0) -> None:
        self._now = check_instant(start, name="start")

    def now(self) -> float:
        return self._now

    def observe(self, at: float | datetime) -> float:
        """Move to ``at`` if it is later than now; return the clock's time.

        Raises:
            TypeError, ValueError: ``at`` is not a sane instant; the clock has not moved.
        """
        self._now = max(self._now, check_instant(at))
        return self._now

    def advance(self, seconds: float) -> float:
        """Move forward by ``seconds`` (>= 0); return the clock's time.

        Raises:
            ValueError: ``seconds`` is negative or NaN, or the result would pass
                ``LATEST``; the clock has not moved.
        """
        if not seconds >= 0:  # also refuses NaN
            raise ValueError(f"ReplayClock.advance needs seconds >= 0, got {seconds!r}")
        self._now = check_instant(self._now + seconds, name="ReplayClock.advance result")
        return self._now
