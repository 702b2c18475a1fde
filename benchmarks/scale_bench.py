"""Scale: real turns replayed into one runtime up to ``--events``, measured as it grows.

The turns are LoCoMo's (all ten conversations in date order, repeated with dates
shifted by a year and a ``(take N)`` suffix until there are enough, each copy's two
speakers renamed unless ``--filler restated``; see ``rebuild_bench.sessions``),
replayed one conversation copy at a time through ``observe_many`` on a
:class:`~solace.ReplayClock`, as an importer would: nothing waits for the fade between
calls except the runtime's own back-pressure (an agent's ingest waits for its fade
once working holds more than two budgets), so one copy's fade overlaps the next
copy's embedding; the fade is settled at the end of each window, inside the window's
time (not before a soak sample). All five
agents run, on the default config except ``models.llm_backend = "none"`` (the default
compression is deterministic, so ingest never calls the LLM; loading it would only
add memory) and ``substrate.fsync = "batch"``.

At every ``--every`` events, and at the end:

* **ingest** events/s over the last window (``observe_many`` + settle, wall clock);
* how long until every agent's retrieval indexes follow its tiers (the index keeper,
  ``runtime.index_refresh_seconds`` after the tiers are still: its indexing of the
  window, which a recall no longer pays);
* the **embedding floor** on the same window's texts (2,000 of them, evenly spaced;
  the best of two runs): the runtime's embedder alone (same model, same thread
  setting), so the ratio is what the runtime adds;
* **Main's recall**, one query at a time over ``--queries`` LoCoMo questions: p50/p95;
* **resident memory** (current RSS from ``/proc/self/statm``; peak ``ru_maxrss``)
  against the RSS right after the models loaded, per event;
* working tokens against the budget, records per tier, for Main.

With ``--soak N``, every ``N`` events Main is also asked one question and the
runtime's state sampled (:mod:`soak`: RSS, that recall's latency, each agent's working
tokens against its budget), written with a check of every bound and a PNG of its own
(``--soak-png``). With ``--span-days D`` the replay's dates are squeezed into ``D``
days (order and relative gaps kept): the issue's "1M events over a simulated year" is
``--span-days 365``; without it each copy of LoCoMo lies a year after the last. With
``--originals-kept`` too, the ten original conversations keep their real dates and
only the copies are squeezed, into the ``D`` days after them: squeezed originals lose
the dates their temporal questions ask about (``scale_quality.py`` on such a home
measures answer recall without that loss built in).

At the end: **restart to first recall** (the runtime closed, snapshots, event vectors
and retrieval forms written, then opened again and asked one question), each in a new
process, as a restart is (the same reopening inside the process that did the ingest,
its heap grown by it, is reported beside it as ``same process``), with the p50 of the
:data:`AFTER_RESTART` recalls after the first; the same
without the conversation layer's snapshot (what a restart cost before it was kept);
unless ``--no-snapshots-only``, with snapshots only (what a restart cost before vectors
and forms were kept); and unless ``--no-rebuild``, the same with every snapshot
deleted (a full rebuild from the substrate).

Usage::

    python benchmarks/scale_bench.py [DATA] [--events 100000] [--every 10000]
        [--queries 50] [--out FILE] [--png FILE] [--no-rebuild] [--no-snapshots-only]
        [--filler renamed|restated] [--home DIR] [--embedder hashing]
        [--soak 1000] [--soak-png FILE] [--span-days 365 [--originals-kept]]
    python benchmarks/scale_bench.py --restarts-of HOME   # restarts of a kept home only

Writes ``benchmarks/results/scale_bench.json`` and a PNG of RSS, recall p50 and ingest
rate against events.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import functools
import json
import multiprocessing
import os
import platform
import resource
import shutil
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import trio

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import soak  # noqa: E402
from rebuild_bench import COPY_SUFFIX, sessions  # noqa: E402

from solace import ReplayClock, open_runtime  # noqa: E402
from solace.config import Config, ModelsConfig, SubstrateConfig  # noqa: E402
from solace.locomo import load_locomo  # noqa: E402
from solace.memory.event_vector_files import INDEX_FILE  # noqa: E402
from solace.memory.retrieval_forms import NAME as FORMS_FILE  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "locomo" / "locomo10.json"
PAGE = os.sysconf("SC_PAGE_SIZE")


def config(embedder: str | None = None) -> Config:
    """The default config with no LLM and batched fsync; ``embedder`` replaces the
    default embedder (``hashing``: the structural costs without the model's)."""
    models = ModelsConfig(llm_backend="none")
    if embedder is not None:
        models = dataclasses.replace(models, embedder=embedder)  # type: ignore[arg-type]
    return Config(models=models, substrate=SubstrateConfig(fsync="batch"))


def require_home(home: Path) -> None:
    """Exit naming ``home`` unless it is a Solace home (one kept by ``--home``)."""
    if not (home / "substrate").is_dir():
        raise SystemExit(f"{home} is not a Solace home (build one with "
                         f"benchmarks/scale_bench.py --home {home})")


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE / 2**20


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def recall_latency(rt: Any, questions: list[str]) -> dict[str, float]:
    """Main's recall p50/p95 over ``questions``, and how many of those recalls had some
    agent score every unit (the shared pool of best rows could not prove its top: see
    ``UnitCandidates.scored``)."""
    retrievers = [rt.agent(name).retriever for name in rt.actors]
    scans = sum(r.dense_scans for r in retrievers)
    times = []
    for q in questions:
        start = time.perf_counter()
        await rt.recall("Main", q, 10)
        times.append((time.perf_counter() - start) * 1000)
    return {"recall_p50_ms": round(statistics.median(times), 2),
            "recall_p95_ms": round(float(np.percentile(times, 95)), 2),
            "unit_scans": sum(r.dense_scans for r in retrievers) - scans}


#: Longest a window waits for the agents' indexes to follow their tiers.
IN_LINE_LIMIT_S = 120.0


async def indexed_after(rt: Any) -> float | None:
    """Seconds until every agent's retrieval indexes hold its tiers as they are, with
    the fade settled and nothing observed: the runtime's index keeper waits for
    ``runtime.index_refresh_seconds`` of stillness, then indexes what the window
    added. None when the keeper is off (a recall indexes it) or past
    :data:`IN_LINE_LIMIT_S`. Waited for before the floor, so the two never share the
    cores."""
    if not rt.config.runtime.index_refresh_seconds:
        return None
    retrievers = [rt.agent(name).retriever for name in rt.actors]
    start = time.perf_counter()
    with trio.move_on_after(IN_LINE_LIMIT_S):
        while not all(r.in_line for r in retrievers):
            await trio.sleep(0.05)
        return round(time.perf_counter() - start, 2)
    return None


#: How many of a window's texts the floor embeds.
FLOOR_TEXTS = 2000


async def floor(rt: Any, texts: list[str], runs: int = 2) -> float:
    """Texts/s of the runtime's embedder alone on ``texts`` (its own cache bypassed):
    the best of ``runs`` (a busy moment on a shared machine only lowers one)."""
    inner = getattr(rt.embedder, "inner", rt.embedder)
    best = 0.0
    for _ in range(runs):
        start = time.perf_counter()
        await rt.offloader.run(inner.embed, texts)
        best = max(best, len(texts) / (time.perf_counter() - start))
    return best


def spread(texts: list[str], n: int = FLOOR_TEXTS) -> list[str]:
    """``n`` of ``texts`` evenly spaced through them: the floor's sample of a window.
    (Its first ``n`` are one or two conversations, not the window's mix: in the 100k
    run's first window they averaged 129 characters against the window's 137.)"""
    step = max(1, len(texts) // n)
    return texts[::step][:n]


def squeezed(batches: list[list[Any]], days: float, *, originals_kept: bool = False
             ) -> list[list[Any]]:
    """``batches`` (in date order) with every date moved so the first and the last
    are ``days`` apart: order and relative gaps kept.

    With ``originals_kept``, the first take (the conversations themselves, the batches
    whose turns carry no ``(take N)`` suffix) keeps its dates, so questions about when
    things happened stay answerable in them, and only the copies are squeezed, into
    the ``days`` after the last original turn; with no copies (``--events`` within the
    originals), nothing is moved. (Squeezing the originals then moved their dates, and
    a home of the ten conversations answered 56 % of temporal questions, not 85 %.)"""
    if originals_kept:
        originals = [b for b in batches if not COPY_SUFFIX.search(b[0].text)]
        copies = [b for b in batches if COPY_SUFFIX.search(b[0].text)]
        if not copies:
            return batches
        if originals:
            end = max(b[-1].at for b in originals) + timedelta(seconds=1)
            return originals + _squeezed(copies, days, end)
    return _squeezed(batches, days, batches[0][0].at)


def _squeezed(batches: list[list[Any]], days: float, start: datetime) -> list[list[Any]]:
    first, last = batches[0][0].at, batches[-1][-1].at
    factor = days * 86400 / max((last - first).total_seconds(), 1.0)
    return [[dataclasses.replace(o, at=start + (o.at - first) * factor) for o in batch]
            for batch in batches]


async def grow(home: Path, batches: list[list[Any]], questions: list[str], every: int,
               cfg: Config, soak_every: int = 0
               ) -> tuple[list[dict[str, Any]], float, list[dict[str, Any]]]:
    rows: list[dict[str, Any]] = []
    samples: list[dict[str, Any]] = []
    async with open_runtime(home, cfg, clock=ReplayClock(), warm_up=False) as rt:
        await rt.recall("Main", questions[0], 10)  # loads the embedder
        base = rss_mb()
        done, window, window_s, window_texts = 0, 0, 0.0, []
        for batch in batches:
            done += len(batch)
            window += len(batch)
            window_texts += [f"{o.speaker}: {o.text}" for o in batch]
            ends = done // every != (done - len(batch)) // every or batch is batches[-1]
            start = time.perf_counter()
            await rt.observe_many(batch)
            if ends:  # the fade catches up, inside the window's time
                await rt.settle()
            window_s += time.perf_counter() - start
            if soak_every and int(rt.substrate.last_id) // soak_every > len(samples):
                question = questions[len(samples) % len(questions)]
                added = sum(rt.tokenizer.count_many(window_texts[-len(batch):]))
                samples.append(await soak.sample(rt, question, rss_mb(), added))
            if ends:
                main = rt.memories["Main"]
                row = {"turns": done, "events": int(rt.substrate.last_id),
                       "ingest_per_s": round(window / window_s, 1),
                       "indexed_after_s": await indexed_after(rt),
                       "floor_per_s": round(await floor(rt, spread(window_texts)), 1),
                       **await recall_latency(rt, questions),
                       "rss_mb": round(rss_mb(), 1), "peak_mb": round(peak_mb(), 1),
                       "main_working_tokens": main.working.total_tokens,
                       "main_budget_tokens": main.working.budget_tokens,
                       "main_working_records": len(main.working),
                       "main_longterm_records": len(main.longterm)}
                row["ratio_to_floor"] = round(row["ingest_per_s"] / row["floor_per_s"], 3)
                row["kb_per_event_beyond_models"] = round(
                    (row["rss_mb"] - base) * 1024 / max(1, row["events"]), 2)
                rows.append(row)
                print("  ".join(f"{k}={v}" for k, v in row.items()), flush=True)
                window, window_s, window_texts = 0, 0.0, []
    return rows, base, samples


#: Recalls asked right after a restart's first one (their p50 is reported beside it).
AFTER_RESTART = 20


async def restart(home: Path, questions: list[str], limit: float, cfg: Config
                  ) -> dict[str, Any] | None:
    """Seconds from opening the home to the runtime being ready (``open_s``) and to the
    first recall's answer (``first_recall_s``, ``questions[0]``), then the p50 of the
    next :data:`AFTER_RESTART` recalls (``next_recalls_p50_ms``: scanning every event
    vector until the approximate index is there, ``index_at_open`` says whether it was
    kept); None past ``limit``."""
    start = time.perf_counter()
    with trio.move_on_after(limit):
        async with open_runtime(home, cfg, clock=ReplayClock(), warm_up=True) as rt:
            opened = time.perf_counter() - start
            indexed = rt.event_vectors.approximate
            await rt.recall("Main", questions[0], 10)
            first = time.perf_counter() - start
            took = []
            for i in range(1, AFTER_RESTART + 1):
                began = time.perf_counter()
                await rt.recall("Main", questions[i % len(questions)], 10)
                took.append(time.perf_counter() - began)
            return {"open_s": round(opened, 2), "first_recall_s": round(first, 2),
                    "next_recalls_p50_ms": round(1000 * statistics.median(took), 1),
                    "index_at_open": indexed}
    return None


def restart_in_new_process(home: Path, questions: list[str], limit: float,
                           embedder: str | None) -> dict[str, Any] | None:
    """:func:`restart` in a process of its own (spawned: nothing inherited), as a
    restart is; the time to import and load the models is not counted."""
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=context) as pool:
        return pool.submit(_restart_here, str(home), questions, limit, embedder).result()


def _restart_here(home: str, questions: list[str], limit: float, embedder: str | None
                  ) -> dict[str, Any] | None:
    return trio.run(restart, Path(home), questions, limit, config(embedder))


def restarts_of(home: Path, questions: list[str], args: argparse.Namespace) -> int:
    """Restarts of a kept home in new processes: as it is (twice: the first may keep an
    index the home lacked), then without the kept approximate index of the event vectors
    (what a restart cost before it was kept). The index is moved aside for that one and
    put back after it: a restart closing before its own index is built keeps none, and
    the next run's "as kept" would then measure a home without it."""
    reopen = functools.partial(restart_in_new_process, home, questions, args.restart_limit,
                               args.embedder)
    restarts = {"as kept": reopen(), "as kept, again": reopen()}
    index = home / "memory" / "event-vectors" / INDEX_FILE
    aside = index.with_name(index.name + ".aside")
    if index.exists():
        os.replace(index, aside)
    try:
        restarts["without the kept row index"] = reopen()
    finally:
        if aside.exists():
            os.replace(aside, index)
    for name, took in restarts.items():
        print(f"{name:28} {took}")
    out = args.out.with_name(args.out.stem + "_restarts.json")
    out.write_text(json.dumps({"benchmark": "scale_bench --restarts-of", "home": str(home),
                               "restarts": restarts}, indent=2) + "\n")
    print(f"wrote {out}")
    return 0


def plot(rows: list[dict[str, Any]], png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    events = [r["events"] for r in rows]
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    for ax, key, label in zip(axes, ("rss_mb", "recall_p50_ms", "ingest_per_s"),
                              ("resident MB", "Main recall p50 ms", "ingest events/s"),
                              strict=True):
        ax.plot(events, [r[key] for r in rows], marker="o")
        ax.set_xlabel("events in the substrate")
        ax.set_title(label)
        ax.grid(alpha=0.3)
    axes[2].plot(events, [r["floor_per_s"] for r in rows], linestyle="--", label="floor")
    axes[2].legend()
    fig.tight_layout()
    fig.savefig(png, dpi=110)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", nargs="?", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--events", type=int, default=100_000, help="LoCoMo turns to replay")
    parser.add_argument("--every", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--no-rebuild", action="store_true")
    parser.add_argument("--no-snapshots-only", action="store_true",
                        help="skip the restart without kept vectors and forms (minutes)")
    parser.add_argument("--filler", choices=("renamed", "restated"), default="renamed",
                        help="copies' speakers get other names (renamed, the default: other "
                        "people's lives) or keep theirs (restated)")
    parser.add_argument("--embedder", choices=("minilm", "minilm-onnx", "minilm-int8",
                                               "hashing"), default=None,
                        help="replace the default embedder (hashing: structure only; its "
                        "recall and floor mean nothing)")
    parser.add_argument("--home", type=Path, default=None,
                        help="build the home here and keep it (default: a temporary one)")
    parser.add_argument("--restart-limit", type=float, default=600.0,
                        help="seconds a restart may take before it is reported as over")
    parser.add_argument("--soak", type=int, default=0, metavar="N",
                        help="every N events, one recall and a sample of the runtime's state")
    parser.add_argument("--soak-png", type=Path,
                        default=ROOT / "benchmarks" / "results" / "scale_soak.png")
    parser.add_argument("--span-days", type=float, default=None,
                        help="squeeze the replay's dates into this many days")
    parser.add_argument("--originals-kept", action="store_true",
                        help="with --span-days: the original conversations keep their "
                             "dates; only the copies are squeezed, after them")
    parser.add_argument("--out", type=Path,
                        default=ROOT / "benchmarks" / "results" / "scale_bench.json")
    parser.add_argument("--png", type=Path,
                        default=ROOT / "benchmarks" / "results" / "scale_bench.png")
    parser.add_argument("--restarts-of", type=Path, default=None, metavar="HOME",
                        help="only measure restarts of a home kept by --home: with and "
                             "without its kept approximate index")
    args = parser.parse_args()
    if not args.data.exists():
        print(f"skipped: no LoCoMo data at {args.data}")
        return 0
    questions = [q.question for c in load_locomo(args.data) for q in c.questions
                 if q.question.strip()][: args.queries]
    if args.restarts_of is not None:
        return restarts_of(args.restarts_of, questions, args)
    with tempfile.TemporaryDirectory(prefix="solace-scale-") as tmp:
        home = args.home if args.home is not None else Path(tmp) / "home"
        batches = sessions(args.data, args.events, renamed=args.filler == "renamed")
        if args.span_days is not None:
            batches = squeezed(batches, args.span_days, originals_kept=args.originals_kept)
        cfg = config(args.embedder)
        rows, base, samples = trio.run(grow, home, batches, questions, args.every, cfg,
                                       args.soak)
        reopen = functools.partial(restart_in_new_process, home, questions,
                                   args.restart_limit, args.embedder)
        restarts = {"snapshots, vectors, forms": reopen(),
                    "snapshots, vectors, forms (same process)": trio.run(
                        restart, home, questions, args.restart_limit, cfg)}
        # What a restart cost before the conversation layer kept its projection: it
        # folds the whole log again (the restart writes the snapshot back).
        (home / "memory" / "conversation" / "projection.sealed").unlink(missing_ok=True)
        restarts["no conversation snapshot"] = reopen()
        if not args.no_snapshots_only:
            # What a restart cost before event vectors and retrieval forms were kept (the
            # first recall embeds every unit and rehydrates every rung-3 record again).
            shutil.rmtree(home / "memory" / "event-vectors", ignore_errors=True)
            for kept in (home / "memory").glob(f"*/{FORMS_FILE}"):
                kept.unlink()
            restarts["snapshots only"] = reopen()
        if not args.no_rebuild:
            shutil.rmtree(home / "memory")
            restarts["full rebuild"] = reopen()
    result = {"benchmark": "scale_bench", "turns": args.events, "every": args.every,
              "filler": args.filler, "span_days": args.span_days,
              "originals_kept": args.originals_kept,
              "config": "defaults, llm_backend none, fsync batch"
              + (f", embedder {args.embedder}" if args.embedder else ""),
              "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
              "rss_after_models_mb": round(base, 1), "rows": rows,
              "restart_limit_s": args.restart_limit, "restarts": restarts}
    if samples:
        result["soak"] = {"every": args.soak, "bounds": soak.bounds(samples, base),
                          "simulated_days": round(samples[-1]["simulated_day"]
                                                  - samples[0]["simulated_day"], 1),
                          "samples": samples}
        for name, held in result["soak"]["bounds"].items():
            print(f"soak: {name}: {held}")
        soak.plot(samples, base, args.soak_png)
    print(f"{'restart':42} {'open s':>8} {'first recall s':>15} {'next p50 ms':>12}")
    for name, took in restarts.items():
        if took is None:
            print(f"{name:42} {'over ' + format(args.restart_limit, 'g') + ' s':>24}")
        else:
            print(f"{name:42} {took['open_s']:8.1f} {took['first_recall_s']:15.1f} "
                  f"{took['next_recalls_p50_ms']:12.1f}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    plot(rows, args.png)
    print(f"wrote {args.out} and {args.png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
