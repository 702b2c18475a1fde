"""Main's recall while an import runs: a kept big home, conversations fed in, Main asked.

Issue 12's latency targets are measured on a settled home. A user also asks while an
import is under way, and then each recall first brings its view and indexes in line
with everything the import and the fade changed since the last one
(:func:`~solace.memory.tier_view.follow_view`, ``ViewIndexes.sync``, the changed
records' forms). This script opens a home kept by ``benchmarks/scale_bench.py --home``,
and ``--copies`` times feeds one more renamed LoCoMo conversation copy through
``observe_many`` (dated a day after the home's last event) while Main is asked one
question every ``--every`` seconds, ``--recalls`` times per copy. It prints each
recall's latency and writes the p50, p95 and maximum.

**It adds to the home: run it on a copy.** Compare two commits by running each on a
fresh copy of the same home, back to back.

Usage::

    python benchmarks/import_recall.py HOME [DATA] [--copies 6] [--recalls 5]
        [--every 1.0] [--out FILE]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import trio

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from rebuild_bench import sessions  # noqa: E402
from scale_bench import config as bench_config  # noqa: E402
from scale_bench import require_home  # noqa: E402

from solace import ReplayClock, open_runtime  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "locomo" / "locomo10.json"
QUESTION = "What did Caroline research?"


async def measure(home: Path, data: Path, copies: int, recalls: int,
                  every: float) -> dict[str, Any]:
    batches = sessions(data, 10_000, renamed=True)[:copies]
    per_copy: list[list[float]] = []
    async with open_runtime(home, bench_config(), clock=ReplayClock(), warm_up=True) as rt:
        events = rt.substrate.last_id
        await rt.recall("Main", QUESTION, 10)
        last = datetime.fromtimestamp(rt.clock.now(), UTC)
        for batch in batches:
            start = last + timedelta(days=1) - batch[0].at
            shifted = [dataclasses.replace(o, at=o.at + start) for o in batch]
            last = shifted[-1].at
            latencies: list[float] = []
            async with trio.open_nursery() as nursery:
                nursery.start_soon(rt.observe_many, shifted)
                for _ in range(recalls):
                    await trio.sleep(every)
                    began = time.perf_counter()
                    await rt.recall("Main", QUESTION, 10)
                    latencies.append(time.perf_counter() - began)
            per_copy.append(latencies)
            print(f"copy {len(per_copy)} ({len(batch)} turns): "
                  + " ".join(f"{1000 * t:.0f}" for t in latencies) + " ms", flush=True)
    flat = sorted(t for row in per_copy for t in row)
    return {
        "events_at_start": events,
        "copies": copies, "recalls_per_copy": recalls, "every_s": every,
        "latencies_ms": [[round(1000 * t, 1) for t in row] for row in per_copy],
        "p50_ms": round(1000 * statistics.median(flat), 1),
        "p95_ms": round(1000 * flat[min(len(flat) - 1, int(0.95 * len(flat)))], 1),
        "max_ms": round(1000 * flat[-1], 1),
        "total_ms": round(1000 * sum(flat), 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("home", type=Path, help="a copy of a home kept by scale_bench.py")
    parser.add_argument("data", nargs="?", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--copies", type=int, default=6)
    parser.add_argument("--recalls", type=int, default=5)
    parser.add_argument("--every", type=float, default=1.0)
    parser.add_argument("--out", type=Path,
                        default=ROOT / "benchmarks" / "results" / "import_recall.json")
    args = parser.parse_args()
    if not args.data.is_file():
        print(f"LoCoMo data not found at {args.data}; skipping (pass the path).")
        return 0
    require_home(args.home)
    result = trio.run(measure, args.home, args.data, args.copies, args.recalls, args.every)
    print(f"Main's recall during the import, home of {result['events_at_start']:,} events: "
          f"p50 {result['p50_ms']} ms, p95 {result['p95_ms']} ms, max {result['max_ms']} ms, "
          f"{result['total_ms']} ms in all")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"benchmark": "import_recall", **result}, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
