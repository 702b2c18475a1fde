"""The LLM compaction path: one call, through the safety check and the guard, else the merger."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytest

from solace.facts.compactor import COMPACTION_SCHEMA, compact_with_llm, propose
from solace.facts.merge import merge_deterministic
from solace.models.embedder import HashingEmbedder
from solace.models.llm import (
    ChatMessage,
    LLMOutputError,
    LLMStats,
    LLMUnavailableError,
    NoLLM,
)

INPUTS = [
    "Alice lives in Paris.",
    "The user, Alice, lives in Paris",
    "Bob has two dogs named Rex and Fido.",
    "The contract renews in March 2027.",
    "The user mentioned the contract renews in March 2027.",
]
VECTORS = HashingEmbedder().embed(INPUTS)
GOOD = {
    "facts": [
        "Alice lives in Paris.",
        "Bob has 2 dogs, Rex and Fido.",
        "Contract renews March 2027.",
    ]
}


def words(text: str) -> int:
    return len(text.split())


class FakeLLM:
    """Answers ``complete_json`` from a function; records every call."""

    name = "fake"

    def __init__(self, reply: Callable[[], dict[str, Any]]) -> None:
        self.reply = reply
        self.stats = LLMStats()
        self.calls: list[tuple[list[ChatMessage], Mapping[str, Any], int]] = []

    def complete(
        self, messages: Sequence[ChatMessage], *, max_tokens: int = 256, temperature: float = 0.0
    ) -> str:
        raise AssertionError("the compactor makes one complete_json call, never complete")

    def complete_json(
        self, messages: Sequence[ChatMessage], schema: Mapping[str, Any], *, max_tokens: int = 512
    ) -> dict[str, Any]:
        self.calls.append((list(messages), schema, max_tokens))
        self.stats.record()
        return self.reply()


def raising(exc: Exception) -> Callable[[], dict[str, Any]]:
    def reply() -> dict[str, Any]:
        raise exc

    return reply


def run(llm: object) -> Any:
    return propose(INPUTS, VECTORS, llm=llm, count_tokens=words, threshold=0.9)  # type: ignore[arg-type]


def deterministic() -> tuple[str, ...]:
    return tuple(merge_deterministic(INPUTS, VECTORS, threshold=0.9))


def test_compact_with_llm_makes_one_schema_call_with_the_facts_one_per_line() -> None:
    llm = FakeLLM(lambda: GOOD)
    assert compact_with_llm(INPUTS, llm=llm, max_tokens=300) == GOOD
    [(messages, schema, max_tokens)] = llm.calls
    assert schema == COMPACTION_SCHEMA and max_tokens == 300
    assert messages[-1]["content"].splitlines() == INPUTS


@pytest.mark.parametrize("exc", [LLMOutputError("not JSON"), LLMUnavailableError("down")])
def test_compact_with_llm_returns_none_when_the_backend_fails(exc: Exception) -> None:
    assert compact_with_llm(INPUTS, llm=FakeLLM(raising(exc))) is None


def test_a_good_llm_proposal_is_accepted() -> None:
    llm = FakeLLM(lambda: GOOD)
    verdict = run(llm)
    assert verdict.accepted, verdict
    assert verdict.outputs == tuple(GOOD["facts"])
    assert verdict.detail.startswith("llm:")
    assert len(llm.calls) == 1 and llm.stats.failures == 0


def test_bad_llm_json_falls_back_to_the_deterministic_merger() -> None:
    verdict = run(FakeLLM(raising(LLMOutputError("output is not JSON"))))
    assert verdict.accepted, verdict
    assert verdict.outputs == deterministic()
    assert verdict.detail.startswith("deterministic:")
    assert "llm refused: unparsable" in verdict.detail


def test_an_llm_reply_of_the_wrong_shape_falls_back() -> None:
    verdict = run(FakeLLM(lambda: {"facts": "Alice lives in Paris"}))
    assert verdict.outputs == deterministic()
    assert "llm refused: unparsable" in verdict.detail


def test_an_llm_proposal_that_invents_a_number_falls_back() -> None:
    invented = {"facts": [*GOOD["facts"][:2], "Contract renews March 2027 for 3 years."]}
    llm = FakeLLM(lambda: invented)
    verdict = run(llm)
    assert verdict.accepted and verdict.outputs == deterministic()
    assert "llm refused: invented (1 items)" in verdict.detail
    assert llm.stats.failures == 1


def test_an_llm_proposal_that_invents_a_date_falls_back() -> None:
    invented = {"facts": [*GOOD["facts"][:2], "Contract renews 1 March 2027."]}
    verdict = run(FakeLLM(lambda: invented))
    assert verdict.outputs == deterministic()
    assert "llm refused: invented" in verdict.detail


def test_an_llm_proposal_that_loses_a_date_falls_back() -> None:
    verdict = run(FakeLLM(lambda: {"facts": [*GOOD["facts"][:2], "The contract renews."]}))
    assert verdict.outputs == deterministic()
    assert "llm refused: lost_salient" in verdict.detail


def test_an_empty_llm_proposal_falls_back() -> None:
    verdict = run(FakeLLM(lambda: {"facts": []}))
    assert verdict.outputs == deterministic()
    assert "llm refused: empty" in verdict.detail


def test_no_llm_means_no_call_and_the_deterministic_merger() -> None:
    none = NoLLM()
    for llm in (None, none):
        verdict = run(llm)
        assert verdict.accepted and verdict.outputs == deterministic()
        assert verdict.detail.startswith("deterministic:") and "llm" not in verdict.detail
    assert none.stats.calls == 0


def test_when_both_are_refused_the_deterministic_refusal_is_returned_with_the_llms() -> None:
    inputs = ["Alice lives in Paris.", "Hank plays chess."]  # nothing to merge
    llm = FakeLLM(lambda: {"facts": inputs})
    verdict = propose(
        inputs, HashingEmbedder().embed(inputs), llm=llm, count_tokens=words, threshold=0.9
    )
    assert not verdict.accepted
    assert verdict.reason == "not_smaller"
    assert "llm refused: not_smaller" in verdict.detail


def test_propose_is_deterministic() -> None:
    assert run(None) == run(None)
    assert run(FakeLLM(lambda: GOOD)) == run(FakeLLM(lambda: GOOD))
