"""Just-in-time summarisation: one call, the seed's prompt, MIN_MEMORY_TURNS = 5, the
strict boolean, the fallback that never promotes, the guard, the deterministic mode."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from solace.config import ConversationConfig
from solace.conversation import MIN_MEMORY_TURNS, SUMMARY_PROMPT, Scope, Summariser
from solace.conversation.model import ThreadItem
from solace.conversation.summarise import render_thread
from solace.conversation.testing import ScriptedLLM, open_harness
from solace.models import Guard, LLMOutputError, LLMUnavailableError, NoLLM, WordPieceTokenizer
from solace.models.llm import ChatMessage

SCOPE = Scope("ada", "Main", "acme")
TOK = WordPieceTokenizer()


def canned(obj: dict[str, Any]) -> ScriptedLLM:
    return ScriptedLLM(lambda messages: dict(obj))


def failing(exc: Exception) -> ScriptedLLM:
    def reply(messages: Sequence[ChatMessage]) -> dict[str, Any]:
        raise exc

    return ScriptedLLM(reply)


GOOD = {"title": "Database choice", "summary": "Chose Postgres over MySQL (JSON support).",
        "include_in_memory": True}


async def _topic_with(tmp_path: Path, llm: Any, n_messages: int, **cfg: Any) -> tuple[Any, str]:
    """Open a harness, write n messages about a database choice, evaluate; return topic."""
    config = ConversationConfig(drift_interval=100, drift_threshold=-1.0, **cfg)
    async with open_harness(tmp_path / "sub", llm=llm, config=config) as h:
        s = await h.conv.open_session(SCOPE)
        lines = ["Which database should we use for the app?",
                 "Postgres or MySQL would both work.",
                 "We chose Postgres over MySQL because of JSON support.",
                 "Good, Postgres it is.",
                 "Also set up nightly backups.",
                 "Nightly backups scheduled."]
        for i in range(n_messages):
            await h.conv.add_message(s.session_id, "user" if i % 2 == 0 else "assistant",
                                     lines[i % len(lines)])
        await h.conv.evaluate_now(s.session_id)
        return h.conv.topic(s.active_topic_id), s.session_id


@pytest.mark.parametrize("n, promoted", [(MIN_MEMORY_TURNS - 1, False), (MIN_MEMORY_TURNS, True)])
async def test_min_memory_turns_threshold_of_5_forces_keep_false_below_it(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, n: int, promoted: bool
) -> None:
    assert MIN_MEMORY_TURNS == 5 == ConversationConfig().min_memory_turns
    topic, _ = await _topic_with(tmp_path, canned(GOOD), n)
    assert topic.summary_mode == "llm"
    assert topic.title == "Database choice"
    assert topic.keep_in_memory is promoted


@pytest.mark.parametrize("value", ["true", 1, "yes", None, [True], {"value": True}, "MISSING"])
async def test_include_in_memory_anything_but_strict_boolean_true_is_false(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, value: object
) -> None:
    obj: dict[str, Any] = {"title": GOOD["title"], "summary": GOOD["summary"]}
    if value != "MISSING":
        obj["include_in_memory"] = value
    topic, _ = await _topic_with(tmp_path, canned(obj), 6)
    assert topic.summary_mode == "llm"  # the response is used, only the flag is false
    assert topic.summary == GOOD["summary"]
    assert topic.keep_in_memory is False


@pytest.mark.parametrize("exc", [LLMUnavailableError("down"), LLMOutputError("not JSON")])
async def test_fallback_summary_from_first_user_message_never_promotes(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, exc: Exception
) -> None:
    topic, _ = await _topic_with(tmp_path, failing(exc), 6, summary_mode="llm")
    assert topic.summary_mode == "fallback"
    assert topic.summary == "Which database should we use for the app?"
    assert topic.title.startswith("Which database should we use")
    assert topic.keep_in_memory is False  # the thread states a decision; still no promotion


async def test_summary_that_fails_the_guard_counts_as_a_failed_call(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    invented = {"title": "Database choice", "include_in_memory": True,
                "summary": "Chose Postgres 16 on 3 March 2024, per Alice."}
    topic, _ = await _topic_with(tmp_path, canned(invented), 6)
    assert topic.summary_mode == "fallback"
    assert "Alice" not in topic.summary and "2024" not in topic.summary
    assert topic.keep_in_memory is False


def _items(texts: Sequence[str]) -> list[ThreadItem]:
    return [ThreadItem(i + 1, 0.0, "message", "user" if i % 2 == 0 else "assistant", t, "t1")
            for i, t in enumerate(texts)]


def test_deterministic_mode_is_the_default_when_the_llm_is_none() -> None:
    summariser = Summariser(NoLLM(), Guard(tokenizer=TOK), TOK)
    assert summariser.mode == "auto" and not summariser.uses_llm
    result = summariser.summarise(_items([
        "I prefer window seats on long flights.", "Noted, window seats.",
        "Book the Lisbon flight for June.", "Booked TAP 1234 for June 3.",
    ]))
    assert result.mode == "deterministic"
    assert result.include_in_memory is True  # a stated preference
    assert "window seats" in result.summary
    casual = summariser.summarise(_items(["hi there", "hello! how are you?", "fine thanks"]))
    assert casual.include_in_memory is False


def test_deterministic_summary_is_extractive_and_within_budget() -> None:
    texts = [f"We decided to use Kafka for the event bus in region {i}." for i in range(30)]
    texts += ["My name is Ada Lovelace.", "Nice to meet you, Ada."]
    summariser = Summariser(NoLLM(), Guard(tokenizer=TOK), TOK, mode="deterministic")
    result = summariser.summarise(_items(texts))
    assert TOK.count(result.summary) <= 80
    source = " ".join(texts)
    for part in result.summary.split("; "):
        assert part.split(": ", 1)[1] in source  # every sentence comes from the thread
    assert all(word.strip(",") in source for word in result.title.split(", "))


def test_auto_mode_goes_deterministic_once_the_llm_keeps_failing_the_guard() -> None:
    llm = canned({"title": "x", "summary": "Met Bob on 4 July 1999 for 7 hours.",
                  "include_in_memory": True})
    summariser = Summariser(llm, Guard(tokenizer=TOK), TOK, weak_after=3)
    items = _items(["Let's plan the offsite agenda and the budget.", "Sure, agenda first."] * 3)
    modes = [summariser.summarise(items).mode for _ in range(5)]
    assert modes == ["fallback", "fallback", "fallback", "deterministic", "deterministic"]
    assert len(llm.prompts) == 3


async def test_one_call_with_the_seed_prompt_over_the_full_thread_with_tools_and_notes(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    llm = canned(GOOD)
    async with open_harness(tmp_path / "sub", llm=llm,
                            config=ConversationConfig(drift_interval=100,
                                                      drift_threshold=-1.0)) as h:
        s = await h.conv.open_session(SCOPE)
        await h.conv.add_message(s.session_id, "user", "Which database should we use?")
        await h.conv.dispatch_tool("notes", {"operation": "$set", "content": "Leaning Postgres"},
                                   session=s.session_id)
        await h.conv.add_message(s.session_id, "assistant", "Postgres, for JSON support.")
        llm.prompts.clear()
        await h.conv.evaluate_now(s.session_id)
    assert len(llm.prompts) == 1  # title, summary and flag in one call
    system, user = llm.prompts[0]
    assert system == {"role": "system", "content": SUMMARY_PROMPT}
    assert "Return a JSON object with:" in SUMMARY_PROMPT and "include_in_memory" in SUMMARY_PROMPT
    assert "tool call notes(" in user["content"]
    assert "tool result notes" in user["content"]
    assert "notes: Leaning Postgres" in user["content"]
    assert user["content"].startswith("user: Which database should we use?")


def test_render_thread_lists_every_item_then_notes() -> None:
    text = render_thread(_items(["a b", "c d"]), "n1")
    assert text == "user: a b\nassistant: c d\nnotes: n1"


@pytest.mark.slow
def test_real_smollm2_summary_is_guarded_or_falls_back() -> None:
    llama = pytest.importorskip("llama_cpp")
    assert llama is not None
    from solace.models import LlamaCppLLM

    try:
        llm = LlamaCppLLM(n_ctx=1024)
        llm.load()
    except Exception as exc:  # the model package may be absent on a bare checkout
        pytest.skip(f"SmolLM2 not loadable: {exc}")
    summariser = Summariser(llm, Guard(tokenizer=TOK), TOK, mode="llm", max_tokens=80)
    items = _items(["I prefer tea over coffee in the morning.", "Noted: tea in the morning."])
    result = summariser.summarise(items)
    assert result.mode in ("llm", "fallback")
    if result.mode == "llm":
        verdict = Guard(tokenizer=TOK).check(render_thread(items), result.summary)
        assert "invented" not in verdict.reasons
    else:
        assert result.summary == "I prefer tea over coffee in the morning."
        assert result.include_in_memory is False
