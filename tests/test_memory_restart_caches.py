"""What a restart would otherwise derive again is kept, sealed, and never served stale.

Events' raw-text embeddings: append-only segments, each new vector written once; a
damaged or foreign segment is skipped (WARNING) and replaced by the next save; too
many segments are merged into one. Retrieval's derived texts: only for the code and
config that made them; a damaged file is skipped (WARNING)."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

from solace.memory.event_vectors import BLOCK_ROWS, MERGE_ABOVE, EventVectorFiles, EventVectorStore
from solace.memory.retrieval_forms import NAME, Forms, fingerprint, read_forms, write_forms
from substrate import KeyRing

DIM = 8


def vecs(ids: range, seed: int = 0) -> dict[int, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {i: rng.standard_normal(DIM).astype(np.float32) for i in ids}


def load(path: Path, ring: KeyRing, embedder: str = "minilm"
         ) -> tuple[EventVectorFiles, dict[int, np.ndarray]]:
    return EventVectorFiles.load(path, ring=ring, embedder=embedder, dim=DIM)


def same(a: dict[int, np.ndarray], b: dict[int, np.ndarray]) -> bool:
    return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


def test_saved_vectors_come_back_exactly_and_each_is_written_once(tmp_path: Path) -> None:
    ring = KeyRing.generate()
    files, got = load(tmp_path / "ev", ring)
    assert got == {} and not (tmp_path / "ev").exists()
    live = vecs(range(1, 50))
    assert files.save(live, ring=ring) == 49
    assert files.save(live, ring=ring) == 0  # nothing new: no file touched
    live.update(vecs(range(50, 60), seed=1))
    assert files.save(live, ring=ring) == 10  # only the new ones
    assert len(list((tmp_path / "ev").iterdir())) == 2
    files2, got = load(tmp_path / "ev", ring)
    assert same(got, live)
    assert files2.save(got, ring=ring) == 0


def test_a_damaged_or_foreign_segment_is_skipped_and_replaced_by_the_next_save(
    tmp_path: Path, caplog: pytest.LogCaptureFixture,
) -> None:
    ring = KeyRing.generate()
    files, _ = load(tmp_path, ring)
    first, second = vecs(range(1, 20)), vecs(range(20, 30), seed=2)
    files.save(first, ring=ring)
    files.save(first | second, ring=ring)
    newest = max(tmp_path.iterdir(), key=lambda p: p.stat().st_mtime_ns)
    blob = bytearray(newest.read_bytes())
    blob[-3] ^= 0xFF
    newest.write_bytes(bytes(blob))
    with caplog.at_level(logging.WARNING, logger="solace.memory.event_vectors"):
        files, got = load(tmp_path, ring)
    assert str(newest) in caplog.text and "embedded again" in caplog.text
    assert same(got, first)  # the intact segment still counts
    got.update(second)  # retrieval embedded them again
    assert files.save(got, ring=ring) == 29  # one merged segment, the damaged one gone
    assert [p for p in tmp_path.iterdir()] == files.segments
    assert same(load(tmp_path, ring)[1], first | second)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="solace.memory.event_vectors"):
        other, got = load(tmp_path, ring, embedder="hashing")
    assert got == {} and "'minilm'" in caplog.text  # vectors of two models never mix
    assert load(tmp_path, KeyRing.generate())[1] == {}  # another key: refused, not read


def test_more_than_merge_above_segments_are_merged_into_one(tmp_path: Path) -> None:
    ring = KeyRing.generate()
    files, _ = load(tmp_path, ring)
    live: dict[int, np.ndarray] = {}
    for n in range(MERGE_ABOVE):
        live.update(vecs(range(n * 10, n * 10 + 10), seed=n))
        files.save(live, ring=ring)
    assert len(files.segments) == MERGE_ABOVE
    live.update(vecs(range(1000, 1005), seed=99))
    assert files.save(live, ring=ring) == len(live)
    assert len(list(tmp_path.iterdir())) == 1
    assert same(load(tmp_path, ring)[1], live)


def test_derived_forms_come_back_only_for_the_code_and_config_that_made_them(
    tmp_path: Path, caplog: pytest.LogCaptureFixture,
) -> None:
    ring = KeyRing.generate()
    forms = Forms({7: ((3, 4, 5), "Caroline: went to a pottery class.", 9)},
                  {3: ("Caroline: I signed up.", 6), 4: ("Melanie: Nice!", 4)})
    stamp = fingerprint("memory config A")
    assert read_forms(tmp_path, agent="Main", ring=ring, fingerprint=stamp) == Forms()
    write_forms(tmp_path, forms, agent="Main", ring=ring, fingerprint=stamp)
    assert read_forms(tmp_path, agent="Main", ring=ring, fingerprint=stamp) == forms
    assert read_forms(tmp_path, agent="Main", ring=ring,
                      fingerprint=fingerprint("memory config B")) == Forms()
    assert stamp != fingerprint("memory config B") and stamp == fingerprint("memory config A")
    with caplog.at_level(logging.WARNING, logger="solace.memory.retrieval_forms"):
        assert read_forms(tmp_path, agent="Mood", ring=ring, fingerprint=stamp) == Forms()
        blob = bytearray((tmp_path / NAME).read_bytes())
        blob[-1] ^= 0x01
        (tmp_path / NAME).write_bytes(bytes(blob))
        assert read_forms(tmp_path, agent="Main", ring=ring, fingerprint=stamp) == Forms()
    assert caplog.text.count("refused") == 2  # another agent's file, then an edited one


def test_the_vector_store_scores_every_event_once_per_query_across_its_blocks() -> None:
    store = EventVectorStore()
    live = vecs(range(0, 3 * BLOCK_ROWS + 5, 3), seed=4)  # sparse ids, several blocks
    for eid, vector in live.items():
        store[eid] = vector
    first = store[0]
    store[10**6] = np.ones(DIM, dtype=np.float32)  # grows the id map past its size
    assert first is not None and np.array_equal(store[0], live[0])  # never moved
    assert len(store) == len(live) + 1 and 1 not in store and list(store)[:2] == [0, 3]
    query = np.random.default_rng(5).standard_normal(DIM).astype(np.float32)
    ids = np.array([0, 1, 3 * BLOCK_ROWS + 3, 10**6, 10**7], dtype=np.int64)
    rows = store.rows_of(ids)
    assert (rows[[1, 4]] == -1).all()
    sims = store.similarities(query)
    assert store.similarities(query) is sims  # asked again for the same vector: remembered
    want = np.stack([live[0], live[3 * BLOCK_ROWS + 3], np.ones(DIM)]) @ query
    assert np.allclose(sims[rows[[0, 2, 3]]], want, atol=1e-5)
    with pytest.raises(ValueError, match="shape"):
        store[7] = np.zeros(DIM + 1, dtype=np.float32)
    with pytest.raises(TypeError, match="never removed"):
        del store[0]
