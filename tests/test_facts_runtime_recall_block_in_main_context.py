"""Recall before a turn: the turn's recall block sits in Main's context stack where seed
000 puts persistent memory (the stable prefix's memory section, after the promoted
topics, before the durable facts), with its token count; a capable model reads it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import trio

from solace import TrioClock, open_runtime
from solace.app import Solace
from solace.config import Config, ModelsConfig, SubstrateConfig
from solace.conversation.context import assemble
from solace.conversation.memory import MemoryBlock
from solace.conversation.model import DEFAULT_SCOPE, Notes, Topic
from solace.models.llm import LLMStats

FACT = "The user is allergic to peanuts."


class RecordingLLM:
    """A capable model (not a small one): it reads the whole context stack."""

    name = "recorder"

    def __init__(self) -> None:
        self.prompts: list[Sequence[Any]] = []
        self.stats = LLMStats()

    def complete(self, messages: Sequence[Any], *, max_tokens: int = 256,
                 temperature: float = 0.0) -> str:
        self.prompts.append(messages)
        return f"Noted, answer number {len(self.prompts)}."

    def complete_json(self, messages: Sequence[Any], schema: Any, *,
                      max_tokens: int = 512) -> dict[str, Any]:
        raise NotImplementedError


def config() -> Config:
    return Config(models=ModelsConfig(embedder="hashing", llm_backend="none"),
                  substrate=SubstrateConfig(fsync="never"))


async def test_the_recall_block_is_in_the_stable_memory_section_with_its_tokens(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with open_runtime(tmp_path, config(), clock=TrioClock()) as rt:
        app = Solace(rt)
        await app.set_fact("city", "Porto")
        await app.remember("ada", FACT)
        llm = RecordingLLM()
        rt.agent("Main").llm = llm
        rt.agent("Main").compact_prompt = False
        await app.chat("Remind me: am I allergic to peanuts?", memory="ada")
        block = rt.agent("Main").last_recall
        assert block is not None and FACT in block.text
        stack = rt.session.last_stack
        assert stack is not None
        assert stack.recall == block.text
        assert stack.recall_tokens == block.tokens == rt.tokenizer.count(block.text) > 0
        stable = stack.stable
        assert stable.index("# Memory") < stable.index(FACT) < stable.index("# Durable facts")
        assert FACT not in stack.semi_stable and FACT not in stack.volatile
        system = llm.prompts[0][0]
        assert system["role"] == "system" and FACT in system["content"]


async def test_no_matching_fact_leaves_the_stack_without_a_recall_block(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with open_runtime(tmp_path, config(), clock=TrioClock()) as rt:
        app = Solace(rt)
        await app.remember("ada", FACT)
        await app.chat("Tell me a joke about trains.", memory="bob")
        stack = rt.session.last_stack
        assert stack is not None and stack.recall == "" and stack.recall_tokens == 0
        assert "# Memory" not in stack.stable


def test_assemble_puts_the_recall_block_after_promoted_topics_and_keeps_bytes_without_it(
) -> None:
    topic = Topic("t1", "s1", DEFAULT_SCOPE, 0.0, title="Trips")
    memory = MemoryBlock("- Trips: likes trains", ("t0",), (), 5)
    parts: dict[str, Any] = dict(
        identity="You are Solace.", skills=(), tools=(), memory=memory, facts={},
        active=topic, parent=None, notes=Notes("t1"), prior=(), thread=(),
        trailing_requests=20, working_memory="",
    )
    bare = assemble(**parts)
    with_recall = assemble(**parts, recall="Remembered facts (memory ada):\n- x", recall_tokens=9)
    assert bare.recall == "" and bare.recall_tokens == 0
    assert assemble(**parts, recall="", recall_tokens=9) == bare  # nothing: same bytes
    assert with_recall.recall_tokens == 9
    assert "# Memory\n- Trips: likes trains\n\nRemembered facts (memory ada):\n- x" in (
        with_recall.stable)
