from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from solace.models.llama_cpp import LlamaCppLLM, smollm2_gguf_path
from solace.models.llm import LLM, ChatMessage, LLMOutputError, LLMUnavailableError
from solace.models.schema import validate

SCHEMA = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "maxLength": 60},
        "include_in_memory": {"type": "boolean"},
    },
    "required": ["title", "include_in_memory"],
    "additionalProperties": False,
}
MESSAGES: list[ChatMessage] = [
    {"role": "system", "content": "You answer with one JSON object."},
    {"role": "user", "content": "Title this: Melanie went camping in July 2023 with her kids."},
]


class FakeLlama:
    """Stands in for llama_cpp.Llama: returns canned contents, records the calls."""

    def __init__(self, *contents: str) -> None:
        self.contents = list(contents)
        self.calls: list[dict[str, Any]] = []

    def create_chat_completion(self, **kwargs: Any) -> dict[str, Any]:
        self.calls.append(kwargs)
        content = self.contents.pop(0)
        return {
            "choices": [{"message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 11, "completion_tokens": 5},
        }


class BrokenLlama:
    def create_chat_completion(self, **kwargs: Any) -> dict[str, Any]:
        raise ValueError("Requested tokens (9000) exceed context window of 2048")


@pytest.fixture(scope="module")
def smollm2() -> LlamaCppLLM:
    llm = LlamaCppLLM(n_ctx=512, seed=0)
    llm.load()
    return llm


@pytest.mark.slow
def test_smollm2_complete_json_is_schema_valid(smollm2: LlamaCppLLM) -> None:
    assert smollm2.load_seconds is not None
    obj = smollm2.complete_json(MESSAGES, SCHEMA, max_tokens=64)
    validate(obj, SCHEMA)
    assert smollm2.stats.calls == 1 and smollm2.stats.failures == 0
    assert smollm2.stats.generated_tokens > 0 and smollm2.stats.prompt_tokens > 0


def test_smollm2_gguf_ships_in_its_package() -> None:
    path = smollm2_gguf_path()
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert path.stat().st_size > 10_000_000


def test_fake_json_output_is_parsed_and_grammar_passed() -> None:
    fake = FakeLlama('{"title": "Camping", "include_in_memory": true}')
    llm = LlamaCppLLM(llama=fake)
    assert isinstance(llm, LLM)
    assert llm.complete_json(MESSAGES, SCHEMA) == {"title": "Camping", "include_in_memory": True}
    call = fake.calls[0]
    assert call["temperature"] == 0.0 and call["seed"] == 0
    assert "root" in call["grammar"]._grammar
    assert call["messages"] == MESSAGES
    assert (llm.stats.calls, llm.stats.prompt_tokens, llm.stats.generated_tokens) == (1, 11, 5)


@pytest.mark.parametrize(
    ("garbage", "match"),
    [
        ("Sure! Here is your JSON:", "not JSON"),
        ('{"title": "cut off', "not JSON"),
        ('["Camping"]', "not an object"),
        ('{"title": "Camping", "include_in_memory": "true"}', r"\$\.include_in_memory"),
        ('{"title": "Camping"}', r"\$\.include_in_memory"),
    ],
)
def test_garbage_output_raises_llm_output_error(garbage: str, match: str) -> None:
    llm = LlamaCppLLM(llama=FakeLlama(garbage))
    with pytest.raises(LLMOutputError, match=match):
        llm.complete_json(MESSAGES, SCHEMA)
    assert (llm.stats.calls, llm.stats.failures) == (1, 1)


def test_complete_returns_text() -> None:
    fake = FakeLlama("hello there")
    llm = LlamaCppLLM(llama=fake)
    assert llm.complete(MESSAGES, max_tokens=8, temperature=0.5) == "hello there"
    assert fake.calls[0]["max_tokens"] == 8 and fake.calls[0]["temperature"] == 0.5
    assert "grammar" not in fake.calls[0]


def test_generation_error_becomes_unavailable() -> None:
    llm = LlamaCppLLM(llama=BrokenLlama())
    with pytest.raises(LLMUnavailableError, match="exceed context window"):
        llm.complete(MESSAGES)
    assert llm.stats.failures == 1


def test_missing_model_file_is_unavailable(tmp_path: Path) -> None:
    llm = LlamaCppLLM(tmp_path / "nope.gguf")
    assert llm.name == "llama-cpp:nope.gguf"
    with pytest.raises(LLMUnavailableError, match="not found"):
        llm.complete(MESSAGES)
    assert (llm.stats.calls, llm.stats.failures) == (1, 1)


@pytest.mark.parametrize("kwargs", [{"n_ctx": 8}, {"n_threads": 0}])
def test_rejects_bad_arguments(kwargs: dict[str, int]) -> None:
    with pytest.raises(ValueError):
        LlamaCppLLM(**kwargs)  # type: ignore[arg-type]
