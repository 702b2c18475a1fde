"""LLM extraction: one JSON call; the guard drops facts that invent a name, number or
date; unavailable, bad JSON or an answer the guard rejects entirely gives None (the
caller falls back to the rules)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import pytest

from solace.facts.extract_llm import extract_with_llm, facts_schema
from solace.facts.model import Exchange
from solace.models.guard import Guard
from solace.models.llm import ChatMessage, LLMOutputError, LLMStats, LLMUnavailableError, NoLLM

TS = datetime(2023, 5, 8, 14, 0, tzinfo=UTC).timestamp()
EXCHANGE = Exchange(
    user="I have two cats and I moved to Lisbon yesterday. I prefer invoices in French.",
    reply="Noted!",
    ts=TS,
)


class FakeLLM:
    """Answers ``complete_json`` from a function; records every call."""

    name = "fake"

    def __init__(self, reply: Callable[[], dict[str, Any]]) -> None:
        self.reply = reply
        self.stats = LLMStats()
        self.calls: list[tuple[list[ChatMessage], Mapping[str, Any]]] = []

    def complete(
        self, messages: Sequence[ChatMessage], *, max_tokens: int = 256, temperature: float = 0.0
    ) -> str:
        raise AssertionError("extraction makes one complete_json call, never complete")

    def complete_json(
        self, messages: Sequence[ChatMessage], schema: Mapping[str, Any], *, max_tokens: int = 512
    ) -> dict[str, Any]:
        self.calls.append((list(messages), schema))
        return self.reply()


def answer(*facts: dict[str, Any]) -> Callable[[], dict[str, Any]]:
    return lambda: {"facts": list(facts)}


def raising(exc: Exception) -> Callable[[], dict[str, Any]]:
    def reply() -> dict[str, Any]:
        raise exc

    return reply


def run(llm: object, exchange: Exchange = EXCHANGE, limit: int = 3) -> Any:
    return extract_with_llm(exchange, llm=llm, guard=Guard(), limit=limit)  # type: ignore[arg-type]


def test_one_schema_call_returns_the_guarded_facts_most_important_first() -> None:
    llm = FakeLLM(answer(
        {"text": "The user prefers invoices in French", "kind": "preference",
         "slot": "Preference: Invoices", "importance": 0.6},
        {"text": "The user moved to Lisbon on 7 May 2023", "kind": "identity",
         "slot": "residence", "importance": 0.9},
    ))
    facts = run(llm)
    assert len(llm.calls) == 1
    messages, schema = llm.calls[0]
    assert schema == facts_schema(3)
    assert "7 May 2023" in messages[-1]["content"]  # the model reads resolved dates
    assert [(f.text, f.kind, f.slot) for f in facts] == [
        ("The user moved to Lisbon on 7 May 2023", "identity", "residence"),
        ("The user prefers invoices in French", "preference", "preference:_invoices"),
    ]


def test_the_guard_drops_a_fact_with_an_invented_number() -> None:
    llm = FakeLLM(answer(
        {"text": "The user has 3 cats", "kind": "possession"},
        {"text": "The user has two cats", "kind": "possession"},
    ))
    assert [f.text for f in run(llm)] == ["The user has two cats"]


def test_the_guard_drops_invented_dates_and_names() -> None:
    llm = FakeLLM(answer(
        {"text": "The user moved to Lisbon in 2021", "kind": "identity"},
        {"text": "The user's sister Maria lives in Lisbon", "kind": "relationship"},
        {"text": "The user prefers invoices in French", "kind": "preference"},
    ))
    assert [f.text for f in run(llm)] == ["The user prefers invoices in French"]


def test_an_answer_the_guard_rejects_entirely_gives_none() -> None:
    llm = FakeLLM(answer({"text": "The user has 3 cats", "kind": "possession"}))
    assert run(llm) is None


@pytest.mark.parametrize("reply", [
    raising(LLMOutputError("fake: output is not JSON")),
    raising(LLMUnavailableError("fake: down")),
    lambda: {"facts": [{"text": 5, "kind": "preference"}]},
    lambda: {"facts": [{"text": "The user has two cats", "kind": "mood"}]},
    lambda: {"answer": "two cats"},
])
def test_bad_json_or_no_llm_gives_none(reply: Callable[[], dict[str, Any]]) -> None:
    assert run(FakeLLM(reply)) is None


def test_no_llm_backend_gives_none() -> None:
    assert run(NoLLM()) is None


def test_an_empty_answer_is_accepted_as_no_fact() -> None:
    assert run(FakeLLM(answer()), Exchange(user="Hi, how are you?", ts=TS)) == []


def test_a_correction_is_flagged_and_importance_defaults_by_kind() -> None:
    llm = FakeLLM(answer({"text": "The user lives in Lisbon", "kind": "identity",
                          "correction": True}))
    (fact,) = run(llm)
    assert fact.correction and fact.kind == "correction" and fact.importance == 0.9


def test_limit_zero_makes_no_call_and_a_negative_limit_is_refused() -> None:
    llm = FakeLLM(raising(AssertionError("no call expected")))
    assert run(llm, limit=0) == []
    with pytest.raises(ValueError, match="-2"):
        run(llm, limit=-2)
