"""The long-term tier: exact then HNSW search, tags, tombstones, snapshots."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import faiss
import msgpack
import numpy as np
import pytest

from solace.memory.longterm import IndexParams, LongTermTier
from solace.memory.record import MemoryRecord
from solace.memory.snapshot import (
    META_NAME,
    PURPOSE,
    Snapshot,
    SnapshotError,
    meta_role,
    read_snapshot,
    write_snapshot,
)
from solace.sealed import write_sealed
from substrate import KeyRing

DIM = 32
RING = KeyRing.single(bytes(range(32)))


@pytest.fixture(autouse=True, scope="module")
def one_faiss_thread() -> Iterator[None]:
    """OpenMP threads spin against each other on a busy 2-core machine; tests use one."""
    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    yield
    faiss.omp_set_num_threads(before)


def clustered(n: int, seed: int = 0) -> np.ndarray:
    """Unit vectors around 20 centres: shaped like text embeddings, not like noise."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(20, DIM))
    x = centres[rng.integers(0, 20, n)] + 0.3 * rng.normal(size=(n, DIM))
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def records(vectors: np.ndarray, start: int = 1) -> list[MemoryRecord]:
    return [
        MemoryRecord(record_id=start + i, agent="Main", rung=2 + i % 2, text=f"summary {i}",
                     tokens=3, source_tokens=30, entry_ids=(start + i,), event_ts=float(i),
                     tags=("work",) if i % 4 == 0 else ("Family", "trip") if i % 4 == 1 else (),
                     embedding=v)
        for i, v in enumerate(vectors)
    ]


def exact(vectors: np.ndarray, query: np.ndarray, k: int) -> list[int]:
    return (np.argsort(-(vectors @ query), kind="stable")[:k] + 1).tolist()


def test_flat_search_is_exact() -> None:
    x = clustered(300)
    tier = LongTermTier(dim=DIM, params=IndexParams(threshold=1000))
    tier.add(records(x))
    assert tier.index_kind == "flat"
    for q in x[:20]:
        hits = tier.search(q, 10)
        assert [r.record_id for r, _ in hits] == exact(x, q, 10)
        assert hits[0][1] == pytest.approx(1.0, abs=1e-5)


@pytest.mark.parametrize("kind", ["ivf", "hnsw"])
def test_past_the_threshold_the_index_becomes_approximate_with_high_recall(kind: str) -> None:
    x = clustered(2000, seed=1)
    tier = LongTermTier(dim=DIM, params=IndexParams(kind=kind, threshold=500,  # type: ignore[arg-type]
                                                    hnsw_m=16, hnsw_ef_search=64))
    tier.add(records(x[:400]))
    assert tier.index_kind == "flat"
    tier.add(records(x[400:], start=401))
    assert tier.index_kind == kind and len(tier) == 2000
    queries = clustered(50, seed=2)
    recall = np.mean([len({r.record_id for r, _ in tier.search(q, 10)}
                          & set(exact(x, q, 10))) / 10 for q in queries])
    assert recall >= 0.9


def test_the_ivf_index_is_retrained_as_the_tier_grows() -> None:
    tier = LongTermTier(dim=DIM, params=IndexParams(threshold=100))
    x = clustered(2500, seed=5)
    tier.add(records(x[:200]))
    first = tier.index
    tier.add(records(x[200:700], start=201))  # less than four times: added in place
    assert tier.index is first
    tier.add(records(x[700:], start=701))  # past four times: rebuilt, more lists
    assert tier.index is not first and tier.index.ntotal == 2500
    assert faiss.downcast_index(tier.index.index).nlist > faiss.downcast_index(first.index).nlist
    assert [r.record_id for r, _ in tier.search(x[1000], 1)] == [1001]


@pytest.mark.parametrize(("kind", "threshold"), [("ivf", 10_000), ("ivf", 50), ("hnsw", 50)])
def test_removed_records_are_never_found_and_may_come_back(kind: str, threshold: int) -> None:
    x = clustered(200, seed=3)
    tier = LongTermTier(dim=DIM, params=IndexParams(kind=kind, threshold=threshold))  # type: ignore[arg-type]
    tier.add(records(x))
    gone = tier.remove(7)
    assert tier.get(7) is None and 7 not in tier.by_tags(["work", "family"])
    assert all(r.record_id != 7 for r, _ in tier.search(x[6], 20))
    tier.add([gone])
    hits = tier.search(x[6], 5)
    assert [r.record_id for r, _ in hits].count(7) == 1 and hits[0][0].record_id == 7
    for rid in range(20, 60):  # enough tombstones to trigger a compaction on the next add
        tier.remove(rid)
    tier.add(records(clustered(1, seed=9), start=5000))
    assert tier.index.ntotal == len(tier)
    assert all(r.record_id not in range(20, 60) for r, _ in tier.search(x[30], 50))


