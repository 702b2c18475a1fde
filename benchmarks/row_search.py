"""Dense search over the event vector store's int8 rows, against FAISS over float16 rows.

Random unit 384-d vectors at each ``--rows`` size; one query at a time, the median of
``--repeats``. Compared in the same run, so the ratios hold on a noisy machine:

* ``every row``: ``EventVectorStore.similarities`` (int8 codes widened, matvec, scaled);
* ``top-k, one thread`` / ``two threads``: ``EventVectorStore.top_rows`` (every row
  scored by :func:`~solace.memory.row_blocks.row_scores`, then the best ``--k``), with
  ``row_blocks.PARALLEL_BLOCKS`` forcing one thread, then at its default;
* ``FAISS float16 top-k``: the same rows as float16 in one FAISS
  ``IndexScalarQuantizer(QT_fp16)``, searched for the same ``k``: how the store kept
  and searched its rows before int8 (at twice the bytes a row).

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

import faiss
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

    half = faiss.IndexScalarQuantizer(DIM, faiss.ScalarQuantizer.QT_fp16,
                                      faiss.METRIC_INNER_PRODUCT)
    half.add(matrix)

    def float16_top(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return half.search(q.reshape(1, -1), k)  # type: ignore[no-any-return]

    sims = every_row(queries[0])
    got, _ = top(queries[0])
    assert set(got.tolist()) == set(np.argsort(-sims)[:k].tolist()), "top-k differs"
    out = {"rows": rows, "every_row_ms": median_ms(every_row, queries)}
    default = row_blocks.PARALLEL_BLOCKS
    try:
        row_blocks.PARALLEL_BLOCKS = 10**9
        out["top_k_one_thread_ms"] = median_ms(top, queries)
    finally:
        row_blocks.PARALLEL_BLOCKS = default
    out["top_k_two_threads_ms"] = median_ms(top, queries)
    out["faiss_float16_top_k_ms"] = median_ms(float16_top, queries)
    out["two_threads_over_float16"] = round(
        out["top_k_two_threads_ms"] / out["faiss_float16_top_k_ms"], 2)
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
    print(f"{'rows':>8} {'every row ms':>13} {'top-k 1 thread ms':>18} "
          f"{'top-k 2 threads ms':>19} {'FAISS fp16 ms':>14} {'ratio':>6}")
    for r in results:
        print(f"{r['rows']:>8} {r['every_row_ms']:>13} {r['top_k_one_thread_ms']:>18} "
              f"{r['top_k_two_threads_ms']:>19} {r['faiss_float16_top_k_ms']:>14} "
              f"{r['two_threads_over_float16']:>6}")
    args.out.write_text(json.dumps({"benchmark": "row_search", "k": args.k, "dim": DIM,
                                    "repeats": args.repeats, "results": results}, indent=2))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
