"""The compactor runs inline after a write that changes an id's live facts, and a refused
compaction leaves memory byte-identical (issue 9 §7, seed 004)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import solace.facts.compactor as compactor
from solace.facts import FactStatus
from solace.models import MiniLMEmbedder
from tests.facts_fixtures import ManualClock, config_with, fact_memory, home_bytes

MINILM = MiniLMEmbedder()  # loads on first use; the merger clusters by meaning

RESTATEMENTS = [
    "Alice prefers to be contacted in the morning.",
    "Alice is usually free before 11am.",
    "Alice asked not to be messaged during lunch.",
    "Alice prefers to be contacted in the morning, before 11am.",
    "Alice likes being contacted in the morning.",
]


def _proposal(value: object) -> Any:
    """A compactor whose LLM answered ``value`` and which has no deterministic fallback."""

    def propose(inputs: Any, vectors: Any, *, llm: Any, count_tokens: Any,
                threshold: float) -> Any:
        return compactor.check_compaction(inputs, value, count_tokens=count_tokens)

    return propose


@pytest.mark.parametrize("reason,value", [
    ("unparsable", "{not json"),
    ("empty", {"facts": []}),
    ("not_smaller", "COPY"),
    ("lost_salient", {"facts": ["Alice prefers to be contacted in the morning."]}),
])
async def test_each_refused_compaction_leaves_memory_byte_identical(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reason: str, value: object) -> None:
    clock = ManualClock()
    async with fact_memory(tmp_path, config_with(deduplication_threshold=0.99), clock) as fm:
        for text in RESTATEMENTS:
            await fm.remember("alice", text)
            clock.t += 60
        before_files, before_facts = home_bytes(tmp_path), fm.export("alice")
        proposal = {"facts": [f.text for f in fm.facts("alice")]} if value == "COPY" else value
        monkeypatch.setattr(compactor, "propose", _proposal(proposal))
        (verdict,) = await fm.consolidate("alice")
        assert not verdict.accepted and verdict.reason == reason
        assert fm.counters[f"compaction_refused_{reason}"] == 1
        assert fm.export("alice") == before_facts
        assert home_bytes(tmp_path) == before_files


async def test_an_accepted_compaction_supersedes_its_inputs_and_keeps_history(
        tmp_path: Path) -> None:
    clock = ManualClock()
    async with fact_memory(tmp_path, config_with(deduplication_threshold=0.99), clock,
                           MINILM) as fm:
        for text in RESTATEMENTS:
            await fm.remember("alice", text)
            clock.t += 60
        before = fm._tokenizer.count("\n".join(f.text for f in fm.facts("alice")))
        (verdict,) = await fm.consolidate("alice")
        assert verdict.accepted, verdict
        live = fm.facts("alice")
        after = fm._tokenizer.count("\n".join(f.text for f in live))
        assert after < before
        joined = " ".join(f.text for f in live)
        assert "11am" in joined and "lunch" in joined
        history = fm.facts("alice", include_history=True)
        assert any(f.status is FactStatus.SUPERSEDED for f in history)
        assert all(f.source == "compact" or f.text in RESTATEMENTS for f in history)
    async with fact_memory(tmp_path, clock=clock) as fm:  # rebuilt from the events alike
        assert [f.text for f in fm.facts("alice")] == [f.text for f in live]


async def test_compaction_runs_inline_only_above_the_stores_token_budget(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = compactor.propose

    def counting(inputs: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(len(inputs))
        return real(inputs, *args, **kwargs)

    monkeypatch.setattr(compactor, "propose", counting)
    clock = ManualClock()
    config = config_with(deduplication_threshold=0.99, compact_above_tokens=12)
    async with fact_memory(tmp_path, config, clock, MINILM) as fm:
        await fm.remember("alice", RESTATEMENTS[0])  # one fact, under 12 tokens
        assert calls == []
        clock.t += 60
        await fm.remember("alice", RESTATEMENTS[2])  # two facts, over 12 tokens
        assert calls == [2]
        await fm.remember("alice", RESTATEMENTS[2])  # a NOOP changes no live fact
        assert calls == [2]
        tokens = fm._tokenizer.count("\n".join(f.text for f in fm.facts("alice")))
        assert fm.counters["compactions"] == 1 or tokens > 12


async def test_compact_above_tokens_zero_never_compacts_inline(tmp_path: Path) -> None:
    clock = ManualClock()
    async with fact_memory(tmp_path, config_with(deduplication_threshold=0.99,
                                                 compact_above_tokens=0), clock) as fm:
        for text in RESTATEMENTS * 3:
            clock.t += 60
            await fm.remember("alice", text)
        assert fm.counters["compactions"] == 0
