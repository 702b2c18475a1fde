"""The soak of ``scale_bench.py --soak N``: a sample every N events, bounds checked, a PNG.

Every ``N`` events of the replay (issue 12 §2: "recalls every 1,000 events") the
runtime is asked one LoCoMo question through Main (the questions in turn), and the
sample records the events so far, the simulated date, the resident memory, that
recall's latency, and each agent's working tokens against its budget and long-term
records. Nothing settles the fade before a sample: the replay goes on as an importer's
would, so the recall runs beside whatever fading the last call set off, and working
holds what the runtime's own back-pressure allows. :func:`bounds` says, for every bound
the runtime promises, whether any sample went past it: each agent's working tokens
within :data:`~solace.memory.fading.BACKLOG_BUDGETS` budgets plus the tokens of the
call just made (ingest waits for the fade beyond that), and resident memory beyond the
models within 2 KB an event at the end. :func:`plot` draws
RSS against the 2 KB-an-event line, recall latency (each sample and a rolling
median), and each agent's working tokens as a share of its budget.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

from solace.memory.fading import BACKLOG_BUDGETS

__all__ = ["KB_PER_EVENT_BOUND", "bounds", "plot", "sample"]

#: Issue 12's bound on resident memory beyond the models, KB an event (at 1M events).
KB_PER_EVENT_BOUND = 2.0
#: Samples the latency panel's rolling median spans.
_ROLLING = 25


async def sample(rt: Any, question: str, rss_mb: float, call_tokens: int) -> dict[str, Any]:
    """One soak sample: Main asked ``question`` once, every agent's tiers read;
    ``call_tokens`` is what the last ``observe_many`` could add to any agent's working
    (its turns' tokens)."""
    start = time.perf_counter()
    await rt.recall("Main", question, 10)
    took = (time.perf_counter() - start) * 1000
    return {
        "events": int(rt.substrate.last_id),
        "simulated_day": round(float(rt.clock.now()) / 86400, 2),
        "rss_mb": round(rss_mb, 1),
        "recall_ms": round(took, 2),
        "call_tokens": call_tokens,
        "agents": {name: {"working_tokens": m.working.total_tokens,
                          "budget_tokens": m.working.budget_tokens,
                          "longterm_records": len(m.longterm)}
                   for name, m in rt.memories.items()},
    }


def bounds(samples: list[dict[str, Any]], base_mb: float) -> dict[str, Any]:
    """Which bounds held over every sample (see the module docstring)."""
    if not samples:
        return {}
    out: dict[str, Any] = {}
    for name in samples[0]["agents"]:
        used = [s["agents"][name]["working_tokens"] for s in samples]
        budget = [s["agents"][name]["budget_tokens"] for s in samples]
        limit = [BACKLOG_BUDGETS * b + s["call_tokens"]
                 for b, s in zip(budget, samples, strict=True)]
        out[f"{name} working tokens <= {BACKLOG_BUDGETS:g} budgets + the last call's"] = {
            "max_share_of_budget": round(max(u / b for u, b in zip(used, budget,
                                                                    strict=True)), 3),
            "max_share_of_bound": round(max(u / x for u, x in zip(used, limit,
                                                                   strict=True)), 3),
            "held": all(u <= x for u, x in zip(used, limit, strict=True))}
    last = samples[-1]
    kb = (last["rss_mb"] - base_mb) * 1024 / max(1, last["events"])
    out[f"RSS beyond the models <= {KB_PER_EVENT_BOUND} KB an event at the end"] = {
        "kb_per_event": round(kb, 2), "held": kb <= KB_PER_EVENT_BOUND}
    latencies = [s["recall_ms"] for s in samples]
    out["recall latency (not a bound)"] = {
        "p50_ms": round(statistics.median(latencies), 2),
        "max_ms": round(max(latencies), 2)}
    return out


def plot(samples: list[dict[str, Any]], base_mb: float, png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    events = [s["events"] for s in samples]
    fig, axes = plt.subplots(1, 3, figsize=(14, 3.8))
    axes[0].plot(events, [s["rss_mb"] for s in samples], label="resident MB")
    axes[0].plot(events, [base_mb + KB_PER_EVENT_BOUND * e / 1024 for e in events],
                 linestyle="--", label=f"models + {KB_PER_EVENT_BOUND:g} KB an event")
    axes[0].set_title("resident memory")
    latencies = [s["recall_ms"] for s in samples]
    rolling = [statistics.median(latencies[max(0, i - _ROLLING + 1):i + 1])
               for i in range(len(latencies))]
    axes[1].plot(events, latencies, linewidth=0.4, alpha=0.5, label="each recall")
    axes[1].plot(events, rolling, label=f"median of {_ROLLING}")
    axes[1].set_title("Main recall ms")
    for name in samples[0]["agents"]:
        axes[2].plot(events, [s["agents"][name]["working_tokens"]
                              / s["agents"][name]["budget_tokens"] for s in samples],
                     linewidth=0.8, label=name)
    axes[2].axhline(1.0, color="black", linestyle="--", linewidth=0.8)
    axes[2].set_title("working tokens / budget")
    for ax in axes:
        ax.set_xlabel("events in the substrate")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
