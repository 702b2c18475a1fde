"""Extraction after a turn: the exchange (message, what was said, the turn's tool
results) is distilled into classified facts under the turn's memory id, after the
reply has gone out; the next turn recalls them."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import trio

from solace import TrioClock, open_runtime
from solace.app import Solace
from solace.config import Config, ModelsConfig, SubstrateConfig
from solace.facts import FACT_KIND, Exchange
from solace.models.llm import LLMStats


def config() -> Config:
    return Config(models=ModelsConfig(embedder="hashing", llm_backend="none"),
                  substrate=SubstrateConfig(fsync="never"))


class ToolCallingLLM:
    """Answers every message with one tool call (a capable model's reply)."""

    name = "caller"

    def __init__(self, call: dict[str, Any]) -> None:
        self.call = call
        self.stats = LLMStats()

    def complete(self, messages: Sequence[Any], *, max_tokens: int = 256,
                 temperature: float = 0.0) -> str:
        return json.dumps(self.call)

    def complete_json(self, messages: Sequence[Any], schema: Any, *,
                      max_tokens: int = 512) -> dict[str, Any]:
        raise NotImplementedError


async def test_a_turn_stating_a_move_writes_a_fact_under_the_turns_memory_id(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with open_runtime(tmp_path, config(), clock=TrioClock()) as rt:
        app = Solace(rt)
        await app.chat("I moved to Lisbon last month.", memory="ana")
        await app.chat("Thanks!", memory="ana")  # Main extracts before taking the next line
        (fact,) = [f for f in app.memory_facts("ana") if "Lisbon" in f.text]
        assert fact.source == "extract" and fact.write_class.value == "ADD"
        assert app.memory_ids() == ["ana"]  # nothing under the default id
        events = await rt.substrate.scan(kind=FACT_KIND)
        assert {e.agent for e in events} == {"Main"}
        await app.chat("Is Lisbon where I moved to?", memory="ana")
        block = rt.agent("Main").last_recall
        assert block is not None and fact.text in block.text


async def test_the_reply_goes_out_before_extraction_finishes(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with open_runtime(tmp_path, config(), clock=TrioClock()) as rt:
        assert rt.facts is not None
        release = trio.Event()
        seen: list[Exchange] = []

        async def slow_extract(memory_id: str, exchange: Exchange, **kw: Any) -> list[Any]:
            seen.append(exchange)
            await release.wait()
            return []

        rt.facts.extract_turn = slow_extract  # type: ignore[method-assign]
        speech = await Solace(rt).chat("I moved to Lisbon last month.", memory="ana")
        assert speech.text  # answered while extraction still waits
        assert not release.is_set() and len(seen) == 1
        assert seen[0].user == "I moved to Lisbon last month." and seen[0].reply == speech.text
        release.set()


async def test_the_exchange_carries_the_turns_tool_results(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with open_runtime(tmp_path, config(), clock=TrioClock()) as rt:
        assert rt.facts is not None
        seen: list[Exchange] = []
        real = rt.facts.extract_turn

        async def spy(memory_id: str, exchange: Exchange, **kw: Any) -> list[Any]:
            seen.append(exchange)
            return await real(memory_id, exchange, **kw)

        rt.facts.extract_turn = spy  # type: ignore[method-assign]
        main = rt.agent("Main")
        main.llm = ToolCallingLLM({"tool": "important_info",
                                   "arguments": {"operation": "$set", "key": "city",
                                                 "value": "Oslo"}})
        main.compact_prompt = False
        await Solace(rt).chat("Please note my city is Oslo.")
        await Solace(rt).chat("ok")
        (tool_result,) = seen[0].tool_results
        assert json.loads(tool_result) == {"ok": True, "key": "city", "value": "Oslo"}
