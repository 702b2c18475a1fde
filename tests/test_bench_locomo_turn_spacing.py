"""LoCoMo benchmark: turns are timed from their session's real start at fixed human rates."""

from __future__ import annotations

import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

from locomo_scoring import READING_WPM, TYPING_WPM, turn_times  # noqa: E402

START = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def test_each_turn_follows_the_last_by_reading_it_and_typing_itself() -> None:
    texts = ["one two three four five", "six seven", "eight"]
    times = turn_times(START, texts)
    assert times[0] == START
    first_gap = 60.0 * (5 / READING_WPM + 2 / TYPING_WPM)
    second_gap = 60.0 * (2 / READING_WPM + 1 / TYPING_WPM)
    assert (times[1] - START).total_seconds() == pytest.approx(first_gap)
    assert (times[2] - times[1]).total_seconds() == pytest.approx(second_gap)


def test_a_long_turn_takes_longer_than_a_short_one() -> None:
    short = turn_times(START, ["hi", "ok"])
    long = turn_times(START, ["hi", " ".join(["word"] * 40)])
    assert long[1] - long[0] > short[1] - short[0]
    assert long[1] - long[0] >= timedelta(minutes=1)  # 40 words at 40 a minute


def test_a_session_that_would_overrun_the_next_is_squeezed_before_it() -> None:
    texts = [" ".join(["word"] * 400)] * 5  # ~40 minutes of typing
    nxt = START + timedelta(minutes=10)
    times = turn_times(START, texts, nxt)
    assert times[0] == START
    assert all(a < b for a, b in zip(times, times[1:], strict=False))
    assert times[-1] < nxt


def test_a_next_session_not_after_the_start_is_refused_by_its_time() -> None:
    with pytest.raises(ValueError, match="2023-05-08 13:56"):
        turn_times(START, ["a"], START)
