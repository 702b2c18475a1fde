"""Which fading records belong to one episode and may merge into one record.

A chat turn is 30-40 tokens and has no meaningful 0.1x form, so as the turns of
one conversation fade together they become one record that keeps every original
entry id. An episode is: the same agent, kind and privacy (a private draft never
merges with what others may read); the same conversation (each record shares a
speaker with the episode, or together they are a two-party dialogue); close in time
(no gap above ``episode_gap_minutes``); the same topic (cosine to the episode's
centroid at least ``episode_min_similarity``, when both have embeddings); and
bounded (``max_episode_records``, ``max_episode_tokens`` of source text). A chunk of
a large event (a record with a ``span``) is an episode of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from solace.config import MemoryConfig
from solace.memory.record import MemoryRecord

__all__ = ["group_episodes"]


@dataclass(slots=True)
class _Episode:
    records: list[MemoryRecord]
    speakers: set[str]
    source_tokens: int
    last_ts: float
    centroid: np.ndarray | None = field(default=None)

    def key(self) -> tuple[str, str, bool]:
        first = self.records[0]
        return first.agent, first.kind, first.private


def _fits(episode: _Episode, record: MemoryRecord, config: MemoryConfig) -> bool:
    if record.span or episode.records[0].span:
        return False  # a chunk of a large event fades alone (it stands for part of it)
    if episode.key() != (record.agent, record.kind, record.private):
        return False
    if len(episode.records) >= config.max_episode_records:
        return False
    if episode.source_tokens + record.source_tokens > config.max_episode_tokens:
        return False
    if abs(record.first_event_ts - episode.last_ts) > config.episode_gap_minutes * 60.0:
        return False
    speakers = set(record.speakers)
    if speakers and episode.speakers and not speakers & episode.speakers:
        if len(speakers | episode.speakers) > 2:
            return False  # a third party with nobody in common: another conversation
    if record.embedding is not None and episode.centroid is not None:
        norm = float(np.linalg.norm(episode.centroid))
        if norm > 0.0:
            similarity = float(record.embedding @ episode.centroid) / norm
            if similarity < config.episode_min_similarity:
                return False
    return True


def group_episodes(
    records: Sequence[MemoryRecord], config: MemoryConfig
) -> list[list[MemoryRecord]]:
    """Partition ``records`` into episodes (see module docstring).

    Records are taken in event-time order; each joins the most recent open episode
    it fits, else opens one. Pure; the records are not modified.

    Args:
        records: records at one rung (the caller groups by rung).
        config: episode rules (gap, similarity, size limits).

    Returns:
        Every input record in exactly one episode; episodes and the records inside
        each are in event-time order (ties by ``record_id``).
    """
    ordered = sorted(records, key=lambda r: (r.first_event_ts, r.event_ts, r.record_id))
    episodes: list[_Episode] = []
    for record in ordered:
        home = next((e for e in reversed(episodes) if _fits(e, record, config)), None)
        vector = None if record.embedding is None else np.asarray(record.embedding, np.float64)
        if home is None:
            episodes.append(
                _Episode([record], set(record.speakers), record.source_tokens, record.event_ts,
                         None if vector is None else vector.copy())
            )  # fmt: skip
            continue
        home.records.append(record)
        home.speakers |= set(record.speakers)
        home.source_tokens += record.source_tokens
        home.last_ts = max(home.last_ts, record.event_ts)
        if vector is not None:
            home.centroid = vector.copy() if home.centroid is None else home.centroid + vector
    episodes.sort(key=lambda e: (e.records[0].first_event_ts, e.records[0].record_id))
    return [e.records for e in episodes]
