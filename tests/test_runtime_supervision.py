"""A background task that fails is logged, counted and restarted; the runtime goes on."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest
import trio
import trio.testing

from solace import TrioClock, open_runtime
from solace.config import AgentConfig, Config, ModelsConfig, SubstrateConfig


def small_config() -> Config:
    return Config(
        models=ModelsConfig(embedder="hashing", llm_backend="none"),
        substrate=SubstrateConfig(fsync="never"),
        agents={"Main": AgentConfig(budget_tokens=40, tick_seconds=5.0)},
    )


async def test_fade_task_failure_is_logged_and_does_not_stop_the_runtime(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, caplog: pytest.LogCaptureFixture
) -> None:
    async with open_runtime(tmp_path, small_config(), clock=TrioClock()) as rt:
        memory = rt.memories["Main"]
        real_step = memory.fade_step
        failures = 0

        async def broken_step() -> object:
            nonlocal failures
            failures += 1
            if failures <= 2:
                raise RuntimeError(f"now must be a finite clock reading (test {failures})")
            return await real_step()

        passes = memory.counters.passes
        memory.fade_step = broken_step
        for i in range(6):
            await rt.agent("Main").observe(f"Turn {i} about the garden shed.", speaker="Jo")
        # Two failures, back-off of 1 s then 2 s, then it fades again. Under the autojump
        # clock virtual time runs on while the real step works in its thread, so wait
        # for the pass itself, bounded in real time.
        deadline = time.monotonic() + 30.0
        while time.monotonic() < deadline and not (
                failures > 2 and memory.counters.passes > passes):
            await trio.sleep(1)
            await trio.to_thread.run_sync(time.sleep, 0.005)
        stats = rt.inspect("Main")["Main"]
        assert stats["task_failures"] == 2 and stats["task_restarts"] == 2
        assert stats["last_task_error"] == (
            "RuntimeError: now must be a finite clock reading (test 2)")
        assert failures > 2 and memory.counters.passes > passes  # the fade runs again
        errors = [r.getMessage() for r in caplog.records
                  if r.levelno == logging.ERROR and r.name == "solace.supervision"]
        assert len(errors) == 2, errors
        assert all(m.startswith("Main (actor tasks and fade) failed") and "RuntimeError" in m
                   for m in errors), errors
        # Every other actor kept running, and Main answers again.
        assert all(rt.inspect(n)[n]["task_failures"] == 0
                   for n in ("Supervisor", "Mood", "Time", "Mouth"))
        speech = await rt.ask("What about the garden shed?")
        assert speech.draft_id is not None
