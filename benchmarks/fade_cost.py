"""Fade cost: one fade pass over the working tier at 1k, 10k and 100k records.

The floor, measured in the same run over the same arrays, is a plain numpy
evaluation of the seed's formula (age, pressure, reference frequency, emotion, tags)
written inline — what any implementation must at least compute. Against it:

* ``score`` — :func:`solace.memory.fade.fade_score` on the tier's column views;
* ``pass (idle)`` — score + :func:`plan_round` on a tier within budget with nothing due
  (what every tick costs);
* ``pass (pressure)`` — the same on a tier 2 % over budget, so the planner's cover
  (argpartition + partial sort) runs and picks records to demote;
* ``fade_step (idle)`` — the whole :meth:`AgentMemory.fade_step` coroutine (locks,
  planning, the long-term check) on the idle tier, through ``trio.run``.

Compression of the chosen records is the ladder's cost, not the pass's, and is not
included. Target: a pass within 3x of the floor at 100k records.

Usage::

    python benchmarks/fade_cost.py [--sizes 1000,10000,100000] [--repeat 30] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import trio  # noqa: E402

from solace.clock import ReplayClock  # noqa: E402
from solace.config import AgentConfig, MemoryConfig  # noqa: E402
from solace.memory.agent_memory import AgentMemory  # noqa: E402
from solace.memory.fade import fade_score, plan_round  # noqa: E402
from solace.memory.record import MemoryRecord  # noqa: E402
from solace.memory.working import WorkingTier  # noqa: E402
from solace.models import HashingEmbedder  # noqa: E402
from solace.offload import Offloader  # noqa: E402

DEFAULT_OUT = ROOT / "benchmarks" / "results" / "fade_cost.json"
NOW = 1_700_000_000.0
HOUR = 3600.0
DIM = 384


def fill(n: int, seed: int) -> WorkingTier:
    """A working tier of ``n`` records shaped like a live one (ages up to a day, most
    unreferenced, a few emotional or tagged, rungs mostly 0)."""
    rng = np.random.default_rng(seed)
    tier = WorkingTier(10**9, dim=DIM)
    vector = np.zeros(DIM, dtype=np.float32)
    vector[0] = 1.0
    tokens = rng.integers(8, 120, n)
    age = rng.uniform(0, 20 * HOUR, n)
    refs = np.where(rng.random(n) < 0.1, rng.integers(1, 6, n), 0)
    emo = np.where(rng.random(n) < 0.2, rng.random(n), 0.0)
    rung = rng.choice([0, 1, 2], n, p=[0.7, 0.2, 0.1])
    for i in range(n):
        tier.add(MemoryRecord(
            record_id=i + 1, agent="bench", rung=int(rung[i]), text="", tokens=int(tokens[i]),
            source_tokens=int(tokens[i]), entry_ids=(i + 1,), created=NOW - float(age[i]),
            last_referenced=NOW - float(age[i]) / 2 if refs[i] else 0.0,
            references=int(refs[i]), emotional_weight=float(emo[i]),
            tags=("t",) * int(rng.integers(0, 3)), embedding=vector))
    return tier


def floor_pass(tier: WorkingTier, config: AgentConfig) -> np.ndarray:
    """The seed's formula, inline, over the same arrays: the floor."""
    c = tier.columns()
    w = config.fade
    scale = config.age_scale_hours * HOUR
    pressure = min(tier.total_tokens / tier.budget_tokens, 1.0) ** 4
    return (w.age * (NOW - c.created) / scale
            + w.pressure * pressure * np.sqrt(c.tokens / c.tokens.mean())
            - w.freq * np.log1p(c.references) * np.exp2(-(NOW - c.last_referenced) / scale)
            - w.emo * c.emotional_weight
            - w.tags * (1.0 - 0.5 ** c.n_tags))


