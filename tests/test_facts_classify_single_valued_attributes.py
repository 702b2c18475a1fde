"""Single-valued attributes (solace.facts.subjects): a newer value of one replaces the
old value of the same one, never a value of another attribute, and a phrase that only
looks like an attribute ("moved to Thursday", "due to the rain") states none."""

from __future__ import annotations

import numpy as np
import pytest

from solace.facts.classify import classify
from solace.facts.model import Candidate, Fact, FactStatus, WriteClass
from solace.facts.subjects import attributes

T0 = 1_700_000_000.0


def fact(fact_id: str, text: str, at: float = T0) -> Fact:
    return Fact(fact_id=fact_id, memory_id="m", store="default", text=text, importance=0.5,
                status=FactStatus.LIVE, created=at, last_confirmed=at, mentions=1,
                source="remember", write_class=WriteClass.ADD, reason="")


def unit(*xs: float) -> np.ndarray:
    v = np.array(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


def decide(text: str, live: list[Fact], vectors: list[np.ndarray],
           vector: np.ndarray) -> tuple[WriteClass, str]:
    d = classify(Candidate(text), vector, live, np.stack(vectors), as_of=T0 + 3600.0,
                 dedup_threshold=0.9, update_similarity=0.55, lexical_weight=0.3)
    return d.write_class, d.target.text if d.target else ""


def test_an_employer_supersedes_the_employer_never_the_occupation() -> None:
    # The occupation is the most similar fact (as MiniLM finds it); it must not be taken.
    live = [fact("a", "Jasmin works as a pilot"), fact("b", "Jasmin's employer is Zalando")]
    got = decide("Jasmin works at Siemens", live, [unit(1, 0.1), unit(0.6, 1)], unit(1, 0.1))
    assert got == (WriteClass.UPDATE, "Jasmin's employer is Zalando")


def test_an_occupation_supersedes_the_occupation_never_the_employer() -> None:
    live = [fact("a", "Jasmin works at Siemens"), fact("b", "Jasmin's job is pilot")]
    got = decide("Jasmin works as a chef", live, [unit(1, 0.1), unit(0.6, 1)], unit(1, 0.1))
    assert got == (WriteClass.UPDATE, "Jasmin's job is pilot")


def test_two_different_attributes_alone_are_two_facts() -> None:
    live = [fact("a", "Jasmin works as a pilot")]
    assert decide("Jasmin works at Siemens", live, [unit(1, 0)], unit(1, 0))[0] is WriteClass.ADD


def test_a_rescheduled_deadline_never_supersedes_a_residence() -> None:
    live = [fact("a", "Ana lives in Lisbon")]
    text = "The deadline for Ana's thesis moved to 2 April 2027"
    assert attributes(text) == {"deadline"}
    assert decide(text, live, [unit(1, 0)], unit(1, 0.2))[0] is WriteClass.ADD


@pytest.mark.parametrize(("text", "stated"), [
    ("The weekly meeting moved to Thursday", set()),
    ("The launch moved to next Monday", set()),
    ("Ana moved to Marseille", {"residence"}),
    ("Ana moved to Juneau", {"residence"}),
    ("Ana stayed home due to the rain", set()),
    ("Ana's report is due on 3 May", {"deadline"}),
    ("Ana joined a book club", set()),
    ("Ana joined Siemens", {"employer"}),
    ("Ana is engaged in a research project", set()),
    ("Ana is engaged to Sam", {"partner"}),
    ("You can call Ana at 5 pm", set()),
    ("Ana's lucky number is 7", set()),
    ("Ana can be reached at 555-0134", {"phone"}),
    ("Ana's new number is 555-0199", {"phone"}),
])
def test_a_phrase_that_only_looks_like_an_attribute_states_none(text: str,
                                                                 stated: set[str]) -> None:
    assert attributes(text) == stated



def test_an_employer_never_supersedes_a_role_it_shares_only_the_name_with() -> None:
    # "is an accountant" states no attribute the table knows; the two share only
    # "Dmitri", which says who, not what: no update, however similar the vectors.
    live = [fact("a", "Dmitri is an accountant")]
    assert decide("Dmitri joined Philips", live, [unit(1, 0)], unit(1, 0))[0] is WriteClass.ADD


@pytest.mark.parametrize("text", ["Chloe is a teacher", "Chloe is now a software engineer",
                                  "Chloe was an electrician", "Chloe is a freelance photographer"])
def test_being_a_profession_states_the_occupation(text: str) -> None:
    assert attributes(text) == {"occupation"}


@pytest.mark.parametrize("text", ["Chloe is a mother of two", "Chloe is a runner",
                                  "Chloe is a big fan of the teacher", "Chloe is a student"])
def test_being_a_kind_of_person_states_no_occupation(text: str) -> None:
    assert "occupation" not in attributes(text)


def test_a_profession_supersedes_the_job_stated_in_other_words() -> None:
    live = [fact("a", "Chloe's job is electrician")]
    got = decide("Chloe is a teacher", live, [unit(1, 0.3)], unit(1, 0.5))
    assert got == (WriteClass.UPDATE, "Chloe's job is electrician")
