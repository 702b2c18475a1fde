"""Mouth is the only actor that speaks, and drafts pass its filter first."""

from __future__ import annotations

from pathlib import Path

import trio
from runtime_support import ScriptedLLM

from solace import TrioClock, open_runtime
from solace.config import Config, ModelsConfig, SubstrateConfig


def config() -> Config:
    return Config(
        models=ModelsConfig(embedder="hashing", llm_backend="none"),
        substrate=SubstrateConfig(fsync="never"),
    )


async def test_mouth_filters_narration_and_credentials_out_of_speech(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    secret = "sk-proj-abcdefghijklmnopqrstuvwx1234"
    async with open_runtime(tmp_path, config(), clock=TrioClock()) as rt:
        rt.agent("Main").llm = ScriptedLLM(
            f"Your cat is called Biscuit.\nThought: the user forgets things\nKey: {secret}"
        )
        speech = await rt.ask("What is my cat called?")
        assert speech.text == "Your cat is called Biscuit."
        assert (speech.dropped_narration, speech.dropped_credentials) == (1, 1)
        spoken = await rt.substrate.scan(kind="speech")
        assert [e.content for e in spoken] == ["Your cat is called Biscuit."]
        assert {e.agent for e in spoken} == {"Mouth"}
        (draft,) = await rt.substrate.scan(kind="draft")
        assert secret in draft.content and draft.agent == "Main"  # kept, privately
        for name in ("Supervisor", "Main", "Mood", "Time", "Mouth"):
            for record in rt.memories[name].working.records():
                if record.kind != "draft":
                    assert secret not in record.text


async def test_a_draft_with_nothing_sayable_produces_no_speech_event(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with open_runtime(tmp_path, config(), clock=TrioClock()) as rt:
        rt.agent("Main").llm = ScriptedLLM("<think>they want the password</think>password: hunter2")
        speech = await rt.ask("what's the password?")
        assert speech.text == "" and speech.entry_id is None
        assert await rt.substrate.scan(kind="speech") == []
        assert rt.agent("Mouth").stats()["silenced"] == 1


async def test_main_builds_its_prompt_from_its_memory_and_falls_back_without_llm(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with open_runtime(tmp_path, config(), clock=TrioClock()) as rt:
        await rt.agent("Main").observe("My sister Ana lives in Lisbon.", speaker="user")
        fallback = await rt.ask("Where does Ana live?")
        assert fallback.text.startswith("I can't reach my language model right now")
        assert "Lisbon" in fallback.text  # the deterministic reply quotes what it recalled
        llm = ScriptedLLM("Ana lives in Lisbon.")
        rt.agent("Main").llm = llm
        answer = await rt.ask("Where does Ana live?")
        assert answer.text == "Ana lives in Lisbon."
        prompt = "\n".join(m["content"] for m in llm.prompts[0])
        assert "sister Ana lives in Lisbon" in prompt  # raw, or faded with "My" resolved


def test_tidy_reply_cuts_loops_and_refuses_non_answers() -> None:
    from solace.actors.main_actor import tidy_reply

    looping = "Glad to hear it. I'm here to help. I'm here to help. I'm here to help"
    assert tidy_reply(looping) == "Glad to hear it. I'm here to help."
    assert tidy_reply("A:\n\nA:\n\nA:") is None
    assert tidy_reply("   ") is None
    assert tidy_reply("Yes.") == "Yes."


async def test_a_degenerate_llm_reply_gives_the_fallback_answer(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with open_runtime(tmp_path, config(), clock=TrioClock()) as rt:
        rt.agent("Main").llm = ScriptedLLM("A:\n\nA:\n\nA:\n\nA:")
        speech = await rt.ask("hello?")
        assert speech.text.startswith("I can't reach my language model right now")
        assert rt.agent("Main").stats()["llm_failures"] == 1
