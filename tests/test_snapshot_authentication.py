"""Snapshots are sealed: an edited, garbled, swapped or plaintext snapshot is refused
(logged as a WARNING naming the file and why) and the tiers are rebuilt from the
substrate; a rotated ring still opens older snapshots."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import trio
import trio.testing
from test_memory_support import DAY, LINES, Env, state_of

from solace.config import AgentConfig, MemoryConfig
from solace.memory import AgentMemory
from solace.memory.snapshot import META_NAME, PURPOSE, meta_role, snapshot_files
from solace.sealed import HEADER_BYTES, read_sealed

CONFIG = AgentConfig(budget_tokens=120, age_scale_hours=12.0, longterm_summary_hours=48.0)
SMALL_INDEX = MemoryConfig(hnsw_threshold=6)


async def history(env: Env) -> None:
    for day in range(4):
        for i, line in enumerate(LINES[day : day + 3]):
            await env.sleep_until(day * DAY + i * 300)
            await env.say(f"{line} (day {day})", speaker=["Caroline", "Melanie"][i % 2])
        await env.mem.settle()
    await env.say("I flew to Reykjavik for the conference.")
    await env.mem.settle()


@pytest.fixture
async def env(tmp_path: Path, autojump_clock: trio.testing.MockClock) -> Env:
    e = Env(tmp_path, CONFIG, SMALL_INDEX)
    await e.open()
    await history(e)
    assert len(e.mem.longterm) and len(e.mem.working)
    await e.mem.snapshot()
    return e


def vectors(env: Env) -> dict[int, np.ndarray]:
    records = env.mem.working.records() + list(env.mem.longterm.records())
    return {r.record_id: np.asarray(r.embedding) for r in records}


def index_file(env: Env) -> Path:
    (path,) = [p for p in snapshot_files(env.mem.directory) if p.name != META_NAME]
    return path


def refusals(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.levelno == logging.WARNING and "snapshot refused" in r.getMessage()]


async def reopen_expecting_refusal(env: Env, caplog: pytest.LogCaptureFixture,
                                   damaged: Path) -> None:
    before = state_of(env.mem)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="solace.memory.restore"):
        await env.restart(snapshot=False)
    (message,) = refusals(caplog)
    assert str(damaged) in message  # names the file
    assert state_of(env.mem) == before  # rebuilt from the substrate, exactly


async def test_edited_snapshot_is_refused_and_rebuilt_from_substrate(
    env: Env, caplog: pytest.LogCaptureFixture, autojump_clock: Any
) -> None:
    meta = env.mem.directory / META_NAME
    plain = read_sealed(meta, ring=env.mem.key_ring, purpose=PURPOSE, role=meta_role("Main"))
    assert b"Reykjavik" in plain and b"Reykjavik" not in meta.read_bytes()  # encrypted
    # The forger cannot find the word; flipping ciphertext bytes where it lies is all
    # they can do (AES-GCM is a stream cipher: the flip lands on the same plaintext byte).
    at = HEADER_BYTES + plain.index(b"Reykjavik")
    data = bytearray(meta.read_bytes())
    for i, (a, b) in enumerate(zip(b"Reykjavik", b"Pyongyang", strict=True)):
        data[at + i] ^= a ^ b
    meta.write_bytes(bytes(data))
    await reopen_expecting_refusal(env, caplog, meta)
    hits = [r.text for r in env.mem.working.records() + list(env.mem.longterm.records())]
    assert any("Reykjavik" in t for t in hits) and not any("Pyongyang" in t for t in hits)
    # ...and the refused file was replaced by an authentic snapshot at once.
    assert b"Pyongyang" not in read_sealed(meta, ring=env.mem.key_ring, purpose=PURPOSE,
                                           role=meta_role("Main"))


async def test_xored_embedding_bytes_are_refused(
    env: Env, caplog: pytest.LogCaptureFixture, autojump_clock: Any
) -> None:
    index = index_file(env)
    data = bytearray(index.read_bytes())
    middle = len(data) // 2
    for i in range(40):  # garble one stored vector
        data[middle + i] ^= 0x5A
    index.write_bytes(bytes(data))
    before = vectors(env)
    await reopen_expecting_refusal(env, caplog, index)
    after = vectors(env)
    assert after.keys() == before.keys()
    for rid, vector in before.items():  # rebuilt from the substrate, not the garbled bytes
        np.testing.assert_allclose(after[rid], vector, atol=1e-6)


async def test_a_truncated_snapshot_is_refused(
    env: Env, caplog: pytest.LogCaptureFixture, autojump_clock: Any
) -> None:
    meta = env.mem.directory / META_NAME
    meta.write_bytes(meta.read_bytes()[:-1])
    await reopen_expecting_refusal(env, caplog, meta)


async def test_a_plaintext_snapshot_of_an_older_solace_is_refused_and_deleted(
    env: Env, caplog: pytest.LogCaptureFixture, autojump_clock: Any
) -> None:
    for path in snapshot_files(env.mem.directory):
        path.unlink()
    legacy = env.mem.directory / "snapshot.msgpack"
    legacy.write_bytes(b"\x81\xa7version\x01 plaintext Reykjavik")
    (env.mem.directory / "longterm-0123.faiss").write_bytes(b"plaintext index")
    await reopen_expecting_refusal(env, caplog, legacy)
    names = sorted(p.name for p in env.mem.directory.iterdir())
    assert names == sorted(p.name for p in snapshot_files(env.mem.directory))
    assert "snapshot.msgpack" not in names and "longterm-0123.faiss" not in names


async def test_main_snapshot_cannot_stand_in_for_supervisors(
    env: Env, caplog: pytest.LogCaptureFixture, autojump_clock: Any
) -> None:
    main_dir = env.mem.directory
    sup = await env.open("Supervisor")  # same substrate: it perceives the same messages
    await sup.settle()
    await sup.snapshot()
    for path in list(snapshot_files(sup.directory)):
        path.unlink()
    for path in snapshot_files(main_dir):
        shutil.copy2(path, sup.directory / path.name)  # Main's files, in Supervisor's place
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="solace.memory.restore"):
        await env.restart(snapshot=False)  # reopens Supervisor
    (message,) = refusals(caplog)
    assert "failed authentication" in message and str(sup.directory / META_NAME) in message


async def test_a_rotated_ring_still_opens_older_snapshots(
    env: Env, caplog: pytest.LogCaptureFixture, autojump_clock: Any
) -> None:
    old = env.mem.key_ring
    assert int.from_bytes((env.mem.directory / META_NAME).read_bytes()[8:10], "big") == 1
    before = state_of(env.mem)
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="solace.memory.restore"):
        memory = await AgentMemory.open(
            "Main", config=env.config, memory_config=env.memory_config,
            directory=env.mem.directory, substrate=env.sub, ladder=env.ladder,
            embedder=env.embedder, tokenizer=env.tokenizer, offloader=env.offloader,
            clock=env.clock, perceive=env.perceive, key_ring=old.with_new_key())
    assert not [r for r in caplog.records if "rebuilding" in r.getMessage()]
    assert state_of(memory) == before
    await memory.snapshot()  # new snapshots use the new key
    meta = (memory.directory / META_NAME).read_bytes()
    assert int.from_bytes(meta[8:10], "big") == 2
