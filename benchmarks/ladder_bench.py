"""The fidelity ladder on LoCoMo: sizes per rung, what survives, what it costs.

Every session of every conversation is one episode: its turns become rung-0
records ("Speaker: text", timed 30 s apart from the session's date) and are moved
0 -> 1 -> 2 -> 3 by the deterministic :class:`~solace.memory.ladder.Ladder`, one
``demote`` call per session and rung. Reported per rung: size as a share of the raw
tokens the record stands for (mean, p10, p90); salient survival (names + numbers +
dates) across 1 -> 2 and 0 -> 2; the invented-entity rate (records whose rung-2 text
has a name, number or date its rung-1 input lacks, by the guard's rules); wall time
and events/s of the ladder (each turn first gets its ingest embedding, as at run
time, timed apart). 0 -> 2 survival is measured against the raw turns with relative
dates and "I"/"you" resolved as rung 1 resolves them (so "yesterday" is kept if the
date it means is), and, for reference, against the raw text as written.

Baseline, same run, same sizes: truncation — the first sentences of the (resolved)
raw session up to as many tokens as the ladder's form of that episode has. Ratios
ladder / baseline are reported.

``--llm``: the first ``--limit`` episodes are also taken 1 -> 2 by the local
SmolLM2-135M GGUF (``compression = "llm"``, batched, guarded): LLM calls per
ingested event, generated tokens, guard verdicts and reasons, survival, and time —
with the projected time for all turns.

Usage::

    python benchmarks/ladder_bench.py [DATA] [--conversations N] [--embedder hashing]
                                      [--llm --limit 24] [--out FILE]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from solace.config import MemoryConfig, ModelsConfig  # noqa: E402
from solace.locomo import Conversation, load_locomo  # noqa: E402
from solace.memory.ladder import Ladder, Turn, format_raw, salient_survival  # noqa: E402
from solace.memory.ladder.extractive import resolve_sentence  # noqa: E402
from solace.memory.ladder.sentences import split_sentences  # noqa: E402
from solace.memory.record import MemoryRecord  # noqa: E402
from solace.models import Guard, GuardPolicy, WordPieceTokenizer, build_embedder  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "locomo" / "locomo10.json"
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "ladder_bench.json"


def episodes(
    conversations: Sequence[Conversation], tokenizer: WordPieceTokenizer
) -> list[list[MemoryRecord]]:
    """One list of rung-0 records per session (record and entry ids unique overall)."""
    out = []
    next_id = 1
    for conversation in conversations:
        for session in conversation.sessions:
            texts = [format_raw(t.speaker, t.text) for t in session]
            counts = tokenizer.count_many(texts)
            records = []
            for turn, text, tokens in zip(session, texts, counts, strict=True):
                ts = turn.at.timestamp()
                records.append(
                    MemoryRecord(
                        record_id=next_id, agent="Main", rung=0, text=text, tokens=tokens,
                        source_tokens=tokens, entry_ids=(next_id,), speakers=(turn.speaker,),
                        first_event_ts=ts, event_ts=ts, created=ts, last_referenced=ts,
                    )
                )  # fmt: skip
                next_id += 1
            out.append(records)
    return out


def resolved_raw(records: Sequence[MemoryRecord]) -> str:
    """The raw turns with dates and persons resolved as rung 1 resolves them."""
    speakers = list(dict.fromkeys(s for r in records for s in r.speakers))
    lines = []
    for record in records:
        speaker = record.speakers[0]
        others = [s for s in speakers if s != speaker]
        turn = Turn(speaker, record.text[len(speaker) + 2 :], record.event_ts,
                    others[0] if len(speakers) == 2 else "")  # fmt: skip
        lines += [resolve_sentence(s, turn) for s in split_sentences(turn.content)]
    return "\n".join(lines)


def truncate(text: str, budget: int, tokenizer: WordPieceTokenizer) -> str:
    """Baseline: the first sentences of ``text`` within ``budget`` tokens (at least one)."""
    kept: list[str] = []
    used = 0
    for sentence in (s for line in text.splitlines() for s in split_sentences(line)):
        tokens = tokenizer.count(sentence)
        if kept and used + tokens > budget:
            break
        kept.append(sentence)
        used += tokens
    return "\n".join(kept)


def spread(values: Sequence[float]) -> dict[str, float]:
    array = np.asarray(values, dtype=np.float64)
    if array.size == 0:
        return {"n": 0, "mean": float("nan"), "p10": float("nan"), "p90": float("nan")}
    return {
        "n": int(array.size),
        "mean": float(array.mean()),
        "p10": float(np.percentile(array, 10)),
        "p90": float(np.percentile(array, 90)),
    }


def share(kept: int, total: int) -> float:
    return kept / total if total else 1.0


def run_deterministic(
    eps: list[list[MemoryRecord]], ladder: Ladder, tokenizer: WordPieceTokenizer
) -> tuple[dict[str, Any], list[MemoryRecord]]:
    guard = Guard(GuardPolicy(), tokenizer)  # only to measure invention, by the guard's rules
    ratios: dict[int, list[float]] = {1: [], 2: [], 3: []}
    base_ratios: dict[int, list[float]] = {1: [], 2: []}
    survival = {"1->2": [0, 0], "0->2 resolved": [0, 0], "0->2 as written": [0, 0],
                "baseline 0->2 resolved": [0, 0]}  # fmt: skip
    invented_records = invented_items = 0
    seconds = {1: 0.0, 2: 0.0, 3: 0.0}
    ingest_seconds = 0.0
    rung1_all: list[MemoryRecord] = []
    for records in eps:
        start = time.perf_counter()  # each turn carries its ingest embedding, as at run time
        vectors = ladder.embedder.embed([r.text for r in records])
        records = [dataclasses.replace(r, embedding=v)
                   for r, v in zip(records, vectors, strict=True)]
        ingest_seconds += time.perf_counter() - start
        current = records
        forms: dict[int, list[MemoryRecord]] = {}
        sources_of: dict[int, tuple[int, ...]] = {}  # rung-2 record id -> its rung-1 ids
        for rung in (1, 2, 3):
            start = time.perf_counter()
            demotions = ladder.demote(current, now=records[-1].event_ts)
            seconds[rung] += time.perf_counter() - start
            current = [d.record for d in demotions]
            forms[rung] = current
            if rung == 2:
                sources_of = {d.record.record_id: d.sources for d in demotions}
            ratios[rung] += [r.tokens / r.source_tokens for r in current]
        rung1_all += forms[1]
        raw = "\n".join(r.text for r in records)
        resolved = resolved_raw(records)
        rung1_text = "\n".join(r.text for r in forms[1])
        rung2_text = "\n".join(r.text for r in forms[2])
        source = sum(r.source_tokens for r in records)
        for key, (before, after) in {
            "1->2": (rung1_text, rung2_text),
            "0->2 resolved": (resolved, rung2_text),
            "0->2 as written": (raw, rung2_text),
        }.items():
            total, kept = salient_survival(before, after)
            survival[key][0] += total
            survival[key][1] += kept
        for rung in (1, 2):
            # the same number of tokens the ladder used for this episode at this rung
            cut = truncate(resolved, sum(r.tokens for r in forms[rung]), tokenizer)
            base_ratios[rung].append(tokenizer.count(cut) / source)
            if rung == 2:
                total, kept = salient_survival(resolved, cut)
                survival["baseline 0->2 resolved"][0] += total
                survival["baseline 0->2 resolved"][1] += kept
        rung1_text_of = {r.record_id: r.text for r in forms[1]}
        for two in forms[2]:  # rung-1 records of one episode may merge again on the way
            one = "\n".join(rung1_text_of[i] for i in sources_of[two.record_id])
            verdict = guard.check(one, two.text)
            invented_records += bool(verdict.invented)
            invented_items += len(verdict.invented)
    events = sum(len(r) for r in eps)
    wall = sum(seconds.values())
    result = {
        "episodes": len(eps),
        "events": events,
        "ratios": {f"rung{r}": spread(v) for r, v in ratios.items()},
        "baseline_ratios": {f"rung{r}": spread(v) for r, v in base_ratios.items()},
        "survival": {k: share(kept, total) for k, (total, kept) in survival.items()},
        "salient_items": {k: total for k, (total, _) in survival.items()},
        "invented_rate_1_to_2": invented_records / max(1, ratios[2].__len__()),
        "invented_items": invented_items,
        "seconds": {f"to_rung{r}": s for r, s in seconds.items()},
        "ingest_embed_seconds": ingest_seconds,
        "wall_seconds": wall,
        "events_per_second": events / wall if wall else float("inf"),
        "stats": {
            "demotions": ladder.stats.demotions,
            "merges": ladder.stats.merges,
            "salient_survival_1_to_2": ladder.stats.salient_survival,
        },
    }
    return result, rung1_all


def run_llm(
    rung1: list[MemoryRecord], tokenizer: WordPieceTokenizer, embedder: Any, limit: int
) -> dict[str, Any]:
    from solace.models import build_llm

    llm = build_llm(ModelsConfig(llm_backend="llama-cpp"))
    config = MemoryConfig(compression="llm")
    guard = Guard(GuardPolicy(keep_share=config.guard_keep_share), tokenizer)
    ladder = Ladder(tokenizer=tokenizer, embedder=embedder, config=config, llm=llm, guard=guard)
    sample = rung1[:limit]
    events = sum(len(r.entry_ids) for r in sample)
    failures: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            failures.append(record.getMessage()[:200])

    logging.getLogger("solace.memory.ladder.llm_compress").addHandler(Collect(logging.INFO))
    logging.getLogger("solace.memory.ladder.llm_compress").setLevel(logging.INFO)
    start = time.perf_counter()
    by_source = {d.sources[0]: d.record for d in ladder.demote(sample, now=0.0)}
    wall = time.perf_counter() - start
    out = [by_source[r.record_id] for r in sample]  # demote returns event-time order
    stats = ladder.stats
    invented = sum(
        bool(Guard(GuardPolicy(), tokenizer).check(a.text, b.text).invented)
        for a, b in zip(sample, out, strict=True)
    )
    all_events = 5882
    return {
        "episodes": len(sample),
        "events": events,
        "llm_calls": stats.llm_calls,
        "llm_calls_per_event": stats.llm_calls / events if events else 0.0,
        "llm_failures": stats.llm_failures,
        "generated_tokens": stats.generated_tokens,
        "generated_tokens_per_event": stats.generated_tokens / events if events else 0.0,
        "guard_accepted": stats.guard_accepted,
        "guard_rejected": stats.guard_rejected,
        "too_long": stats.llm_too_long,
        "missing": stats.llm_missing,
        "guard_reasons": {
            k: v for k, v in guard.counts.items() if k not in ("accepted", "rejected")
        },
        "survival_1_to_2": stats.salient_survival,
        "invented_rate_1_to_2": invented / max(1, len(out)),
        "rung2_ratio": spread([r.tokens / r.source_tokens for r in out]),
        "wall_seconds": wall,
        "events_per_second": events / wall if wall else float("inf"),
        "projected_seconds_all_locomo": all_events / (events / wall) if events and wall else None,
        "llm_backend_seconds": llm.stats.seconds,
        "llm_tokens_per_second": llm.stats.tokens_per_second,
        "failure_messages": failures,
        "examples": [
            {"rung1": a.text, "rung2": b.text} for a, b in list(zip(sample, out, strict=True))[:3]
        ],
    }


def table(result: dict[str, Any]) -> str:
    det = result["deterministic"]
    lines = [
        f"Ladder on LoCoMo: {det['episodes']} episodes, {det['events']} events "
        f"(embedder {result['embedder']}, torch threads {result['torch_threads']})",
        "",
        f"{'rung':<8}{'mean':>8}{'p10':>8}{'p90':>8}{'baseline':>10}{'ratio':>8}",
    ]
    for rung in (1, 2, 3):
        r = det["ratios"][f"rung{rung}"]
        base = det["baseline_ratios"].get(f"rung{rung}")
        base_mean = f"{base['mean']:.3f}" if base else "-"
        rel = f"{r['mean'] / base['mean']:.2f}" if base else "-"
        lines.append(
            f"{rung:<8}{r['mean']:>8.3f}{r['p10']:>8.3f}{r['p90']:>8.3f}{base_mean:>10}{rel:>8}"
        )
    lines += ["", f"{'salient survival':<28}{'share':>8}{'items':>8}"]
    for key, value in det["survival"].items():
        lines.append(f"{key:<28}{value:>8.3f}{det['salient_items'][key]:>8}")
    base, mine = det["survival"]["baseline 0->2 resolved"], det["survival"]["0->2 resolved"]
    passes = ", ".join(f"{k} {v:.1f} s" for k, v in det["seconds"].items())
    lines += [
        f"{'ladder / baseline 0->2':<28}{mine / base if base else float('nan'):>8.2f}",
        "",
        f"invented-entity rate 1->2: {det['invented_rate_1_to_2']:.3f} of records "
        f"({det['invented_items']} items)",
        f"wall: {det['wall_seconds']:.1f} s  ({passes})  events/s: "
        f"{det['events_per_second']:.0f}; before it, ingest embedding "
        f"{det['ingest_embed_seconds']:.1f} s",
    ]
    if "llm" in result:
        llm = result["llm"]
        lines += [
            "",
            f"LLM rung 2 (SmolLM2-135M GGUF) on {llm['episodes']} episodes, "
            f"{llm['events']} events:",
            f"  calls {llm['llm_calls']} ({llm['llm_calls_per_event']:.4f}/event), failures "
            f"{llm['llm_failures']}, generated tokens {llm['generated_tokens']} "
            f"({llm['generated_tokens_per_event']:.2f}/event)",
            f"  guard accepted {llm['guard_accepted']}, rejected {llm['guard_rejected']}, too long "
            f"{llm['too_long']}, missing {llm['missing']}; reasons {llm['guard_reasons']}",
            f"  survival 1->2 {llm['survival_1_to_2']:.3f}, invented rate "
            f"{llm['invented_rate_1_to_2']:.3f}, rung-2 ratio mean "
            f"{llm['rung2_ratio']['mean']:.3f}",
            f"  wall {llm['wall_seconds']:.1f} s (in the model {llm['llm_backend_seconds']:.1f} s, "
            f"{llm['llm_tokens_per_second']:.1f} generated tokens/s), events/s "
            f"{llm['events_per_second']:.1f}, projected all LoCoMo 1->2 "
            f"{llm['projected_seconds_all_locomo'] or 0:.0f} s",
        ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", nargs="?", default=str(DEFAULT_DATA), help="locomo10.json")
    parser.add_argument("--conversations", type=int, default=None, help="first N only")
    parser.add_argument("--embedder", choices=("minilm", "hashing"), default="minilm")
    parser.add_argument("--llm", action="store_true", help="also compress rung 2 with SmolLM2")
    parser.add_argument("--limit", type=int, default=24, help="episodes for the --llm run")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="JSON results file")
    parser.add_argument(
        "--torch-threads", type=int, default=1,
        help="torch intra-op threads for MiniLM (0: torch's default). On a busy 2-core "
        "machine 2 threads oversubscribe and one embed call gets ~8x slower",
    )  # fmt: skip
    args = parser.parse_args(argv)
    data = Path(args.data)
    if not data.is_file():
        print(f"LoCoMo data not found at {data}; skipping (pass its path as DATA)")
        return 0
    if args.torch_threads > 0 and args.embedder == "minilm":
        import torch

        torch.set_num_threads(args.torch_threads)
    tokenizer = WordPieceTokenizer()
    embedder = build_embedder(ModelsConfig(embedder=args.embedder))
    embedder.embed(["warm-up"])  # load the model outside the timed passes
    conversations = load_locomo(data, args.conversations)
    eps = episodes(conversations, tokenizer)
    ladder = Ladder(tokenizer=tokenizer, embedder=embedder, config=MemoryConfig())
    result: dict[str, Any] = {
        "data": str(data), "embedder": embedder.name, "torch_threads": args.torch_threads,
    }  # fmt: skip
    result["deterministic"], rung1 = run_deterministic(eps, ladder, tokenizer)
    if args.llm:
        result["llm"] = run_llm(rung1, tokenizer, embedder, args.limit)
    print(table(result))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2, default=float) + "\n", encoding="utf-8")
    print(f"\nwrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