def one_pass(tier: WorkingTier, config: AgentConfig) -> np.ndarray:
    """What ``AgentMemory`` does per planning round: score, then plan."""
    columns = tier.columns()
    scores = fade_score(columns, now=NOW, total_tokens=tier.total_tokens,
                        budget_tokens=tier.budget_tokens, weights=config.fade,
                        age_scale_hours=config.age_scale_hours)
    return plan_round(scores, columns, threshold=config.demote_threshold,
                      total_tokens=tier.total_tokens, budget_tokens=tier.budget_tokens)


def median_ms(fn: Callable[[], Any], repeat: int) -> float:
    fn()  # warm
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times)) * 1000


def step_ms(tier: WorkingTier, config: AgentConfig, repeat: int) -> float:
    """``AgentMemory.fade_step`` on an idle tier (nothing due, within budget)."""
    memory = AgentMemory(
        "bench", config=config, memory_config=MemoryConfig(), directory=Path("/nonexistent"),
        substrate=None, ladder=None,  # type: ignore[arg-type]  # an idle step touches neither
        embedder=HashingEmbedder(DIM), tokenizer=None,  # type: ignore[arg-type]
        offloader=Offloader(2), clock=ReplayClock(NOW), dim=DIM)
    memory.working = tier
    times: list[float] = []

    async def run() -> None:
        await memory.fade_step()
        for _ in range(repeat):
            start = time.perf_counter()
            report = await memory.fade_step()
            times.append(time.perf_counter() - start)
            assert not report.changed

    trio.run(run)
    return float(np.median(times)) * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    config = AgentConfig(budget_tokens=10**9)
    rows = []
    header = (f"{'records':>8} {'floor ms':>9} {'score ms':>9} {'idle ms':>8} "
              f"{'press. ms':>9} {'step ms':>8} {'idle/fl':>8} {'press/fl':>9} {'step/fl':>8}"
              f" {'planned':>8}")
    print(header)
    for n in (int(s) for s in args.sizes.split(",")):
        tier = fill(n, seed=n)
        idle_budget = 2 * tier.total_tokens
        tier.budget_tokens = idle_budget
        assert len(one_pass(tier, config)) == 0, "the idle tier must have nothing due"
        floor = median_ms(lambda: floor_pass(tier, config), args.repeat)  # noqa: B023
        score = median_ms(lambda: fade_score(  # noqa: B023
            tier.columns(), now=NOW, total_tokens=tier.total_tokens,  # noqa: B023
            budget_tokens=tier.budget_tokens, weights=config.fade,  # noqa: B023
            age_scale_hours=config.age_scale_hours), args.repeat)
        idle = median_ms(lambda: one_pass(tier, config), args.repeat)  # noqa: B023
        step = step_ms(tier, config, args.repeat)
        tier.budget_tokens = int(tier.total_tokens / 1.02)
        planned = len(one_pass(tier, config))
        pressure = median_ms(lambda: one_pass(tier, config), args.repeat)  # noqa: B023
        row = {
            "records": n, "floor_ms": round(floor, 3), "score_ms": round(score, 3),
            "pass_idle_ms": round(idle, 3), "pass_pressure_ms": round(pressure, 3),
            "fade_step_idle_ms": round(step, 3), "idle_vs_floor": round(idle / floor, 2),
            "pressure_vs_floor": round(pressure / floor, 2),
            "step_vs_floor": round(step / floor, 2), "planned_under_pressure": planned,
        }
        rows.append(row)
        print(f"{n:>8,} {floor:>9.3f} {score:>9.3f} {idle:>8.3f} {pressure:>9.3f} "
              f"{step:>8.3f} {row['idle_vs_floor']:>8.2f} {row['pressure_vs_floor']:>9.2f} "
              f"{row['step_vs_floor']:>8.2f} {planned:>8}", flush=True)
    at_max = rows[-1]
    verdict = max(at_max["pressure_vs_floor"], at_max["step_vs_floor"]) <= 3.0
    print(f"target (pass within 3x of the floor at {at_max['records']:,} records): "
          f"{'met' if verdict else 'NOT met'}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"benchmark": "fade_cost", "repeat": args.repeat,
                                    "rows": rows, "target_met": verdict}, indent=2) + "\n",
                        encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
