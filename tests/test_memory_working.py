"""The working tier keeps records and their fade columns in step."""

from __future__ import annotations

import numpy as np
import pytest

from solace.memory.record import MemoryRecord
from solace.memory.working import WorkingTier

DIM = 8


def record(rid: int, *, rung: int = 0, tokens: int = 10, emb: float = 1.0) -> MemoryRecord:
    vector = np.zeros(DIM, dtype=np.float32)
    vector[rid % DIM] = emb
    return MemoryRecord(record_id=rid, agent="Main", rung=rung, text=f"r{rid}", tokens=tokens,
                        source_tokens=tokens, entry_ids=(rid,), created=float(rid),
                        tags=("a",) * (rid % 3), emotional_weight=rid / 100,
                        embedding=vector)


def assert_columns_match(tier: WorkingTier) -> None:
    cols = tier.columns()
    records = tier.records()
    assert cols.record_id.tolist() == [r.record_id for r in records]
    assert cols.tokens.tolist() == [r.tokens for r in records]
    assert cols.rung.tolist() == [r.rung for r in records]
    assert cols.created.tolist() == [r.created for r in records]
    assert cols.n_tags.tolist() == [len(r.tags) for r in records]
    assert cols.references.tolist() == [r.references for r in records]
    ids, matrix = tier.embeddings()
    for rid, row in zip(ids.tolist(), matrix, strict=True):
        stored = tier.get(rid)
        assert stored is not None and stored.embedding is not None
        assert np.array_equal(row, stored.embedding)
    assert tier.total_tokens == sum(r.tokens for r in records)


def test_columns_follow_adds_removes_replacements_and_growth() -> None:
    tier = WorkingTier(1000, dim=DIM)
    for rid in range(1, 200):
        tier.add(record(rid, tokens=rid % 17 + 1))
    for rid in range(1, 200, 3):
        assert tier.remove(rid).record_id == rid
    tier.replace(record(5, rung=1, tokens=3))
    tier.touch(8, 99.0)
    assert_columns_match(tier)
    assert len(tier) == 199 - len(range(1, 200, 3))
    assert tier.get(1) is None and 1 not in tier
    assert tier.tokens_by_rung()[1] == 3 and tier.count_by_rung()[1] == 1


def test_touch_counts_a_reference_in_record_and_column() -> None:
    tier = WorkingTier(100, dim=DIM)
    tier.add(record(1))
    tier.touch(1, 50.0)
    tier.touch(1, 60.0)
    rec = tier.get(1)
    assert rec is not None and rec.references == 2 and rec.last_referenced == 60.0
    assert tier.columns().references[0] == 2 and tier.columns().last_referenced[0] == 60.0


def test_the_tier_refuses_what_it_cannot_hold() -> None:
    tier = WorkingTier(100, dim=DIM)
    tier.add(record(1))
    with pytest.raises(ValueError, match="already in the working tier"):
        tier.add(record(1))
    with pytest.raises(ValueError, match="working holds rungs 0-2"):
        tier.add(record(2, rung=3))
    bad = record(3)
    bad.embedding = np.zeros(DIM + 1, dtype=np.float32)
    with pytest.raises(ValueError, match=r"needs an embedding of shape \(8,\)"):
        tier.add(bad)
    with pytest.raises(KeyError, match="record 9 is not in the working tier"):
        tier.remove(9)
    with pytest.raises(ValueError, match="budget_tokens must be a positive int, got -3"):
        tier.budget_tokens = -3
    with pytest.raises(ValueError, match="budget_tokens must be a positive int"):
        WorkingTier(0, dim=DIM)
