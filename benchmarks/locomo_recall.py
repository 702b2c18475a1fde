"""LoCoMo recall: does Solace's faded memory still find the evidence, and the facts?

Per conversation, every turn is replayed through ``observe`` under a
:class:`solace.ReplayClock` at its session's date (``attrs={"dia_id": ...}``); the
fade runs over the real time span (``rt.settle()`` at each session boundary); then
every question is asked of Main's ``recall`` with the configuration's defaults
(read-through included; ``--own-memory-only`` turns it off). A hit is injected as
its text: a working record as it is, a long-term summary rehydrated at
``runtime.inject_rung``, one event of a faded episode as its resolved turn. In the
same run, two raw-turn baselines rank ``Speaker said, "text"`` units: BM25 (the same
stemmed BM25 Solace uses) and MiniLM flat search; "(every turn read)" is the answer
recall with every turn of the conversation injected.

Metrics, per category (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop; 5
adversarial reported apart and left out of "overall"):

* evidence recall — the share of a question's evidence ``dia_id``s among the events
  the injected hits stand for — at 5/10/25 hits and at 250/500/1,000/2,000 tokens;
* answer recall at 500/1,000/2,000 tokens — the share of the gold answer's content
  words (lower-cased, punctuation and stop words removed) present in the injected text;
* mean tokens per query (at 10 hits), recall latency p50/p95, and for Solace the share
  of Main's records at rung >= 2 or in long-term when the questions are asked.

A hit costs the tokens of the text it would be injected as (WordPiece, the one
tokenizer for every system). A token budget takes hits in rank order while they fit
(a prefix: the first hit that does not fit ends the injection).

Usage::

    python benchmarks/locomo_recall.py [DATA] [--conversations N] [--out FILE]
        [--systems solace,baselines] [--config FILE] [--agent Main] [--own-memory-only]
        [--llm-compression [--min-acceptance X]]

With ``--llm-compression`` the configured LLM (SmolLM2 by default) compresses rung 2
and the replay reports LLM calls, generated tokens and guard verdicts per event.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import trio  # noqa: E402

from solace.clock import ReplayClock  # noqa: E402
from solace.config import load_config  # noqa: E402
from solace.locomo import Conversation, Question, Turn, load_locomo, replay  # noqa: E402
from solace.memory.lexical import LexicalIndex, content_words  # noqa: E402
from solace.runtime import open_runtime  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "locomo" / "locomo10.json"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
HIT_CUTS = (5, 10, 25)
TOKEN_CUTS = (250, 500, 1000, 2000)
ANSWER_CUTS = (500, 1000, 2000)


def raw_unit(turn: Turn) -> str:
    """The baselines' unit of text for one turn."""
    return f'{turn.speaker} said, "{turn.text}"'


# ------------------------------------------------------------------------ metrics


@dataclass(frozen=True, slots=True)
class Injected:
    """One ranked hit as the benchmark sees it: the turns it stands for, its text, its cost."""

    dia_ids: frozenset[str]
    text: str
    tokens: int


def within_tokens(hits: Sequence[Injected], budget: int) -> list[Injected]:
    """The longest prefix of ``hits`` whose tokens add up to at most ``budget``."""
    out, used = [], 0
    for hit in hits:
        if used + hit.tokens > budget:
            break
        out.append(hit)
        used += hit.tokens
    return out


def evidence_recall(hits: Sequence[Injected], evidence: frozenset[str]) -> float:
    covered: set[str] = set()
    for hit in hits:
        covered |= hit.dia_ids
    return len(evidence & covered) / len(evidence)


def answer_words(answer: str) -> set[str]:
    return set(content_words(answer))


def answer_recall(hits: Sequence[Injected], words: set[str]) -> float:
    present: set[str] = set()
    for hit in hits:
        present |= set(content_words(hit.text))
    return len(words & present) / len(words)


