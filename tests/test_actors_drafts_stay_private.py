"""Only what Mouth says enters the conversation thread: a draft's narration and keys
never reach the thread, the next turn's context or a topic summary."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import trio

from solace import TrioClock, open_runtime
from solace.config import Config, ModelsConfig, SubstrateConfig
from solace.models.llm import LLMStats

SECRET = "sk-proj-abcdefghijklmnopqrstuvwx1234"


class LeakyLLM:
    """Answers with a useful line, a line of narration and an API key."""

    name = "leaky"

    def __init__(self) -> None:
        self.prompts: list[Sequence[Any]] = []
        self.stats = LLMStats()

    def complete(self, messages: Sequence[Any], *, max_tokens: int = 256,
                 temperature: float = 0.0) -> str:
        self.prompts.append(messages)
        return f"Your cat is called Biscuit.\nThought: the user forgets things\nKey: {SECRET}"

    def complete_json(self, messages: Sequence[Any], schema: Any, *,
                      max_tokens: int = 512) -> dict[str, Any]:
        raise NotImplementedError


async def test_only_mouths_speech_enters_the_thread_and_the_next_context(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    config = Config(models=ModelsConfig(embedder="hashing", llm_backend="none"),
                    substrate=SubstrateConfig(fsync="never"))
    async with open_runtime(tmp_path, config, clock=TrioClock()) as rt:
        llm = LeakyLLM()
        rt.agent("Main").llm = llm
        first = await rt.ask("What is my cat called?")
        assert first.text == "Your cat is called Biscuit."
        await rt.ask("And what else?")
        conv = rt.conversations
        session_id = await rt.session.session()
        thread = [item for t in conv.topics(session_id) for item in conv.thread(t.topic_id)]
        replies = [item.content for item in thread if item.role == "assistant"]
        assert replies == ["Your cat is called Biscuit.", "Your cat is called Biscuit."]
        assert not any(SECRET in item.content or "Thought:" in item.content for item in thread)
        second_prompt = "\n".join(m["content"] for m in llm.prompts[1])
        assert SECRET not in second_prompt and "the user forgets things" not in second_prompt
        (draft, _) = await rt.substrate.scan(kind="draft")
        assert SECRET in draft.content  # the draft itself is kept, privately, in the log
