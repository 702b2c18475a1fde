"""Section 5 of the fact-memory benchmark (``facts_bench.py``): cost per turn.

LLM calls per turn (``FactMemory.counters["llm_calls"]``) and the wall time around
``extract_turn`` (extraction + classification + the write), p50/p95, over the first
turns of the LoCoMo test-split conversations, one memory id per speaker; with
``--llm`` also a short run with ``extraction_mode = "llm"`` and the configured LLM.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path
from typing import Any

from facts_bench_harness import ManualClock, open_memory
from facts_bench_scoring import percentile

from solace.facts.model import Exchange

__all__ = ["locomo_turns", "machine", "run_turns", "section_cost"]


async def section_cost(ctx: dict[str, Any], data: Path | None,
                       args: argparse.Namespace) -> dict[str, Any]:
    cost: dict[str, Any] = {}
    if data is not None:
        turns = locomo_turns(data, 10 if args.quick else 60)
        cost["rules (default)"] = await run_turns(ctx, turns, "default")
    else:
        cost["rules (default)"] = {"skipped": "LoCoMo data absent"}
    if args.llm:
        cost["llm"] = await llm_cost(ctx, data)
    return cost


async def llm_cost(ctx: dict[str, Any], data: Path | None) -> dict[str, Any]:
    """A short run with ``extraction_mode = "llm"`` and the configured LLM."""
    from solace.models import ModelError, build_llm

    if data is None:
        return {"skipped": "LoCoMo data absent"}
    try:
        llm = build_llm(ctx["config"].models)
    except (ModelError, OSError, ValueError) as exc:  # a missing model: say so, go on
        return {"skipped": f"LLM unavailable: {exc}"}
    out = await run_turns(ctx, locomo_turns(data, 2), "llm", llm=llm)
    out["llm"] = getattr(llm, "name", type(llm).__name__)
    return out


async def run_turns(ctx: dict[str, Any], turns: list[tuple[str, str, str, float]],
                    store: str, llm: Any = None) -> dict[str, Any]:
    """``turns`` (memory id, speaker, text, ts) through ``extract_turn``, timed."""
    config, embedder, tok = ctx["config"], ctx["embedder"], ctx["tokenizer"]
    clock = ManualClock()
    latencies, written = [], 0
    async with open_memory(config, embedder, tok, clock, llm=llm) as fm:
        for mid, speaker, text, ts in turns:
            clock.t = ts
            started = time.perf_counter()
            rs = await fm.extract_turn(mid, Exchange(user=text, ts=ts, speaker=speaker),
                                       store=store)
            latencies.append((time.perf_counter() - started) * 1000.0)
            written += len(rs)
        counters = dict(fm.counters)
    n = len(turns)
    return {"turns": n, "llm_calls": counters.get("llm_calls", 0),
            "llm_calls_per_turn": round(counters.get("llm_calls", 0) / n, 3) if n else 0.0,
            "facts_per_turn": round(written / n, 3) if n else 0.0,
            "latency_ms": {"p50": percentile(latencies, 50), "p95": percentile(latencies, 95)},
            "counters": {k: v for k, v in counters.items()
                         if k.startswith(("write_", "llm", "compaction"))}}


def locomo_turns(data: Path, per_conv: int) -> list[tuple[str, str, str, float]]:
    """The first ``per_conv`` turns of each test-split conversation (5-9), one memory
    id per speaker."""
    from solace.locomo import load_locomo

    out = []
    for conv in load_locomo(data)[5:]:
        for t in conv.turns[:per_conv]:
            out.append((f"{conv.sample_id}-{t.speaker}", t.speaker, t.text, t.at.timestamp()))
    return out


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores (shared), Python {platform.python_version()}"
