"""Updates said with the time first, a household count, an ordinal, or a pronoun for
the relative just named: the extractor states them with their subject, in the slot a
later value shares."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from solace.facts.antecedents import relative_named, with_antecedent
from solace.facts.extract_rules import extract_facts
from solace.facts.model import Candidate, Exchange

TS = datetime(2026, 5, 8, 14, 0, tzinfo=UTC).timestamp()


def facts(user: str) -> list[Candidate]:
    return extract_facts(Exchange(user=user, ts=TS, speaker="Rosa"), limit=5)


def only(user: str) -> Candidate:
    found = facts(user)
    assert len(found) == 1, (user, found)
    return found[0]


@pytest.mark.parametrize(("said", "text", "slot"), [
    ("Now I live in Porto.", "Rosa lives in Porto now", "residence"),
    ("These days I work at Zara.", "Rosa works at Zara now", "employer"),
    ("Nowadays, I live in Faro.", "Rosa lives in Faro", "residence"),  # a clause of its own
    ("I'm now living in Berlin.", "Rosa is now living in Berlin", "residence"),
    ("I'm living in Berlin now.", "Rosa is living in Berlin now", "residence"),
    ("I've moved to Lisbon.", "Rosa has moved to Lisbon", "residence"),
])
def test_a_time_said_first_or_a_present_tense_still_states_the_value(said: str, text: str,
                                                                     slot: str) -> None:
    fact = only(said)
    assert (fact.text, fact.slot) == (text, slot)


def test_a_household_count_is_the_speakers_possession() -> None:
    before, after = only("We have two cats."), only("We now have three cats.")
    assert "three cats" in after.text and before.slot == after.slot == "possession:cat"
    assert facts("We have a meeting tomorrow.") == []
    assert facts("We have lots of fun together.") == []


def test_an_ordinal_qualifies_the_thing_it_counts() -> None:
    second, fourth = only("I won my second tournament!"), only("I won my fourth tournament!")
    assert second.slot == fourth.slot == "event:tournament"


@pytest.mark.parametrize(("said", "expected"), [
    ("My sister lives in Lima. She moved to Quito last year.",
     "Rosa's sister moved to Quito in 2025"),
    ("My dad works at Bosch. He retired in May.", "Rosa's dad retired in May"),
    ("My wife is a nurse. She's been promoted to head nurse.",
     "Rosa's wife has been promoted to head nurse"),
])
def test_a_pronoun_opening_a_sentence_is_the_relative_just_named(said: str,
                                                                 expected: str) -> None:
    assert expected in [f.text for f in facts(said)]


@pytest.mark.parametrize(("before", "sentence"), [
    ("My sister lives in Lima.", "He moved to Quito."),  # he is not the sister
    ("My brother and my sister visited.", "She loved it."),  # which one?
    ("The weather was lovely.", "She moved to Quito."),  # no relative named
    ("My parents live in Faro.", "She moved to Quito."),
])
def test_a_pronoun_that_cannot_be_placed_is_left_as_written(before: str,
                                                            sentence: str) -> None:
    assert with_antecedent(sentence, relative_named(before)) == sentence


@pytest.mark.parametrize("said", ["I'm an architect.", "I'm a mechanic now.", "I'm a barista."])
def test_a_role_noun_without_a_role_suffix_is_still_a_job(said: str) -> None:
    assert only(said).slot == "job"


def test_a_relatives_past_feeling_is_no_fact_as_the_speakers_is_not() -> None:
    assert facts("My mom loved to sit by the window every morning.") == []
    assert facts("I loved to sit by the window every morning.") == []
    assert only("My mom retired last year.").slot == "relationship:mother"
