from __future__ import annotations

import threading

import pytest

from solace.models.llm import (
    LLM,
    ChatMessage,
    EmbedderLoadError,
    LLMOutputError,
    LLMStats,
    LLMUnavailableError,
    ModelError,
    NoLLM,
    check_call_args,
    parse_json_output,
)

SCHEMA = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}},
    "required": ["ok"],
}
MESSAGES: list[ChatMessage] = [{"role": "user", "content": "hi"}]


def test_errors_form_one_family() -> None:
    for error in (LLMUnavailableError, LLMOutputError, EmbedderLoadError):
        assert issubclass(error, ModelError)
    assert not issubclass(ModelError, (ValueError, RuntimeError))


def test_no_llm_always_raises_and_counts() -> None:
    llm = NoLLM()
    assert llm.name == "none"
    assert isinstance(llm, LLM)
    with pytest.raises(LLMUnavailableError, match="no LLM backend configured"):
        llm.complete(MESSAGES)
    with pytest.raises(LLMUnavailableError):
        llm.complete_json(MESSAGES, SCHEMA)
    assert (llm.stats.calls, llm.stats.failures) == (2, 2)


def test_stats_record_is_thread_safe() -> None:
    stats = LLMStats()

    def work() -> None:
        for _ in range(1000):
            stats.record(prompt_tokens=2, generated_tokens=3, seconds=0.001)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert (stats.calls, stats.prompt_tokens, stats.generated_tokens) == (4000, 8000, 12000)
    assert stats.tokens_per_second == pytest.approx(3000, rel=1e-6)
    stats.mark_failed()
    assert stats.failures == 1 and stats.calls == 4000


def test_tokens_per_second_before_any_call() -> None:
    assert LLMStats().tokens_per_second == 0.0


def test_parse_json_output() -> None:
    assert parse_json_output('{"ok": true}', SCHEMA, source="t") == {"ok": True}
    with pytest.raises(LLMOutputError, match="not JSON"):
        parse_json_output("Sure! Here is", SCHEMA, source="t")
    with pytest.raises(LLMOutputError, match="not JSON"):
        parse_json_output('{"ok": NaN}', SCHEMA, source="t")
    with pytest.raises(LLMOutputError, match="not an object"):
        parse_json_output("[1]", SCHEMA, source="t")
    with pytest.raises(LLMOutputError, match=r"at \$\.ok"):
        parse_json_output('{"ok": "true"}', SCHEMA, source="t")


@pytest.mark.parametrize(
    ("max_tokens", "temperature"), [(0, 0.0), (True, 0.0), (1.5, 0.0), (8, -1.0)]
)
def test_check_call_args(max_tokens: int, temperature: float) -> None:
    with pytest.raises(ValueError):
        check_call_args(max_tokens, temperature)
