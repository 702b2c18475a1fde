"""Reliability rows for files under the home: tampered snapshots and full disks.

Each ``row_*`` function returns a list of row dicts, ready for a reliability table
(``benchmarks/reliability_bench.py`` can add them to its ROWS); run as a script it
prints them and writes JSON.

* ``row_snapshot_tampering`` — a snapshot of 300 long-term and 40 working records;
  one byte XORed with 0xFF at each of N positions spread over both files: how many flips are
  refused, how many load as a *different* memory (forged), and how many probe recalls
  (each record's own vector as query, top 1) then come back wrong. The same flips on
  the bytes the pre-sealing format kept in plaintext (msgpack metadata; the index's
  vector block, where a flip cannot crash FAISS) give the baseline.
* ``row_enospc_sites`` — ENOSPC injected at each write site (the substrate append of a
  fade step; the index and metadata writes, fsyncs and renames of a snapshot; the
  directory fsync): is it reported as ``StorageFullError``, is memory unchanged, is
  any temporary file left, is the previous snapshot intact, does a restart restore
  every record? (When only the last directory fsync fails, the new snapshot is
  already in place, whole: "previous intact" is then False by design.)
* ``row_fade_loop_on_full_disk`` — the fade coroutine on a full disk until six steps
  have failed (backing off on the virtual clock), then with space back: whether it
  died, whether it resumed and wrote its fade events.

Usage::

    python benchmarks/reliability_rows_home.py [--positions 2000] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import faiss
import msgpack
import numpy as np
import pytest
import trio
import trio.testing

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from disk_support import FullDisk  # noqa: E402
from test_memory_support import LINES, Env, state_of  # noqa: E402

from solace.config import AgentConfig, MemoryConfig  # noqa: E402
from solace.memory.longterm import IndexParams, LongTermTier  # noqa: E402
from solace.memory.record import MemoryRecord  # noqa: E402
from solace.memory.record_codec import record_from_row  # noqa: E402
from solace.memory.snapshot import (  # noqa: E402
    META_NAME,
    PURPOSE,
    Snapshot,
    SnapshotError,
    meta_role,
    read_snapshot,
    snapshot_files,
    write_snapshot,
)
from solace.sealed import StorageFullError, read_sealed  # noqa: E402
from substrate import KeyRing  # noqa: E402

DEFAULT_OUT = ROOT / "benchmarks" / "results" / "reliability_home.json"
DIM = 32
RING = KeyRing.single(bytes(range(32)))
FLIP = 0xFF  # every bit of the byte: in a float's top byte, sign and exponent
FAILED_STEPS = 6


# ------------------------------------------------------------------ tampering


def _vectors(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, DIM)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _snapshot() -> Snapshot:
    x, w = _vectors(300, 1), _vectors(40, 2)
    tier = LongTermTier(dim=DIM, params=IndexParams(threshold=10_000))
    tier.add([MemoryRecord(record_id=i + 1, agent="Main", rung=2, text=f"record {i} Reykjavik",
                           tokens=4, source_tokens=12, entry_ids=(i + 1,), embedding=x[i])
              for i in range(len(x))])
    working = [MemoryRecord(record_id=1000 + i, agent="Main", rung=0, text=f"turn {i}",
                            tokens=3, source_tokens=3, entry_ids=(1000 + i,), embedding=w[i])
               for i in range(len(w))]
    rids, labels = tier.label_map()
    return Snapshot(agent="Main", covered_id=2000, embedder="bench", dim=DIM, working=working,
                    longterm=list(tier.records()), index=tier.index, record_ids=rids,
                    labels=labels, next_label=tier.next_label, next_extra_id=1 << 40)


def _fingerprint(records: list[Any], index: Any) -> tuple[Any, ...]:
    texts = tuple((r.record_id, r.text, r.rung, r.entry_ids,
                   None if r.embedding is None else r.embedding.tobytes()) for r in records)
    return texts, faiss.serialize_index(index).tobytes()


def _wrong_recalls(index: Any, truth: Any, queries: np.ndarray) -> int:
    d0, i0 = truth.search(queries, 1)
    d1, i1 = index.search(queries, 1)
    return int(np.sum((i0[:, 0] != i1[:, 0]) | ~np.isclose(d0[:, 0], d1[:, 0], atol=1e-4)))


def row_snapshot_tampering(positions: int = 2000) -> list[dict[str, Any]]:
    """Flip one byte at each of ``positions`` places; count refusals and forgeries."""
    snap = _snapshot()
    queries = np.stack([r.embedding for r in snap.longterm if r.embedding is not None][:100])
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        write_snapshot(directory, snap, ring=RING)
        files = sorted(snapshot_files(directory))
        original = {p: p.read_bytes() for p in files}
        good = read_snapshot(directory, agent="Main", ring=RING)
        assert good is not None
        truth = _fingerprint(good.working + good.longterm, good.index)
        sizes = [len(original[p]) for p in files]
        spots = np.linspace(0, sum(sizes) - 1, min(positions, sum(sizes))).astype(int)
        refused = forged = wrong = 0
        start = time.perf_counter()
        for spot in spots:
            file_no = int(np.searchsorted(np.cumsum(sizes), spot, side="right"))
            path, offset = files[file_no], int(spot - sum(sizes[:file_no]))
            data = bytearray(original[path])
            data[offset] ^= FLIP
            path.write_bytes(bytes(data))
            try:
                back = read_snapshot(directory, agent="Main", ring=RING)
            except SnapshotError:
                refused += 1
            else:
                assert back is not None
                if _fingerprint(back.working + back.longterm, back.index) != truth:
                    forged += 1
                    wrong += _wrong_recalls(back.index, good.index, queries)
            path.write_bytes(original[path])
        elapsed = time.perf_counter() - start
        rows.append({"row": "snapshot tampering (sealed)", "flips": len(spots),
                     "refused": refused, "forged_loads": forged, "wrong_recalls": wrong,
                     "probe_queries_per_load": len(queries),
                     "ms_per_check": round(1000 * elapsed / len(spots), 3)})
        meta_plain = read_sealed(directory / META_NAME, ring=RING, purpose=PURPOSE,
                                 role=meta_role("Main"))
    rows.append(_legacy_tampering(snap, meta_plain, good.index, queries, positions))
    return rows


def _legacy_tampering(snap: Snapshot, meta_plain: bytes, good_index: Any,
                      queries: np.ndarray, positions: int) -> dict[str, Any]:
    """The same flips on what the unsealed format stored: msgpack metadata as is, and
    the FAISS index's vector block (flips elsewhere in a plaintext index can crash it)."""
    index_plain = faiss.serialize_index(snap.index).tobytes()
    xb = faiss.vector_to_array(faiss.downcast_index(snap.index.index).codes)
    block = index_plain.find(xb.tobytes())
    assert block > 0
    truth = _fingerprint(snap.working + snap.longterm, snap.index)
    regions = [("meta", 0, len(meta_plain)), ("index", block, block + xb.nbytes)]
    total = sum(b - a for _, a, b in regions)
    spots = np.linspace(0, total - 1, min(positions, total)).astype(int)
    detected = forged = wrong = 0
    for spot in spots:
        meta, index = bytearray(meta_plain), bytearray(index_plain)
        first = regions[0][2]
        if spot < first:
            meta[spot] ^= FLIP
        else:
            index[block + spot - first] ^= FLIP
        try:
            fields = msgpack.unpackb(bytes(meta), raw=False, strict_map_key=False)
            records = [record_from_row(f) for f in fields["working"] + fields["longterm"]]
            loaded = faiss.deserialize_index(np.frombuffer(bytes(index), dtype=np.uint8))
        except Exception:  # noqa: BLE001 - any failure to load counts as detected
            detected += 1
            continue
        if _fingerprint(records, loaded) != truth:
            forged += 1
            wrong += _wrong_recalls(loaded, good_index, queries)
    return {"row": "snapshot tampering (unsealed baseline)", "flips": len(spots),
            "refused": detected, "forged_loads": forged, "wrong_recalls": wrong,
            "probe_queries_per_load": len(queries), "ms_per_check": None}


