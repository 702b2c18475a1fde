"""Fact extraction on hand-labelled LoCoMo turns: precision, recall, F1, cost.

The labelled set (``benchmarks/data/facts_labels.jsonl``) holds only locators and
labels, never the dataset's text: each line is ``{"sample_id", "session", "dia_id",
"facts": [{"text", "kind", "keys"}]}``; the turn's text, speaker and time are read
from the LoCoMo file (default ``../shared/data/locomo/locomo10.json``; pass another
path as the first argument). Without the file the benchmark says so and exits 0.

Each labelled turn is run through the extractor as one exchange: the turn's text is
the user message, its speaker the subject, its replay time (``solace.locomo``) the
time that resolves "yesterday". No reply, no tool results. The limit is the default
store's ``max_extractions_per_turn`` (3).

Which turns (291, 145 with facts). The first 24 turns of each of the ten
conversations, in order, all of them, facts or not (a natural mix of statements,
questions and chit-chat); plus, from each conversation's third session, the turns
among its first 14 that carry a fact (3 to 7 per conversation), to bring the mix to
about half and half. Conversations 0-4 of the file (conv-26, -30, -41, -42, -43) are
the tuning split, 5-9 (conv-44, -47, -48, -49, -50) the test split, as in
``locomo_recall.py``; the rules were developed looking at tuning-split outputs only,
and the test split was first run after they were frozen.
The first 240 labels were written before the extractor existed, the third-session
ones after its first rules but without running it on them. LoCoMo has no
obligations or corrections among these turns: those kinds are covered by the unit
tests, not by this set.

Labelling rules:

* A gold fact is something a personal assistant should remember about the speaker
  (or their family, pets, belongings) after this turn: a preference, identity (job,
  home, age, role), relationship, plan or goal, possession, obligation, correction,
  or a notable life event (lost a job, won a tournament, went on a trip).
* Not facts: greetings, questions, thanks, compliments and reactions, opinions about
  the other person, general truths ("self-care is important"), passing moods, and
  leave-takings ("I'm off to go swimming"); statements whose subject is only a
  pronoun we cannot place ("I started doing this a few years back").
* At most three gold facts per turn, the most memorable; each is a short
  third-person sentence, a kind, and ``keys``: 1-4 words from the turn that any
  correct rendering of the fact must contain (the value, not the date: "banker",
  "fox hollow", "not games").

Matching: an extracted fact matches a gold fact of the same turn when every key,
case-folded and stemmed (``solace.memory.lexical.stem``), is among the extracted
text's stemmed words; each gold and each extracted fact is matched at most once
(greedy, in extraction order). Precision = matched extracted / extracted; recall =
matched gold / gold; per kind, recall is by the gold fact's kind and precision by
the extracted fact's kind. Facts per turn counts extracted facts; latency is the
extractor's wall time per turn (p50/p95).

Usage::

    python benchmarks/facts_extraction.py [DATA] [--labels FILE] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from solace.facts.extract_rules import KINDS, extract_facts  # noqa: E402
from solace.facts.model import Candidate, Exchange  # noqa: E402
from solace.locomo import load_locomo  # noqa: E402
from solace.memory.lexical import stem  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "locomo" / "locomo10.json"
DEFAULT_LABELS = ROOT / "benchmarks" / "data" / "facts_labels.jsonl"
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "facts_extraction.json"
TUNING = range(0, 5)
SPLITS = ("tuning", "test")
LIMIT = 3  # StoreConfig().max_extractions_per_turn
_WORD = re.compile(r"[0-9a-z]+")

Extractor = Callable[[Exchange], Sequence[Candidate]]


def _stems(text: str) -> set[str]:
    return {stem(w) for w in _WORD.findall(text.casefold().replace("\u2019", "'"))}


def matches(extracted: str, keys: Sequence[str]) -> bool:
    """True iff every key word (stemmed, case-folded) is among ``extracted``'s words."""
    words = _stems(extracted)
    wanted = {stem(w) for k in keys for w in _WORD.findall(k.casefold())}
    return bool(wanted) and wanted <= words


def _rules(exchange: Exchange) -> Sequence[Candidate]:
    return extract_facts(exchange, limit=LIMIT)


