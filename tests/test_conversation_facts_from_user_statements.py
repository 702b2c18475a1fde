"""What the user states about themselves becomes a durable fact, deterministically;
questions, negations and hedges give nothing."""

from __future__ import annotations

import pytest

from solace.conversation.statements import facts_from_statement


@pytest.mark.parametrize(("text", "facts"), [
    ("I'm severely allergic to peanuts.", {"allergy": "peanuts (severe)"}),
    ("I am allergic to cats", {"allergy": "cats"}),
    ("My name is Ada Lovelace and I live in London.",
     {"name": "Ada Lovelace", "lives_in": "London"}),
    ("my name is ada", {"name": "ada"}),
    ("My dog's name is Rex.", {"dog_name": "Rex"}),
    ("My dog is called Biscuit, he is cute", {"dog_name": "Biscuit"}),
    ("I have a cat named Tom.", {"cat_name": "Tom"}),
    ("Hi, my name is Sam and my dog's name is Luna.", {"name": "Sam", "dog_name": "Luna"}),
    ("My favourite colour is green.", {"favourite_colour": "green"}),
    ("I work at Acme Corp, as an engineer.", {"works_at": "Acme Corp"}),
    ("I'm 34 years old", {"age": "34"}),
])
def test_user_statements_become_durable_facts(text: str, facts: dict[str, str]) -> None:
    assert facts_from_statement(text) == facts


@pytest.mark.parametrize("text", [
    "What is my name?", "What is my dog's name?", "My name is not Bob.",
    "I think I live in Oslo.", "Maybe I'm allergic to peanuts.", "My dog's name is hard to spell",
    "The weather is nice today.",
])
def test_questions_negations_and_hedges_give_no_fact(text: str) -> None:
    assert facts_from_statement(text) == {}


def test_statement_facts_write_only_new_or_changed_values() -> None:
    from solace.conversation.model import DEFAULT_SCOPE, Fact
    from solace.conversation.statements import statement_facts

    text = "My name is Ada and I live in Lisbon."
    assert [d.attrs["key"] for d in statement_facts(DEFAULT_SCOPE, text, {})] == [
        "lives_in", "name"]
    known = {"name": Fact("name", "Ada", 1, 0.0), "lives_in": Fact("lives_in", "Porto", 2, 0.0)}
    (draft,) = statement_facts(DEFAULT_SCOPE, text, known)
    assert draft.attrs["key"] == "lives_in" and draft.content == "Lisbon"
