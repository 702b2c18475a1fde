"""Events are read once and then served from memory (an event never changes once
written; recall cites the same events over and over), the most recent ``capacity`` of
them; a read that fails is not remembered."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from solace.event_reader import EventReader
from solace.offload import Offloader


class CountingSubstrate:
    def __init__(self) -> None:
        self.reads: list[int] = []
        self.sync = SimpleNamespace(get=self.get)

    def get(self, entry_id: int) -> Any:
        self.reads.append(entry_id)
        if entry_id > 100:
            raise KeyError(f"entry {entry_id} was never written")
        return SimpleNamespace(entry_id=entry_id, content=f"event {entry_id}")


async def test_an_event_read_twice_is_read_from_the_substrate_once() -> None:
    substrate = CountingSubstrate()
    reader = EventReader(substrate, Offloader(1))
    first = await reader.get_many([3, 1, 2])
    again = await reader.get_many([1, 2, 3])
    assert [e.entry_id for e in first] == [3, 1, 2] and [e.entry_id for e in again] == [1, 2, 3]
    assert reader.get(2) is first[2]
    assert sorted(substrate.reads) == [1, 2, 3]


async def test_only_the_most_recently_read_events_are_kept() -> None:
    substrate = CountingSubstrate()
    reader = EventReader(substrate, Offloader(1), capacity=2)
    await reader.get_many([1, 2])
    reader.get(1)  # 1 is now the most recent: 2 goes first
    reader.get(3)
    reader.get(1)
    reader.get(2)
    assert substrate.reads == [1, 2, 3, 2]


async def test_a_failed_read_is_not_remembered() -> None:
    substrate = CountingSubstrate()
    reader = EventReader(substrate, Offloader(1))
    for _ in range(2):
        with pytest.raises(KeyError, match="never written"):
            reader.get(101)
    assert substrate.reads == [101, 101]


async def test_events_read_recently_come_back_without_a_worker_thread() -> None:
    substrate = CountingSubstrate()

    class NoThreads(Offloader):
        calls = 0

        async def run(self, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
            NoThreads.calls += 1
            return await super().run(fn, *args, **kwargs)

    reader = EventReader(substrate, NoThreads(1))
    await reader.get_many([1, 2])
    assert NoThreads.calls == 1
    assert [e.entry_id for e in await reader.get_many([2, 1])] == [2, 1]
    assert NoThreads.calls == 1 and reader.cached(3) is None
    await reader.get_many([1, 3])  # one unknown: one hop for the call
    assert NoThreads.calls == 2
