"""The workspace (issue 10) on LoCoMo conversations replayed at their real dates.

A standalone replay of what ``solace import`` will do once the workspace is wired
(the import path does not call it yet): for each session, on a replay clock at the
session's date, every turn goes through fact memory's extractor
(``FactMemory.extract_turn``, the default ``rules`` mode), the session becomes one
topic with the conversation layer's deterministic extractive summary, closed; then
``Workspace.catch_up`` and ``Workspace.heartbeat`` (which synthesises MEMORY.md and
writes the roll-ups every ``synthesize_every_hours`` of replay time). Measured:

1. daily files: how many, their sizes;
2. MEMORY.md size against raw history (WordPiece tokens) after each session (PNG);
3. tokens loaded at session start (main session) after each session (PNG);
4. file-only recall: for each question with an answer (categories 1-4), the share of
   its answer's content words (stemmed) found in MEMORY.md plus the last two daily
   files, at the question's date (after the session holding its latest evidence);
5. beside it, the runtime's recall at the same token count: the same conversation
   replayed through ``solace import``'s path (``import_batches`` on a runtime with a
   replay clock: events, fact extraction, the wired workspace), and for each question
   Main's ``recall`` (read-through, default weights) cut to as many WordPiece tokens
   as the file-only reader got at that point; the same answer-word share is scored on
   the recalled texts. ``--no-runtime`` skips it.

Embeddings: the hashing embedder by default (fast, deterministic); ``--minilm`` uses
MiniLM. Nothing is tuned: default config.

Usage::

    python benchmarks/workspace_bench.py [DATA] [--conversations N] [--minilm]
        [--out FILE] [--plot FILE]
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import trio

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from solace.clock import ReplayClock  # noqa: E402
from solace.config.schema import Config  # noqa: E402
from solace.conversation import events as cev  # noqa: E402
from solace.conversation.extractive import extractive_summary  # noqa: E402
from solace.conversation.model import Scope, ThreadItem  # noqa: E402
from solace.conversation.store import EventStore  # noqa: E402
from solace.facts import Exchange, open_fact_memory  # noqa: E402
from solace.home import Home  # noqa: E402
from solace.locomo import Conversation, load_locomo  # noqa: E402
from solace.memory.lexical import terms  # noqa: E402
from solace.models import HashingEmbedder, WordPieceTokenizer  # noqa: E402
from solace.offload import Offloader  # noqa: E402
from solace.runtime import extra_kinds, open_runtime  # noqa: E402
from solace.workspace import Workspace  # noqa: E402
from substrate import KeySource  # noqa: E402
from substrate.aio import open_trio_substrate  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "locomo" / "locomo10.json"
SCOPE = Scope("user", "Main", "org")


def _file_context(files: Path) -> str:
    """MEMORY.md plus the last two daily logs: what the file-only reader gets."""
    daily = sorted((files / "memory").glob("*.md"))[-2:]
    parts = [p.read_text() for p in [files / "MEMORY.md", *daily] if p.exists()]
    return "\n".join(parts)



def questions_by_session(conv: Any) -> dict[int, list[Any]]:
    """Answerable questions (categories 1-4) by the last session their evidence is in:
    a question is asked once that session has been replayed."""
    session_of = {t.dia_id: i for i, s in enumerate(conv.sessions) for t in s}
    by_session: dict[int, list[Any]] = defaultdict(list)
    for q in conv.questions:
        if q.answer and q.category in (1, 2, 3, 4) and q.evidence:
            known = [session_of[e] for e in q.evidence if e in session_of]
            if known:
                by_session[max(known)].append(q)
    return by_session

async def replay(conv: Conversation, home: Path, embedder: Any,
                 tok: WordPieceTokenizer) -> dict[str, Any]:
    config = Config()
    where = Home.at(home, config)
    clock = ReplayClock(conv.sessions[0][0].at)
    sub = await open_trio_substrate(
        where.substrate_dir, key_source=KeySource(key_file=where.key_file),
        extra_kinds=extra_kinds(config), fsync="never")
    by_session = questions_by_session(conv)
    rows, scores = [], []
    raw_tokens = 0
    started = time.perf_counter()
    async with sub:
        offloader = Offloader(1)
        fm = await open_fact_memory(facts_dir=where.facts_dir, substrate=sub, config=config,
                                    embedder=embedder, tokenizer=tok, offloader=offloader,
                                    clock=clock)
        ws = await Workspace.open(where.root, config, sub, clock, facts=fm, embedder=embedder,
                                  tokenizer=tok, offloader=offloader)
        for i, session in enumerate(conv.sessions):
            for turn in session:
                clock.observe(turn.at)
                raw_tokens += tok.count(f"{turn.speaker}: {turn.text}")
                await fm.extract_turn("user", Exchange(turn.text, ts=turn.at.timestamp(),
                                                       speaker=turn.speaker))
            items = [ThreadItem(n, t.at.timestamp(), "message", "user",
                                f"{t.speaker}: {t.text}", f"t{i}")
                     for n, t in enumerate(session)]
            extract = extractive_summary(items, "", tok)
            title = extract.title or f"Session {i + 1}"
            await EventStore(sub).append([
                cev.open_topic(SCOPE, f"s{i}", f"t{i}", origin="new", title=title),
                cev.activate_topic(SCOPE, f"s{i}", f"t{i}"),
                cev.summary(SCOPE, f"s{i}", f"t{i}", title=title, text=extract.summary,
                            mode="deterministic", include=extract.include_in_memory,
                            keep=extract.include_in_memory, count=len(items), close=True),
            ], clock.now())
            await ws.heartbeat()
            ctx = await ws.session_context(session_type="main")
            memory = ws.root / "MEMORY.md"
            context = _file_context(ws.root)
            context_terms = set(terms(context))
            for q in by_session.get(i, []):
                words = set(terms(str(q.answer)))
                if words:
                    scores.append((q.category, len(words & context_terms) / len(words)))
            daily = sorted((ws.root / "memory").glob("*.md"))
            rows.append({
                "session": i + 1, "date": session[0].at.date().isoformat(),
                "raw_tokens": raw_tokens,
                "memory_tokens": tok.count(memory.read_text()) if memory.exists() else 0,
                "session_start_tokens": ctx.tokens, "file_context_tokens": tok.count(context),
                "daily_files": len(daily), "daily_bytes": sum(p.stat().st_size for p in daily),
            })
        await ws.synthesize()
        await ws.rollup()
        daily = sorted((ws.root / "memory").glob("*.md"))
        sizes = [p.stat().st_size for p in daily]
        weekly = list((ws.root / "memory" / "weekly").glob("*.md"))
        monthly = list((ws.root / "memory" / "monthly").glob("*.md"))
        seconds = time.perf_counter() - started
        counters = dict(ws.counters)
    return {"sample_id": conv.sample_id, "sessions": len(conv.sessions),
            "turns": len(conv.turns), "rows": rows, "scores": scores,
            "daily_files": len(daily), "daily_bytes_mean": sum(sizes) / max(1, len(sizes)),
            "daily_bytes_max": max(sizes, default=0), "weekly_files": len(weekly),
            "monthly_files": len(monthly), "seconds": seconds, "counters": counters}




async def runtime_recall(conv: Conversation, budgets: list[int], minilm: bool,
                         home: Path) -> list[tuple[int, float]]:
    """(category, answer-word share) per question, from the runtime's recall cut to
    ``budgets[i]`` tokens after session ``i`` (the file-only reader's token count)."""
    from solace.config import ModelsConfig, SubstrateConfig
    from solace.importing import import_batches
    from solace.locomo import session_items

    config = Config(models=ModelsConfig(embedder="minilm" if minilm else "hashing",
                                        llm_backend="none"),
                    substrate=SubstrateConfig(fsync="never"))
    by_session = questions_by_session(conv)
    scores: list[tuple[int, float]] = []
    async with open_runtime(home, config, clock=ReplayClock(conv.sessions[0][0].at),
                            warm_up=False) as rt:
        for i, batch in enumerate(session_items(conv)):
            async for _ in import_batches(rt, [batch]):
                pass
            for q in by_session.get(i, []):
                hits = await rt.recall("Main", q.question, 64)
                kept, used = [], 0
                for hit in hits:
                    if used + hit.tokens > budgets[i]:
                        break
                    kept.append(hit.text)
                    used += hit.tokens
                words = set(terms(str(q.answer)))
                if words:  # scored as the file-only reader's
                    context = set(terms("\n".join(kept)))
                    scores.append((q.category, len(words & context) / len(words)))
    return scores


def table(results: list[dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    lines = [f"{'conv':<8}{'sess':>5}{'turns':>6}{'daily':>6}{'B/day':>7}{'wk':>4}{'mo':>4}"
             f"{'raw tok':>9}{'MEMORY tok':>11}{'start tok min/mean/max':>24}"
             f"{'file recall':>12}{'s':>7}"]
    all_scores: list[tuple[int, float]] = []
    runtime_scores: list[tuple[int, float]] = []
    for r in results:
        last = r["rows"][-1]
        start = [row["session_start_tokens"] for row in r["rows"]]
        recall = sum(s for _, s in r["scores"]) / max(1, len(r["scores"]))
        all_scores += r["scores"]
        runtime_scores += r.get("runtime_scores", [])
        lines.append(
            f"{r['sample_id']:<8}{r['sessions']:>5}{r['turns']:>6}{r['daily_files']:>6}"
            f"{r['daily_bytes_mean']:>7.0f}{r['weekly_files']:>4}{r['monthly_files']:>4}"
            f"{last['raw_tokens']:>9}{last['memory_tokens']:>11}"
            f"{min(start):>8}/{sum(start) / len(start):>6.0f}/{max(start):>6}"
            f"{100 * recall:>11.1f}%{r['seconds']:>7.1f}")
    by_cat: dict[int, list[float]] = defaultdict(list)
    for cat, s in all_scores:
        by_cat[cat].append(s)
    summary = {
        "file_only_answer_word_recall": sum(s for _, s in all_scores) / max(1, len(all_scores)),
        "questions": len(all_scores),
        "by_category": {c: sum(v) / len(v) for c, v in sorted(by_cat.items())},
    }
    lines.append(f"file-only answer-word recall (MEMORY.md + last two daily logs), categories"
                 f" 1-4: {100 * summary['file_only_answer_word_recall']:.1f}% of "
                 f"{summary['questions']} questions; by category: " + ", ".join(
                     f"{c}: {100 * v:.1f}%" for c, v in summary["by_category"].items()))
    if runtime_scores:
        rt_cat: dict[int, list[float]] = defaultdict(list)
        for cat, s in runtime_scores:
            rt_cat[cat].append(s)
        summary["runtime_answer_word_recall"] = (sum(s for _, s in runtime_scores)
                                                 / len(runtime_scores))
        summary["runtime_questions"] = len(runtime_scores)
        summary["runtime_by_category"] = {c: sum(v) / len(v) for c, v in sorted(rt_cat.items())}
        lines.append(f"runtime recall at the same token count (Main's recall, read-through): "
                     f"{100 * summary['runtime_answer_word_recall']:.1f}% of "
                     f"{summary['runtime_questions']} questions; by category: " + ", ".join(
                         f"{c}: {100 * v:.1f}%"
                         for c, v in summary["runtime_by_category"].items()))
    return "\n".join(lines), summary


def plot(results: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for r in results:
        xs = [row["session"] for row in r["rows"]]
        (line,) = axes[0].plot(xs, [row["raw_tokens"] for row in r["rows"]], linestyle="--",
                               label=f"{r['sample_id']} raw history")
        axes[0].plot(xs, [row["memory_tokens"] for row in r["rows"]], color=line.get_color(),
                     label=f"{r['sample_id']} MEMORY.md")
        axes[1].plot(xs, [row["session_start_tokens"] for row in r["rows"]],
                     label=r["sample_id"])
    axes[0].set_title("MEMORY.md against raw history (WordPiece tokens)")
    axes[1].set_title("tokens loaded at session start (main session)")
    for ax in axes:
        ax.set_xlabel("LoCoMo session (replayed at its date)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data", nargs="?", default=str(DEFAULT_DATA))
    ap.add_argument("--conversations", type=int, default=10)
    ap.add_argument("--minilm", action="store_true")
    ap.add_argument("--no-runtime", action="store_true",
                    help="skip the runtime's recall at the same token count")
    ap.add_argument("--out", default=str(ROOT / "benchmarks/results/workspace_bench.json"))
    ap.add_argument("--plot", default=str(ROOT / "benchmarks/results/workspace_bench.png"))
    args = ap.parse_args(argv)
    convs = load_locomo(args.data, limit=args.conversations)
    tok = WordPieceTokenizer()
    if args.minilm:
        from solace.models import MiniLMEmbedder

        embedder: Any = MiniLMEmbedder()
    else:
        embedder = HashingEmbedder()
    results = []
    for conv in convs:
        with tempfile.TemporaryDirectory() as tmp:
            result = trio.run(replay, conv, Path(tmp) / "home", embedder, tok)
        if not args.no_runtime:
            budgets = [row["file_context_tokens"] for row in result["rows"]]
            with tempfile.TemporaryDirectory() as tmp:
                result["runtime_scores"] = trio.run(runtime_recall, conv, budgets,
                                                    args.minilm, Path(tmp) / "rt")
        results.append(result)
    text, summary = table(results)
    print(text)
    out = {"benchmark": "workspace_bench", "embedder": getattr(embedder, "name", "?"),
           "python": platform.python_version(), "summary": summary,
           "conversations": [{k: v for k, v in r.items() if k not in ("scores", "runtime_scores")}
                             for r in results]}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1))
    plot(results, Path(args.plot))
    print(f"wrote {args.out} and {args.plot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