# ------------------------------------------------------------------ full disks

CONFIG = AgentConfig(budget_tokens=40)
MEMORY = MemoryConfig(hnsw_threshold=6)
_SITES: list[tuple[str, str, Any]] = [
    ("fade: substrate append", "write", lambda p: "/substrate/seg-" in p),
    ("snapshot: index write", "write", lambda p: ".longterm-" in p),
    ("snapshot: index fsync", "fsync", lambda p: ".longterm-" in p),
    ("snapshot: index rename", "replace", lambda p: "/longterm-" in p),
    ("snapshot: metadata write", "write", lambda p: f".{META_NAME}." in p),
    ("snapshot: metadata fsync", "fsync", lambda p: f".{META_NAME}." in p),
    ("snapshot: metadata rename", "replace", lambda p: p.endswith("/" + META_NAME)),
    ("snapshot: directory fsync", "fsync", lambda p: p.endswith("/memory/Main")),
    ("snapshot: directory fsync after the metadata rename", "fsync", "second"),
]


def _second_dir_fsync() -> Any:
    seen: list[str] = []

    def matches(path: str) -> bool:
        if path.endswith("/memory/Main"):
            seen.append(path)
        return len(seen) == 2

    return matches


async def _one_site(root: Path, name: str, call: str, matches: Any) -> dict[str, Any]:
    env = Env(root, CONFIG, MEMORY)
    await env.open()
    for line in LINES:
        await env.say(line)
    fade = name.startswith("fade")
    if not fade:
        await env.mem.settle()
        await env.mem.snapshot()
        await env.say("one more line")
    files = {p.name: p.read_bytes() for p in env.mem.directory.iterdir()}
    before = state_of(env.mem)
    reported = "nothing"
    if matches == "second":
        matches = _second_dir_fsync()
    with pytest.MonkeyPatch.context() as mp:
        disk = FullDisk(mp, matches, calls=(call,))
        try:
            await (env.mem.fade_step() if fade else env.mem.snapshot())
        except StorageFullError:
            reported = "StorageFullError"
        except OSError as exc:
            reported = f"OSError {exc.errno}"
        refused = sum(disk.refused.values())
    unchanged = state_of(env.mem) == before
    tmp_left = [p.name for p in root.rglob("*.tmp")]
    intact = {p.name: p.read_bytes() for p in env.mem.directory.iterdir()} == files
    await env.restart(snapshot=False)
    after = state_of(env.mem)
    restart_ok = all(after.get(rid) == state for rid, state in before.items())
    await env.sub.aclose()
    return {"row": f"ENOSPC at {name}", "injected": refused, "reported": reported,
            "memory_unchanged": unchanged, "tmp_left": len(tmp_left),
            "previous_snapshot_intact": intact, "restart_restores_all": restart_ok}


