"""The event vector store's int8 rows are scored in place, exactly as their widened codes
times their scales: the shared pool of best rows and each agent's dense unit candidates
drawn from it (solace.memory.row_blocks, EventVectorStore.top_rows, UnitCandidates.scored)."""

from __future__ import annotations

import numpy as np
import pytest

from solace.memory import event_vectors, row_blocks, unit_candidates
from solace.memory.event_vectors import EventVectorStore
from solace.memory.row_blocks import CHUNK_ROWS, RowBlock, quantize, row_scores, top_rows
from solace.memory.unit_candidates import UnitCandidates, top_ids

DIM = 16


def unit_rows(n: int, seed: int) -> np.ndarray:
    rows = np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def filled_blocks(rows: np.ndarray, capacity: int) -> list[RowBlock]:
    blocks = []
    for start in range(0, len(rows), capacity):
        block = RowBlock(capacity, DIM)
        block.put(0, quantize(rows[start:start + capacity]))
        blocks.append(block)
    return blocks


def kept_scores(rows: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Each row's score as the store computes it, from its codes and scale."""
    return quantize(rows).scores(query)


def brute_top(rows: np.ndarray, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    scores = kept_scores(rows, query)
    best = np.lexsort((np.arange(len(rows)), -scores))[:k]
    return best, scores[best]


@pytest.mark.parametrize("blocks_to_fill", [1, 3, 9])  # 9 >= PARALLEL_BLOCKS: two threads
def test_top_rows_equals_scoring_every_row_with_ties_by_row(blocks_to_fill: int) -> None:
    capacity = CHUNK_ROWS
    rows = unit_rows(capacity * blocks_to_fill - 5, seed=blocks_to_fill)  # last block partial
    rows[7] = rows[40 % len(rows)] = rows[3]  # duplicates tie exactly
    blocks = filled_blocks(rows, capacity)
    if blocks_to_fill >= row_blocks.PARALLEL_BLOCKS:
        assert len(blocks) >= row_blocks.PARALLEL_BLOCKS
    for seed, k in [(1, 1), (2, 10), (3, 50), (4, 10_000)]:
        query = rows[3] if seed == 1 else unit_rows(1, seed=100 + seed)[0]
        got_rows, got_scores = top_rows(blocks, len(rows), query, k)
        want_rows, want_scores = brute_top(rows, query, k)
        assert got_rows.tolist() == want_rows.tolist()
        assert np.allclose(got_scores, want_scores, atol=1e-6)
        left_out = np.setdiff1d(np.arange(len(rows)), got_rows)
        scores = kept_scores(rows, query)
        assert (scores[left_out] <= got_scores[-1] + 1e-6).all()


# inside a block, on a block's edge, past it, far past it
@pytest.mark.parametrize("first", [0, 5, CHUNK_ROWS, CHUNK_ROWS + 70, 2000])
def test_top_rows_from_a_first_row_equals_scoring_just_those_rows(first: int) -> None:
    rows = unit_rows(CHUNK_ROWS * 5 - 3, seed=first)
    rows[first % len(rows)] = rows[-1]  # a tie across the boundary
    blocks = filled_blocks(rows, CHUNK_ROWS)
    query = unit_rows(1, seed=first + 1)[0]
    got_rows, got_scores = top_rows(blocks, len(rows), query, 12, first=first)
    want_rows, want_scores = brute_top(rows[first:], query, 12)
    assert got_rows.tolist() == (want_rows + first).tolist()
    assert np.allclose(got_scores, want_scores, atol=1e-6)


def test_rows_added_after_a_pool_are_searched_alone_and_merged_into_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = EventVectorStore()
    rows = unit_rows(300, seed=21)
    store.add_new(np.arange(1, 201), rows[:200])
    query = rows[250]
    store.top_rows(query, 16)
    searched: list[int] = []
    original = row_blocks.top_rows

    def noting(blocks, size, vector, k, first=0):  # type: ignore[no-untyped-def]
        searched.append(first)
        return original(blocks, size, vector, k, first=first)

    monkeypatch.setattr(event_vectors, "top_rows", noting)
    store.add_new(np.arange(201, 301), rows[200:])  # an observe lands mid-recall
    merged = store.top_rows(query, 16)
    assert searched == [200]  # only the new rows were searched
    fresh = EventVectorStore()
    fresh.add_new(np.arange(1, 301), rows)
    want = fresh.top_rows(query, 16)
    assert merged[0].tolist() == want[0].tolist()
    assert np.allclose(merged[1], want[1], atol=1e-6)
    assert store.entries_at(merged[0])[0] == 251


def test_rows_past_size_are_never_returned_even_when_written() -> None:
    rows = unit_rows(20, seed=5)
    blocks = filled_blocks(rows, CHUNK_ROWS)
    query = rows[15]  # the best row is outside the first 10
    got, _ = top_rows(blocks, 10, query, 5)
    assert got.max() < 10 and got.tolist() == brute_top(rows[:10], query, 5)[0].tolist()
    assert top_rows(blocks, 0, query, 5)[0].size == 0


def test_the_store_remembers_its_pool_per_query_and_size_and_maps_rows_to_entries() -> None:
    store = EventVectorStore()
    rows = unit_rows(50, seed=8)
    ids = np.arange(1000, 1050) * 3
    store.add_new(ids, rows)
    query = rows[9]
    top, scores = store.top_rows(query, 5)
    assert store.entries_at(top)[0] == ids[9]
    assert store.top_rows(query, 5)[0] is top  # remembered for every agent of a recall
    store[7] = rows[9]  # a new row: the pool is found again, over it too
    top2, _ = store.top_rows(query, 5)
    assert top2 is not top and set(store.entries_at(top2)[:2].tolist()) == {ids[9], 7}


@pytest.mark.parametrize("scan_rows", [0, 10_000])  # the pool; every row scored (small)
@pytest.mark.parametrize("share", [1.0, 0.5, 0.02])
def test_an_agents_dense_units_pick_the_same_top_as_scoring_all_its_units(
    share: float, scan_rows: int, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Whether the shared pool proves the agent's top (most of the rows are its units) or
    not (few are: every unit is scored instead), or the store is small enough to score
    every row, top_ids picks the same units."""
    monkeypatch.setattr(unit_candidates, "SCAN_ROWS", scan_rows)
    monkeypatch.setattr(unit_candidates, "DENSE_POOL", 32)
    rng = np.random.default_rng(11)
    store = EventVectorStore()
    n = 600
    rows = unit_rows(n, seed=12)
    rows[100:110] = rows[5]  # a run of duplicate turns: ties broken by entry id
    entry_ids = rng.permutation(10 * n)[:n]
    store.add_new(entry_ids, rows)
    mine = np.sort(rng.choice(entry_ids, size=max(1, int(share * n)), replace=False))
    all_rows = store.rows_of(mine)
    members = np.zeros(len(store), dtype=bool)
    members[all_rows] = True
    retriever = UnitCandidates(store, candidates=8)
    for q in range(6):
        query = rows[5] if q == 0 else unit_rows(1, seed=200 + q)[0]
        ids, sims = retriever.scored(query, mine, all_rows, members)
        full = store.similarities(query)[all_rows]
        assert top_ids(ids, sims, 8) == top_ids(mine, full, 8)
    if share == 1.0 or scan_rows:
        assert retriever.scans == 0  # the pool proved every one, or was not asked
    if share == 0.02 and not scan_rows:
        assert retriever.scans > 0  # 12 units of 600 rows: the pool holds too few


def test_scores_of_named_events_agree_whether_or_not_every_row_was_scored() -> None:
    store = EventVectorStore()
    held, scores = store.scores_of(np.array([1, 2]), unit_rows(1, seed=20)[0])  # empty store
    assert held.tolist() == [False, False] and scores.size == 0
    rows = unit_rows(40, seed=21)
    store.add_new(np.arange(40) * 2, rows)
    query = unit_rows(1, seed=22)[0]
    ids = np.array([6, 7, 0, 78])  # 7 has no vector
    held, widened = store.scores_of(ids, query)  # nothing remembered: rows widened
    assert held.tolist() == [True, False, True, True]
    store.similarities(query)  # now remembered for this query
    held2, remembered = store.scores_of(ids, query)
    assert held2.tolist() == held.tolist()
    assert np.allclose(widened, remembered, atol=1e-6)
    assert np.allclose(remembered, kept_scores(rows[[3, 0, 39]], query), atol=1e-6)


def test_a_rewritten_row_drops_the_remembered_pool() -> None:
    store = EventVectorStore()
    rows = unit_rows(40, seed=5)
    store.add_new(np.arange(1, 41), rows)
    query = rows[0]
    assert store.entries_at(store.top_rows(query, 3)[0])[0] == 1
    store[1] = rows[39]  # event 1's vector replaced
    assert store.entries_at(store.top_rows(query, 3)[0])[0] != 1


@pytest.mark.parametrize("blocks_to_fill", [1, 2 * row_blocks.PARALLEL_BLOCKS + 1])
def test_row_scores_match_scoring_the_widened_rows_one_or_two_threads(blocks_to_fill: int) -> None:
    rows = unit_rows(CHUNK_ROWS * blocks_to_fill - 7, seed=30)
    blocks = filled_blocks(rows, CHUNK_ROWS)
    query = unit_rows(1, seed=31)[0]
    want = quantize(rows).widened() @ query
    assert np.allclose(row_scores(blocks, len(rows), query), want, atol=1e-6)
    assert np.allclose(row_scores(blocks, len(rows), query, first=CHUNK_ROWS + 3),
                       want[CHUNK_ROWS + 3:], atol=1e-6)


def test_a_block_whose_capacity_does_not_divide_into_chunks_is_refused() -> None:
    with pytest.raises(ValueError, match="multiple of CHUNK_ROWS"):
        RowBlock(CHUNK_ROWS + 1, DIM)
