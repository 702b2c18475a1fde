"""Update and correction phrasings: the new value is extracted, in the slot the earlier
statement of the same thing got, so classification can supersede the old value."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from solace.facts.extract_rules import extract_facts
from solace.facts.model import Candidate, Exchange
from solace.facts.subjects import attributes

TS = datetime(2026, 5, 8, 14, 0, tzinfo=UTC).timestamp()


def only(user: str) -> Candidate:
    found = extract_facts(Exchange(user=user, ts=TS, speaker="Rosa"), limit=5)
    assert len(found) == 1, (user, found)
    return found[0]


def nothing(user: str) -> None:
    assert extract_facts(Exchange(user=user, ts=TS, speaker="Rosa"), limit=5) == []


@pytest.mark.parametrize(("old", "new", "value"), [
    ("I have two dogs.", "Honestly we're up to four dogs now.", "four dogs"),
    ("I drink flat whites.", "I've switched to oolong.", "oolong"),
    ("I'm dating Kai.", "I'm with Noor now.", "Noor"),
    ("My partner is called Kai.", "I'm seeing Noor these days.", "Noor"),
    ("My bike is a Trek.", "My bike is a Cannondale now.", "Cannondale"),
    ("I work at Nokia.", "I no longer work at Nokia.", "no longer works at Nokia"),
    ("I live in Lima.", "I don't live in Lima anymore.", "doesn't live in Lima"),
])
def test_a_new_value_lands_in_the_slot_of_the_old_one(old: str, new: str, value: str) -> None:
    before, after = only(old), only(new)
    assert value in after.text
    assert after.slot == before.slot, (before, after)


def test_changed_my_x_keeps_the_value_said_after_the_comma() -> None:
    fact = only("I changed my email, it's rosa.v@example.net")
    assert fact.text == "Rosa's email is now rosa.v@example.net"
    assert only("I've updated my email to rv@example.net").slot == fact.slot
    assert only("Ugh, I got bored of my old ringtone, it's a samba now").text == \
        "Rosa's ringtone is now a samba"


def test_changed_my_number_keeps_the_number_as_a_phone_fact() -> None:
    fact = only("I changed my number, it's 555-0147.")
    assert "555-0147" in fact.text
    assert "phone" in attributes(fact.text)


@pytest.mark.parametrize("text", [
    "They pushed my visa deadline back to 1 August 2026.",
    "The deadline for my visa application moved to 1 August 2026.",
    "My visa deadline got extended to 1 August 2026.",
])
def test_a_moved_deadline_is_an_obligation_of_the_same_thing(text: str) -> None:
    old = only("My visa application is due on 1 July 2026.")
    fact = only(text)
    assert "1 August 2026" in fact.text
    assert fact.kind == "obligation" and fact.slot == old.slot == "obligation:visa"
    assert "deadline" in attributes(fact.text)


def test_a_moved_appointment_keeps_its_slot() -> None:
    old = only("My dentist appointment is on 3 June 2026.")
    new = only("They moved my dentist appointment to 10 June 2026.")
    assert new.slot == old.slot and "10 June 2026" in new.text


def test_i_am_now_or_have_become_a_role_is_a_job() -> None:
    assert only("I'm now a paramedic.").slot == only("I'm a baker.").slot == "job"
    assert only("I've become a locksmith.").text == "Rosa has become a locksmith"


def test_a_switch_of_drink_is_the_drink_preference() -> None:
    fact = only("I switched from coffee to rooibos.")
    assert fact.slot == "preference:drink" and "rooibos" in fact.text


def test_a_schedule_that_moved_is_a_plan_with_its_new_day() -> None:
    fact = only("Our choir rehearsal moved to Thursday.")
    assert fact.kind == "plan" and "Thursday" in fact.text


def test_partner_and_brand_need_a_name() -> None:
    nothing("I'm with you on that.")
    nothing("I'm with my family.")
    nothing("My life is a mess.")
    nothing("I don't really know anymore.")


def test_no_longer_states_the_negation_in_the_fact() -> None:
    fact = only("I'm no longer vegetarian.")
    assert fact.text == "Rosa is no longer vegetarian"


def test_a_new_job_at_a_place_is_the_employer_slot() -> None:
    old = only("I work at Nokia.")
    for text in ("I landed a job at a bakery.", "I may have found a job at a shipping firm.",
                 "I just started a new job at Roche."):
        fact = only(text)
        assert fact.slot == old.slot == "employer", fact


def test_got_accepted_or_hired_is_an_event() -> None:
    fact = only("I just got accepted for a cooking apprenticeship!")
    assert fact.kind == "event" and "cooking apprenticeship" in fact.text


def test_a_relative_now_is_still_a_relationship_not_a_possession() -> None:
    assert only("My sister is a Buddhist now.").slot == "relationship:sister"
    assert only("My mom is now retired.").slot == "relationship:mother"
