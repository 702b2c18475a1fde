"""``GET /metrics``: Solace's counters in the Prometheus text exposition format (0.0.4).

What the application API exposes (:meth:`solace.app.Solace.counters`: events in the
substrate, records per rung per agent, the LLM backend's calls, the guard's verdicts)
plus what only the HTTP layer sees: requests by route and status, and a histogram of
recall latency measured around each recall call.
"""

from __future__ import annotations

import bisect
import math
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["CONTENT_TYPE", "RECALL_BUCKETS", "Histogram", "render"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
RECALL_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
"""Upper bounds (seconds) of the recall latency histogram's buckets."""


class Histogram:
    """A cumulative Prometheus histogram over fixed bucket bounds (seconds)."""

    def __init__(self, bounds: Iterable[float] = RECALL_BUCKETS) -> None:
        self.bounds = tuple(sorted(bounds))
        self.counts = [0] * (len(self.bounds) + 1)  # the last one is +Inf
        self.total = 0.0

    def observe(self, seconds: float) -> None:
        """Count one observation of ``seconds`` (negative values count as 0)."""
        seconds = max(0.0, seconds)
        self.counts[bisect.bisect_left(self.bounds, seconds)] += 1
        self.total += seconds

    @property
    def count(self) -> int:
        """How many observations were counted."""
        return sum(self.counts)

    def lines(self, name: str) -> list[str]:
        """The histogram's sample lines (``_bucket``, ``_sum``, ``_count``)."""
        out, running = [], 0
        for bound, n in zip((*self.bounds, math.inf), self.counts, strict=True):
            running += n
            le = "+Inf" if bound == math.inf else _number(bound)
            out.append(f'{name}_bucket{{le="{le}"}} {running}')
        out.append(f"{name}_sum {_number(self.total)}")
        out.append(f"{name}_count {running}")
        return out


def _number(value: float) -> str:
    return repr(float(value)) if isinstance(value, float) else str(value)


def _label(value: object) -> str:
    return str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _family(name: str, kind: str, help_text: str, samples: list[str]) -> list[str]:
    return [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}", *samples]


def render(counters: Mapping[str, Any], requests: Counter[tuple[str, str, int]],
           recall_latency: Histogram) -> str:
    """The metrics page.

    Args:
        counters: :meth:`solace.app.Solace.counters`.
        requests: (method, route, status) -> requests answered.
        recall_latency: the HTTP layer's recall histogram.
    """
    lines: list[str] = []
    lines += _family("solace_events", "gauge", "Events in the substrate (its last entry id).",
                     [f"solace_events {int(counters['events'])}"])
    records, tokens, budget, handled = [], [], [], []
    for agent, stats in counters["agents"].items():
        a = _label(agent)
        for rung, n in stats.get("working_by_rung", {}).items():
            records.append(f'solace_records{{agent="{a}",tier="working",rung="{rung}"}} {n}')
        for rung, n in stats.get("longterm_by_rung", {}).items():
            records.append(f'solace_records{{agent="{a}",tier="longterm",rung="{rung}"}} {n}')
        tokens.append(f'solace_working_tokens{{agent="{a}"}} {stats.get("working_tokens", 0)}')
        budget.append(f'solace_working_budget_tokens{{agent="{a}"}} '
                      f'{stats.get("budget_tokens", 0)}')
        handled.append(f'solace_inbox_handled_total{{agent="{a}"}} '
                       f'{stats.get("inbox_handled", 0)}')
    lines += _family("solace_records", "gauge", "Memory records per agent, tier and rung.",
                     records)
    lines += _family("solace_working_tokens", "gauge", "Tokens in each working tier.", tokens)
    lines += _family("solace_working_budget_tokens", "gauge", "Each working tier's budget.",
                     budget)
    lines += _family("solace_inbox_handled_total", "counter", "Messages each actor handled.",
                     handled)
    llm = counters.get("llm", {})
    lines += _family("solace_llm_calls_total", "counter", "LLM calls, failed ones included.",
                     [f"solace_llm_calls_total {int(llm.get('calls', 0))}"])
    lines += _family("solace_llm_failures_total", "counter", "LLM calls that raised.",
                     [f"solace_llm_failures_total {int(llm.get('failures', 0))}"])
    lines += _family("solace_llm_seconds_total", "counter", "Wall time inside the LLM.",
                     [f"solace_llm_seconds_total {_number(float(llm.get('seconds', 0.0)))}"])
    verdicts = [f'solace_guard_verdicts_total{{verdict="{_label(v)}"}} {n}'
                for v, n in sorted(counters.get("guard", {}).items())]
    lines += _family("solace_guard_verdicts_total", "counter",
                     "Guard verdicts on LLM output bound for memory (accepted, rejected, "
                     "and each rejection reason).", verdicts)
    lines += _family("solace_recall_latency_seconds", "histogram",
                     "Recall latency as the HTTP layer measured it.",
                     recall_latency.lines("solace_recall_latency_seconds"))
    reqs = [f'solace_http_requests_total{{method="{m}",route="{_label(r)}",status="{s}"}} {n}'
            for (m, r, s), n in sorted(requests.items())]
    lines += _family("solace_http_requests_total", "counter", "HTTP requests answered.", reqs)
    return "\n".join(lines) + "\n"
