"""Clocks: runtime time is injected, so tests can age memory by weeks instantly."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
import trio

from solace.clock import ReplayClock, TrioClock, to_epoch


def test_replay_clock_is_the_latest_instant_observed() -> None:
    clock = ReplayClock()
    clock.observe(datetime(2023, 5, 8, 13, 56, tzinfo=UTC))
    clock.observe(datetime(2023, 5, 1, tzinfo=UTC))  # earlier: ignored
    assert clock.now() == to_epoch(datetime(2023, 5, 8, 13, 56, tzinfo=UTC))
    assert clock.advance(60) == clock.now()


def test_replay_clock_refuses_to_run_backwards() -> None:
    with pytest.raises(ValueError, match="seconds >= 0"):
        ReplayClock().advance(-1)


def test_naive_datetimes_are_utc() -> None:
    assert to_epoch(datetime(1970, 1, 2)) == 86400.0


async def test_trio_clock_follows_virtual_time(autojump_clock: trio.testing.MockClock) -> None:
    clock = TrioClock(epoch=1000.0)
    start = clock.now()
    await trio.sleep(7 * 24 * 3600)  # a week, instantly
    assert clock.now() - start == pytest.approx(7 * 24 * 3600)
