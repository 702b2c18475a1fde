"""Large single events: observe time, recall latency and peak memory for one huge paste.

A home holds the first sessions of a LoCoMo conversation; then Main observes one more
event — a normal turn (the baseline) or a paste of 50 KB, 500 KB or 5 MB built from
real LoCoMo turns (paragraphs of five turns, a numbered heading each, repeated to the
size) with one marker sentence in the middle. Measured, each size in a fresh process
(so ``ru_maxrss`` is that run's peak):

* ``observe_s``: the one ``observe`` call (split, embed, into working);
* recall p50/p95 right after it, while the paste sits in working and the fade works
  on it concurrently (``recall_now``), then ``settle_s`` (the fade taking what exceeds
  the budget down the ladder), then recall p50/p95 again (``recall_settled``) — each
  over ``--recalls`` queries (LoCoMo questions of the conversation and the marker's);
* ``marker_rank``: where the hit carrying the marker sentence ranks for its query
  (1 = first), after settling;
* the records standing for the paste in Main's tiers, working tokens against the budget,
  peak RSS (``resource.getrusage``, the whole process, models included).

Usage::

    python benchmarks/large_event_bench.py                  # MiniLM up to --minilm-up-to
    python benchmarks/large_event_bench.py --quick          # the hashing embedder only
    python benchmarks/large_event_bench.py --sizes 0,50000  # 0 is the baseline

MiniLM (the default embedder) embeds every chunk of a paste, ~1.2M tokens for 5 MB:
about 9 chunks of 256 tokens per second per thread on the 2-core machine this was
written on, so sizes above ``--minilm-up-to`` (default 500 KB) run on the hashing
embedder, each with a hashing baseline beside it; every row names its embedder.

Writes ``benchmarks/results/large_event_bench.json`` (``--out``). The code before large
events were split was measured by running this script (with ``ROOT`` pointed at the
checkout, for the data) from ``git archive c93014d solace substrate``:
``benchmarks/results/large_event_bench_before.json``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import trio

ROOT = Path(__file__).resolve().parents[1]
try:
    import solace
except ImportError:  # run from a checkout without installing
    sys.path.insert(0, str(ROOT))
    import solace

from solace.locomo import load_locomo  # noqa: E402
from solace.runtime import Observation  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "locomo" / "locomo10.json"
OUT = ROOT / "benchmarks" / "results" / "large_event_bench.json"
SIZES = (0, 50_000, 500_000, 5_000_000)
MARKER = "The lighthouse keeper Sigrid counted 47 crimson herons at Vik harbour."
MARKER_QUERY = "How many crimson herons did Sigrid the lighthouse keeper count?"
SESSIONS = 2  # of conversation 0 in the home before the paste
START = datetime(2023, 5, 8, 9, 0, tzinfo=UTC)


def paste(turns: list[str], size: int) -> str:
    """Paragraphs of five real turns under numbered headings, to ``size`` characters,
    the marker paragraph in the middle."""
    paragraphs: list[str] = []
    total, n = 0, 0
    while total < size:
        for i in range(0, len(turns), 5):
            n += 1
            paragraph = f"Section {n}. " + " ".join(turns[i:i + 5])
            paragraphs.append(paragraph)
            total += len(paragraph) + 2
            if total >= size:
                break
    paragraphs.insert(len(paragraphs) // 2, MARKER)
    return "\n\n".join(paragraphs)[:max(size, len(MARKER))]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def timed_recalls(rt: Any, queries: list[str], n: int) -> list[float]:
    out = []
    for i in range(n):
        t = time.perf_counter()
        await rt.agent("Main").recall(queries[i % len(queries)], k=10)
        out.append((time.perf_counter() - t) * 1000.0)
    return out


async def one(size: int, embedder: str, recalls: int) -> dict[str, Any]:
    convs = load_locomo(DATA)
    conv = convs[0]
    all_turns = [t.text for c in convs for s in c.sessions for t in s]
    queries = [q.question for q in conv.questions[:10]] + [MARKER_QUERY]
    base = solace.load_config(None)
    config = dataclasses.replace(
        base, models=dataclasses.replace(base.models, embedder=embedder, llm_backend="none"))
    text = paste(all_turns, size) if size else "I finally bought a violin for my daughter."
    clock = solace.ReplayClock(START)
    with tempfile.TemporaryDirectory() as home:
        async with solace.open_runtime(home, config, clock=clock) as rt:
            at = START
            for session in conv.sessions[:SESSIONS]:
                items = []
                for turn in session:
                    at += timedelta(minutes=1)
                    items.append(Observation(turn.text, turn.speaker, "message", at))
                await rt.observe_many(items)
            await rt.settle()
            t = time.perf_counter()
            eid = await rt.agent("Main").observe(text, speaker="Caroline",
                                                  at=at + timedelta(minutes=1))
            observe_s = time.perf_counter() - t
            now = await timed_recalls(rt, queries, recalls)
            t = time.perf_counter()
            await rt.settle()
            settle_s = time.perf_counter() - t
            settled = await timed_recalls(rt, queries, recalls)
            hits = await rt.agent("Main").recall(MARKER_QUERY, k=10)
            rank = next((i + 1 for i, h in enumerate(hits) if "Sigrid" in h.text), None)
            main = rt.memories["Main"]
            records = [r for tier in (main.working, main.longterm) for r in tier.records()
                       if eid in r.entry_ids]
            in_working = sum(1 for r in main.working.records() if eid in r.entry_ids)
            return {
                "size_chars": len(text), "observe_s": round(observe_s, 3),
                "recall_now_ms_p50": round(percentile(now, 0.5), 1),
                "recall_now_ms_p95": round(percentile(now, 0.95), 1),
                "settle_s": round(settle_s, 3),
                "recall_settled_ms_p50": round(percentile(settled, 0.5), 1),
                "recall_settled_ms_p95": round(percentile(settled, 0.95), 1),
                "marker_rank": rank if size else None,
                "records_of_event": len(records), "of_them_in_working": in_working,
                "max_record_tokens": max(r.tokens for r in records),
                "working_tokens": main.working.total_tokens,
                "budget_tokens": main.working.budget_tokens,
                "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            }


def table(rows: list[dict[str, Any]]) -> str:
    cols = [("size", "size_chars"), ("embedder", "embedder"), ("observe s", "observe_s"),
            ("recall now p50/p95 ms", None), ("settle s", "settle_s"),
            ("recall settled p50/p95 ms", None), ("marker rank", "marker_rank"),
            ("records", "records_of_event"), ("max tok", "max_record_tokens"),
            ("working/budget", None), ("peak RSS MB", "peak_rss_mb")]
    lines = ["| " + " | ".join(c for c, _ in cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        cells = []
        for name, key in cols:
            if name.startswith("recall now"):
                cells.append(f"{r['recall_now_ms_p50']} / {r['recall_now_ms_p95']}")
            elif name.startswith("recall settled"):
                cells.append(f"{r['recall_settled_ms_p50']} / {r['recall_settled_ms_p95']}")
            elif name == "working/budget":
                cells.append(f"{r['working_tokens']}/{r['budget_tokens']}")
            elif key == "size_chars":
                cells.append("baseline turn" if r["size"] == 0 else f"{r[key]:,}")
            else:
                cells.append(str(r[key]))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="the hashing embedder")
    parser.add_argument("--sizes", default=",".join(str(s) for s in SIZES))
    parser.add_argument("--recalls", type=int, default=20)
    parser.add_argument("--minilm-up-to", type=int, default=500_000)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # a child process
    args = parser.parse_args()
    if args.one is not None:
        embedder = "hashing" if args.quick else "minilm"
        print(json.dumps(trio.run(one, args.one, embedder, args.recalls)))
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    plan = [(size, "hashing" if args.quick or size > args.minilm_up_to else "minilm")
            for size in sizes]
    if not args.quick and any(e == "hashing" for _, e in plan) and 0 in sizes:
        plan.append((0, "hashing"))  # the baseline of the hashing rows
    plan.sort(key=lambda p: (p[1] != "minilm", p[0]))
    rows = []
    for size, embedder in plan:
        cmd = [sys.executable, __file__, "--one", str(size), "--recalls", str(args.recalls)]
        if embedder == "hashing":
            cmd.append("--quick")
        t = time.perf_counter()
        done = subprocess.run(cmd, capture_output=True, text=True, check=False,
                              env={**os.environ, "HF_HUB_OFFLINE": "1"})
        if done.returncode != 0:
            sys.exit(f"size {size} failed:\n{done.stderr[-3000:]}")
        row = {"size": size, "embedder": embedder,
               **json.loads(done.stdout.strip().splitlines()[-1]),
               "wall_s": round(time.perf_counter() - t, 1)}
        rows.append(row)
        print(f"size {size} ({embedder}): {row}", file=sys.stderr)
    print(table(rows))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({
        "recalls": args.recalls, "home_sessions": SESSIONS,
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "median_note": "recall over LoCoMo conv-0 questions and the marker query, k=10",
        "rows": rows,
    }, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
