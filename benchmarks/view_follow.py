"""Retrieval after one tier change: the view followed by delta against one taken in full.

Every observe changes an agent's working tier, and every fade step both tiers; the
next recall must then see the change. Before the tiers kept change logs, a query after
any change took a new :class:`~solace.memory.tier_view.TierView` of every record and
re-synced both BM25 indexes over all of them; now it follows the last view by the
records that changed (:func:`~solace.memory.tier_view.follow_view`,
``ViewIndexes.sync``). Both ways run in the same process on the same tiers:

* **full** — a fresh ``Retriever.refresh()`` path: ``take_view`` plus full index syncs
  (the retriever's last view dropped before each run, its caches of forms kept);
* **followed** — one record replaced in working and one long-term record replaced (a
  fade step's worth), then ``refresh()``.

Records are synthetic (random unit vectors, eight words of LoCoMo-like vocabulary, a
third of them multi-event episodes of six events, long-term records at rung 1, as the
default ``inject_rung`` would inject them), so the numbers measure the bookkeeping,
not a conversation. p50 of ``--repeat`` runs per size.

Usage::

    python benchmarks/view_follow.py [--sizes 10000,50000,200000] [--repeat 20] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import trio  # noqa: E402

from solace.memory.candidates import Retriever  # noqa: E402
from solace.memory.longterm import LongTermTier  # noqa: E402
from solace.memory.record import MemoryRecord  # noqa: E402
from solace.memory.testing import retriever_over  # noqa: E402
from solace.memory.working import WorkingTier  # noqa: E402

DIM = 384
WORDS = ("kayak pottery lake violin sunrise museum adoption race Sweden camping painting "
         "charity interview daughter jolene ocean class friend weekend trip").split()


@dataclass
class Memory:
    agent: str
    working: WorkingTier
    longterm: LongTermTier


def _record(rng: random.Random, rid: int, rung: int, first: int) -> MemoryRecord:
    v = np.array([rng.random() - 0.5 for _ in range(DIM)], dtype=np.float32)
    entries = tuple(range(first, first + (6 if rid % 3 == 0 else 1)))
    return MemoryRecord(record_id=rid, agent="Main", rung=rung,
                        text=" ".join(rng.choice(WORDS) for _ in range(8)), tokens=8,
                        source_tokens=40, entry_ids=entries, embedding=v / np.linalg.norm(v))


def build(size: int, rng: random.Random) -> tuple[Memory, Retriever]:
    memory = Memory("Main", WorkingTier(10**9, dim=DIM), LongTermTier(dim=DIM))
    for i in range(60):  # a working tier of a budget's size
        memory.working.add(_record(rng, 10 * size + i, 1, 10 * (size + i) + 1))
    memory.longterm.add([_record(rng, i, 1, 10 * i + 1) for i in range(1, size + 1)])
    retriever = retriever_over(memory)
    return memory, retriever


def change(memory: Memory, rng: random.Random, size: int) -> None:
    """A fade step's worth: one working record and one long-term record rewritten."""
    working = memory.working.records()
    w = rng.choice(working)
    memory.working.replace(_record(rng, w.record_id, 1, w.entry_ids[0]))
    rid = rng.randrange(1, size + 1)
    old = memory.longterm.get(rid)
    assert old is not None
    new = _record(rng, rid, 1, old.entry_ids[0])
    new.embedding = old.embedding  # a rung change keeps the vector: metadata only
    memory.longterm.replace(new)


async def measure(size: int, repeat: int) -> dict[str, Any]:
    rng = random.Random(size)
    memory, retriever = build(size, rng)
    await retriever.refresh()
    full, followed = [], []
    for _ in range(repeat):
        change(memory, rng, size)
        t0 = time.perf_counter()
        await retriever.refresh()
        followed.append(time.perf_counter() - t0)
        change(memory, rng, size)
        retriever._view = retriever.indexes.indexed = None  # what every change cost before
        t0 = time.perf_counter()
        await retriever.refresh()
        full.append(time.perf_counter() - t0)
    f, g = statistics.median(full) * 1e3, statistics.median(followed) * 1e3
    return {"records": size + 60, "full_ms": round(f, 3), "followed_ms": round(g, 3),
            "speedup": round(f / g, 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,50000,200000")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--out", type=Path,
                        default=ROOT / "benchmarks" / "results" / "view_follow.json")
    args = parser.parse_args()
    rows = [trio.run(measure, int(n), args.repeat) for n in args.sizes.split(",")]
    print(f"{'records':>8} {'full ms':>9} {'followed ms':>12} {'speedup':>8}")
    for row in rows:
        print(f"{row['records']:>8} {row['full_ms']:>9} {row['followed_ms']:>12} "
              f"{row['speedup']:>7}x")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"benchmark": "view_follow", "repeat": args.repeat,
                                    "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
