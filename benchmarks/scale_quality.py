"""Answer recall inside a big home: LoCoMo's questions asked of Main in a scale home.

Issue 12 asks that answer recall on LoCoMo questions, asked inside the big home, be no
lower than in a home holding only that conversation. ``benchmarks/scale_bench.py
--home H`` builds such a home (the ten conversations replayed again and again with
dates shifted by a year and a ``(take N)`` suffix, each copy's two speakers renamed
unless ``--filler restated``: with the names kept, every copy restates the same
people's facts at other dates, and they crowd out the original) and keeps it. This script opens it,
asks Main every question of categories 1-4 (``recall``, depth 100, defaults) and
scores answer recall at 500 and 1,000 tokens exactly as ``benchmarks/locomo_recall.py``
does (``locomo_scoring``: hits fitted to the budget in rank order; the share of the
gold answer's content words in their text), per split (conversations 0-4 tuning, 5-9
test). The single-conversation figures are read from ``locomo_recall.py``'s result
file (``--single``) and shown beside them.

Evidence recall is not scored here: the big home holds every turn many times over.

Usage::

    python benchmarks/scale_quality.py HOME [DATA] [--single FILE] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import trio

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from locomo_scoring import Injected, answer_recall, within_tokens, word_set  # noqa: E402
from scale_bench import config as bench_config  # noqa: E402
from scale_bench import require_home  # noqa: E402

from solace import ReplayClock, open_runtime  # noqa: E402
from solace.locomo import load_locomo  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "locomo" / "locomo10.json"
BUDGETS = (500, 1000)
DEPTH = 100


async def measure(home: Path, data: Path) -> dict[str, Any]:
    conversations = load_locomo(data)
    scores: dict[str, dict[int, list[float]]] = {
        s: {b: [] for b in BUDGETS} for s in ("tuning", "test")}
    latencies = []
    async with open_runtime(home, bench_config(), clock=ReplayClock(), warm_up=False) as rt:
        events = rt.substrate.last_id
        await rt.recall("Main", "warm up", 10)
        for index, conversation in enumerate(conversations):
            split = "tuning" if index < 5 else "test"
            for q in conversation.questions:
                words = word_set(q.answer or "")
                if q.category not in (1, 2, 3, 4) or not q.question.strip() or not words:
                    continue
                start = time.perf_counter()
                hits = await rt.recall("Main", q.question, DEPTH)
                latencies.append(time.perf_counter() - start)
                ranked = [Injected(frozenset(), len(set(h.entry_ids)), h.text, h.tokens)
                          for h in hits]
                for budget in BUDGETS:
                    scores[split][budget].append(answer_recall(within_tokens(ranked, budget),
                                                               words))
    return {
        "events": events,
        "questions": {s: len(v[BUDGETS[0]]) for s, v in scores.items()},
        "ans": {s: {str(b): round(100 * statistics.fmean(v), 1) for b, v in per.items()}
                for s, per in scores.items()},
        "recall_p50_ms": round(1000 * statistics.median(latencies), 1),
    }


def single_home(path: Path) -> dict[str, dict[str, float]] | None:
    """Solace Main's overall answer recall per split and budget in ``locomo_recall.py``'s
    result file, or None when it is absent."""
    if not path.is_file():
        return None
    results = json.loads(path.read_text())["results"]
    return {split: {str(b): round(results[split]["Solace Main"]["overall 1-4"][f"ans@{b}"], 1)
                    for b in BUDGETS}
            for split in ("tuning", "test")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("home", type=Path, help="a home kept by scale_bench.py --home")
    parser.add_argument("data", nargs="?", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--single", type=Path,
                        default=ROOT / "benchmarks" / "results" / "locomo_recall.json")
    parser.add_argument("--out", type=Path,
                        default=ROOT / "benchmarks" / "results" / "scale_quality.json")
    args = parser.parse_args()
    if not args.data.is_file():
        print(f"LoCoMo data not found at {args.data}; skipping (pass the path).")
        return 0
    require_home(args.home)
    result = trio.run(measure, args.home, args.data)
    result["single_conversation_homes"] = single_home(args.single)
    print(f"Main's answer recall in a home of {result['events']:,} events "
          f"(recall p50 {result['recall_p50_ms']} ms, depth {DEPTH}):")
    print(f"{'split':<8}{'n':>6}{'ans@500':>10}{'ans@1000':>10}"
          f"{'single-home @500':>18}{'@1000':>8}")
    for split in ("tuning", "test"):
        single = (result["single_conversation_homes"] or {}).get(split, {})
        print(f"{split:<8}{result['questions'][split]:>6}"
              f"{result['ans'][split]['500']:>10}{result['ans'][split]['1000']:>10}"
              f"{single.get('500', '-'):>18}{single.get('1000', '-'):>8}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"benchmark": "scale_quality", **result}, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
