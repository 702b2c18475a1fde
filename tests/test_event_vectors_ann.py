"""Past ANN_ROWS rows the event vector store searches an IVF-PQ index built in the
background: its scores stay exact, it finds nearly every exact top row, rows added
after the build are found, and until it is ready every row is scanned. The index is
kept with the vectors' files: a restart whose rows come back in order takes it and
finds what it found; one over other rows, or of another shape, builds it again."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from solace.memory import event_vectors, row_ann
from solace.memory.event_vector_files import INDEX_FILE, EventVectorFiles
from solace.memory.event_vectors import EventVectorStore
from substrate import KeyRing

DIM = 64


@pytest.fixture
def small_ann(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(event_vectors, "ANN_ROWS", 3000)
    monkeypatch.setattr(row_ann, "ANN_LISTS", 16)
    monkeypatch.setattr(row_ann, "ANN_PROBE", 8)
    monkeypatch.setattr(row_ann, "ANN_CODE_BYTES", 8)
    monkeypatch.setattr(row_ann, "ANN_TRAIN", 3000)
    monkeypatch.setattr(row_ann, "ANN_SHORTLIST", 1500)


def unit(m: np.ndarray) -> np.ndarray:
    return (m / np.linalg.norm(m, axis=-1, keepdims=True)).astype(np.float32)


def clustered(rng: np.random.Generator, n: int) -> np.ndarray:
    centres = unit(rng.standard_normal((40, DIM)))
    return unit(centres[rng.integers(0, 40, n)] + 0.05 * rng.standard_normal((n, DIM)))


def built(rng: np.random.Generator, n: int = 5000) -> EventVectorStore:
    store = EventVectorStore()
    store.add_new(np.arange(1, n + 1), clustered(rng, n))
    store.top_rows(unit(rng.standard_normal(DIM)), 10)  # starts the build
    deadline = time.monotonic() + 60
    while not store.approximate and time.monotonic() < deadline:
        time.sleep(0.05)
    assert store.approximate
    return store


def test_below_ann_rows_the_store_stays_exact(small_ann: None) -> None:
    rng = np.random.default_rng(1)
    store = EventVectorStore()
    store.add_new(np.arange(1, 2001), clustered(rng, 2000))
    q = unit(rng.standard_normal(DIM))
    rows, scores = store.top_rows(q, 20)
    exact = store.similarities(q)
    assert not store.approximate
    assert set(rows.tolist()) == set(np.argsort(-exact)[:20].tolist())


def test_the_index_finds_nearly_every_exact_top_row_with_exact_scores(small_ann: None) -> None:
    rng = np.random.default_rng(2)
    store = built(rng)
    overlap = []
    for _ in range(20):
        q = unit(clustered(rng, 1)[0])
        rows, scores = store.top_rows(q, 50)
        exact = store.similarities(q)
        np.testing.assert_allclose(scores, exact[rows], rtol=0, atol=1e-5)
        assert list(scores) == sorted(scores, reverse=True)
        overlap.append(len(set(rows.tolist()) & set(np.argsort(-exact)[:50].tolist())) / 50)
    assert np.mean(overlap) >= 0.9


def test_rows_added_after_the_build_are_searched(small_ann: None) -> None:
    rng = np.random.default_rng(3)
    store = built(rng)
    q = unit(rng.standard_normal(DIM))
    near = unit(q + 0.01 * rng.standard_normal((5, DIM)))
    store.add_new(np.arange(10_001, 10_006), near)
    rows, _ = store.top_rows(q, 5)
    assert set(store.entries_at(rows).tolist()) == set(range(10_001, 10_006))


def test_a_search_among_some_rows_returns_only_them_and_nearly_their_exact_top(
    small_ann: None,
) -> None:
    rng = np.random.default_rng(4)
    store = built(rng)
    among = np.zeros(len(store), dtype=bool)
    among[rng.choice(len(store), 400, replace=False)] = True  # an agent's few rows
    overlap = []
    for _ in range(20):
        q = unit(clustered(rng, 1)[0])
        rows, scores = store.top_rows_among(q, among, 20)
        assert among[rows].all()
        exact = store.similarities(q)
        np.testing.assert_allclose(scores, exact[rows], rtol=0, atol=1e-5)
        best = np.flatnonzero(among)[np.argsort(-exact[among])[:20]]
        overlap.append(len(set(rows.tolist()) & set(best.tolist())) / 20)
    assert np.mean(overlap) >= 0.9


def test_a_search_among_rows_needs_the_index() -> None:
    store = EventVectorStore()
    store.add_new(np.arange(1, 11), unit(np.random.default_rng(5).standard_normal((10, DIM))))
    with pytest.raises(RuntimeError, match="approximate index"):
        store.top_rows_among(np.ones(DIM, dtype=np.float32), np.ones(10, dtype=bool), 5)


def test_an_agent_with_few_units_asks_the_index_for_its_rows_instead_of_scanning_them(
    small_ann: None,
) -> None:
    from solace.memory.unit_candidates import UnitCandidates, top_ids

    rng = np.random.default_rng(6)
    store = built(rng)
    mine = np.sort(rng.choice(np.arange(1, len(store) + 1), 300, replace=False))
    rows = store.rows_of(mine)
    members = np.zeros(len(store), dtype=bool)
    members[rows] = True
    agent = UnitCandidates(store, candidates=40)  # more than the pool holds of its rows
    found = []
    for _ in range(10):
        q = unit(clustered(rng, 1)[0])
        ids, sims = agent.scored(q, mine, rows, members)
        assert np.isin(ids, mine).all()
        exact = top_ids(mine, store.similarities(q)[rows], 10)
        found.append(len(set(top_ids(ids, sims, 10)) & set(exact)) / 10)
    assert agent.scans == 0  # never every unit scored
    assert np.mean(found) >= 0.9


def saved_and_loaded(tmp_path: Path, store: EventVectorStore, ring: KeyRing
                     ) -> EventVectorStore:
    files, _ = EventVectorFiles.load(tmp_path, ring=ring, embedder="test", dim=DIM)
    files.save(store.frozen(), ring=ring)
    _, loaded = EventVectorFiles.load(tmp_path, ring=ring, embedder="test", dim=DIM)
    return loaded


def test_a_restart_takes_the_kept_index_and_finds_what_the_built_one_found(
    small_ann: None, tmp_path: Path,
) -> None:
    rng = np.random.default_rng(7)
    ring = KeyRing.generate()
    store = built(rng)
    order = rng.permutation(np.arange(20_001, 20_001 + 500))  # rows out of id order
    store.add_new(order, clustered(rng, 500))
    store.top_rows(unit(rng.standard_normal(DIM)), 10)  # the index takes them too
    loaded = saved_and_loaded(tmp_path, store, ring)
    assert loaded.approximate  # no build: taken as kept
    assert loaded.row_order().tolist() == store.row_order().tolist()
    runtime = EventVectorStore()
    runtime.adopt(loaded)  # the runtime's store takes the rows and the index
    assert runtime.approximate
    for _ in range(10):
        q = unit(clustered(rng, 1)[0])
        rows, scores = runtime.top_rows(q, 30)
        want_rows, want_scores = store.top_rows(q, 30)
        assert rows.tolist() == want_rows.tolist()
        np.testing.assert_allclose(scores, want_scores, rtol=0, atol=1e-6)


def test_a_kept_index_over_other_rows_is_dropped_with_a_warning_and_built_again(
    small_ann: None, tmp_path: Path, caplog: pytest.LogCaptureFixture,
) -> None:
    ring = KeyRing.generate()
    saved_and_loaded(tmp_path, built(np.random.default_rng(8)), ring)
    first = sorted(tmp_path.glob("segment-*"))[0]
    first.write_bytes(first.read_bytes()[:-1])  # refused: its rows are missing
    with caplog.at_level("WARNING"):
        _, loaded = EventVectorFiles.load(tmp_path, ring=ring, embedder="test", dim=DIM)
    assert not loaded.approximate
    assert not (tmp_path / INDEX_FILE).exists()
    assert any("approximate index" in r.getMessage() for r in caplog.records)


def test_a_kept_index_of_another_shape_is_not_taken(
    small_ann: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = built(np.random.default_rng(9))
    monkeypatch.setattr(row_ann, "ANN_LISTS", 32)  # the code's constants changed since
    assert not saved_and_loaded(tmp_path, store, KeyRing.generate()).approximate
