"""Dense search over the event vector store: every row scored by numpy, or FAISS's top-k.

Random unit 384-d vectors (float16 in the store, as the runtime keeps them) at each
``--rows`` size; one query at a time, the median of ``--repeats``. Compared in the same
run, so the ratios hold on a noisy machine:

* ``numpy every row``: ``EventVectorStore.similarities`` (float16 widened, matvec), what
  every recall paid before the pool, and still pays below ``SCAN_ROWS``;
* ``FAISS top-k, one thread`` / ``two threads``: ``EventVectorStore.top_rows`` (the
  store's blocks searched in place by ``IndexScalarQuantizer(QT_fp16)``), with
  ``row_blocks.PARALLEL_BLOCKS`` forcing one thread, then at its default.

Thread settings are the runtime's (none are imposed: numpy's matvec here is
memory-bound either way). The top-k rows are checked against the numpy scores.

Usage::

    python benchmarks/row_search.py [--rows 100000 165000] [--k 256] [--repeats 21]
        [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from solace.memory import row_blocks  # noqa: E402
from solace.memory.event_vectors import EventVectorStore  # noqa: E402

DIM = 384


def median_ms(fn, queries: np.ndarray) -> float:  # type: ignore[no-untyped-def]
    times = []
    for query in queries:
        start = time.perf_counter()
        fn(query)
        times.append(time.perf_counter() - start)
    return round(float(np.median(times)) * 1000, 2)


def measure(rows: int, k: int, repeats: int) -> dict[str, float]:
    rng = np.random.default_rng(rows)
    matrix = rng.standard_normal((rows, DIM)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    store = EventVectorStore()
    store.add_new(np.arange(rows), matrix)
    queries = matrix[:repeats] + 0.05
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)

    def every_row(q: np.ndarray) -> np.ndarray:
        store._last = None  # noqa: SLF001  (measure the scoring, not the memo)
        return store.similarities(q)

    def top(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        store._last_top = None  # noqa: SLF001
        return store.top_rows(q, k)

    sims = every_row(queries[0])
    got, _ = top(queries[0])
    assert set(got.tolist()) == set(np.argsort(-sims)[:k].tolist()), "top-k differs"
    out = {"rows": rows, "numpy_every_row_ms": median_ms(every_row, queries)}
    default = row_blocks.PARALLEL_BLOCKS
    try:
        row_blocks.PARALLEL_BLOCKS = 10**9
        out["faiss_top_k_one_thread_ms"] = median_ms(top, queries)
    finally:
        row_blocks.PARALLEL_BLOCKS = default
    out["faiss_top_k_two_threads_ms"] = median_ms(top, queries)
    out["speedup"] = round(out["numpy_every_row_ms"] / out["faiss_top_k_two_threads_ms"], 2)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[10_000, 100_000, 165_000])
    parser.add_argument("--k", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=21)
    parser.add_argument("--out", type=Path,
                        default=ROOT / "benchmarks" / "results" / "row_search.json")
    args = parser.parse_args()
    results = [measure(n, args.k, args.repeats) for n in args.rows]
    print(f"{'rows':>8} {'numpy every row ms':>19} {'FAISS 1 thread ms':>18} "
          f"{'FAISS 2 threads ms':>19} {'speed-up':>9}")
    for r in results:
        print(f"{r['rows']:>8} {r['numpy_every_row_ms']:>19} {r['faiss_top_k_one_thread_ms']:>18} "
              f"{r['faiss_top_k_two_threads_ms']:>19} {r['speedup']:>9}")
    args.out.write_text(json.dumps({"benchmark": "row_search", "k": args.k, "dim": DIM,
                                    "repeats": args.repeats, "results": results}, indent=2))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
