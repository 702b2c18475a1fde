"""Clocks accept only sane instants: a refused one raises and moves nothing."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pytest

from solace.clock import EARLIEST, LATEST, ReplayClock, check_instant


@pytest.mark.parametrize("bad", [math.inf, -math.inf, math.nan])
def test_refused_infinite_date_leaves_the_clock_where_it_was(bad: float) -> None:
    clock = ReplayClock(datetime(2023, 5, 8, tzinfo=UTC))
    before = clock.now()
    with pytest.raises(ValueError, match="finite"):
        clock.observe(bad)
    assert clock.now() == before
    assert clock.observe(datetime(2023, 5, 9, tzinfo=UTC)) == before + 86400.0


@pytest.mark.parametrize("bad", [1e300, LATEST + 1.0, 10**400])
def test_date_beyond_year_9999_is_refused(bad: float) -> None:
    clock = ReplayClock(datetime(2023, 5, 8, tzinfo=UTC))
    before = clock.now()
    with pytest.raises(ValueError, match="9999-12-31"):
        clock.observe(bad)
    assert clock.now() == before


def test_date_before_1970_is_refused() -> None:
    with pytest.raises(ValueError, match=r"-1\.0"):
        check_instant(-1.0)
    with pytest.raises(ValueError, match="1969"):
        check_instant(datetime(1969, 12, 31, tzinfo=UTC))


def test_the_bounds_themselves_are_accepted() -> None:
    assert check_instant(EARLIEST) == 0.0
    assert check_instant(datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC)) == LATEST
    assert check_instant(datetime(1970, 1, 2)) == 86400.0  # naive means UTC


@pytest.mark.parametrize("bad", ["2023-05-08", True, None, b"1"])
def test_an_instant_must_be_a_datetime_or_a_number(bad: object) -> None:
    with pytest.raises(TypeError, match="at must be a datetime"):
        check_instant(bad)


def test_replay_clock_advance_refuses_nan_and_overflow_without_moving() -> None:
    clock = ReplayClock(1000.0)
    with pytest.raises(ValueError, match="seconds >= 0"):
        clock.advance(math.nan)
    with pytest.raises(ValueError, match="9999-12-31"):
        clock.advance(1e300)
    assert clock.now() == 1000.0


def test_replay_clock_refuses_an_insane_start() -> None:
    with pytest.raises(ValueError, match="start must be a finite instant"):
        ReplayClock(math.inf)