@dataclass(slots=True)
class Tally:
    """Per-category sums of every metric for one system."""

    sums: dict[tuple[int, str], float] = field(default_factory=dict)
    counts: dict[tuple[int, str], int] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)

    def add(self, category: int, metric: str, value: float) -> None:
        key = (category, metric)
        self.sums[key] = self.sums.get(key, 0.0) + value
        self.counts[key] = self.counts.get(key, 0) + 1

    def mean(self, categories: Sequence[int], metric: str) -> float | None:
        """Mean over the categories; shares as percentages, token counts as they are."""
        total = sum(self.sums.get((c, metric), 0.0) for c in categories)
        n = sum(self.counts.get((c, metric), 0) for c in categories)
        scale = 1.0 if metric.startswith("tokens") else 100.0
        return scale * total / n if n else None

    def n(self, categories: Sequence[int], metric: str) -> int:
        return sum(self.counts.get((c, metric), 0) for c in categories)


def score_question(tally: Tally, q: Question, ranked: Sequence[Injected]) -> None:
    if q.evidence:
        for k in HIT_CUTS:
            tally.add(q.category, f"ev@{k}", evidence_recall(ranked[:k], q.evidence))
        for budget in TOKEN_CUTS:
            injected = within_tokens(ranked, budget)
            tally.add(q.category, f"ev@{budget}t", evidence_recall(injected, q.evidence))
    words = answer_words(q.answer) if q.answer else set()
    if words:
        for budget in ANSWER_CUTS:
            injected = within_tokens(ranked, budget)
            tally.add(q.category, f"ans@{budget}t", answer_recall(injected, words))
    tally.add(q.category, "tokens@10", float(sum(h.tokens for h in ranked[:10])))


# ---------------------------------------------------------------------- baselines

Ranker = Callable[[str], list[Injected]]


def bm25_ranker(units: list[Injected], depth: int) -> Ranker:
    index = LexicalIndex()
    for i, unit in enumerate(units):
        index.add(i, unit.text)

    def rank(question: str) -> list[Injected]:
        scores = index.scores(question)
        order = sorted(scores, key=lambda i: (-scores[i], i))[:depth]
        return [units[i] for i in order]

    return rank


def dense_ranker(units: list[Injected], vectors: np.ndarray, embed: Callable, depth: int) -> Ranker:
    def rank(question: str) -> list[Injected]:
        sims = vectors @ embed([question])[0]
        order = np.argsort(-sims, kind="stable")[:depth]
        return [units[int(i)] for i in order]

    return rank


def run_baselines(
    conversations: Sequence[Conversation], tokenizer, embedder, depth: int
) -> dict[str, Tally]:
    tallies = {"BM25 raw": Tally(), "MiniLM flat raw": Tally()}
    ceiling = Tally()
    for conv in conversations:
        turns = conv.turns
        texts = [raw_unit(t) for t in turns]
        counts = tokenizer.count_many(texts)
        units = [
            Injected(frozenset({t.dia_id}), x, c)
            for t, x, c in zip(turns, texts, counts, strict=True)
        ]
        vectors = embedder.embed(texts)
        rankers = {
            "BM25 raw": bm25_ranker(units, depth),
            "MiniLM flat raw": dense_ranker(units, vectors, embedder.embed, depth),
        }
        for q in conv.questions:
            for name, rank in rankers.items():
                t0 = time.perf_counter()
                ranked = rank(q.question)
                tallies[name].latencies.append(time.perf_counter() - t0)
                score_question(tallies[name], q, ranked)
            if q.answer and answer_words(q.answer):
                ceiling.add(q.category, "ans@all", answer_recall(units, answer_words(q.answer)))
    tallies["(every turn read)"] = ceiling
    return tallies


# ------------------------------------------------------------------------- Solace


