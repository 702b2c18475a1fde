"""Substrate open time against the log's length: the kept frame index against a full walk.

A log of ``--events`` events (``--size`` characters each, written with ``append_many``
in batches of 1,000, ``fsync="never"``; an open's work does not depend on how the frames
were synced) is closed, then opened ``--rounds`` times each way, alternating:

* **kept**: as a clean close leaves it, with ``index.kept`` (:mod:`substrate.kept_index`):
  the open checks the kept index against the segments and walks no frame;
* **walk**: the same log without ``index.kept``: every frame's CRC, header and SHA-256
  chain link (what every open cost before the index was kept).

The median of the rounds is reported, and their ratio. The log is built in a temporary
directory and removed.

Usage::

    python benchmarks/substrate_open.py [--events 1000000] [--size 200] [--rounds 3]
        [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from substrate import open_substrate  # noqa: E402
from substrate.kept_index import KEPT_INDEX_FILE  # noqa: E402

KEY = bytes(range(32))


def build(directory: Path, events: int, size: int) -> float:
    """Write the log; seconds taken."""
    start = time.perf_counter()
    with open_substrate(directory, KEY, fsync="never") as sub:
        for first in range(0, events, 1000):
            rows = [("Main" if i % 2 else "Supervisor", "message",
                     f"turn {i} " + "x" * max(0, size - 12), None, float(i))
                    for i in range(first, min(events, first + 1000))]
            sub.append_many(rows)
    return time.perf_counter() - start


def open_seconds(directory: Path, events: int) -> float:
    start = time.perf_counter()
    with open_substrate(directory, KEY, fsync="never") as sub:
        seconds = time.perf_counter() - start
        if sub.last_id != events:
            raise SystemExit(f"opened {sub.last_id} events, wrote {events}")
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--size", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path,
                        default=ROOT / "benchmarks" / "results" / "substrate_open.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="substrate-open-") as tmp:
        directory = Path(tmp) / "log"
        built = build(directory, args.events, args.size)
        kept_file = directory / KEPT_INDEX_FILE
        kept_bytes = kept_file.stat().st_size
        times: dict[str, list[float]] = {"kept": [], "walk": []}
        for _ in range(args.rounds):
            times["kept"].append(open_seconds(directory, args.events))  # the close keeps it
            kept_file.unlink()
            times["walk"].append(open_seconds(directory, args.events))  # and writes it again
        log_bytes = sum(p.stat().st_size for p in directory.glob("seg-*"))
    kept, walk = (statistics.median(times[k]) for k in ("kept", "walk"))
    result = {
        "benchmark": "substrate_open", "events": args.events, "size": args.size,
        "rounds": args.rounds, "build_seconds": round(built, 1),
        "log_mb": round(log_bytes / 2**20, 1), "kept_index_mb": round(kept_bytes / 2**20, 1),
        "open_kept_s": round(kept, 3), "open_walk_s": round(walk, 3),
        "walk_over_kept": round(walk / kept, 1),
        "all_seconds": {k: [round(t, 3) for t in v] for k, v in times.items()},
        "machine": {"python": platform.python_version()},
    }
    print(f"substrate open, {args.events:,} events ({result['log_mb']} MB of segments, "
          f"kept index {result['kept_index_mb']} MB), median of {args.rounds}:")
    print(f"{'open':<28}{'seconds':>10}")
    print(f"{'with the kept index':<28}{kept:>10.3f}")
    print(f"{'walking every frame':<28}{walk:>10.3f}")
    print(f"walk / kept: {result['walk_over_kept']}x")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
