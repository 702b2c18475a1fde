"""A retriever's build in parts: the same texts, counts and vectors in the same order as
one call, parts running on both threads at once, and a query's small build one call."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from solace.memory import form_parts
from solace.memory.form_parts import EMBED_PART, RECORDS_PART, UNITS_PART, derive_in_parts
from solace.memory.record import MemoryRecord
from solace.memory.testing import SyntheticEvent
from solace.offload import Offloader


class _Words:
    def count_many(self, texts: Sequence[str]) -> list[int]:
        return [len(t.split()) for t in texts]


def _rehydrate(events: Sequence[Any], rung: int) -> str:
    return f"r{rung}: " + " / ".join(e.content for e in events)


def _unit_form(event: Any) -> str:
    return "unit " + event.content


def _embed(texts: list[str]) -> np.ndarray:
    return np.array([[len(t), sum(map(ord, t)) % 97] for t in texts], dtype=np.float32)


def _records(n: int) -> list[tuple[MemoryRecord, list[SyntheticEvent]]]:
    out = []
    for i in range(n):
        ids = (2 * i, 2 * i + 1)
        record = MemoryRecord(record_id=i, agent="Main", rung=3, text="", tokens=0,
                              source_tokens=0, entry_ids=ids)
        out.append((record, [SyntheticEvent(e) for e in ids]))
    return out


class _CountingOffloader(Offloader):
    def __init__(self) -> None:
        super().__init__(2)
        self.calls = 0

    async def run(self, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        return await super().run(fn, *args, **kwargs)


async def _build(offloader: Offloader, records: int, units: int, embedded: int,
                 embed: Any = _embed) -> tuple[list[str], list[str], list[int], Any]:
    events = {e: SyntheticEvent(e) for e in range(2 * records + max(units, embedded))}
    return await derive_in_parts(
        offloader, [record for record, _ in _records(records)], list(range(units)),
        list(range(embedded)), events, rehydrate=_rehydrate, rung=3,
        unit_form=_unit_form, tokenizer=_Words(), embed=embed)


async def test_a_build_in_parts_gives_what_one_call_gives_in_the_same_order() -> None:
    sizes = (2 * RECORDS_PART + 5, UNITS_PART + 7, 3 * EMBED_PART + 1)
    texts, unit_texts, counts, vectors = await _build(Offloader(2), *sizes)
    records = _records(sizes[0])
    assert texts == [_rehydrate(events, 3) for _, events in records]
    assert unit_texts == [f"unit {SyntheticEvent(e).content}" for e in range(sizes[1])]
    assert counts == [len(t.split()) for t in texts + unit_texts]
    raw = [_rehydrate([SyntheticEvent(e)], 0) for e in range(sizes[2])]
    np.testing.assert_array_equal(vectors, _embed(raw))


async def test_a_small_build_is_one_thread_call() -> None:
    offloader = _CountingOffloader()
    texts, unit_texts, counts, vectors = await _build(offloader, 3, 4, 5)
    assert offloader.calls == 1
    assert (len(texts), len(unit_texts), len(counts), vectors.shape) == (3, 4, 7, (5, 2))


async def test_a_large_build_runs_its_parts_on_both_threads_at_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(form_parts, "EMBED_PART", 4)
    both_running = threading.Barrier(2, timeout=5)  # passes only if two parts run at once

    def embed(texts: list[str]) -> np.ndarray:
        both_running.wait()
        return _embed(texts)

    offloader = _CountingOffloader()
    *_, vectors = await _build(offloader, 0, 0, 8, embed)
    assert offloader.calls == 2
    assert vectors.shape == (8, 2)


async def test_nothing_is_embedded_without_an_embedder() -> None:
    *_, vectors = await _build(Offloader(2), 1, 1, 3 * EMBED_PART, embed=None)
    assert vectors is None