def _load_labels(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _percent(num: int, den: int) -> float:
    return round(100.0 * num / den, 1) if den else 0.0


def _prf(matched_ex: int, extracted: int, matched_gold: int, gold: int) -> dict[str, float]:
    p, r = _percent(matched_ex, extracted), _percent(matched_gold, gold)
    return {"precision": p, "recall": r, "f1": round(2 * p * r / (p + r), 1) if p + r else 0.0}


def evaluate(labels_path: str | Path, data_path: str | Path, split: str, *,
             extractor: Extractor | None = None) -> dict[str, Any]:
    """Score an extractor on one split of the labelled LoCoMo turns.

    Args:
        labels_path: the JSONL label file (locators and labels only).
        data_path: the LoCoMo JSON the turns' text is read from.
        split: ``"tuning"`` (conversations 0-4), ``"test"`` (5-9) or ``"all"``.
        extractor: exchange -> candidates; None is the rules extractor with the
            default store's limit.

    Returns:
        ``{"turns", "gold", "extracted", "matched", "precision", "recall", "f1"
        (percentages), "facts_per_turn", "latency_ms": {"p50", "p95"}, "by_kind":
        {kind: {"gold", "extracted", "precision", "recall", "f1"}}, "misses",
        "false_positives"}`` (the last two: up to 40 examples each, for reading).

    Raises:
        ValueError: unknown split, or a label names a turn the data file lacks.
    """
    if split not in (*SPLITS, "all"):
        raise ValueError(f"split must be 'tuning', 'test' or 'all', got {split!r}")
    extract = extractor if extractor is not None else _rules
    conversations = load_locomo(data_path)
    where = {c.sample_id: ("tuning" if i in TUNING else "test", {t.dia_id: t for t in c.turns})
             for i, c in enumerate(conversations)}
    kinds = {k: {"gold": 0, "matched_gold": 0, "extracted": 0, "matched_ex": 0} for k in KINDS}
    totals = {"turns": 0, "gold": 0, "extracted": 0, "matched": 0}
    latencies: list[float] = []
    misses: list[dict[str, Any]] = []
    false_positives: list[dict[str, Any]] = []
    for label in _load_labels(Path(labels_path)):
        if label["sample_id"] not in where or label["dia_id"] not in where[label["sample_id"]][1]:
            raise ValueError(f"label {label['sample_id']} {label['dia_id']}: no such turn in "
                             f"{data_path}")
        turn_split, turns = where[label["sample_id"]]
        if split != "all" and turn_split != split:
            continue
        turn = turns[label["dia_id"]]
        exchange = Exchange(user=turn.text, speaker=turn.speaker, ts=turn.at.timestamp())
        started = time.perf_counter()
        found = list(extract(exchange))
        latencies.append((time.perf_counter() - started) * 1000.0)
        gold = label["facts"]
        used: set[int] = set()
        for cand in found:
            kinds.setdefault(cand.kind, dict.fromkeys(kinds["event"], 0))["extracted"] += 1
            hit = next((i for i, g in enumerate(gold) if i not in used
                        and matches(cand.text, g["keys"])), None)
            if hit is None:
                false_positives.append({"dia": f"{label['sample_id']} {label['dia_id']}",
                                        "fact": cand.text, "kind": cand.kind})
                continue
            used.add(hit)
            kinds[cand.kind]["matched_ex"] += 1
        for i, g in enumerate(gold):
            kinds.setdefault(g["kind"], dict.fromkeys(kinds["event"], 0))["gold"] += 1
            if i in used:
                kinds[g["kind"]]["matched_gold"] += 1
            else:
                misses.append({"dia": f"{label['sample_id']} {label['dia_id']}",
                               "gold": g["text"], "kind": g["kind"]})
        totals["turns"] += 1
        totals["gold"] += len(gold)
        totals["extracted"] += len(found)
        totals["matched"] += len(used)
    lat = np.array(latencies) if latencies else np.zeros(1)
    return {
        **totals,
        **_prf(totals["matched"], totals["extracted"], totals["matched"], totals["gold"]),
        "facts_per_turn": round(totals["extracted"] / max(totals["turns"], 1), 3),
        "latency_ms": {"p50": round(float(np.percentile(lat, 50)), 3),
                       "p95": round(float(np.percentile(lat, 95)), 3)},
        "by_kind": {k: {"gold": v["gold"], "extracted": v["extracted"],
                        **_prf(v["matched_ex"], v["extracted"], v["matched_gold"], v["gold"])}
                    for k, v in kinds.items()},
        "misses": misses[:40],
        "false_positives": false_positives[:40],
    }


def table(results: dict[str, dict[str, Any]]) -> str:
    """The printed table: one block per split, overall then per kind."""
    lines = []
    for split, r in results.items():
        lines.append(f"[{split}] turns {r['turns']}, gold {r['gold']}, extracted "
                     f"{r['extracted']}, facts/turn {r['facts_per_turn']}, latency p50 "
                     f"{r['latency_ms']['p50']} ms p95 {r['latency_ms']['p95']} ms")
        lines.append(f"  {'kind':<13}{'gold':>6}{'extr':>6}{'P%':>8}{'R%':>8}{'F1':>8}")
        lines.append(f"  {'overall':<13}{r['gold']:>6}{r['extracted']:>6}{r['precision']:>8}"
                     f"{r['recall']:>8}{r['f1']:>8}")
        for kind, k in r["by_kind"].items():
            if k["gold"] or k["extracted"]:
                lines.append(f"  {kind:<13}{k['gold']:>6}{k['extracted']:>6}{k['precision']:>8}"
                             f"{k['recall']:>8}{k['f1']:>8}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Run both splits, print the table, write the JSON; 0 when the data is absent."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("data", nargs="?", default=str(DEFAULT_DATA), help="LoCoMo JSON file")
    parser.add_argument("--labels", default=str(DEFAULT_LABELS), help="label JSONL")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="result JSON")
    parser.add_argument("--split", default=None, help="only this split (tuning/test/all)")
    parser.add_argument("--show", action="store_true", help="print misses and false positives")
    args = parser.parse_args(argv)
    if not Path(args.data).is_file():
        print(f"facts_extraction: LoCoMo data not found at {args.data}; skipped "
              "(pass the path to locomo10.json)")
        return 0
    splits = [args.split] if args.split else list(SPLITS)
    results = {s: evaluate(args.labels, args.data, s) for s in splits}
    print(table(results))
    if args.show:
        for s, r in results.items():
            for m in r["misses"]:
                print(f"  [{s}] MISS {m['dia']} ({m['kind']}): {m['gold']}")
            for f in r["false_positives"]:
                print(f"  [{s}] FP   {f['dia']} ({f['kind']}): {f['fact']}")
    if not args.split:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({"limit": LIMIT, "extractor": "rules", "results": results},
                                  indent=2) + "\n", encoding="utf-8")
        print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
