from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from solace.models.entities import Salient, date_supported, number_values, salient, word_set


def test_locomo_support_group_line() -> None:
    s = salient("Caroline: I went to a LGBTQ support group yesterday")
    assert s == Salient(frozenset({"caroline", "lgbtq"}), frozenset(), frozenset({"yesterday"}))


def test_locomo_camping_line() -> None:
    s = salient("Melanie: We went camping in July 2023 with my 2 kids")
    assert s.names == {"melanie"}
    assert s.numbers == {"2"}
    assert s.dates == {"2023-07"}


def test_sentence_initial_common_words_are_not_names() -> None:
    s = salient("Wow! Thanks. Oh, I love it. The trip was great. Yes we did. Hey Mel.")
    assert s.names == {"mel"}


def test_multiword_proper_nouns_and_possessives() -> None:
    s = salient("My sister moved to New York City last week. Jon's dog loves Central Park.")
    assert s.names == {"new york city", "jon", "central park"}
    assert s.dates == {"last week"}


def test_mid_sentence_capitals_are_names_even_if_common() -> None:
    assert salient("I met Will and Hope at the Art Museum").names == {"will", "hope", "art museum"}


@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        ("it cost $1,000 and 3.5 hours, up 10%", {"1000", "3.5", "10%"}),
        ("about 20 percent of 3.50", {"20%", "3.5"}),
        ("two dogs and twenty-one cats", {"2", "21"}),
        ("a hundred and five", {"105"}),
        ("three thousand people, a dozen eggs", {"3000", "12"}),
        ("my 1st race, 2nd place", {"1", "2"}),
        ("mp3 files and B2B", set()),
    ],
)
def test_numbers(text: str, numbers: set[str]) -> None:
    assert salient(text).numbers == numbers


@pytest.mark.parametrize(
    ("text", "dates"),
    [
        ("on 2023-07-01", {"2023-07-01"}),
        ("on July 1st, 2023", {"2023-07-01"}),
        ("the 4th of July", {"--07-04"}),
        ("since March", {"--03"}),
        ("back in 2019 and in the 1990s", {"2019", "1990s"}),
        ("see you on Friday, not next Monday", {"friday", "next monday"}),
        ("two weeks ago, then a month ago", {"2 week ago", "1 month ago"}),
        ("tomorrow, today and tonight", {"tomorrow", "today", "tonight"}),
        ("last  Week", {"last week"}),
        ("on 7/1/2023", {"7/1/2023"}),
        ("Dec 5", {"--12-05"}),
    ],
)
def test_dates(text: str, dates: set[str]) -> None:
    assert salient(text).dates == dates


def test_dates_are_not_numbers_or_names() -> None:
    s = salient("In July 2023 on Monday we went to Paris")
    assert s.numbers == frozenset()
    assert s.names == {"paris"}
    assert s.dates == {"2023-07", "monday"}


def test_may_as_verb_and_abbreviations_alone() -> None:
    s = salient("May I ask Jan about it?")
    assert s.dates == frozenset()
    assert s.names == {"jan"}
    assert salient("We met in May.").dates == {"--05"}


def test_number_values_include_date_digits_and_words() -> None:
    assert number_values("July 4 and two") == {"4", "2"}


def test_word_set_strips_possessives_and_casefolds() -> None:
    assert word_set("Caroline's LGBTQ group") == {"caroline", "lgbtq", "group"}


def test_date_supported() -> None:
    source = frozenset({"2023-07-01", "yesterday"})
    assert date_supported("2023-07-01", source)
    assert date_supported("2023-07", source)
    assert date_supported("--07", source)
    assert date_supported("2023", source)
    assert date_supported("yesterday", source)
    assert not date_supported("2023-07-02", source)
    assert not date_supported("2023-07-01", frozenset({"2023-07"}))
    assert not date_supported("today", source)


@given(st.text(max_size=200))
def test_salient_is_total_and_deterministic(text: str) -> None:
    first = salient(text)
    assert first == salient(text)
    assert all(n == n.casefold() for n in first.names)
