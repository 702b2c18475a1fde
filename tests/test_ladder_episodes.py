"""Which fading records merge: one conversation, close in time, on one topic, bounded."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from solace.config import MemoryConfig
from solace.memory.ladder import group_episodes
from solace.memory.record import MemoryRecord


def record(record_id: int, ts: float, speaker: str = "Caroline", **fields: Any) -> MemoryRecord:
    return MemoryRecord(
        record_id=record_id, agent=fields.pop("agent", "Main"), rung=0, text=f"{speaker}: hi",
        tokens=10, source_tokens=fields.pop("source_tokens", 10), entry_ids=(record_id,),
        speakers=(speaker,), first_event_ts=ts, event_ts=ts, **fields,
    )  # fmt: skip


def ids(groups: list[list[MemoryRecord]]) -> list[list[int]]:
    return [[r.record_id for r in group] for group in groups]


def test_a_two_party_dialogue_close_in_time_is_one_episode() -> None:
    records = [record(i, 60.0 * i, "Caroline" if i % 2 else "Melanie") for i in range(1, 7)]
    assert ids(group_episodes(records[::-1], MemoryConfig())) == [[1, 2, 3, 4, 5, 6]]


def test_a_gap_longer_than_episode_gap_minutes_starts_a_new_episode() -> None:
    config = MemoryConfig(episode_gap_minutes=30.0)
    records = [record(1, 0.0), record(2, 29 * 60.0), record(3, 29 * 60.0 + 31 * 60.0)]
    assert ids(group_episodes(records, config)) == [[1, 2], [3]]


def test_a_third_party_with_no_speaker_in_common_is_another_conversation() -> None:
    records = [record(1, 0.0, "Caroline"), record(2, 10.0, "Melanie"), record(3, 20.0, "Bob")]
    assert ids(group_episodes(records, MemoryConfig())) == [[1, 2], [3]]


def test_agent_kind_and_privacy_never_mix() -> None:
    records = [
        record(1, 0.0),
        record(2, 1.0, kind="reflection"),
        record(3, 2.0, private=True),
        record(4, 3.0, agent="Mood"),
        record(5, 4.0),
    ]
    assert ids(group_episodes(records, MemoryConfig())) == [[1, 5], [2], [3], [4]]


def test_episode_size_is_bounded_by_records_and_tokens() -> None:
    records = [record(i, float(i)) for i in range(1, 8)]
    assert ids(group_episodes(records, MemoryConfig(max_episode_records=3))) == [
        [1, 2, 3], [4, 5, 6], [7]
    ]  # fmt: skip
    assert ids(group_episodes(records, MemoryConfig(max_episode_tokens=25))) == [
        [1, 2], [3, 4], [5, 6], [7]
    ]  # fmt: skip


def test_a_record_far_from_the_topic_centroid_does_not_merge() -> None:
    x, y = np.eye(384, dtype=np.float32)[:2]
    near = (x + 0.2 * y) / np.linalg.norm(x + 0.2 * y)
    records = [
        record(1, 0.0, embedding=x),
        record(2, 1.0, embedding=near),
        record(3, 2.0, embedding=y),  # orthogonal: another topic
        record(4, 3.0, embedding=near),  # back to the first topic
        record(5, 4.0),  # no embedding: continues the latest episode
    ]
    groups = group_episodes(records, MemoryConfig(episode_min_similarity=0.3))
    assert ids(groups) == [[1, 2, 4], [3, 5]]


def test_grouping_is_pure() -> None:
    records = [record(i, float(i)) for i in range(3)]
    copies = [dataclasses.replace(r) for r in records]
    group_episodes(records, MemoryConfig())
    assert [dataclasses.astuple(r) for r in records] == [dataclasses.astuple(r) for r in copies]
