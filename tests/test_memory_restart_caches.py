"""What a restart would otherwise derive again is kept, sealed, and never served stale.

Events' raw-text embeddings: append-only segments, each new vector written once; a
damaged or foreign segment is skipped (WARNING) and replaced by the next save; too
many segments are merged into one. They are kept as int8 codes and a scale a row and
scored in float32, each score within half a scale step a value of float32 storage's; a
segment of an earlier format (float32, float16) still loads and is rewritten.
Retrieval's derived texts: only for the code and config that made them; a damaged
file is skipped (WARNING)."""

from __future__ import annotations

import logging
from pathlib import Path

import msgpack
import numpy as np
import pytest

from solace.memory import retrieval_forms
from solace.memory.bm25 import LexicalIndex
from solace.memory.event_vector_files import (
    FORMAT_VERSION,
    MERGE_ABOVE,
    PURPOSE,
    EventVectorFiles,
    segment_role,
)
from solace.memory.event_vectors import BLOCK_ROWS, EventVectorStore
from solace.memory.retrieval_forms import (
    NAME,
    OWN_TEXTS_VERSION,
    UNITS_NAME,
    Forms,
    fingerprint,
    read_forms,
    read_unit_forms,
    role,
    write_forms,
    write_unit_forms,
)
from solace.memory.row_blocks import CHUNK_ROWS
from solace.sealed import read_sealed, write_sealed
from substrate import KeyRing

DIM = 8


def vecs(ids: range, seed: int = 0) -> dict[int, np.ndarray]:
    """float32 vectors the store holds exactly: int8 codes, one of them +-127, times a
    power of two (the store keeps codes and a scale a row)."""
    rng = np.random.default_rng(seed)
    out = {}
    for i in ids:
        codes = rng.integers(-127, 128, DIM)
        codes[rng.integers(DIM)] = 127 * rng.choice([-1, 1])
        out[i] = (codes * 2.0 ** -int(rng.integers(3, 9))).astype(np.float32)
    return out


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
    units = {3: ("Caroline: I signed up.", 6), 4: ("Melanie: Nice!", 4)}
    forms = Forms({7: ((3, 4, 5), "Caroline: went to a pottery class.", 9)}, units)
    stamp = fingerprint("memory config A")
    assert read_forms(tmp_path, agent="Main", ring=ring, fingerprint=stamp) == Forms()
    assert read_unit_forms(tmp_path, ring=ring, fingerprint=stamp) == {}
    write_unit_forms(tmp_path, units, ring=ring, fingerprint=stamp)
    write_forms(tmp_path, forms, agent="Main", ring=ring, fingerprint=stamp)
    shared = read_unit_forms(tmp_path, ring=ring, fingerprint=stamp)
    assert shared == units
    assert read_forms(tmp_path, agent="Main", ring=ring, fingerprint=stamp,
                      units=shared) == forms
    other = fingerprint("memory config B")
    assert read_unit_forms(tmp_path, ring=ring, fingerprint=other) == {}
    assert read_forms(tmp_path, agent="Main", ring=ring, fingerprint=other,
                      units=shared) == Forms()
    assert stamp != other and stamp == fingerprint("memory config A")
    with caplog.at_level(logging.WARNING, logger="solace.memory.retrieval_forms"):
        assert read_forms(tmp_path, agent="Mood", ring=ring, fingerprint=stamp,
                          units=shared) == Forms()
        for name in (NAME, UNITS_NAME):
            blob = bytearray((tmp_path / name).read_bytes())
            blob[-1] ^= 0x01
            (tmp_path / name).write_bytes(bytes(blob))
        assert read_forms(tmp_path, agent="Main", ring=ring, fingerprint=stamp,
                          units=shared) == Forms()
        assert read_unit_forms(tmp_path, ring=ring, fingerprint=stamp) == {}
    # another agent's file, then an edited one, then the edited units' file
    assert caplog.text.count("refused") == 3


