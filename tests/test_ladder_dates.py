"""Relative dates in compressed forms are resolved against when they were said."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from solace.memory.ladder import resolve_relative_dates
from solace.memory.ladder.dates import format_date

# Monday 8 May 2023, 13:56 UTC: LoCoMo conversation 1, session 1.
MAY_8 = datetime(2023, 5, 8, 13, 56, tzinfo=UTC).timestamp()


@pytest.mark.parametrize(
    ("said", "meant"),
    [
        ("I went to a support group yesterday.", "I went to a support group on 7 May 2023."),
        ("Yesterday I took the kids out", "On 7 May 2023 I took the kids out"),
        ("I painted that lake sunrise last year!", "I painted that lake sunrise in 2022!"),
        ("We're going camping next month.", "We're going camping in June 2023."),
        ("I had a picnic last week", "I had a picnic the week before 8 May 2023"),
        ("I joined a group last weekend", "I joined a group the weekend before 8 May 2023"),
        ("I ran a race last Saturday", "I ran a race the Saturday before 8 May 2023"),
        ("Last Fri I did pottery", "The Friday before 8 May 2023 I did pottery"),
        ("I went to a conference two days ago", "I went to a conference on 6 May 2023"),
        ("A friend made it ten years ago.", "A friend made it ten years before 8 May 2023."),
        ("We met the day before yesterday", "We met on 6 May 2023"),
        ("It is tomorrow", "It is on 9 May 2023"),
        ("Last night was amazing", "The night of 7 May 2023 was amazing"),
        ("I have been busy since last year", "I have been busy since 2022"),
        ("We went there last summer", "We went there in summer 2022"),
        ("I'll call you next week", "I'll call you the week after 8 May 2023"),
    ],
)
def test_yesterday_and_friends_resolve_to_the_date_they_mean(said: str, meant: str) -> None:
    assert resolve_relative_dates(said, MAY_8) == meant


def test_unknown_time_leaves_text_as_written() -> None:
    assert resolve_relative_dates("I went yesterday", 0.0) == "I went yesterday"


@pytest.mark.parametrize(
    "text",
    ["the last week of June was hot", "my last year at school", "I'll see you on Friday",
     "this Friday works", "recently I went"],
)
def test_phrases_that_are_not_relative_dates_are_left_alone(text: str) -> None:
    assert resolve_relative_dates(text, MAY_8) == text


def test_dates_use_the_utc_calendar_day_of_the_event() -> None:
    late = datetime(2023, 5, 8, 23, 59, tzinfo=UTC).timestamp()
    assert resolve_relative_dates("yesterday", late) == "on 7 May 2023"
    assert format_date(datetime(2024, 2, 29, tzinfo=UTC).date()) == "29 February 2024"


def test_month_arithmetic_crosses_year_boundaries() -> None:
    january = datetime(2024, 1, 15, tzinfo=UTC).timestamp()
    assert resolve_relative_dates("last month", january) == "in December 2023"
    december = datetime(2023, 12, 3, tzinfo=UTC).timestamp()
    assert resolve_relative_dates("next month", december) == "in January 2024"
