"""Solace: memory for LLM agents that lasts across sessions.

The public API::

    clock = solace.ReplayClock()
    async with solace.open_runtime(home, config=None, clock=clock) as rt:
        main = rt.agent("Main")            # Supervisor, Main, Mood, Time, Mouth
        eid = await main.observe("text", kind="message", speaker="user", at=when,
                                 attrs={"dia_id": "D1:3"})
        hits = await main.recall("query", k=10)        # list[Hit], best first
        async with main.reasoning_step("query") as step:
            step.cues; step.mark_used(cue)
        await rt.settle()
        rt.event(eid)

    # The human-readable workspace (SOUL/USER/AGENTS.md, daily logs, MEMORY.md, NOW.md):
    rt.workspace                           # a Workspace, or None when switched off
    async with solace.open_runtime(home, session_type="shared") as rt: ...
        # a group or channel: no MEMORY.md, durable facts or fact recall in context

Everything named in ``__all__`` is public; other modules may change.
"""

from __future__ import annotations

from solace.actors.base import Actor as Actor
from solace.actors.mouth import Speech as Speech
from solace.clock import Clock as Clock
from solace.clock import ReplayClock as ReplayClock
from solace.clock import TrioClock as TrioClock
from solace.clock import WallClock as WallClock
from solace.config import AgentConfig as AgentConfig
from solace.config import Config as Config
from solace.config import ConfigError as ConfigError
from solace.config import FadeWeights as FadeWeights
from solace.config import RetrievalWeights as RetrievalWeights
from solace.config import load_config as load_config
from solace.memory.record import Hit as Hit
from solace.memory.record import MemoryRecord as MemoryRecord
from solace.memory.record import ScoreParts as ScoreParts
from solace.memory.rehydration import ReasoningStep as ReasoningStep
from solace.runtime import Observation as Observation
from solace.runtime import Runtime as Runtime
from solace.runtime import open_runtime as open_runtime
from solace.sealed import StorageFullError as StorageFullError
from solace.workspace import SessionContext as SessionContext
from solace.workspace import Workspace as Workspace
from solace.workspace import WorkspaceError as WorkspaceError

__all__ = [
    "Actor",
    "AgentConfig",
    "Clock",
    "Config",
    "ConfigError",
    "FadeWeights",
    "Hit",
    "MemoryRecord",
    "Observation",
    "ReasoningStep",
    "ReplayClock",
    "RetrievalWeights",
    "Runtime",
    "ScoreParts",
    "SessionContext",
    "Speech",
    "StorageFullError",
    "TrioClock",
    "WallClock",
    "Workspace",
    "WorkspaceError",
    "load_config",
    "open_runtime",
]
