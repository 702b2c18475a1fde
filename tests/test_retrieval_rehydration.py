"""Rehydration: a long-term hit is a transient cue; used, it re-enters working."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from runtime_support import LINES as ALL_LINES
from runtime_support import START

from solace import ReplayClock, open_runtime
from solace.config import AgentConfig, Config, MemoryConfig, ModelsConfig, SubstrateConfig

LINES = ALL_LINES[:6]


def config(threshold: float = 0.0) -> Config:
    small = AgentConfig(budget_tokens=30)
    return Config(
        models=ModelsConfig(embedder="hashing", llm_backend="none"),
        substrate=SubstrateConfig(fsync="never"),
        memory=MemoryConfig(rehydrate_threshold=threshold),
        agents={"Main": small, "Supervisor": small},
    )


async def faded(rt, clock: ReplayClock):  # type: ignore[no-untyped-def]
    """Observe LINES, let them fade; return one long-term record and its first line."""
    texts = {}
    for i, (speaker, text) in enumerate(LINES):
        eid = await rt.agent("Main").observe(text, speaker=speaker,
                                             at=START + timedelta(minutes=5 * i))
        texts[eid] = text
    await rt.settle()
    # Which records fade first depends on when the fade coroutine ran: pick one.
    target = min(rt.memories["Main"].longterm.records(), key=lambda r: r.record_id)
    return target, texts[target.entry_ids[0]]


def snapshot_of(memory) -> dict:  # type: ignore[no-untyped-def]
    return {
        tier: {r.record_id: (r.rung, r.text, r.created, r.references, r.entry_ids)
               for r in getattr(memory, tier).records()}
        for tier in ("working", "longterm")
    }


async def test_unused_cue_returns_to_longterm_unchanged(tmp_path: Path) -> None:
    clock = ReplayClock(START)
    async with open_runtime(tmp_path, config(), clock=clock) as rt:
        target, line = await faded(rt, clock)
        memory = rt.memories["Main"]
        before = snapshot_of(memory)
        async with rt.agent("Main").reasoning_step(line) as step:
            assert step.cues and all(c.tier == "longterm" for c in step.cues)
            assert step.detect_use("I have no idea.") == []
        assert snapshot_of(memory) == before


async def test_used_cue_reenters_working_at_a_sharp_rung_with_fresh_tracking(
    tmp_path: Path,
) -> None:
    clock = ReplayClock(START)
    async with open_runtime(tmp_path, config(), clock=clock) as rt:
        target, line = await faded(rt, clock)
        memory = rt.memories["Main"]
        clock.advance(3600)
        async with rt.agent("Main").reasoning_step(line) as step:
            cue = next(c for c in step.cues if c.record_id == target.record_id)
            old = memory.longterm.get(cue.record_id)
            assert old is not None
            step.mark_used(cue)
        revived = memory.working.get(cue.record_id)
        assert memory.longterm.get(cue.record_id) is None
        assert revived is not None and revived.rung == rt.config.runtime.cue_rung
        assert revived.entry_ids == old.entry_ids
        assert revived.created == clock.now() and revived.references == old.references + 1
        assert revived.text and revived.tokens == rt.tokenizer.count(revived.text)
        (fade_event, *_rest) = [
            e for e in await rt.substrate.scan(agent="Main", kind="fade")
            if e.attrs.get("op") == "add"
        ]
        assert fade_event.attrs["record_id"] == str(cue.record_id)  # survives a restart


async def test_use_detected_from_the_steps_output(tmp_path: Path) -> None:
    clock = ReplayClock(START)
    async with open_runtime(tmp_path, config(), clock=clock) as rt:
        target, line = await faded(rt, clock)
        async with rt.agent("Main").reasoning_step("What happened?", k=50) as step:
            cue = next(c for c in step.cues if c.record_id == target.record_id)
            found = step.detect_use(f"I remember: {line}")
            assert cue in found
        assert rt.memories["Main"].working.get(cue.record_id) is not None


async def test_cues_are_only_hits_above_the_threshold_and_an_error_moves_nothing(
    tmp_path: Path,
) -> None:
    clock = ReplayClock(START)
    async with open_runtime(tmp_path, config(threshold=10.0), clock=clock) as rt:
        await faded(rt, clock)
        async with rt.agent("Main").reasoning_step("Jolene pottery") as step:
            assert step.hits and step.cues == []
    async with open_runtime(tmp_path / "b", config(), clock=ReplayClock(START)) as rt:
        await faded(rt, clock)
        before = snapshot_of(rt.memories["Main"])
        with pytest.raises(RuntimeError, match="step failed"):
            async with rt.agent("Main").reasoning_step("Jolene pottery") as step:
                step.mark_used(step.cues[0])
                raise RuntimeError("step failed")
        assert snapshot_of(rt.memories["Main"]) == before


async def test_mark_used_refuses_a_hit_that_is_not_a_cue(tmp_path: Path) -> None:
    clock = ReplayClock(START)
    async with open_runtime(tmp_path, config(), clock=clock) as rt:
        await faded(rt, clock)
        async with rt.agent("Main").reasoning_step("Jolene") as step:
            other = await rt.agent("Supervisor").recall("Jolene", k=1, read_through=False)
            with pytest.raises(ValueError, match="not a cue"):
                step.mark_used(other[0])