def test_a_units_text_is_written_once_for_every_agent_and_the_index_takes_it_back(
    tmp_path: Path,
) -> None:
    ring, stamp = KeyRing.generate(), fingerprint("config")
    units = {3: ("Caroline: I signed up for pottery.", 8), 4: ("Melanie: Nice, pottery!", 6)}
    index = LexicalIndex()
    for eid, (text, _) in units.items():
        index.add(eid, text)
    write_unit_forms(tmp_path, units, ring=ring, fingerprint=stamp)
    for agent in ("Main", "Supervisor"):
        write_forms(tmp_path / agent, Forms(units=units, units_index=index.state()),
                    agent=agent, ring=ring, fingerprint=stamp)
        meta = msgpack.unpackb(read_sealed(tmp_path / agent / NAME, ring=ring,
                                           purpose=retrieval_forms.PURPOSE, role=role(agent)),
                               raw=False)
        assert "unit_texts" not in meta and meta["units_index"]["texts"] is None
    shared = read_unit_forms(tmp_path, ring=ring, fingerprint=stamp)
    back = read_forms(tmp_path / "Main", agent="Main", ring=ring, fingerprint=stamp,
                      units=shared)
    assert back.units == units and back.units_index is not None
    assert dict(zip(back.units_index.ids.tolist(), back.units_index.texts, strict=True)) == \
        {e: t for e, (t, _) in units.items()}
    kept = LexicalIndex.from_state(back.units_index)
    assert kept.scores("pottery") == pytest.approx(index.scores("pottery"))
    # A unit the shared file lacks (a close stopped between the files): derived again.
    assert read_forms(tmp_path / "Main", agent="Main", ring=ring, fingerprint=stamp,
                      units={3: units[3]}) == Forms()
    assert read_forms(tmp_path / "Main", agent="Main", ring=ring, fingerprint=stamp) == Forms()


def test_a_format_3_file_carrying_its_own_unit_texts_is_still_read(tmp_path: Path) -> None:
    ring, stamp = KeyRing.generate(), fingerprint("config")
    units = {3: ("Caroline: I signed up for pottery.", 8), 4: ("Melanie: Nice, pottery!", 6)}
    index = LexicalIndex()
    for eid, (text, _) in units.items():
        index.add(eid, text)
    meta = {
        "version": OWN_TEXTS_VERSION, "fingerprint": stamp,
        "record_ids": np.array([7], dtype=np.int64).tobytes(),
        "record_entries": [np.array([3, 4], dtype=np.int64).tobytes()],
        "record_texts": ["Caroline went to pottery."],
        "record_tokens": np.array([5], dtype=np.int64).tobytes(),
        "unit_ids": np.array([3, 4], dtype=np.int64).tobytes(),
        "unit_texts": [units[3][0], units[4][0]],
        "unit_tokens": np.array([8, 6], dtype=np.int64).tobytes(),
        "records_index": None,
        "units_index": retrieval_forms._pack_index(index.state(), texts=False),
    }
    write_sealed(tmp_path / NAME, msgpack.packb(meta, use_bin_type=True), ring=ring,
                 purpose=retrieval_forms.PURPOSE, role=role("Main"))
    back = read_forms(tmp_path, agent="Main", ring=ring, fingerprint=stamp)  # no shared file
    assert back.records == {7: ((3, 4), "Caroline went to pottery.", 5)}
    assert back.units == units and back.units_index is not None


def test_postings_are_kept_narrow_and_a_file_of_int64_ones_is_still_read() -> None:
    index = LexicalIndex()
    for eid, text in enumerate(["pottery class pottery", "a kayak on the lake", "pottery"]):
        index.add(10 + eid, text)
    packed = retrieval_forms._pack_index(index.state())
    assert packed is not None
    assert (packed["docs_type"], packed["tfs_type"]) == ("<i4", "<u2")
    old = dict(packed, docs=np.frombuffer(packed["docs"], dtype=np.int32).astype(np.int64)
               .tobytes(), tfs=np.frombuffer(packed["tfs"], dtype=np.uint16)
               .astype(np.int64).tobytes())
    del old["docs_type"], old["tfs_type"]
    for kept in (packed, old):
        state = retrieval_forms._unpack_index(kept)
        assert state is not None
        back = LexicalIndex.from_state(state)
        for query in ("pottery", "kayak lake", "class"):
            assert back.scores(query) == pytest.approx(index.scores(query))


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


