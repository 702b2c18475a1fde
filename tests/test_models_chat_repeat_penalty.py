"""Chat replies from llama-cpp carry a repetition penalty (a greedy 135M model loops
without one); grammar-bound JSON output does not."""

from __future__ import annotations

from typing import Any

import pytest

from solace.models.llama_cpp import CHAT_REPEAT_PENALTY, LlamaCppLLM


class FakeLlama:
    def __init__(self, content: str) -> None:
        self.content = content
        self.calls: list[dict[str, Any]] = []

    def create_chat_completion(self, **kwargs: Any) -> dict[str, Any]:
        self.calls.append(kwargs)
        return {"choices": [{"message": {"role": "assistant", "content": self.content}}],
                "usage": {}}


def test_chat_replies_carry_the_repetition_penalty_and_json_does_not() -> None:
    fake = FakeLlama('{"title": "x"}')
    llm = LlamaCppLLM(llama=fake)
    llm.complete([{"role": "user", "content": "hi"}])
    assert fake.calls[0]["repeat_penalty"] == CHAT_REPEAT_PENALTY > 1.0
    llm.complete_json([{"role": "user", "content": "hi"}],
                      {"type": "object", "properties": {"title": {"type": "string"}}})
    assert "repeat_penalty" not in fake.calls[1]
    LlamaCppLLM(llama=fake, repeat_penalty=1.0).complete([{"role": "user", "content": "hi"}])
    assert fake.calls[2]["repeat_penalty"] == 1.0


@pytest.mark.parametrize("bad", [0.5, 2.5])
def test_a_repetition_penalty_outside_1_to_2_is_refused(bad: float) -> None:
    with pytest.raises(ValueError, match=f"repeat_penalty must be within 1.0..2.0, got {bad}"):
        LlamaCppLLM(llama=FakeLlama(""), repeat_penalty=bad)
