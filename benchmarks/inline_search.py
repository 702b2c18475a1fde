"""Long-term search on the event loop or through the offloader, by tier size.

:data:`solace.memory.candidates.INLINE_SEARCH_MAX` decides where a recall's long-term
search runs: on the trio loop (no thread hop, but the loop waits for it) or in a worker
thread (the loop serves other requests meanwhile; FAISS releases the GIL). This times
one :meth:`LongTermTier.search` (k=20, what recall asks) both ways, per tier size, in
the same run: the hop's cost is the difference. Vectors are random unit vectors (a flat
index's cost depends on their count, not their values).

Usage::

    python benchmarks/inline_search.py [--sizes 256,1024,4096,16384] [--reps 300] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import trio  # noqa: E402

from solace.memory.candidates import INLINE_SEARCH_MAX  # noqa: E402
from solace.memory.longterm import LongTermTier  # noqa: E402
from solace.memory.record import MemoryRecord  # noqa: E402
from solace.offload import Offloader  # noqa: E402

DIM = 384


def unit_vectors(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.standard_normal((n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def tier_of(vectors: np.ndarray) -> LongTermTier:
    tier = LongTermTier(dim=DIM)
    tier.add(MemoryRecord(i + 1, "Main", 1, "x", 1, 1, (i + 1,), embedding=v)
             for i, v in enumerate(vectors))
    return tier


async def measure(sizes: list[int], reps: int) -> list[dict[str, float]]:
    rng = np.random.default_rng(0)
    offloader = Offloader()
    query = unit_vectors(rng, 1)[0]
    rows = []
    for n in sizes:
        tier = tier_of(unit_vectors(rng, n))
        inline, offloaded = [], []
        for _ in range(reps):  # interleaved: both see the same machine noise
            t0 = time.perf_counter()
            tier.search(query, 20)
            inline.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            await offloader.run(tier.search, query, 20)
            offloaded.append(time.perf_counter() - t0)
        rows.append({"records": n, "inline_p50_us": round(float(np.median(inline)) * 1e6),
                     "offloaded_p50_us": round(float(np.median(offloaded)) * 1e6)})
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="256,1024,4096,16384")
    parser.add_argument("--reps", type=int, default=300)
    parser.add_argument("--out", type=Path,
                        default=ROOT / "benchmarks" / "results" / "inline_search.json")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = trio.run(measure, sizes, args.reps)
    print(f"long-term search, k=20, p50 of {args.reps} (INLINE_SEARCH_MAX = "
          f"{INLINE_SEARCH_MAX})")
    print(f"{'records':>8}{'inline us':>11}{'offloaded us':>14}{'hop us':>8}")
    for row in rows:
        hop = row["offloaded_p50_us"] - row["inline_p50_us"]
        print(f"{row['records']:>8}{row['inline_p50_us']:>11}{row['offloaded_p50_us']:>14}"
              f"{hop:>8}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"inline_search_max": INLINE_SEARCH_MAX, "reps": args.reps,
                                    "rows": rows}, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
