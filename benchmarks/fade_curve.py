"""Fade curve: replay a real LoCoMo conversation at its real dates through two agents.

Each turn is appended to a fresh substrate at its session's date (``solace.locomo``
spacing) on a :class:`~solace.clock.ReplayClock`, ingested by two agents with
different budgets (default: Supervisor, 12,000 tokens, and Mouth, 1,024 tokens, with
their configured fade weights), and each agent's fade is settled at that instant —
what the fade coroutine does as time passes. After every turn the working tokens per
rung, the long-term tokens and the raw history are sampled; a PNG plots them.

Reported, per agent:

* working tokens stay within the budget while the raw history grows (max working /
  budget over every sample);
* compression ratio per rung: tokens / source tokens of every record at that rung;
* salient survival at rung 2: the share of names, numbers and dates of the rung-1
  text kept by rung 2 (the ladder's own count), and of the raw events (recomputed);
* invented-entity rate of rung-2 texts: their names/numbers/dates absent from the
  raw events (the guard's test);
* per event: LLM calls, generated tokens, guard rejections; and the wall time.

Baseline in the same run: the raw history (what a memory without fade would hold).
Default compression is deterministic; ``--llm`` compresses rung 2 with the local GGUF
model (SmolLM2-135M) behind the guard.

Usage::

    python benchmarks/fade_curve.py [DATA] [--conversation 0] [--agents Supervisor,Mouth]
        [--llm] [--hashing] [--turns N] [--out FILE] [--png FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import trio  # noqa: E402

from solace.clock import ReplayClock  # noqa: E402
from solace.config import Config, MemoryConfig  # noqa: E402
from solace.locomo import load_locomo  # noqa: E402
from solace.memory import AgentMemory  # noqa: E402
from solace.memory.ladder import Ladder, format_raw, salient_survival  # noqa: E402
from solace.models import (  # noqa: E402
    Guard,
    HashingEmbedder,
    MiniLMEmbedder,
    WordPieceTokenizer,
    salient,
)
from solace.models.embedding_cache import SharedEmbedder  # noqa: E402
from solace.offload import Offloader  # noqa: E402
from substrate.aio import open_trio_substrate  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "locomo" / "locomo10.json"
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "fade_curve.json"
DEFAULT_PNG = ROOT / "benchmarks" / "results" / "fade_curve.png"


@dataclass(frozen=True, slots=True)
class Heard:
    speaker: str
    emotional_weight: float = 0.0
    tags: tuple[str, ...] = ()
    private: bool = False


def perceive(events: Sequence[Any]) -> Iterable[tuple[Any, Heard]]:
    """Both agents hear every message (a rebuild would make the same records)."""
    return ((e, Heard(e.agent)) for e in events if e.kind == "message")


def sample(memory: AgentMemory, at: float, history: int) -> dict[str, Any]:
    lt = {1: 0, 2: 0, 3: 0}
    for record in memory.longterm.records():
        lt[record.rung] += record.tokens
    return {"t": at, "history": history, "working": memory.working.total_tokens,
            "budget": memory.working.budget_tokens,
            "rungs": memory.working.tokens_by_rung(), "longterm": lt,
            "longterm_records": len(memory.longterm)}


async def quality(memory: AgentMemory, substrate: Any, guard: Guard) -> dict[str, Any]:
    """Compression per rung (records held at the end); survival and invention of every
    rung-2 text the fade produced (read back from its fade events) against raw events."""
    records = memory.working.records() + list(memory.longterm.records())
    ratio: dict[str, Any] = {}
    for rung in (0, 1, 2, 3):
        at = [r for r in records if r.rung == rung]
        if at:
            ratio[str(rung)] = {"records": len(at), "ratio": round(
                sum(r.tokens for r in at) / max(1, sum(r.source_tokens for r in at)), 4)}
    total = kept = out_items = with_invention = n2 = 0
    invented = {"name": 0, "number": 0, "date": 0}
    for fade in await substrate.scan(agent=memory.agent, kind="fade"):
        attrs = fade.attrs
        if attrs["op"] != "demote" or attrs["tier"] != "working" or attrs["rung"] != "2":
            continue
        events = [await substrate.get(int(e)) for e in json.loads(attrs["entry_ids"])]
        raw = "\n".join(format_raw(e.agent, e.content) for e in events)
        t, k = salient_survival(raw, fade.content)
        total, kept = total + t, kept + k
        verdict = guard.check(raw, fade.content)
        for item in verdict.invented:
            invented[item.split(":", 1)[0]] += 1
        out_items += len(salient(fade.content))
        with_invention += bool(verdict.invented)
        n2 += 1
    return {
        "compression_by_rung": ratio,
        "rung2_texts": n2,
        "salient_survival_rung1_to_2": round(memory.ladder.stats.salient_survival, 4),
        "salient_survival_raw_to_2": round(kept / total, 4) if total else None,
        "invented_item_rate_rung2": round(sum(invented.values()) / out_items, 4)
        if out_items else 0.0,
        "invented_by_kind_rung2": invented,
        "rung2_texts_with_invention": with_invention,
    }


async def replay(args: argparse.Namespace) -> dict[str, Any]:
    conversation = load_locomo(args.data)[args.conversation]
    turns = conversation.turns[: args.turns] if args.turns else conversation.turns
    config = Config()
    tokenizer = WordPieceTokenizer()
    embedder = SharedEmbedder(HashingEmbedder(384) if args.hashing else MiniLMEmbedder())
    llm = None
    memory_config = MemoryConfig()
    if args.llm:
        from solace.models import LlamaCppLLM

        llm = LlamaCppLLM()
        memory_config = MemoryConfig(compression="llm")
    offloader = Offloader(2)
    clock = ReplayClock(turns[0].at)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="solace-fade-curve-") as tmp:
        sub = await open_trio_substrate(Path(tmp) / "substrate", bytes(32), fsync="never",
                                        extra_kinds=("fade",))
        agents = args.agents.split(",")
        ladders = {a: Ladder(tokenizer=tokenizer, embedder=embedder, config=memory_config,
                             llm=llm) for a in agents}
        memories = {
            a: await AgentMemory.open(
                a, config=config.agent(a), memory_config=memory_config,
                directory=Path(tmp) / "memory" / a, substrate=sub, ladder=ladders[a],
                embedder=embedder, tokenizer=tokenizer, offloader=offloader, clock=clock,
                perceive=perceive)
            for a in agents
        }
        samples: dict[str, list[dict[str, Any]]] = {a: [] for a in agents}
        history = 0
        for turn in turns:
            at = clock.observe(turn.at)
            for memory in memories.values():  # the time passed since the last turn
                await memory.settle()
            eid = await sub.append(turn.speaker, "message", turn.text, ts=at)
            event = await sub.get(eid)
            history += tokenizer.count(format_raw(turn.speaker, turn.text))
            for name, memory in memories.items():
                await memory.ingest(event, speaker=turn.speaker)
                await memory.settle()
                samples[name].append(sample(memory, at, history))
        wall = time.perf_counter() - started
        guard = Guard(tokenizer=tokenizer)
        out: dict[str, Any] = {}
        for name, memory in memories.items():
            stats = memory.ladder.stats
            rows = samples[name]
            out[name] = {
                "budget": memory.working.budget_tokens,
                "max_working_over_budget": round(max(r["working"] / r["budget"] for r in rows), 4),
                "final_working": rows[-1]["working"], "final_history": rows[-1]["history"],
                "final_longterm_tokens": sum(rows[-1]["longterm"].values()),
                "longterm_records": len(memory.longterm),
                "working_records": len(memory.working),
                **(await quality(memory, sub, guard)),
                "per_event": {
                    "llm_calls": round(stats.llm_calls / len(turns), 4),
                    "generated_tokens": round(stats.generated_tokens / len(turns), 3),
                    "guard_rejections": round(stats.guard_rejected / len(turns), 4),
                },
                "ladder": {"demotions": stats.demotions, "merges": stats.merges,
                           "llm_calls": stats.llm_calls, "llm_failures": stats.llm_failures,
                           "guard_accepted": stats.guard_accepted,
                           "guard_rejected": stats.guard_rejected},
                "counters": memory.counters.as_dict(),
                "samples": rows,
            }
        await sub.aclose()
    return {"benchmark": "fade_curve", "conversation": conversation.sample_id,
            "turns": len(turns), "sessions": len(conversation.sessions),
            "compression": memory_config.compression,
            "embedder": embedder.name, "wall_seconds": round(wall, 1), "agents": out}


def plot(result: dict[str, Any], png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from datetime import UTC, datetime

    import matplotlib.pyplot as plt

    agents = result["agents"]
    fig, axes = plt.subplots(len(agents), 1, figsize=(12, 4.2 * len(agents)), sharex=True)
    for ax, (name, data) in zip(np.atleast_1d(axes), agents.items(), strict=True):
        rows = data["samples"]
        x = np.arange(1, len(rows) + 1)
        step = {"drawstyle": "steps-post"}
        ax.plot(x, [r["history"] for r in rows], color="grey", label="raw history (no fade)",
                **step)
        ax.plot(x, [sum(r["longterm"].values()) for r in rows], color="tab:purple",
                label="long-term tokens", **step)
        for rung, color in ((0, "tab:red"), (1, "tab:orange"), (2, "tab:green")):
            ax.plot(x, [r["rungs"][rung] for r in rows], color=color, lw=0.8,
                    label=f"working rung {rung}", **step)
        ax.plot(x, [r["working"] for r in rows], color="black", lw=1.5, label="working total",
                **step)
        ax.axhline(data["budget"], color="black", ls="--", lw=1, label="budget")
        days = [datetime.fromtimestamp(r["t"], UTC).date() for r in rows]
        starts = [i for i in range(len(rows)) if i == 0 or days[i] != days[i - 1]]
        for i in starts:
            ax.axvline(i + 1, color="lightgrey", lw=0.6, zorder=0)
        ax.set_yscale("symlog", linthresh=100)
        ax.set_ylim(0, max(r["history"] for r in rows) * 1.5)
        ax.set_ylabel("tokens")
        ax.set_title(f"{name}: working budget {data['budget']:,} tokens "
                     "(grey lines: a new day's session)")
        ax.legend(loc="upper left", fontsize=7, ncol=3)
        top = ax.secondary_xaxis("top")
        top.set_xticks([i + 1 for i in starts[::3]],
                       labels=[days[i].isoformat() for i in starts[::3]], fontsize=7)
    np.atleast_1d(axes)[-1].set_xlabel("turns replayed")
    fig.suptitle(f"LoCoMo {result['conversation']}: {result['turns']} turns at their real "
                 f"dates, {result['compression']} compression")
    fig.tight_layout()
    png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(png, dpi=110)


def report(result: dict[str, Any]) -> None:
    print(f"LoCoMo {result['conversation']}: {result['turns']} turns, {result['sessions']} "
          f"sessions, {result['compression']} compression, {result['embedder']}, "
          f"wall {result['wall_seconds']} s")
    print(f"{'agent':<11} {'budget':>7} {'max w/b':>8} {'working':>8} {'history':>8} "
          f"{'long-term':>9} {'r1 ratio':>8} {'r2 ratio':>8} {'r3 ratio':>8} {'keep1>2':>8} "
          f"{'keepraw>2':>9} {'invent':>7} {'llm/ev':>7} {'gen/ev':>7} {'rej/ev':>7}")
    for name, d in result["agents"].items():
        ratio = {k: v["ratio"] for k, v in d["compression_by_rung"].items()}
        print(f"{name:<11} {d['budget']:>7,} {d['max_working_over_budget']:>8.3f} "
              f"{d['final_working']:>8,} {d['final_history']:>8,} "
              f"{d['final_longterm_tokens']:>9,} {ratio.get('1', 0):>8.3f} "
              f"{ratio.get('2', 0):>8.3f} {ratio.get('3', 0):>8.3f} "
              f"{d['salient_survival_rung1_to_2']:>8.3f} "
              f"{d['salient_survival_raw_to_2'] or 0:>9.3f} {d['invented_item_rate_rung2']:>7.3f} "
              f"{d['per_event']['llm_calls']:>7.3f} {d['per_event']['generated_tokens']:>7.2f} "
              f"{d['per_event']['guard_rejections']:>7.3f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", nargs="?", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--conversation", type=int, default=0)
    parser.add_argument("--agents", default="Supervisor,Mouth")
    parser.add_argument("--turns", type=int, default=0, help="only the first N turns")
    parser.add_argument("--llm", action="store_true", help="rung 2 by the local GGUF model")
    parser.add_argument("--hashing", action="store_true", help="hashing embedder (fast)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--png", type=Path, default=DEFAULT_PNG)
    args = parser.parse_args(argv)
    if not args.data.is_file():
        print(f"LoCoMo data not found at {args.data}; skipping (pass its path as DATA)")
        return 0
    result = trio.run(replay, args)
    report(result)
    plot(result, args.png)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out} and {args.png}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
