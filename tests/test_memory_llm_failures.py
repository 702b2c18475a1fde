"""A weak or failing model can lower the quality of memory, never lose it (issue §5)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import trio
import trio.testing
from test_memory_support import DAY, HOUR, LINES, Env, holder_of, where

from solace.config import AgentConfig, MemoryConfig
from solace.memory.ladder import Ladder
from solace.models import LLMStats, LLMUnavailableError
from solace.models.llm import ChatMessage

CONFIG = AgentConfig(budget_tokens=4000)
LLM_MEMORY = MemoryConfig(compression="llm")


class GarbageLLM:
    """Answers in the schema, inventing names and numbers the guard must refuse."""

    name = "garbage"

    def __init__(self) -> None:
        self.stats = LLMStats()

    def complete(self, messages: Sequence[ChatMessage], *, max_tokens: int = 256,
                 temperature: float = 0.0) -> str:
        return "Zorblax"

    def complete_json(self, messages: Sequence[ChatMessage], schema: Mapping[str, Any], *,
                      max_tokens: int = 512) -> dict[str, Any]:
        self.stats.record(generated_tokens=12)
        item = schema["properties"]["summaries"]["items"]["properties"]["summary"]
        return {"summaries": [{"id": 1, "summary": "Zorblax 1999"[: item["maxLength"]]}]}


class DownLLM(GarbageLLM):
    """Every call raises, as a backend that is not there."""

    name = "down"

    def complete_json(self, messages: Sequence[ChatMessage], schema: Mapping[str, Any], *,
                      max_tokens: int = 512) -> dict[str, Any]:
        self.stats.record(failed=True)
        raise LLMUnavailableError("the model server is down")


async def walk_to_rung_2(env: Env) -> tuple[int, str]:
    """Age one record to rung 2; return its id and the deterministic rung-2 form of the
    rung-1 record it came from (what the fallback must give)."""
    await env.open()
    rid = (await env.say(LINES[2], speaker="Melanie")).record_id
    await trio.sleep(DAY + HOUR)
    await env.mem.settle()
    rung1 = env.mem.working.get(rid)
    assert rung1 is not None and rung1.rung == 1
    plain = Ladder(tokenizer=env.tokenizer, embedder=env.embedder, config=MemoryConfig())
    (expected,) = plain.demote([rung1], now=env.clock.now())
    await trio.sleep(DAY)
    await env.mem.settle()
    assert where(env.mem, rid) == ("working", 2)
    return rid, expected.record.text


def llm_env(tmp_path: Path, llm: Any) -> Env:
    """An agent whose ladder compresses rung 2 with ``llm``."""
    env = Env(tmp_path, CONFIG, LLM_MEMORY)
    env.ladder = Ladder(tokenizer=env.tokenizer, embedder=env.embedder, config=LLM_MEMORY,
                        llm=llm)
    return env


async def test_an_llm_answering_garbage_leaves_the_deterministic_form(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    env = llm_env(tmp_path, GarbageLLM())
    rid, expected = await walk_to_rung_2(env)
    record = env.mem.working.get(rid)
    assert record is not None and record.text == expected
    assert "Zorblax" not in record.text
    assert env.ladder.stats.llm_calls == 1 and env.ladder.stats.guard_rejected == 1
    assert holder_of(env.mem, rid) == [("working", rid)]


async def test_an_llm_that_raises_leaves_the_deterministic_form(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    env = llm_env(tmp_path, DownLLM())
    rid, expected = await walk_to_rung_2(env)
    record = env.mem.working.get(rid)
    assert record is not None and record.text == expected
    assert env.ladder.stats.llm_failures == 1
    assert env.mem.counters.ladder_failures == 0  # the ladder absorbed it


class FailingLadder:
    """A ladder whose model work fails outright (e.g. its embedder cannot load)."""

    def __init__(self, inner: Ladder) -> None:
        self.inner = inner
        self.broken = True
        self.stats = inner.stats

    def demote(self, records: Sequence[Any], *, now: float, perspective: str = "whole") -> Any:
        if self.broken:
            raise LLMUnavailableError("compression backend unavailable")
        return self.inner.demote(records, now=now, perspective=perspective)


async def test_a_failing_ladder_leaves_records_at_their_rung_and_loses_nothing(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    env = Env(tmp_path, AgentConfig(budget_tokens=30), MemoryConfig())
    ladder = FailingLadder(env.ladder)
    env.ladder = ladder  # type: ignore[assignment]
    await env.open()
    ids = [(await env.say(line)).record_id for line in LINES[:4]]
    await env.sleep_until(2 * DAY)
    report = await env.mem.fade_step()
    assert set(report.failed) == set(ids) and not report.within_budget
    assert all(where(env.mem, rid) == ("working", 0) for rid in ids)
    assert await env.fade_events() == []  # nothing half-done reached the substrate
    assert env.mem.counters.ladder_failures >= 1
    await env.mem.settle()  # returns although the ladder still fails
    ladder.broken = False
    await env.mem.settle()
    assert env.mem.working.total_tokens <= 30
    assert sorted(e for r in env.mem.working.records() + list(env.mem.longterm.records())
                  for e in r.entry_ids) == sorted(ids)
