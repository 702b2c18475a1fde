"""One codec for MemoryRecord: fade-event attrs and snapshot rows read back equal."""

from __future__ import annotations

import dataclasses

import msgpack
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from solace.memory.record import MemoryRecord
from solace.memory.record_codec import (
    record_from_attrs,
    record_from_row,
    record_to_attrs,
    record_to_row,
)

TEXT = st.text(min_size=1, max_size=40)
RECORDS = st.builds(
    MemoryRecord,
    record_id=st.integers(1, 2**40), agent=st.sampled_from(["Main", "Mood"]),
    rung=st.integers(0, 3), text=TEXT, tokens=st.integers(0, 10_000),
    source_tokens=st.integers(0, 10_000),
    entry_ids=st.lists(st.integers(1, 2**40), min_size=1, max_size=5).map(tuple),
    kind=st.sampled_from(["message", "speech", "cue"]),
    speakers=st.lists(TEXT, max_size=3).map(tuple),
    first_event_ts=st.floats(0, 2e9), event_ts=st.floats(0, 2e9),
    created=st.floats(0, 2e9), last_referenced=st.floats(0, 2e9),
    references=st.integers(0, 1000), emotional_weight=st.floats(0, 1),
    tags=st.lists(TEXT, max_size=3).map(tuple), private=st.booleans(),
)


def same(a: MemoryRecord, b: MemoryRecord) -> bool:
    fields = [f for f in MemoryRecord.__dataclass_fields__ if f != "embedding"]
    return all(getattr(a, f) == getattr(b, f) for f in fields)


@given(RECORDS)
def test_a_record_read_back_from_its_fade_attrs_is_the_record(record: MemoryRecord) -> None:
    attrs = record_to_attrs(record)
    assert all(isinstance(v, str) for v in attrs.values())
    assert same(record_from_attrs(record.agent, record.text, attrs), record)


@given(RECORDS, st.booleans())
def test_a_record_read_back_from_its_snapshot_row_is_the_record(
    record: MemoryRecord, with_embedding: bool
) -> None:
    record.embedding = np.arange(4, dtype=np.float32)
    row = record_to_row(record, with_embedding=with_embedding)
    back = record_from_row(msgpack.unpackb(msgpack.packb(row, use_bin_type=True), raw=False))
    assert same(back, record)
    for f in dataclasses.fields(MemoryRecord)[:-1]:  # each value of its type, as made
        assert type(getattr(back, f.name)) is type(getattr(record, f.name)), f.name
    if with_embedding:
        assert back.embedding is not None and back.embedding.tolist() == [0.0, 1.0, 2.0, 3.0]
    else:
        assert back.embedding is None


def test_a_row_holds_the_records_fields_in_their_dataclass_order() -> None:
    """record_from_row passes a row positionally."""
    record = MemoryRecord(record_id=3, agent="Main", rung=0, text="t", tokens=1,
                          source_tokens=1, entry_ids=(3,), span=(0, 1))
    row = record_to_row(record, with_embedding=False)
    names = [f.name for f in dataclasses.fields(MemoryRecord)]
    assert names[-1] == "embedding" and len(row) == len(names)
    assert [getattr(record, n) for n in names[:-1]] == [
        tuple(v) if isinstance(v, list) else v for v in row[:-1]]


def test_a_row_of_the_wrong_length_is_refused_naming_the_count() -> None:
    with pytest.raises(ValueError, match="18 fields, got 3"):
        record_from_row([1, "Main", 0])


def test_missing_fade_attr_is_a_key_error() -> None:
    with pytest.raises(KeyError):
        record_from_attrs("Main", "x", {"rung": "0"})
