"""Fact memory's kept projection: a reopen folds only the tail after its checkpoint and
equals a full replay, and a fact deleted or forgotten after the snapshot is gone from
the reopened memory and from every file under the home (its text in the snapshot is
sealed under its own, destroyed, key)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from solace.config.schema import Config
from solace.home import Home
from solace.sealed import read_sealed
from tests.facts_fixtures import ManualClock, fact_memory, home_bytes
from tests.test_facts_memory_shredding import KEPT, SECRET, _absent_everywhere


def _path(root: Path) -> Path:
    return Home.at(root, Config()).fact_snapshot


async def test_a_reopen_from_the_snapshot_folds_the_tail_and_equals_a_full_replay(
        tmp_path: Path) -> None:
    clock = ManualClock()
    snapshot = _path(tmp_path)
    async with fact_memory(tmp_path, clock=clock, snapshot=snapshot) as fm:
        await fm.remember("zoe", "Zoe lives in Lisbon.")
        await fm.remember("zoe", KEPT)
        await fm.remember("yann", "Yann plays the cello.")
        assert await fm.snapshot()
        clock.t += 3600
        await fm.remember("zoe", "Zoe lives in Porto.")  # an update after the snapshot
        await fm.remember("yann", "Yann plays the cello.")  # a restatement (NOOP)
        live = {m: fm.export(m) for m in fm.memory_ids()}
    async with fact_memory(tmp_path, clock=clock, snapshot=snapshot) as kept:
        assert {m: kept.export(m) for m in kept.memory_ids()} == live
    async with fact_memory(tmp_path, clock=clock) as replayed:
        assert {m: replayed.export(m) for m in replayed.memory_ids()} == live


async def test_a_fact_deleted_after_the_snapshot_is_gone_everywhere(tmp_path: Path) -> None:
    snapshot = _path(tmp_path)
    async with fact_memory(tmp_path, snapshot=snapshot) as fm:
        secret = await fm.remember("zoe", SECRET)
        await fm.remember("zoe", KEPT)
        await fm.snapshot()
        await fm.delete("zoe", secret.fact.fact_id)
        # Even opened with the home's key ring, the snapshot holds the text only sealed
        # under the fact's own key, which the delete destroyed.
        inside = read_sealed(snapshot, ring=fm._store.substrate.key_ring,
                             purpose="snapshot", role="fact-projection")
        assert b"XK4471923" not in inside and b"window seats" not in inside
    assert snapshot.exists()
    _absent_everywhere(tmp_path, SECRET)  # the snapshot file included
    async with fact_memory(tmp_path, snapshot=snapshot) as fm:
        assert [f.text for f in fm.facts("zoe", include_history=True)] == [KEPT]


async def test_an_id_forgotten_after_the_snapshot_leaves_nothing_readable(
        tmp_path: Path) -> None:
    snapshot = _path(tmp_path)
    async with fact_memory(tmp_path, snapshot=snapshot) as fm:
        await fm.remember("zoe", SECRET)
        await fm.remember("other", "Yann likes jazz.")
        await fm.snapshot()
        await fm.forget("zoe")
    _absent_everywhere(tmp_path, SECRET)
    async with fact_memory(tmp_path, snapshot=snapshot) as fm:
        assert fm.memory_ids() == ["other"]


async def test_a_damaged_fact_snapshot_is_refused_and_the_log_replayed(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    snapshot = _path(tmp_path)
    async with fact_memory(tmp_path, snapshot=snapshot) as fm:
        await fm.remember("zoe", KEPT)
        await fm.snapshot()
    data = bytearray(snapshot.read_bytes())
    data[len(data) // 2] ^= 0x40
    snapshot.write_bytes(bytes(data))
    before = home_bytes(tmp_path)
    with caplog.at_level(logging.WARNING, logger="solace.sealed"):
        async with fact_memory(tmp_path, snapshot=snapshot) as fm:
            assert [f.text for f in fm.facts("zoe")] == [KEPT]
    assert "fact memory snapshot refused" in caplog.text
    assert home_bytes(tmp_path) == before  # reading a cache changes nothing