def row_enospc_sites() -> list[dict[str, Any]]:
    """ENOSPC at every write site (see module doc)."""
    rows = []
    for name, call, matches in _SITES:
        with tempfile.TemporaryDirectory() as tmp:
            rows.append(trio.run(_one_site, Path(tmp), name, call, matches,
                                 clock=trio.testing.MockClock(autojump_threshold=0)))
    return rows


async def _fade_loop(root: Path) -> dict[str, Any]:
    env = Env(root, CONFIG, MEMORY)
    await env.open()
    for line in LINES:
        await env.say(line)
    events = len(await env.fade_events())
    with pytest.MonkeyPatch.context() as mp:
        disk = FullDisk(mp, lambda p: "/substrate/seg-" in p)
        async with trio.open_nursery() as nursery:
            await nursery.start(env.mem.run)
            start = trio.current_time()
            while env.mem.storage_failures < FAILED_STEPS or env.mem.fading:
                await trio.sleep(1)  # worker threads run meanwhile
            failed, paused = env.mem.storage_failures, env.mem.full_since is not None
            waited = trio.current_time() - start
            disk.full = False
            while env.mem.full_since is not None or env.mem.fading:
                await trio.sleep(1)
            nursery.cancel_scope.cancel()
    written = len(await env.fade_events()) - events
    await env.sub.aclose()
    return {"row": "fade loop on a full disk", "failed_steps": failed,
            "virtual_seconds_full": round(waited), "paused": paused, "died": False,
            "resumed": env.mem.full_since is None,
            "events_after_space_returned": written,
            "within_budget": env.mem.working.total_tokens <= CONFIG.budget_tokens}


def row_fade_loop_on_full_disk() -> list[dict[str, Any]]:
    """The fade coroutine pauses on a full disk and resumes (see module doc)."""
    with tempfile.TemporaryDirectory() as tmp:
        return [trio.run(_fade_loop, Path(tmp),
                         clock=trio.testing.MockClock(autojump_threshold=0))]


ROWS = [row_snapshot_tampering, row_enospc_sites, row_fade_loop_on_full_disk]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--positions", type=int, default=2000)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    faiss.omp_set_num_threads(1)
    rows = row_snapshot_tampering(args.positions) + row_enospc_sites() \
        + row_fade_loop_on_full_disk()
    for row in rows:
        print(" | ".join(f"{k}={v}" for k, v in row.items()))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"benchmark": "reliability_home", "rows": rows}, indent=2)
                        + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