def test_tags_newest_replace_and_errors() -> None:
    x = clustered(12)
    tier = LongTermTier(dim=DIM)
    tier.add(records(x))
    assert tier.by_tags(["WORK"]) == {1, 5, 9}
    assert tier.by_tags(["family", "trip"], match_all=True) == {2, 6, 10}
    assert tier.by_tags([]) == set()
    assert [r.record_id for r in tier.newest(3)] == [12, 11, 10]
    old = tier.get(1)
    assert old is not None
    faded = MemoryRecord(record_id=1, agent="Main", rung=3, text="tags: work", tokens=2,
                         source_tokens=30, entry_ids=(1,), tags=("holiday",),
                         embedding=old.embedding)
    tier.replace(faded)
    assert tier.get(1) is faded and tier.by_tags(["work"]) == {5, 9}
    assert tier.by_tags(["holiday"]) == {1}
    with pytest.raises(ValueError, match="already in the long-term tier"):
        tier.add([faded])
    with pytest.raises(ValueError, match="long-term holds rungs 1-3"):
        tier.add(records(x[:1], start=99)[:1] and [MemoryRecord(
            record_id=99, agent="Main", rung=0, text="", tokens=0, source_tokens=0,
            entry_ids=(99,), embedding=x[0])])
    with pytest.raises(KeyError, match="record 42 is not in the long-term tier"):
        tier.remove(42)
    with pytest.raises(ValueError, match=r"query vector must have shape \(32,\)"):
        tier.search(np.zeros(3, dtype=np.float32), 1)


@pytest.mark.parametrize(("kind", "threshold"), [("ivf", 10_000), ("ivf", 50), ("hnsw", 50)])
def test_a_snapshot_round_trip_restores_records_vectors_and_index(
    tmp_path: Path, kind: str, threshold: int
) -> None:
    x = clustered(300, seed=4)
    params = IndexParams(kind=kind, threshold=threshold)  # type: ignore[arg-type]
    tier = LongTermTier(dim=DIM, params=params)
    tier.add(records(x))
    tier.remove(3)  # a tombstone travels too
    rids, labels = tier.label_map()
    snap = Snapshot(agent="Main", covered_id=77, embedder="hashing-32", dim=DIM, working=[],
                    longterm=list(tier.records()), index=tier.index, record_ids=rids,
                    labels=labels, next_label=tier.next_label, next_extra_id=1 << 40)
    write_snapshot(tmp_path, snap, ring=RING)
    back = read_snapshot(tmp_path, agent="Main", ring=RING)
    assert back is not None and back.covered_id == 77
    for r in back.longterm:
        r.embedding = None  # the metadata does not carry vectors: the index does
    restored = LongTermTier.restore(dim=DIM, params=params, records=back.longterm,
                                    index=back.index, record_ids=back.record_ids,
                                    labels=back.labels, next_label=back.next_label)
    assert restored.index_kind == tier.index_kind and len(restored) == len(tier)
    for r in tier.records():
        got = restored.get(r.record_id)
        assert got is not None and got.text == r.text and got.tags == r.tags
        assert got.embedding is not None and r.embedding is not None
        assert np.array_equal(got.embedding, r.embedding)
    for q in x[:10]:
        assert [h.record_id for h, _ in restored.search(q, 5)] == \
            [h.record_id for h, _ in tier.search(q, 5)]


def test_a_damaged_snapshot_is_reported_not_used(tmp_path: Path) -> None:
    assert read_snapshot(tmp_path, agent="Main", ring=RING) is None
    meta = tmp_path / META_NAME

    def put(plain: bytes) -> None:  # authentic bytes that are still not a snapshot
        write_sealed(meta, plain, ring=RING, purpose=PURPOSE, role=meta_role("Main"))

    put(b"\x93\x01")
    with pytest.raises(SnapshotError, match="is not readable msgpack"):
        read_snapshot(tmp_path, agent="Main", ring=RING)
    put(msgpack.packb({"version": 99}))
    with pytest.raises(SnapshotError, match="format version 99"):
        read_snapshot(tmp_path, agent="Main", ring=RING)
    put(msgpack.packb({"version": 1, "index_file": "longterm-x.faiss"}))
    with pytest.raises(SnapshotError, match="longterm-x.faiss, which is missing"):
        read_snapshot(tmp_path, agent="Main", ring=RING)
