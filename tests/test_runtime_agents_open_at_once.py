"""The agents' tiers open at once (their snapshots read side by side), and one that
cannot open fails the open with its own error, not one wrapped in a group."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import trio

from solace import ReplayClock, open_runtime
from solace.config import Config, ModelsConfig, SubstrateConfig
from solace.memory.agent_memory import AgentMemory


def config() -> Config:
    return Config(models=ModelsConfig(embedder="hashing", llm_backend="none"),
                  substrate=SubstrateConfig(fsync="never"))


async def test_one_agent_failing_to_open_raises_its_own_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = AgentMemory.opening.__func__  # type: ignore[attr-defined]

    async def opening(cls: type[AgentMemory], agent: str, **kwargs: Any) -> Any:
        if agent == "Mood":
            raise OSError("Mood's snapshot directory is unreadable")
        return await real(cls, agent, **kwargs)

    monkeypatch.setattr(AgentMemory, "opening", classmethod(opening))
    with pytest.raises(OSError, match="Mood's snapshot directory"):
        async with open_runtime(tmp_path, config(), clock=ReplayClock(), warm_up=False):
            pass


async def test_the_agents_snapshots_are_read_side_by_side(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with open_runtime(tmp_path, config(), clock=ReplayClock(), warm_up=False) as rt:
        await rt.observe("Caroline went to a pottery class.", author="Caroline")
    real = AgentMemory.opening.__func__  # type: ignore[attr-defined]
    inside, most = 0, 0

    async def opening(cls: type[AgentMemory], agent: str, **kwargs: Any) -> Any:
        nonlocal inside, most
        inside += 1
        most = max(most, inside)
        await trio.sleep(0)  # let the others start
        try:
            return await real(cls, agent, **kwargs)
        finally:
            inside -= 1

    monkeypatch.setattr(AgentMemory, "opening", classmethod(opening))
    async with open_runtime(tmp_path, config(), clock=ReplayClock(), warm_up=False) as rt:
        assert set(rt.memories) == {"Supervisor", "Main", "Mood", "Time", "Mouth"}
    assert most == 5