def unit_rows(n: int, dim: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    rows = rng.standard_normal((n, dim)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_similarities_from_int8_rows_are_within_half_a_scale_step_a_value_of_float32() -> None:
    dim = 384
    rows = unit_rows(2 * BLOCK_ROWS + CHUNK_ROWS // 2 + 3, dim, seed=6)  # partial chunk
    rows[0] = 0.0  # an all-zero row: scale 0, scores 0
    rows[1] *= 1e-30  # a tiny row keeps its direction
    store = EventVectorStore()
    for eid, row in enumerate(rows):
        store[eid] = row
    block = store._blocks[0]
    assert block.codes.dtype == np.int8 and block.scales.dtype == np.float32  # dim + 4 B a row
    step = np.abs(rows).max(axis=1) / 127  # each row's scale
    got = store[5]
    assert got.dtype == np.float32 and np.abs(got - rows[5]).max() <= step[5] / 2 * 1.001
    assert np.array_equal(store[0], np.zeros(dim, dtype=np.float32))
    assert np.abs(store[1] / 1e-30 - rows[1] / 1e-30).max() <= step[1] / 1e-30 / 2 * 1.001
    assert store.get(10**9) is None
    kept = np.stack([store[e] for e in range(len(rows))])  # codes * scale, as float32
    for query in unit_rows(5, dim, seed=7):
        sims = store.similarities(query)
        assert sims.dtype == np.float32 and sims.shape == (len(rows),)
        bound = step / 2 * np.abs(query).sum() + 1e-5  # every value off by <= half a step
        assert (np.abs(sims - rows @ query) <= bound).all()
        assert sims[0] == 0.0
        assert np.allclose(sims, kept @ query, rtol=0, atol=1e-5)  # one way of scoring
        big = query * 1e5
        assert np.allclose(store.similarities(big), (kept @ query) * 1e5, rtol=1e-5, atol=1.0)
    with pytest.raises(ValueError, match="not finite"):
        store[10**6] = np.full(dim, np.nan, dtype=np.float32)
    assert 10**6 not in store


def test_a_frozen_copy_is_read_only_and_keeps_what_it_was_taken_with(tmp_path: Path) -> None:
    ring = KeyRing.generate()
    store = EventVectorStore()
    live = vecs(range(0, 40), seed=8)
    for eid, vector in live.items():
        store[eid] = vector
    frozen = store.frozen()
    store[99] = np.ones(DIM, dtype=np.float32)
    assert 99 not in frozen and len(frozen) == len(live) and same(dict(frozen), live)
    with pytest.raises(TypeError, match="read-only"):
        frozen[100] = np.ones(DIM, dtype=np.float32)
    files, _ = load(tmp_path, ring)
    assert files.save(frozen, ring=ring) == len(live)  # a store's rows go out as kept
    assert same(dict(load(tmp_path, ring)[1]), live)


def write_segment(directory: Path, ring: KeyRing, version: int, ids: list[int],
                  matrix: np.ndarray, name: str = "segment-0000000000000001.sealed") -> Path:
    """A segment as formats 1 and 2 wrote them: the vectors as floats."""
    directory.mkdir(parents=True, exist_ok=True)
    meta = {"version": version, "embedder": "minilm", "dim": DIM,
            "ids": np.array(ids, dtype=np.int64).tobytes(), "vectors": matrix.tobytes()}
    return write_sealed(directory / name, msgpack.packb(meta, use_bin_type=True), ring=ring,
                        purpose=PURPOSE, role=segment_role(name), what="test vectors")


@pytest.mark.parametrize(("version", "dtype"), [(1, np.float32), (2, np.float16)])
def test_an_earlier_formats_segment_still_loads_and_the_next_save_rewrites_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, version: int, dtype: type,
) -> None:
    assert FORMAT_VERSION == 3
    ring = KeyRing.generate()
    rng = np.random.default_rng(9)
    old = {i: rng.standard_normal(DIM).astype(dtype) for i in range(1, 30)}
    path = write_segment(tmp_path, ring, version, list(old), np.stack(list(old.values())))
    with caplog.at_level(logging.WARNING, logger="solace.memory.event_vectors"):
        files, got = load(tmp_path, ring)
    assert caplog.text == ""  # read, not refused
    assert got.keys() == old.keys() and files.stale == [path]
    for eid, vector in old.items():  # each quantized once, none dropped
        scale = np.abs(vector.astype(np.float32)).max() / 127
        assert np.abs(got[eid] - vector).max() <= scale / 2 * 1.001
    assert files.save(got, ring=ring) == len(old)  # rewritten as format 3, in one segment
    assert not path.exists() and len(files.segments) == 1
    again, back = load(tmp_path, ring)
    assert same(dict(back), dict(got)) and again.stale == []
    back[40] = np.ones(DIM, dtype=np.float32)
    assert again.save(back, ring=ring) == 1


def test_a_segment_of_an_unknown_format_is_refused_with_one_warning_and_rewritten(
    tmp_path: Path, caplog: pytest.LogCaptureFixture,
) -> None:
    ring = KeyRing.generate()
    live = vecs(range(1, 10), seed=10)
    path = write_segment(tmp_path, ring, 99, list(live), np.stack(list(live.values())))
    with caplog.at_level(logging.WARNING, logger="solace.memory.event_vectors"):
        files, got = load(tmp_path, ring)
    assert len(caplog.records) == 1 and "format version 99" in caplog.text
    assert len(got) == 0 and files.stale == [path]
    for eid, vector in live.items():  # retrieval embeds them again
        got[eid] = vector
    assert files.save(got, ring=ring) == len(live)
    assert not path.exists() and same(dict(load(tmp_path, ring)[1]), live)


def test_adding_rows_at_once_skips_ids_held_and_matches_one_at_a_time() -> None:
    one, many = EventVectorStore(), EventVectorStore()
    live = vecs(range(0, 2 * BLOCK_ROWS + 7, 2), seed=11)
    ids = np.array(list(live), dtype=np.int64)
    matrix = np.stack(list(live.values()))
    for eid, vector in list(live.items())[:10]:
        one[eid] = many[eid] = vector
    for eid, vector in list(live.items())[10:]:
        one[eid] = vector
    again = np.concatenate([ids, ids[:3]])  # held already, and repeated within the call
    assert many.add_new(again, np.concatenate([matrix, -matrix[:3]])) == len(ids) - 10
    assert list(many) == list(one) and same(dict(many), dict(one))
    assert np.array_equal(many.rows_of(ids), one.rows_of(ids))
    query = np.ones(DIM, dtype=np.float32)
    assert np.array_equal(many.similarities(query), one.similarities(query))
    with pytest.raises(ValueError, match="not finite"):
        many.add_new(np.array([10**6]), np.full((1, DIM), np.inf, dtype=np.float32))
    assert 10**6 not in many


def test_a_merge_with_nothing_to_write_clears_stale_segments(tmp_path: Path) -> None:
    ring = KeyRing.generate()
    path = write_segment(tmp_path, ring, 99, [1], np.ones((1, DIM), dtype=np.float32))
    files, got = load(tmp_path, ring)
    assert files.stale == [path] and len(got) == 0
    assert files.save(got, ring=ring) == 0 and not path.exists()
    assert len(load(tmp_path, ring)[1]) == 0


def test_adopting_a_store_read_elsewhere_takes_only_what_is_not_held() -> None:
    read = EventVectorStore()
    kept = vecs(range(0, BLOCK_ROWS + 5), seed=12)
    read.add_new(np.array(list(kept), dtype=np.int64), np.stack(list(kept.values())))
    empty = EventVectorStore()
    assert empty.adopt(read) == len(kept)
    assert empty._blocks[0] is read._blocks[0]  # moved, not copied
    assert same(dict(empty), dict(read))
    query = np.ones(DIM, dtype=np.float32)
    assert np.array_equal(empty.similarities(query), read.similarities(query))

    live = EventVectorStore()  # the loop embedded two events while the files were read
    live[3] = -kept[3]
    live[10**5] = kept[4]
    assert live.adopt(read) == len(kept) - 1
    assert np.array_equal(live[3], -kept[3])
    assert same({e: live[e] for e in kept if e != 3}, {e: v for e, v in kept.items() if e != 3})

    wide = EventVectorStore()
    wide[0] = np.ones(DIM + 1, dtype=np.float32)
    with pytest.raises(ValueError, match=f"{DIM} dimensions"):
        wide.adopt(read)
    assert list(wide) == [0]
    with pytest.raises(TypeError, match="read-only"):
        live.frozen().adopt(read)
