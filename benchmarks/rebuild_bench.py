"""Opening every projection from the substrate: one shared replay against one read each.

A home is filled with real LoCoMo turns (all ten conversations in order, repeated with
dates shifted by a year and a ``(take N)`` suffix until ``--events`` turns), replayed
through ``observe_many`` one conversation copy at a time with the fade settled after each, on the
hashing embedder (so the numbers are about reading, replaying and snapshotting, not the
model). Then the home's projections (the five agents' tiers, the conversation layer
and fact memory; the workspace is switched off here, since opening it without its
state file records edits and so writes to the home) are opened from it, in a fresh
substrate handle each time, ``--repeats`` times per way:

* ``rebuild, one replay`` — every snapshot deleted;
  :func:`solace.assembly.open_projections` (all snapshots loaded, the substrate read
  once, each kind from the oldest checkpoint that reads it, each projection folding
  its part: :func:`solace.projections.replay`);
* ``rebuild, a read each`` — the same with ``AgentMemory.open`` per agent and the
  conversation layer (without its snapshot) and fact memory each opened on its own,
  each reading the substrate itself (the code before the shared replay);
* ``snapshots, one replay`` / ``snapshots, a read each`` — the snapshots kept (the
  agents' and the conversation layer's): only the tail after them is read.

Reported per way: median seconds, events decrypted (``scan`` calls counted through a
wrapper), and whether every agent's tiers came back identical to the first way's.

Usage::

    python benchmarks/rebuild_bench.py [DATA] [--events 3000] [--repeats 3] [--out FILE]
"""

from __future__ import annotations

import argparse
import functools
import json
import platform
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import trio

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from solace import ReplayClock, open_runtime  # noqa: E402
from solace.actors.routing import ACTORS, perceptions_for  # noqa: E402
from solace.assembly import (  # noqa: E402
    build_models,
    open_fact_memory_or_none,
    open_projections,
)
from solace.config import Config, ModelsConfig, SubstrateConfig  # noqa: E402
from solace.config.schema import WorkspaceConfig  # noqa: E402
from solace.conversation import open_conversations  # noqa: E402
from solace.home import Home  # noqa: E402
from solace.locomo import load_locomo  # noqa: E402
from solace.memory.agent_memory import AgentMemory  # noqa: E402
from solace.runtime import Observation, extra_kinds  # noqa: E402
from substrate import KeySource  # noqa: E402
from substrate.aio import open_trio_substrate  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "locomo" / "locomo10.json"


def config() -> Config:
    return Config(models=ModelsConfig(embedder="hashing", llm_backend="none"),
                  substrate=SubstrateConfig(fsync="never"),
                  workspace=WorkspaceConfig(enabled=False))


#: Names the copies' speakers take (``sessions(..., renamed=True)``): none occurs in
#: LoCoMo's conversations (checked on locomo10.json).
FILLER_NAMES = (
    "Aiko Bruno Celine Dario Esme Farid Greta Hugo Ines Jonas Kalani Luca Mirela Nadia "
    "Oskar Priya Quentin Rosa Stellan Tamsin Ulrich Vesna Wendell Xenia Yusuf Zora Anouk "
    "Bastian Carys Dmitri Elodie Fintan Giselle Hamid Ilse Joaquin Katya Lorcan Marisol "
    "Niamh Odile Pavel Rasmus Saoirse Tobias Ursula Viggo Wilhelmina Yannick Zuzana"
).split()


#: What ends every turn of a copy (``sessions``): ``" (take N)"``, N >= 1.
COPY_SUFFIX = re.compile(r" \(take \d+\)$")


def _renamer(speakers: Sequence[str], names: Sequence[str]) -> Callable[[str], str]:
    """A function writing ``speakers[i]`` (as a whole word, possessives too) as
    ``names[i]``."""
    table = dict(zip(speakers, names, strict=True))
    pattern = re.compile(r"\b(" + "|".join(re.escape(s) for s in speakers) + r")\b")
    return lambda text: pattern.sub(lambda m: table[m[1]], text)


def sessions(data: Path, events: int, *, renamed: bool = False) -> list[list[Observation]]:
    """Batches of observations (one per conversation copy, in date order) adding up to
    ``events`` turns.

    The ten conversations, then copies of them with dates shifted by a year per take
    and a ``(take N)`` suffix. With ``renamed``, each copy's two speakers get other
    names (:data:`FILLER_NAMES`, in the speaker field and in the text), so the copies
    are other people's lives rather than restatements of the originals' (nicknames
    and third parties keep their names; the 25 name pairs repeat from the 26th copy
    on)."""
    conversations = load_locomo(data)
    out: list[list[Observation]] = []
    total, take, pair = 0, 0, 0
    while total < events:
        shift = timedelta(days=366 * take)
        suffix = f" (take {take})" if take else ""
        for conv in conversations:
            speakers = sorted({t.speaker for t in conv.turns})
            rename: Callable[[str], str] = str
            if renamed and take:
                names = [FILLER_NAMES[(2 * pair + i) % len(FILLER_NAMES)]
                         for i in range(len(speakers))]
                rename, pair = _renamer(speakers, names), pair + 1
            batch: list[Observation] = []
            for turn in conv.turns:
                if total >= events:
                    break
                batch.append(Observation(rename(turn.text) + suffix, rename(turn.speaker),
                                         at=turn.at + shift))
                total += 1
            if batch:
                out.append(batch)
        take += 1
    out.sort(key=lambda b: b[0].at)  # type: ignore[arg-type,return-value]
    return out


