"""The deterministic extractor turns an exchange into a few third-person facts with a
kind, a stable slot and an importance; questions and chit-chat give nothing."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from solace.facts.extract_rules import IMPORTANCE, KINDS, extract_facts
from solace.facts.model import Candidate, Exchange

# 8 May 2023, 14:00 UTC: "next month" is June 2023, "yesterday" is 7 May 2023.
TS = datetime(2023, 5, 8, 14, 0, tzinfo=UTC).timestamp()


def facts(user: str, *, speaker: str = "", reply: str = "", tools: tuple[str, ...] = (),
          limit: int = 5) -> list[Candidate]:
    return extract_facts(Exchange(user=user, reply=reply, tool_results=tools, ts=TS,
                                  speaker=speaker), limit=limit)


def only(user: str, **kwargs: object) -> Candidate:
    found = facts(user, **kwargs)  # type: ignore[arg-type]
    assert len(found) == 1, found
    return found[0]


@pytest.mark.parametrize("text", [
    "Hi! How are you today?",
    "What's the weather like in Paris?",
    "Thanks, that's really helpful!",
    "Good morning :)",
    "Can you summarise this invoice for me?",
    "Do you like coffee?",
    "Wow, that's so cool. Talk to you soon!",
    "I'll let you know. Have a good one!",
    "Haha, I totally agree with you.",
    "Sounds great, I'll keep you posted.",
])
def test_questions_and_greetings_yield_no_fact(text: str) -> None:
    assert facts(text) == []


def test_preferences_become_third_person_facts_with_a_preference_slot() -> None:
    fact = only("I prefer invoices summarised in French.")
    assert fact.text == "The user prefers invoices summarised in French"
    assert fact.kind == "preference"
    assert fact.slot == "preference:invoic"
    assert only("I really hate cilantro").text == "The user really hates cilantro"
    assert only("I'm a huge fan of jazz", speaker="Ana").text == "Ana is a huge fan of jazz"


def test_a_favourite_names_its_category_as_the_slot() -> None:
    fact = only("My favourite drink is flat white.")
    assert fact.kind == "preference"
    assert fact.slot == "preference:drink"
    assert "flat white" in fact.text


def test_identity_name_residence_job_and_age_have_fixed_slots() -> None:
    slots = {f.slot: f.text for f in facts("My name is Ana Silva and I live in Lisbon.")}
    assert slots == {"name": "The user's name is Ana Silva",
                     "residence": "The user lives in Lisbon"}
    job = only("I work as a nurse at the city hospital")
    assert (job.slot, job.kind) == ("job", "identity")
    assert only("I'm 34 years old").slot == "age"
    assert only("I am from Brazil").slot == "origin"


def test_relationships_keep_the_relative_in_the_slot() -> None:
    fact = only("My sister Maya is a doctor in Toronto.", speaker="Leo")
    assert fact.kind == "relationship"
    assert fact.slot == "relationship:sister"
    assert fact.text == "Leo's sister Maya is a doctor in Toronto"
    assert only("My mom just retired from teaching.").slot == "relationship:mother"


def test_plans_with_dates_are_plans() -> None:
    fact = only("I'm planning to visit my parents in Oslo next month.")
    assert fact.kind == "plan"
    assert "June 2023" in fact.text and "Oslo" in fact.text
    assert fact.importance == pytest.approx(IMPORTANCE["plan"] + 0.1)  # dated
    undated = only("I want to learn Portuguese")
    assert undated.kind == "plan" and undated.importance == IMPORTANCE["plan"]


def test_relative_dates_are_resolved_at_the_turn_time() -> None:
    assert only("I moved to Berlin yesterday.").text == "The user moved to Berlin on 7 May 2023"
    assert only("Remind me to call my dentist tomorrow.").text == (
        "The user has to call the user's dentist on 9 May 2023")
    assert "June 2023" in only("We're moving to Denver next month.").text


def test_standing_requests_to_the_assistant_are_preferences() -> None:
    fact = only("Please always answer in Spanish.")
    assert fact.kind == "preference"
    assert fact.text == "The user wants the assistant to always answer in Spanish"
    assert only("Please don't use emojis.").text == "The user wants the assistant not to use emojis"
    assert facts("I want you to know that I appreciate it.") == []


def test_a_job_needs_a_role_not_any_noun() -> None:
    assert facts("I'm a big believer in unit tests.") == []
    fact = only("I'm a software engineer at Stripe.")
    assert (fact.kind, fact.slot) == ("identity", "job")
    assert only("I'm vegetarian.").slot == "preference:diet"


def test_a_relative_mentioned_in_passing_is_not_a_relationship_fact() -> None:
    assert facts("I miss my family!") == []
    assert only("My daughter starts school in September.").slot == "relationship:daughter"


def test_slots_name_the_thing_not_its_qualifier() -> None:
    assert only("I got a new laptop.").slot == "possession:laptop"
    assert only("I hate long meetings.").slot == "preference:meeting"


def test_possessions_are_possessions() -> None:
    fact = only("I have two cats and a parrot.")
    assert (fact.kind, fact.text) == ("possession", "The user has two cats and a parrot")
    assert only("I bought a second-hand Vespa").kind == "possession"


def test_obligations_are_important_and_keep_their_deadline() -> None:
    fact = only("I have to file my taxes by Friday.")
    assert fact.kind == "obligation"
    assert fact.text == "The user has to file the user's taxes by Friday"
    assert fact.importance == pytest.approx(IMPORTANCE["obligation"] + 0.1)  # "by Friday"
    assert only("The report is due tomorrow.").text == "The report is due on 9 May 2023"
    assert only("I need to renew my passport before the trip").kind == "obligation"


def test_notable_past_events_are_events() -> None:
    fact = only("I lost my job as a banker last week.", speaker="Jon")
    assert fact.kind == "event"
    assert "banker" in fact.text and fact.text.startswith("Jon lost")


def test_an_event_told_as_the_object_of_a_sentence_is_the_event() -> None:
    fact = only("The screenplay I sent in to the film festival has been on my mind all day.",
                speaker="Jo")
    assert fact.kind == "event"
    assert fact.text == "Jo sent in the screenplay to the film festival"


def test_a_correction_keeps_the_slot_of_the_fact_it_corrects() -> None:
    before = only("I live in Paris.")
    after = only("Actually I live in Berlin now.")
    assert after.correction and after.kind == "correction"
    assert after.slot == before.slot == "residence"
    assert after.text == "The user lives in Berlin now"
    meant = only("No, I meant my favourite drink is tea.")
    assert meant.correction and meant.slot == only("My favourite drink is coffee").slot


def test_not_x_but_y_is_a_correction_stating_y() -> None:
    fact = only("My flight is not on Tuesday but on Wednesday.")
    assert fact.correction
    assert "Wednesday" in fact.text and "Tuesday" not in fact.text


def test_a_bare_correction_is_still_recorded_as_one() -> None:
    fact = only("Actually, it's the blue one.")
    assert fact.correction and fact.kind == "correction"
    assert fact.text == "The user corrected an earlier statement: It's the blue one"


def test_actually_as_a_filler_is_not_a_correction() -> None:
    fact = only("Actually, I just ran my first marathon!")
    assert not fact.correction and fact.kind == "event"
    assert facts("It's not only fun but also healthy.") == []


def test_at_most_limit_facts() -> None:
    text = ("My name is Sam. I live in Leeds. I love climbing. I have a dog. "
            "I have to pay rent on Friday. I'm going to Spain next week.")
    assert len(facts(text, limit=10)) == 6
    assert len(facts(text, limit=2)) == 2
    assert facts(text, limit=0) == []
    with pytest.raises(ValueError, match="-1"):
        facts(text, limit=-1)


def test_facts_are_ordered_by_importance() -> None:
    found = facts("I love climbing. I have to call the bank. My name is Sam.", limit=3)
    assert [f.kind for f in found] == ["identity", "obligation", "preference"]
    assert [f.importance for f in found] == sorted((f.importance for f in found), reverse=True)


def test_every_kind_and_importance_is_known() -> None:
    text = ("My name is Sam. My brother Tom lives in Rome. I love tea. I have a bike. "
            "I must call the bank tomorrow. I'm going to Spain next week. I won a chess "
            "tournament last year. Actually, I live in York now.")
    found = facts(text, limit=20)
    assert {f.kind for f in found} == set(KINDS)
    assert all(0.0 <= f.importance <= 1.0 for f in found)


def test_the_reply_contributes_only_what_it_confirms_about_the_user() -> None:
    assert facts("Hello", reply="I love helping people! Paris is lovely in spring.") == []
    fact = only("Please keep that in mind.", reply="Noted, you prefer aisle seats.")
    assert fact.text == "The user prefers aisle seats" and fact.kind == "preference"


def test_tool_results_give_dated_obligations_and_plans() -> None:
    found = facts("Check my billing.", tools=("Invoice 4411 due 2027-03-01. Balance 120 EUR.",
                                               "Contract renews in March 2027."))
    assert [(f.kind, f.text) for f in found] == [
        ("obligation", "Invoice 4411 due 2027-03-01"),
        ("plan", "Contract renews in March 2027"),
    ]
    assert facts("Check my billing.", tools=("Balance 120 EUR.",)) == []


def test_extraction_is_deterministic() -> None:
    text = "I'm a teacher. I moved to Berlin last month and I love the parks there."
    assert facts(text) == facts(text)
