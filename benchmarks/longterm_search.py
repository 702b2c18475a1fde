"""Long-term search: latency and recall@10 of the long-term index at 10k, 100k, 1M records.

Vectors are shaped like real ones: all-MiniLM-L6-v2 embeddings of the LoCoMo turns
(real text), each generated record a random point between two of them plus a little
Gaussian noise, re-normalised — a continuous cloud over the real embedding manifold
rather than isotropic noise (on which HNSW recall@10 is ~0.1 and no index is
meaningful). Queries are the embeddings of LoCoMo's questions (real text, never in
the data). Ground truth and the baseline are exact search (``IndexFlatIP``) in the
same run; every latency is one query at a time (what recall does), p50/p99 over the
queries, with the build time of each index measured honestly.

Indexes, each built by the tier's own functions (:mod:`solace.memory.index`): ``flat``
(exact, what the long-term tier uses below its threshold), ``ivf``
(``IndexIVFFlat``, nlist = 4·sqrt(n), trained on the data; several nprobe — the
tier's default) and ``hnsw`` (``IndexHNSWFlat``, M and efConstruction as given,
several efSearch). Up to ``--tier-max`` records the tier itself
(:meth:`LongTermTier.search`, with its label mapping and its build path) is timed too.

Usage::

    python benchmarks/longterm_search.py [DATA] [--sizes 10000,100000,1000000]
        [--indexes flat,hnsw,ivf] [--ef 64,128,256] [--nprobe 16,32] [--m 32]
        [--ef-construction 40]
        [--threads 2] [--queries 200] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import faiss  # noqa: E402

from solace.memory.index import (  # noqa: E402
    IndexParams,
    add_in_batches,
    build_hnsw,
    build_ivf,
    ivf_lists,
)
from solace.memory.longterm import LongTermTier  # noqa: E402
from solace.memory.record import MemoryRecord  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "locomo" / "locomo10.json"
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "longterm_search.json"
DEFAULT_CACHE = Path("/tmp/solace-bench-locomo-minilm.npz")
K = 10
NOISE = 0.02  # per-dimension sigma: the noise vector has norm ~0.39 before re-normalising
MIX = 0.5  # a record lies up to halfway between two real embeddings


def real_embeddings(data: Path, cache: Path) -> tuple[np.ndarray, np.ndarray]:
    """MiniLM embeddings of every LoCoMo turn and every question (cached in /tmp)."""
    if cache.is_file():
        with np.load(cache) as npz:
            return npz["turns"], npz["questions"]
    from solace.models import MiniLMEmbedder

    raw = json.loads(data.read_text(encoding="utf-8"))
    turns, questions = [], []
    for item in raw:
        conv = item["conversation"]
        for key, value in conv.items():
            if key.startswith("session_") and isinstance(value, list):
                turns += [t["text"] for t in value if t.get("text")]
        questions += [q["question"] for q in item["qa"]]
    embedder = MiniLMEmbedder(batch_size=128)
    start = time.perf_counter()
    t, q = embedder.embed(turns), embedder.embed(questions)
    print(f"embedded {len(turns)} turns and {len(questions)} questions with MiniLM in "
          f"{time.perf_counter() - start:.0f} s", flush=True)
    np.savez(cache, turns=t, questions=q)
    return t, q


def generate(base: np.ndarray, n: int, seed: int) -> np.ndarray:
    """``n`` unit vectors between pairs of real embeddings, plus noise (chunked)."""
    rng = np.random.default_rng(seed)
    out = np.empty((n, base.shape[1]), dtype=np.float32)
    for start in range(0, n, 100_000):
        m = min(100_000, n - start)
        i, j = rng.integers(0, len(base), m), rng.integers(0, len(base), m)
        alpha = rng.uniform(0.0, MIX, (m, 1)).astype(np.float32)
        x = (1 - alpha) * base[i] + alpha * base[j]
        x += rng.normal(0.0, NOISE, x.shape).astype(np.float32)
        out[start : start + m] = x / np.linalg.norm(x, axis=1, keepdims=True)
    return out


def timed_search(index: Any, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """One query at a time, one OpenMP thread (as the tier searches); returns
    (labels (nq, k), seconds per query)."""
    labels = np.empty((len(queries), k), dtype=np.int64)
    seconds = np.empty(len(queries))
    threads = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        for row, q in enumerate(queries):
            start = time.perf_counter()
            _, found = index.search(q.reshape(1, -1), k)
            seconds[row] = time.perf_counter() - start
            labels[row] = found[0]
    finally:
        faiss.omp_set_num_threads(threads)
    return labels, seconds


def recall_at(found: np.ndarray, truth: np.ndarray) -> float:
    return float(np.mean([len(set(f) & set(t)) / len(t) for f, t in zip(found, truth,
                                                                        strict=True)]))


def row(size: int, name: str, params: str, build: float, seconds: np.ndarray,
        recall: float, exact_p50: float) -> dict[str, Any]:
    p50 = float(np.percentile(seconds, 50)) * 1000
    return {
        "size": size, "index": name, "params": params, "build_s": round(build, 2),
        "p50_ms": round(p50, 3), "p99_ms": round(float(np.percentile(seconds, 99)) * 1000, 3),
        "recall_at_10": round(recall, 4),
        "speedup_vs_exact": round(exact_p50 / p50, 1) if p50 > 0 else None,
    }


def bench_tier(x: np.ndarray, queries: np.ndarray, truth: np.ndarray,
               params: IndexParams) -> tuple[float, np.ndarray, float, str]:
    """The tier itself (records, label mapping, its index choice) on ``x``."""
    tier = LongTermTier(dim=x.shape[1], params=params)
    records = [MemoryRecord(record_id=i, agent="bench", rung=3, text="", tokens=0,
                            source_tokens=0, entry_ids=(i,), embedding=v)
               for i, v in enumerate(x)]
    start = time.perf_counter()
    tier.add(records)
    build = time.perf_counter() - start
    seconds = np.empty(len(queries))
    found = np.empty((len(queries), K), dtype=np.int64)
    for i, q in enumerate(queries):
        t0 = time.perf_counter()
        hits = tier.search(q, K)
        seconds[i] = time.perf_counter() - t0
        found[i] = [r.record_id for r, _ in hits]
    return build, seconds, recall_at(found, truth), tier.index_kind


def run_size(n: int, base: np.ndarray, queries: np.ndarray, args: argparse.Namespace,
             rows: list[dict[str, Any]]) -> None:
    x = generate(base, n, seed=args.seed + n)
    ids = np.arange(n, dtype=np.int64)
    # Shape check: how close is each query's nearest neighbour, and its 10th?
    flat = faiss.IndexIDMap2(faiss.IndexFlatIP(x.shape[1]))
    start = time.perf_counter()
    add_in_batches(flat, x, ids)
    flat_build = time.perf_counter() - start
    truth, seconds = timed_search(flat, queries, K)
    sims, _ = flat.search(queries, K)  # batched: only for the shape line
    print(f"n={n:,}: query top-1 cosine {sims[:, 0].mean():.3f}, 10th {sims[:, -1].mean():.3f}",
          flush=True)
    exact_p50 = float(np.percentile(seconds, 50)) * 1000
    rows.append(row(n, "flat", "exact", flat_build, seconds, 1.0, exact_p50))
    print_row(rows[-1])
    del flat
    if "hnsw" in args.indexes:
        params = IndexParams(kind="hnsw", hnsw_m=args.m, hnsw_ef_search=args.ef[0],
                             hnsw_ef_construction=args.ef_construction)
        index: Any = build_hnsw(x.shape[1], params)
        start = time.perf_counter()
        add_in_batches(index, x, ids)
        build = time.perf_counter() - start
        inner: Any = faiss.downcast_index(index.index)
        for ef in args.ef:
            inner.hnsw.efSearch = ef
            found, seconds = timed_search(index, queries, K)
            rows.append(row(n, "hnsw", f"M={args.m} efC={args.ef_construction} efS={ef}",
                            build, seconds, recall_at(found, truth), exact_p50))
            print_row(rows[-1])
        del index, inner
    if "ivf" in args.indexes:
        start = time.perf_counter()
        index = build_ivf(x, IndexParams(kind="ivf"), seed=args.seed)  # the tier's own build
        add_in_batches(index, x, ids)
        build = time.perf_counter() - start
        inner = faiss.downcast_index(index.index)
        for nprobe in args.nprobe:
            inner.nprobe = nprobe
            found, seconds = timed_search(index, queries, K)
            rows.append(row(n, "ivf", f"nlist={ivf_lists(n)} nprobe={nprobe}", build, seconds,
                            recall_at(found, truth), exact_p50))
            print_row(rows[-1])
        del index, inner
    if n <= args.tier_max:
        params = IndexParams(kind=args.tier_index, threshold=args.threshold,
                             ivf_nprobe=args.tier_nprobe, hnsw_m=args.m,
                             hnsw_ef_search=args.tier_ef,
                             hnsw_ef_construction=args.ef_construction)
        build, seconds, recall, kind = bench_tier(x, queries, truth, params)
        knobs = {"ivf": f"nprobe={args.tier_nprobe}", "hnsw": f"efS={args.tier_ef}"}
        knob = knobs.get(kind, "exact")
        rows.append(row(n, "tier", f"{kind} {knob} (threshold={args.threshold:,})",
                        build, seconds, recall, exact_p50))
        print_row(rows[-1])


HEADER = f"{'size':>9} {'index':<6} {'params':<42} {'build s':>8} {'p50 ms':>8} {'p99 ms':>8} " \
    f"{'rec@10':>7} {'x exact':>8}"


def print_row(r: dict[str, Any]) -> None:
    print(f"{r['size']:>9,} {r['index']:<6} {r['params']:<42} {r['build_s']:>8.1f} "
          f"{r['p50_ms']:>8.3f} {r['p99_ms']:>8.3f} {r['recall_at_10']:>7.3f} "
          f"{r['speedup_vs_exact'] or 0:>8.1f}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", nargs="?", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--indexes", default="flat,hnsw,ivf")
    parser.add_argument("--ef", default="64,128,256,512,1024")
    parser.add_argument("--nprobe", default="8,16,32,64")
    parser.add_argument("--m", type=int, default=32)
    parser.add_argument("--ef-construction", type=int, default=40)
    parser.add_argument("--threshold", type=int, default=50_000,
                        help="the tier's flat -> approximate threshold")
    parser.add_argument("--tier-index", choices=("ivf", "hnsw"), default="ivf")
    parser.add_argument("--tier-nprobe", type=int, default=32)
    parser.add_argument("--tier-ef", type=int, default=64)
    parser.add_argument("--tier-max", type=int, default=100_000,
                        help="time the tier itself up to this size (it holds Python records)")
    parser.add_argument("--threads", type=int, default=2, help="OpenMP threads (builds)")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    args.ef = [int(v) for v in args.ef.split(",")]
    args.nprobe = [int(v) for v in args.nprobe.split(",")]
    args.indexes = set(args.indexes.split(","))
    if not args.data.is_file() and not args.cache.is_file():
        print(f"LoCoMo data not found at {args.data}; skipping (pass its path as DATA)")
        return 0
    faiss.omp_set_num_threads(args.threads)
    turns, questions = real_embeddings(args.data, args.cache)
    rng = np.random.default_rng(args.seed)
    queries = np.ascontiguousarray(questions[rng.choice(len(questions), args.queries,
                                                        replace=False)])
    print(f"base: {len(turns)} real turn embeddings; {len(queries)} real question queries; "
          f"{args.threads} OpenMP threads\n{HEADER}", flush=True)
    rows: list[dict[str, Any]] = []
    for n in (int(s) for s in args.sizes.split(",")):
        run_size(n, turns, queries, args, rows)
    result = {
        "benchmark": "longterm_search", "dim": int(turns.shape[1]), "k": K,
        "queries": len(queries), "threads": args.threads,
        "data": {"base": "all-MiniLM-L6-v2 embeddings of LoCoMo turns",
                 "records": f"between two base vectors (alpha<={MIX}) + N(0,{NOISE}) noise",
                 "queries": "MiniLM embeddings of LoCoMo questions"},
        "rows": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
