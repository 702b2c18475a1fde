"""Per-agent memory: the working and long-term tiers, the fade, snapshots and rebuild.

Public names are re-exported here; submodules may change. The ladder
(:mod:`solace.memory.ladder`) and retrieval (:mod:`solace.memory.retrieval`) are
imported from their own modules.
"""

from __future__ import annotations

from solace.memory.agent_memory import AgentMemory as AgentMemory
from solace.memory.fade import FadeColumns as FadeColumns
from solace.memory.fade import FadeCounters as FadeCounters
from solace.memory.fade import FadeReport as FadeReport
from solace.memory.fade import fade_score as fade_score
from solace.memory.fade import plan_round as plan_round
from solace.memory.fade import token_pressure as token_pressure
from solace.memory.longterm import IndexParams as IndexParams
from solace.memory.longterm import LongTermTier as LongTermTier
from solace.memory.rebuild import FADE_KIND as FADE_KIND
from solace.memory.rebuild import Perceiver as Perceiver
from solace.memory.record import Hit as Hit
from solace.memory.record import MemoryRecord as MemoryRecord
from solace.memory.record import ScoreParts as ScoreParts
from solace.memory.snapshot import SnapshotError as SnapshotError
from solace.memory.working import WorkingTier as WorkingTier

__all__ = [
    "FADE_KIND",
    "AgentMemory",
    "FadeColumns",
    "FadeCounters",
    "FadeReport",
    "Hit",
    "IndexParams",
    "LongTermTier",
    "MemoryRecord",
    "Perceiver",
    "ScoreParts",
    "SnapshotError",
    "WorkingTier",
    "fade_score",
    "plan_round",
    "token_pressure",
]