async def build(home: Path, batches: list[list[Observation]]) -> int:
    async with open_runtime(home, config(), clock=ReplayClock(), warm_up=False) as rt:
        for batch in batches:
            await rt.observe_many(batch)
            await rt.settle()
        return int(rt.substrate.last_id)


class CountingScans:
    """The trio substrate with its ``scan`` calls' results counted."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.decrypted = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def scan(self, *args: Any, **kwargs: Any) -> Any:
        found = await self._inner.scan(*args, **kwargs)
        self.decrypted += len(found)
        return found


def tiers(memories: dict[str, Any]) -> dict[tuple[str, str, int], tuple[Any, ...]]:
    return {(name, tier, r.record_id): (r.rung, r.text, r.entry_ids, r.references)
            for name, m in memories.items() for tier in ("working", "longterm")
            for r in getattr(m, tier).records()}


async def _ignore(appended: Any) -> None:
    return None


async def open_once(home: Path, shared: bool) -> tuple[float, int, dict[Any, Any]]:
    cfg = config()
    where = Home.at(home, cfg)
    models = build_models(cfg)
    raw = await open_trio_substrate(where.substrate_dir, fsync="never",
                                    key_source=KeySource(key_file=where.key_file),
                                    extra_kinds=extra_kinds(cfg))
    substrate = CountingScans(raw)
    memories: dict[str, Any] = {}
    clock = ReplayClock()
    start = time.perf_counter()
    try:
        if shared:
            await open_projections(memories, where, cfg, models, substrate, clock,
                                   working_memory=lambda: "", on_appended=_ignore)
        else:
            for name in ACTORS:
                memories[name] = await AgentMemory.open(
                    name, config=cfg.agent(name), memory_config=cfg.memory,
                    directory=where.agent_dir(name), substrate=substrate,
                    ladder=models.ladder, embedder=models.embedder,
                    tokenizer=models.tokenizer, offloader=models.offloader, clock=clock,
                    perceive=functools.partial(perceptions_for, name))
            await open_conversations(
                substrate=substrate, config=cfg.conversation, llm=models.llm,
                embedder=models.embedder, tokenizer=models.tokenizer, guard=models.guard,
                offloader=models.offloader, clock=clock)  # no snapshot: as before it
            await open_fact_memory_or_none(where, cfg, models, substrate, clock)
        seconds = time.perf_counter() - start
        return seconds, substrate.decrypted, tiers(memories)
    finally:
        await raw.aclose()


async def measure(home: Path, repeats: int) -> list[dict[str, Any]]:
    rows, reference = [], None
    saved = home.parent / "snapshots"
    shutil.copytree(home / "memory", saved)
    for snapshots in (False, True):
        for shared in (True, False):
            times, decrypted, same = [], 0, True
            for _ in range(repeats):
                shutil.rmtree(home / "memory")
                if snapshots:
                    shutil.copytree(saved, home / "memory")
                seconds, decrypted, state = await open_once(home, shared)
                times.append(seconds)
                reference = reference if reference is not None else state
                same = same and state == reference
            rows.append({
                "way": f"{'snapshots' if snapshots else 'rebuild'}, "
                       f"{'one replay' if shared else 'a read each'}",
                "seconds_median": round(statistics.median(times), 3),
                "events_decrypted": decrypted, "identical_tiers": same,
            })
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", nargs="?", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--events", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path,
                        default=ROOT / "benchmarks" / "results" / "rebuild_bench.json")
    args = parser.parse_args()
    if not args.data.exists():
        print(f"skipped: no LoCoMo data at {args.data}")
        return 0
    with tempfile.TemporaryDirectory(prefix="solace-rebuild-") as tmp:
        home = Path(tmp) / "home"
        t0 = time.perf_counter()
        events = trio.run(build, home, sessions(args.data, args.events))
        build_s = time.perf_counter() - t0
        rows = trio.run(measure, home, args.repeats)
    print(f"opening five agents' memories from a home of {events} events "
          f"({args.events} LoCoMo turns, hashing embedder; built in {build_s:.0f} s), "
          f"median of {args.repeats}")
    print(f"{'way':<30}{'seconds':>10}{'decrypted':>12}{'identical':>11}")
    for row in rows:
        print(f"{row['way']:<30}{row['seconds_median']:>10}{row['events_decrypted']:>12}"
              f"{str(row['identical_tiers']):>11}")
    result = {"benchmark": "rebuild_bench", "events": events, "turns": args.events,
              "embedder": "hashing", "repeats": args.repeats, "build_seconds": round(build_s, 1),
              "machine": {"python": platform.python_version(), "cpus": 2}, "rows": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0 if all(r["identical_tiers"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