async def run_solace(
    conversations: Sequence[Conversation], home: Path, args: argparse.Namespace
) -> tuple[Tally, dict[str, object]]:
    """Replay each conversation into a fresh runtime, then ask its questions."""
    tally = Tally()
    config = load_config(args.config)
    if args.llm_compression or args.min_acceptance is not None:
        memory = config.memory
        if args.llm_compression:
            memory = dataclasses.replace(memory, compression="llm")
        if args.min_acceptance is not None:
            memory = dataclasses.replace(memory, llm_min_acceptance=args.min_acceptance)
        config = dataclasses.replace(config, memory=memory)
    llm_totals: dict[str, int] = {}
    replay_seconds = 0.0
    faded_records = faded_events = total_records = total_events = 0
    rung_counts: dict[str, int] = {}
    for conv in conversations:
        clock = ReplayClock()
        async with open_runtime(home / conv.sample_id, config, clock=clock, warm_up=False) as rt:
            t0 = time.perf_counter()
            ids = await replay(rt, conv)
            replay_seconds += time.perf_counter() - t0
            for key, value in dataclasses.asdict(rt.ladder.stats).items():
                if key.startswith(("llm_", "guard_", "generated_")):
                    llm_totals[key] = llm_totals.get(key, 0) + value
            dia_of = {eid: dia for dia, eid in ids.items()}
            memory = rt.memories[args.agent]
            for record in memory.working.records():
                total_records += 1
                total_events += len(record.entry_ids)
                key = f"working r{record.rung}"
                rung_counts[key] = rung_counts.get(key, 0) + 1
                if record.rung >= 2:
                    faded_records += 1
                    faded_events += len(record.entry_ids)
            for record in memory.longterm.records():
                total_records += 1
                total_events += len(record.entry_ids)
                faded_records += 1
                faded_events += len(record.entry_ids)
                key = f"longterm r{record.rung}"
                rung_counts[key] = rung_counts.get(key, 0) + 1
            actor = rt.agent(args.agent)
            for q in conv.questions:
                t0 = time.perf_counter()
                hits = await actor.recall(q.question, k=args.depth,
                                          read_through=False if args.own_memory_only else None)
                tally.latencies.append(time.perf_counter() - t0)
                ranked = [
                    Injected(frozenset(dia_of[e] for e in h.entry_ids if e in dia_of), h.text,
                             h.tokens)
                    for h in hits
                ]
                score_question(tally, q, ranked)
            print(f"  {conv.sample_id}: {len(ids)} turns replayed; {rt.status()}", flush=True)
    turns = sum(len(c.turns) for c in conversations)
    extra: dict[str, object] = {
        "compression": config.memory.compression,
        "replay_seconds": round(replay_seconds, 1),
        "turns_per_second": round(turns / replay_seconds, 1),
        "faded_share_records": round(100.0 * faded_records / max(total_records, 1), 1),
        "faded_share_events": round(100.0 * faded_events / max(total_events, 1), 1),
        "records_by_tier_rung": dict(sorted(rung_counts.items())),
    }
    if config.memory.compression == "llm":
        extra["llm_min_acceptance"] = config.memory.llm_min_acceptance
        extra["llm"] = llm_totals
        extra["llm_calls_per_event"] = round(llm_totals.get("llm_calls", 0) / turns, 4)
        extra["generated_tokens_per_event"] = round(
            llm_totals.get("generated_tokens", 0) / turns, 2)
        extra["guard_rejections_per_event"] = round(llm_totals.get("guard_rejected", 0) / turns, 4)
    return tally, extra


# -------------------------------------------------------------------------- report

OVERALL = (1, 2, 3, 4)


def _fmt(value: float | None) -> str:
    return "   -" if value is None else f"{value:5.1f}"


