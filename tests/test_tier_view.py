"""Retrieval follows the tiers by delta: a view followed by the records the tiers changed
equals a view taken of every record, and the BM25 indexes synced by delta hold exactly
what a full sync gives, whatever the order of concurrent queries."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from solace.memory.candidates import Retriever
from solace.memory.changes import ChangeLog
from solace.memory.longterm import LongTermTier
from solace.memory.record import MemoryRecord
from solace.memory.testing import retriever_over
from solace.memory.tier_view import (
    TierView,
    _with,
    changed_between,
    follow_view,
    take_view,
    versions_of,
)
from solace.memory.working import WorkingTier

DIM = 8
WORDS = "kayak pottery lake violin sunrise museum adoption race Sweden camping".split()


@dataclass
class Memory:
    agent: str
    working: WorkingTier
    longterm: LongTermTier


def _vector(rng: random.Random) -> np.ndarray:
    v = np.array([rng.random() - 0.5 for _ in range(DIM)], dtype=np.float32)
    return v / np.linalg.norm(v)


def _record(rng: random.Random, rid: int, rung: int, entries: Sequence[int]) -> MemoryRecord:
    text = " ".join(rng.choice(WORDS) for _ in range(4))
    return MemoryRecord(record_id=rid, agent="Main", rung=rung, text=text, tokens=4,
                        source_tokens=12, entry_ids=tuple(sorted(set(entries))),
                        embedding=_vector(rng), event_ts=float(rng.randrange(10**6)),
                        emotional_weight=rng.random())


def _entries(rng: random.Random) -> list[int]:
    first = rng.randrange(1, 40)  # few events: records often share one
    return [first] if rng.random() < 0.4 else [first, first + rng.randrange(1, 3),
                                               first + rng.randrange(3, 6)]


def _step(rng: random.Random, memory: Memory, next_id: list[int]) -> None:
    """One random change of either tier, as the fade, ingest and cues make them."""
    working, longterm = memory.working, memory.longterm
    op = rng.random()
    w_ids = [r.record_id for r in working.records()]
    l_ids = [r.record_id for r in longterm.records()]
    if op < 0.3 or not (w_ids or l_ids):
        next_id[0] += 1
        working.add(_record(rng, next_id[0], rng.randrange(0, 3), _entries(rng)))
    elif op < 0.45 and w_ids:
        rid = rng.choice(w_ids)
        working.replace(_record(rng, rid, rng.randrange(0, 3), working.get(rid).entry_ids))  # type: ignore[union-attr]
    elif op < 0.6 and w_ids:  # a demotion to long-term: briefly in both tiers
        rid = rng.choice(w_ids)
        moved = working.get(rid)
        assert moved is not None
        longterm.add([_record(rng, rid, rng.choice((2, 3)), moved.entry_ids)])
        working.remove(rid)
    elif op < 0.7 and w_ids:
        working.remove(rng.choice(w_ids))
    elif op < 0.8 and l_ids:
        rid = rng.choice(l_ids)
        longterm.replace(_record(rng, rid, 3, longterm.get(rid).entry_ids))  # type: ignore[union-attr]
    elif op < 0.9 and l_ids:
        longterm.remove(rng.choice(l_ids))
    else:
        next_id[0] += 1
        longterm.add([_record(rng, next_id[0], 3, _entries(rng)),
                      _record(rng, next_id[0] + 1000, 1, _entries(rng))])


def _memory() -> Memory:
    return Memory("Main", WorkingTier(10**6, dim=DIM), LongTermTier(dim=DIM))


def _same(a: TierView, b: TierView) -> None:
    assert {k: id(v) for k, v in a.records.items()} == {k: id(v) for k, v in b.records.items()}
    assert a.working == b.working
    assert np.array_equal(a.working_matrix, b.working_matrix)
    for column in ("record_id", "event_ts", "emotion"):
        assert getattr(a.working_columns, column).tolist() == \
            getattr(b.working_columns, column).tolist()
    for column, field in (("record_id", "record_id"), ("event_ts", "event_ts"),
                          ("emotion", "emotional_weight")):
        assert getattr(a.working_columns, column).tolist() == \
            [getattr(r, field) for r in a.working]
    assert a.longterm == b.longterm
    assert a.longterm_ids.tolist() == b.longterm_ids.tolist()
    assert {e: r.record_id for e, r in a.owners.items()} == \
        {e: r.record_id for e, r in b.owners.items()}
    assert a.shared == b.shared
    assert a.unit_ids.tolist() == b.unit_ids.tolist() == sorted(a.owners)


@pytest.mark.parametrize("seed", range(6))
def test_a_followed_view_equals_a_view_taken_of_every_record(seed: int) -> None:
    rng = random.Random(seed)
    memory, next_id = _memory(), [0]
    view = take_view(memory.working, memory.longterm)
    key = versions_of(memory.working, memory.longterm)
    for _ in range(150):
        for _ in range(rng.randrange(1, 4)):
            _step(rng, memory, next_id)
        now = versions_of(memory.working, memory.longterm)
        changed = changed_between(memory.working, memory.longterm, key, now)
        assert changed is not None
        view, fresh = follow_view(view, memory.working, memory.longterm, changed)
        key = now
        _same(view, take_view(memory.working, memory.longterm))
        assert {r.record_id for r in fresh} <= changed


def test_a_change_log_that_no_longer_reaches_back_says_so() -> None:
    log = ChangeLog(keep=4)
    for version in range(1, 12):
        log.note(version, (version * 10,))
    assert log.since(10) == {110}
    assert log.since(7) == {80, 90, 100, 110}
    assert log.since(1) is None  # forgotten: the reader rebuilds from every record
    with pytest.raises(ValueError, match="keep"):
        ChangeLog(keep=0)


def _retriever(memory: Memory) -> Retriever:
    return retriever_over(memory)


def _indexed(retriever: Retriever) -> tuple[dict[int, str], dict[int, str]]:
    records, units = retriever.indexes.records, retriever.indexes.units
    return ({d: records.text(d) for d in records.ids()}, {d: units.text(d) for d in units.ids()})


@pytest.mark.parametrize("seed", range(4))
async def test_indexes_synced_by_delta_hold_what_a_full_sync_gives(seed: int) -> None:
    rng = random.Random(100 + seed)
    memory, next_id = _memory(), [0]
    retriever = _retriever(memory)
    await retriever.refresh()
    for _ in range(80):
        for _ in range(rng.randrange(1, 4)):
            _step(rng, memory, next_id)
        view = await retriever.refresh()
        fresh = _retriever(memory)
        _same(view, await fresh.refresh())
        assert _indexed(retriever) == _indexed(fresh)
        assert view.forms == (await fresh.refresh()).forms


async def test_a_query_holding_an_older_view_gets_indexes_of_its_own_view() -> None:
    """Two queries overlap: the later one syncs the indexes first, then the earlier one
    syncs them back to its own view before it scores (no id its view lacks)."""
    rng = random.Random(7)
    memory, next_id = _memory(), [0]
    for _ in range(30):
        _step(rng, memory, next_id)
    retriever = _retriever(memory)
    old_key = versions_of(memory.working, memory.longterm)
    old = await retriever.refresh()
    for _ in range(20):
        _step(rng, memory, next_id)
    await retriever.refresh()
    retriever.indexes.sync(old_key, old, memory.working, memory.longterm)
    records, units = _indexed(retriever)
    assert set(records) == set(old.records)
    assert set(units) == set(old.owners)


async def test_indexes_kept_at_close_and_seeded_hold_what_a_full_sync_gives(
    tmp_path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Kept through the forms file, then the tiers change: the seeded retriever's first
    query syncs the kept indexes to the tiers, analysing only the changed texts."""
    from solace.memory import bm25
    from solace.memory.retrieval_forms import (
        fingerprint,
        read_forms,
        read_unit_forms,
        write_forms,
        write_unit_forms,
    )
    from substrate import KeyRing

    rng = random.Random(11)
    memory, next_id = _memory(), [0]
    for _ in range(120):
        _step(rng, memory, next_id)
    first = _retriever(memory)
    await first.refresh()
    ring, stamp = KeyRing.generate(), fingerprint("config")
    write_unit_forms(tmp_path, first.unit_forms(), ring=ring, fingerprint=stamp)
    write_forms(tmp_path, first.forms(), agent="Main", ring=ring, fingerprint=stamp)
    for _ in range(5):
        _step(rng, memory, next_id)
    analysed: list[str] = []
    real_terms = bm25.terms
    monkeypatch.setattr(bm25, "terms", lambda text: analysed.append(text) or real_terms(text))
    seeded = _retriever(memory)
    seeded.seed(read_forms(tmp_path, agent="Main", ring=ring, fingerprint=stamp,
                           units=read_unit_forms(tmp_path, ring=ring, fingerprint=stamp)))
    view = await seeded.refresh()
    from_kept = len(analysed)
    fresh = _retriever(memory)
    _same(view, await fresh.refresh())
    assert _indexed(seeded) == _indexed(fresh)
    for query in ("kayak lake", "Sweden race", "violin"):
        assert seeded.indexes.records.scores(query) == pytest.approx(
            fresh.indexes.records.scores(query))
        assert seeded.indexes.units.scores(query) == pytest.approx(
            fresh.indexes.units.scores(query))
    assert from_kept < (len(analysed) - from_kept) / 2  # a full sync analyses every text


@given(ids=st.sets(st.integers(0, 60)), added=st.lists(st.integers(0, 60)),
       removed=st.lists(st.integers(0, 60)))
def test_a_sorted_id_array_changed_by_binary_search_equals_the_set_sorted_again(
        ids: set[int], added: list[int], removed: list[int]) -> None:
    held = np.array(sorted(ids), dtype=np.int64)
    got = _with(held, added, removed)
    assert got.tolist() == sorted((ids - set(removed)) | set(added))
    assert held.tolist() == sorted(ids)  # the array it came from is untouched
