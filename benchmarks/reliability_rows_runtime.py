"""Reliability rows for the running runtime: recall under concurrent observers.

``row_concurrent_observe_recall`` opens a runtime with the hashing embedder, small
working budgets and a one-second fade tick (virtual time: ``MockClock`` with autojump,
so the fade demotes, merges and moves records between tiers all the while), runs
``observers`` tasks appending distinct turns and ``recallers`` tasks recalling
(Main and Supervisor, read-through on) until the observers are done, then recalls every
acknowledged event by its exact text from Main. It counts:

* ``trials``: recalls made while observing;
* ``acked_lost``: acknowledged events not among the top-5 hits for their own text;
* ``forged_or_wrong``: hits whose event ids are not events that were appended;
* ``process_deaths``: recalls (or observes) that raised, and runtime deaths.

Notes: events, recall latency (wall clock) p50/p95 during the writes, seconds.
``benchmarks/reliability_bench.py`` lists this row in its ROWS; run alone, this
script prints it and writes JSON.

Usage::

    python benchmarks/reliability_rows_runtime.py [--events 100] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import trio
import trio.testing

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from test_retrieval_concurrent_writes import churn_config, turns  # noqa: E402

from solace import TrioClock, open_runtime  # noqa: E402

DEFAULT_OUT = ROOT / "benchmarks" / "results" / "reliability_runtime.json"


async def _workload(home: Path, observers: int, recallers: int, events: int,
                    seed: int) -> dict[str, Any]:
    lines = turns(seed, observers=observers, per_observer=events)
    acknowledged: dict[int, str] = {}
    latencies: list[float] = []
    errors: list[str] = []
    done = trio.Event()
    async with open_runtime(home, churn_config(), clock=TrioClock()) as rt:
        main = rt.agent("Main")

        async def observe(o: int) -> None:
            for text in lines[o]:
                try:
                    acknowledged[await main.observe(text, speaker=f"Courier{o}")] = text
                except Exception as exc:  # noqa: BLE001 - counted as a death
                    errors.append(f"observe: {exc!r}")
                await trio.sleep(0.05)

        async def recall(r: int) -> None:
            rng = random.Random(r)
            while not done.is_set():
                query = rng.choice(lines[rng.randrange(observers)])
                start = time.perf_counter()
                try:
                    await rt.agent(("Main", "Supervisor")[r % 2]).recall(query, k=5)
                except Exception as exc:  # noqa: BLE001 - counted as a death
                    errors.append(f"recall: {exc!r}")
                latencies.append(time.perf_counter() - start)
                await trio.sleep(0)

        async with trio.open_nursery() as nursery:
            for r in range(recallers):
                nursery.start_soon(recall, r)
            async with trio.open_nursery() as writers:
                for o in range(observers):
                    writers.start_soon(observe, o)
            done.set()
        await rt.settle()
        lost = wrong = 0
        appended = set(acknowledged)
        for eid, text in acknowledged.items():
            hits = await main.recall(text, k=5, read_through=False)
            lost += not any(eid in h.entry_ids for h in hits)
            wrong += sum(1 for h in hits for e in h.entry_ids if e not in appended)
        memory = rt.memories["Main"]
        fade = {"rounds": memory.counters.rounds, "to_longterm": memory.counters.to_longterm,
                "merges": memory.counters.merges}
    return {"acknowledged": len(acknowledged), "latencies": latencies, "errors": errors,
            "lost": lost, "wrong": wrong, "fade": fade}


def row_concurrent_observe_recall(observers: int = 8, recallers: int = 4, events: int = 100,
                                  seed: int = 13) -> list[dict[str, Any]]:
    """One row: ``observers`` x ``events`` turns appended while ``recallers`` recall."""
    start = time.perf_counter()
    died = 0
    with tempfile.TemporaryDirectory() as tmp:
        try:
            out = trio.run(_workload, Path(tmp), observers, recallers, events, seed,
                           clock=trio.testing.MockClock(autojump_threshold=0))
        except Exception:  # noqa: BLE001 - the runtime itself died: the row says so
            died = 1
            out = {"acknowledged": 0, "latencies": [], "errors": [], "lost": 0, "wrong": 0,
                   "fade": {}}
    ms = np.array(out["latencies"]) * 1000.0
    return [{
        "row": f"concurrent observe/recall ({observers} observers, {recallers} recallers, "
               "fade on)",
        "trials": len(ms), "detected_and_named": 0, "to_detect": 0,
        "acked_lost": out["lost"], "forged_or_wrong": out["wrong"],
        "process_deaths": len(out["errors"]) + died,
        "events": out["acknowledged"],
        "recall_ms_p50": round(float(np.percentile(ms, 50)), 1) if len(ms) else None,
        "recall_ms_p95": round(float(np.percentile(ms, 95)), 1) if len(ms) else None,
        "fade_main": out["fade"], "first_errors": out["errors"][:3],
        "seconds": round(time.perf_counter() - start, 1),
    }]


def rows_runtime(opts: argparse.Namespace) -> list[dict[str, Any]]:
    """The rows of this file, for ``reliability_bench.ROWS``."""
    return row_concurrent_observe_recall(seed=getattr(opts, "seed", 13) + 13)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--observers", type=int, default=8)
    parser.add_argument("--recallers", type=int, default=4)
    parser.add_argument("--events", type=int, default=100, help="events per observer")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    rows = row_concurrent_observe_recall(args.observers, args.recallers, args.events, args.seed)
    for r in rows:
        print("  ".join(f"{k}={v}" for k, v in r.items()))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"benchmark": "reliability_runtime", "config": vars(args)
                                    | {"out": str(args.out)}, "rows": rows}, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