def table(
    tallies: dict[str, Tally], extras: dict[str, dict[str, object]]
) -> tuple[str, dict[str, dict[str, object]]]:
    metrics = [f"ev@{k}" for k in HIT_CUTS] + [f"ev@{b}t" for b in TOKEN_CUTS]
    metrics += [f"ans@{b}t" for b in ANSWER_CUTS]
    groups: list[tuple[str, tuple[int, ...]]] = [("overall 1-4", OVERALL)]
    groups += [(f"{c} {CATEGORIES[c]}", (c,)) for c in (1, 2, 3, 4, 5)]
    lines: list[str] = []
    js: dict[str, dict[str, object]] = {}
    header = f"{'system':<20} {'category':<15} {'n':>4} " + " ".join(f"{m:>7}" for m in metrics)
    header += f" {'tok@10':>7} {'p50 ms':>7} {'p95 ms':>7}"
    lines.append(header)
    lines.append("-" * len(header))
    for name, tally in tallies.items():
        js[name] = {}
        for label, cats in groups:
            if not tally.n(cats, "ev@10") and not tally.n(cats, "ans@all"):
                continue
            row = {m: tally.mean(cats, m) for m in metrics + ["ans@all", "tokens@10"]}
            lat = np.array(tally.latencies) * 1000.0 if tally.latencies else np.zeros(1)
            p50, p95 = float(np.percentile(lat, 50)), float(np.percentile(lat, 95))
            js[name][label] = {**row, "n": tally.n(cats, "ev@10"), "p50_ms": p50, "p95_ms": p95}
            if name == "(every turn read)":
                lines.append(f"{name:<20} {label:<15} {tally.n(cats, 'ans@all'):>4} "
                             f"answer recall with every turn read: {_fmt(row['ans@all'])}")
                continue
            tok = row["tokens@10"]
            lines.append(
                f"{name:<20} {label:<15} {tally.n(cats, 'ev@10'):>4} "
                + " ".join(f"{_fmt(row[m]):>7}" for m in metrics)
                + f" {(tok or 0.0):7.0f} {p50:7.2f} {p95:7.2f}"
            )
        for key, value in extras.get(name, {}).items():
            js[name][key] = value
            lines.append(f"{name:<20} {key}: {value}")
    return "\n".join(lines), js


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", nargs="?", default=str(DEFAULT_DATA), help="LoCoMo JSON file")
    parser.add_argument("--conversations", type=int, default=None, help="only the first N")
    parser.add_argument(
        "--out", default=str(ROOT / "benchmarks" / "results" / "locomo_recall.json")
    )
    parser.add_argument("--depth", type=int, default=100, help="ranked hits kept per query")
    parser.add_argument("--config", default=None, help="Solace TOML config (default: embedded)")
    parser.add_argument("--agent", default="Main", help="whose recall is measured")
    parser.add_argument("--own-memory-only", action="store_true",
                        help="no read-through (default: the config's runtime.read_through)")
    parser.add_argument(
        "--systems", default="solace,baselines", help="comma list of: solace, baselines"
    )
    parser.add_argument("--llm-compression", action="store_true",
                        help="memory.compression = \"llm\" (the configured model)")
    parser.add_argument("--min-acceptance", type=float, default=None,
                        help="override memory.llm_min_acceptance (0 never benches the model)")
    args = parser.parse_args(argv)
    path = Path(args.data)
    if not path.is_file():
        print(f"LoCoMo data not found at {path}; skipping (pass the path as an argument).")
        return 0
    conversations = load_locomo(path, args.conversations)
    systems = {s.strip() for s in args.systems.split(",") if s.strip()}

    from solace.models.embedder import MiniLMEmbedder
    from solace.models.tokenizer import WordPieceTokenizer

    tokenizer = WordPieceTokenizer()
    tallies: dict[str, Tally] = {}
    extras: dict[str, dict[str, object]] = {}
    if "solace" in systems:
        with tempfile.TemporaryDirectory(prefix="locomo-recall-") as home:
            tally, extra = trio.run(run_solace, conversations, Path(home), args)
        tallies["Solace " + args.agent] = tally
        extras["Solace " + args.agent] = extra
    if "baselines" in systems:
        embedder = MiniLMEmbedder()
        tallies.update(run_baselines(conversations, tokenizer, embedder, args.depth))
    text, js = table(tallies, extras)
    print(f"LoCoMo recall — {len(conversations)} conversation(s), "
          f"{sum(len(c.turns) for c in conversations)} turns, "
          f"{sum(len(c.questions) for c in conversations)} questions")
    print(text)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"data": str(path), "conversations": len(conversations),
                               "results": js}, indent=2))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
