"""Embedding floor: texts/s and single-query latency of MiniLM through torch and ONNX Runtime.

The same model, all-MiniLM-L6-v2, three ways: sentence-transformers on torch
(``MiniLMEmbedder``, float32: the reference), ONNX Runtime float32 and ONNX Runtime
with int8 weights (``OnnxMiniLMEmbedder``), each at 1 and 2 intra-op threads.

* throughput: the first ``--texts`` LoCoMo turns (real text, 2,000 by default),
  embedded in one call in passes of at most ``--batch`` texts (and, for ONNX, at most
  ``--batch-tokens`` padded tokens: the runtime's ``models.embed_batch_tokens``);
  texts/s over the call (after a
  warm-up call on other texts);
* single-text latency: ``--queries`` LoCoMo questions (short, the HTTP recall case)
  embedded one per call; p50 and p95 in ms;
* agreement: cosine of each system's vectors to torch float32's (1 thread), mean
  and min over the turns and over the questions.

Each system and thread count runs in a fresh process, one at a time (torch's thread
pool would otherwise outlive its turn and tax the next); the numbers are only as
quiet as the machine (its load average is recorded). The LoCoMo data is read from
``../shared/data/locomo/locomo10.json`` and never copied.

Usage::

    python benchmarks/embed_floor.py [DATA] [--texts 2000] [--queries 200]
        [--batch 64] [--batch-tokens 512] [--threads 1,2] [--systems torch-fp32,onnx-fp32,onnx-int8]
        [--cache-dir DIR] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from solace.locomo import load_locomo  # noqa: E402
from solace.models.embedder import Embedder, MiniLMEmbedder  # noqa: E402
from solace.models.onnx_embedder import OnnxMiniLMEmbedder  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "locomo" / "locomo10.json"
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "embed_floor.json"
SYSTEMS = ("torch-fp32", "onnx-fp32", "onnx-int8")
REFERENCE = "torch-fp32"


def make(system: str, threads: int, batch: int, batch_tokens: int,
         cache_dir: str | None) -> Embedder:
    """The embedder called ``system`` with ``threads`` intra-op threads."""
    if system == "torch-fp32":
        return MiniLMEmbedder(batch_size=batch, threads=threads)
    variant = system.removeprefix("onnx-")
    return OnnxMiniLMEmbedder(variant=variant, batch_size=batch, batch_tokens=batch_tokens,
                              threads=threads, cache_dir=cache_dir)


def measure(embedder: Embedder, texts: list[str], queries: list[str],
            warm: list[str]) -> dict[str, Any]:
    """Load time, throughput on ``texts`` and one-at-a-time latency on ``queries``.

    ``built`` says whether loading included exporting the ONNX graph (no cache file).
    """
    graph = getattr(embedder, "graph_file", None)
    built = graph is not None and not graph.is_file()
    t0 = time.perf_counter()
    embedder.embed(warm[:1])
    load_s = time.perf_counter() - t0
    embedder.embed(warm)
    t0 = time.perf_counter()
    vectors = embedder.embed(texts)
    seconds = time.perf_counter() - t0
    latencies = []
    query_vectors = []
    for q in queries:
        t0 = time.perf_counter()
        query_vectors.append(embedder.embed([q])[0])
        latencies.append(time.perf_counter() - t0)
    lat = np.array(latencies) * 1000.0
    return {
        "load_s": round(load_s, 2),
        "built_graph": built,
        "texts_per_s": round(len(texts) / seconds, 1),
        "single_p50_ms": round(float(np.percentile(lat, 50)), 2),
        "single_p95_ms": round(float(np.percentile(lat, 95)), 2),
        "_vectors": vectors,
        "_queries": np.stack(query_vectors),
    }


def agreement(vectors: np.ndarray, reference: np.ndarray) -> dict[str, float]:
    """Mean and min row cosine of ``vectors`` to ``reference`` (both unit rows)."""
    cos = (vectors.astype(np.float64) * reference.astype(np.float64)).sum(axis=1)
    return {"mean": round(float(cos.mean()), 5), "min": round(float(cos.min()), 5)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("data", nargs="?", default=str(DEFAULT_DATA), help="LoCoMo JSON file")
    parser.add_argument("--texts", type=int, default=2000, help="turns embedded for texts/s")
    parser.add_argument("--queries", type=int, default=200, help="questions embedded alone")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--batch-tokens", type=int, default=512,
                        help="ONNX: most padded tokens in one forward pass")
    parser.add_argument("--threads", default="1,2", help="comma list of intra-op threads")
    parser.add_argument("--systems", default=",".join(SYSTEMS),
                        help=f"comma list of: {', '.join(SYSTEMS)}")
    parser.add_argument("--cache-dir", default=None,
                        help="ONNX graph cache (default: $XDG_CACHE_HOME/solace/embedders)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--one", default=None, help=argparse.SUPPRESS)  # SYSTEM:THREADS
    parser.add_argument("--one-out", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    path = Path(args.data)
    if not path.is_file():
        print(f"LoCoMo data not found at {path}; skipping (pass the path as an argument).")
        return 0
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    for s in systems:
        if s not in SYSTEMS:
            parser.error(f"--systems: unknown system {s!r} (known: {', '.join(SYSTEMS)})")
    threads = [int(t) for t in args.threads.split(",") if t.strip()]
    if REFERENCE not in systems or 1 not in threads:
        parser.error(f"the reference {REFERENCE} at 1 thread must be measured")
    conversations = load_locomo(path)
    turns = [t.text for c in conversations for t in c.turns]
    questions = [q.question for c in conversations for q in c.questions]
    texts = turns[: args.texts]
    warm = turns[-64:]  # other texts than the measured ones
    queries = questions[: args.queries]
    load_avg = os.getloadavg()
    if args.one:
        system, n = args.one.split(":")
        embedder = make(system, int(n), args.batch, args.batch_tokens, args.cache_dir)
        result = measure(embedder, texts, queries, warm)
        np.savez(args.one_out, texts=result.pop("_vectors"), queries=result.pop("_queries"))
        Path(args.one_out).with_suffix(".json").write_text(json.dumps(result))
        return 0
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="embed-floor-") as tmp:
        for system in systems:
            for n in threads:
                print(f"  {system} threads={n} ...", flush=True)
                dump = Path(tmp) / f"{system}-{n}.npz"
                cmd = [sys.executable, __file__, str(path), "--one", f"{system}:{n}",
                       "--one-out", str(dump), "--texts", str(args.texts),
                       "--queries", str(args.queries), "--batch", str(args.batch),
                       "--batch-tokens", str(args.batch_tokens)]
                if args.cache_dir:
                    cmd += ["--cache-dir", args.cache_dir]
                subprocess.run(cmd, check=True)
                arrays = np.load(dump)
                result = json.loads(dump.with_suffix(".json").read_text())
                rows.append({"system": system, "threads": n, **result,
                             "_vectors": arrays["texts"], "_queries": arrays["queries"]})
    ref = next(r for r in rows if r["system"] == REFERENCE and r["threads"] == 1)
    ref_texts, ref_queries = ref["_vectors"], ref["_queries"]
    for row in rows:
        row["cosine_texts"] = agreement(row.pop("_vectors"), ref_texts)
        row["cosine_queries"] = agreement(row.pop("_queries"), ref_queries)
    ref_p50 = next(r["single_p50_ms"] for r in rows if r is ref)
    ref_tps = next(r["texts_per_s"] for r in rows if r is ref)

    header = (f"{'system':<11} {'thr':>3} {'load s':>8} {'texts/s':>8} {'x':>5} "
              f"{'1-text p50':>10} {'p95':>6} {'x':>5} {'cos mean':>9} {'cos min':>8} "
              f"{'q mean':>8} {'q min':>7}")
    print(f"Embedding floor — {len(texts)} LoCoMo turns (batch {args.batch}, ONNX passes "
          f"<= {args.batch_tokens} tokens), "
          f"{len(queries)} single questions; cosine vs {REFERENCE} at 1 thread; "
          f"load average {load_avg[0]:.2f} on {os.cpu_count()} cores")
    print(header)
    print("-" * len(header))
    for r in rows:
        load = f"{r['load_s']:.2f}" + ("*" if r["built_graph"] else "")
        print(f"{r['system']:<11} {r['threads']:>3} {load:>8} {r['texts_per_s']:>8.1f} "
              f"{r['texts_per_s'] / ref_tps:>5.2f} {r['single_p50_ms']:>10.2f} "
              f"{r['single_p95_ms']:>6.2f} {ref_p50 / r['single_p50_ms']:>5.2f} "
              f"{r['cosine_texts']['mean']:>9.5f} {r['cosine_texts']['min']:>8.5f} "
              f"{r['cosine_queries']['mean']:>8.5f} {r['cosine_queries']['min']:>7.5f}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({
        "data": str(path), "texts": len(texts), "queries": len(queries), "batch": args.batch,
        "batch_tokens": args.batch_tokens,
        "cpu_count": os.cpu_count(), "load_average_at_start": [round(x, 2) for x in load_avg],
        "reference": REFERENCE, "rows": rows,
    }, indent=2) + "\n", encoding="utf-8")
    if any(r["built_graph"] for r in rows):
        print("* load included exporting the ONNX graph (none was cached)")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
