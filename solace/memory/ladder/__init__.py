"""The fidelity ladder: how a record fades from raw text to an embedding and tags.

Rung 0 raw ("Speaker: content", 1x) -> 1 extractive key sentences (~0.3x) -> 2
abstractive gist with every name, number and date (~0.1x) -> 3 embedding + tags
(~0.01x). Deterministic by default; an LLM, when configured, writes rung 2 in
batched calls and only through the guard. Public names are re-exported here;
submodules may change.
"""

from __future__ import annotations

from solace.memory.ladder.abstractive import condense as condense
from solace.memory.ladder.dates import resolve_relative_dates as resolve_relative_dates
from solace.memory.ladder.episodes import group_episodes as group_episodes
from solace.memory.ladder.extractive import extract_key_points as extract_key_points
from solace.memory.ladder.ladder import Demotion as Demotion
from solace.memory.ladder.ladder import EmbeddingSource as EmbeddingSource
from solace.memory.ladder.ladder import Ladder as Ladder
from solace.memory.ladder.ladder import LadderStats as LadderStats
from solace.memory.ladder.ladder import RawEvent as RawEvent
from solace.memory.ladder.ladder import mean_embedding as mean_embedding
from solace.memory.ladder.ladder import rehydrate_text as rehydrate_text
from solace.memory.ladder.llm_compress import BatchCompressor as BatchCompressor
from solace.memory.ladder.pronouns import resolve_pronouns as resolve_pronouns
from solace.memory.ladder.sentences import Turn as Turn
from solace.memory.ladder.sentences import format_raw as format_raw
from solace.memory.ladder.survival import salient_survival as salient_survival
from solace.memory.ladder.tags import tag_line as tag_line

__all__ = [
    "BatchCompressor",
    "Demotion",
    "EmbeddingSource",
    "Ladder",
    "LadderStats",
    "RawEvent",
    "Turn",
    "condense",
    "extract_key_points",
    "format_raw",
    "group_episodes",
    "mean_embedding",
    "rehydrate_text",
    "resolve_pronouns",
    "resolve_relative_dates",
    "salient_survival",
    "tag_line",
]
