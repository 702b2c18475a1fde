"""Per-agent perspectives on LoCoMo: what each agent's compressed records keep.

Seed 002: "two agents present at the same event produce two records — different
summaries, different perspectives, different tags, different fade weights". Every
turn of every LoCoMo conversation (timed at its session's date, a minute apart) is
routed by :func:`solace.actors.routing.perceive`, as the runtime routes it. For each
of Main, Mood and Time, each session's turns that agent perceives are cut, in order,
into episodes of at most ``max_episode_tokens`` raw tokens (as the ladder caps a
merge), and each episode is compressed to rung 1 (``rung1_ratio`` of its raw tokens)
and rung 2 (``rung2_ratio``) twice: with the agent's configured perspective and with
``"whole"`` (what every agent kept before perspectives). Reported per agent and
perspective:

* ``share``: the share of all turns the agent perceives;
* ``felt kept``: of the source sentences that carry a feeling (Mood's weight
  >= ``MOOD_RECORD_WEIGHT`` for the sentence alone), the share a form keeps: at least
  half of the sentence's content words (as rung 1 resolves it) are in the form;
* ``dated kept``: the same for sentences that name a date or a time;
* ``other kept``: the same for the rest;
* ``tokens``: the form's tokens over the episode's raw tokens.

The affect and time shares (:data:`solace.memory.ladder.extractive._OUTSIDE`) were set
by hand on a made-up episode (``tests/test_ladder_perspectives.py``), never on LoCoMo.

Usage::

    python benchmarks/perspectives_bench.py [DATA] [--out FILE]

Results: ``benchmarks/results/perspectives_bench.json``. Without the data it says so
and exits 0.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from locomo_scoring import carries, word_set  # noqa: E402

from solace.actors.routing import MOOD_RECORD_WEIGHT, perceive  # noqa: E402
from solace.config import Config, load_config  # noqa: E402
from solace.locomo import load_locomo  # noqa: E402
from solace.memory.ladder import Turn, condense, extract_key_points  # noqa: E402
from solace.memory.ladder.extractive import resolve_sentence  # noqa: E402
from solace.memory.ladder.sentences import split_sentences  # noqa: E402
from solace.models import WordPieceTokenizer  # noqa: E402
from solace.models.affect import score_affect  # noqa: E402
from solace.models.entities import salient  # noqa: E402
from substrate import Event  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "locomo" / "locomo10.json"
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "perspectives_bench.json"
AGENTS = ("Main", "Mood", "Time")
KINDS = ("felt", "dated", "other")


def kind_of(resolved: str, raw: str) -> str:
    """Which kind of sentence this is (felt before dated: a feeling is rarer)."""
    if score_affect(raw).weight >= MOOD_RECORD_WEIGHT:
        return "felt"
    return "dated" if salient(resolved).dates else "other"


def episodes(turns: Sequence[Turn], tokenizer: WordPieceTokenizer, cap: int) -> list[list[Turn]]:
    """``turns`` cut in order into runs of at most ``cap`` raw tokens."""
    out: list[list[Turn]] = []
    used = cap + 1
    for turn in turns:
        tokens = tokenizer.count(f"{turn.speaker}: {turn.content}")
        if used + tokens > cap and (not out or out[-1]):
            out.append([])
            used = 0
        out[-1].append(turn)
        used += tokens
    return [e for e in out if e]


def measure(config: Config, data: Path, tokenizer: WordPieceTokenizer) -> dict[str, object]:
    memory = config.memory
    tally: dict[tuple[str, str, int], dict[str, float]] = {}
    perceived = dict.fromkeys(AGENTS, 0)
    total_turns = 0
    for conv in load_locomo(data):
        speakers = sorted({t.speaker for t in conv.turns})
        for session in conv.sessions:
            by_agent: dict[str, list[Turn]] = {a: [] for a in AGENTS}
            for i, t in enumerate(session):
                ts = t.at.timestamp() + 60 * i
                total_turns += 1
                other = next((s for s in speakers if s != t.speaker), "")
                for p in perceive(Event(i + 1, ts, t.speaker, "message", t.text, {})):
                    if p.agent in by_agent:
                        by_agent[p.agent].append(Turn(t.speaker, t.text, ts, other))
                        perceived[p.agent] += 1
            for agent, turns in by_agent.items():
                own = config.agents[agent].perspective
                for episode in episodes(turns, tokenizer, memory.max_episode_tokens):
                    source = sum(tokenizer.count(f"{t.speaker}: {t.content}") for t in episode)
                    sentences = [(resolve_sentence(s, t), s) for t in episode
                                 for s in split_sentences(t.content)]
                    for perspective in dict.fromkeys((own, "whole")):
                        rung1 = extract_key_points(
                            episode, max(1, round(memory.rung1_ratio * source)), tokenizer,
                            perspective)
                        rung2 = condense(rung1, max(1, round(memory.rung2_ratio * source)),
                                         tokenizer, speakers)
                        for rung, form in ((1, rung1), (2, rung2)):
                            row = tally.setdefault((agent, perspective, rung), {})
                            words = word_set(form)
                            for resolved, raw in sentences:
                                kind = kind_of(resolved, raw)
                                row[f"{kind}_n"] = row.get(f"{kind}_n", 0) + 1
                                row[f"{kind}_kept"] = row.get(f"{kind}_kept", 0) + carries(
                                    words, word_set(resolved))
                            row["tokens"] = row.get("tokens", 0) + tokenizer.count(form)
                            row["source"] = row.get("source", 0) + source
    rows = []
    for (agent, perspective, rung), row in sorted(tally.items()):
        out: dict[str, object] = {
            "agent": agent, "perspective": perspective, "rung": rung,
            "own": perspective == config.agents[agent].perspective,
            "share": round(100.0 * perceived[agent] / total_turns, 1),
            "tokens_ratio": round(row["tokens"] / max(row["source"], 1), 3)}
        for kind in KINDS:
            n = row.get(f"{kind}_n", 0)
            out[f"{kind}_sentences"] = int(n)
            out[f"{kind}_kept"] = round(100.0 * row.get(f"{kind}_kept", 0) / n, 1) if n else None
        rows.append(out)
    return {"turns": total_turns, "rows": rows}


def table(rows: Sequence[dict[str, object]]) -> str:
    head = "| agent | perspective | rung | share of turns % | felt kept % | dated kept % " \
           "| other kept % | tokens / raw |"
    lines = [head, "|" + "---|" * 8]
    for r in rows:
        lines.append(f"| {r['agent']} | {r['perspective']}{' (own)' if r['own'] else ''} "
                     f"| {r['rung']} | {r['share']} | {r['felt_kept']} | {r['dated_kept']} "
                     f"| {r['other_kept']} | {r['tokens_ratio']} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", nargs="?", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--config", type=Path, default=None, help="solace.toml (default: ours)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    if not args.data.exists():
        print(f"skipped: no LoCoMo data at {args.data}")
        return 0
    result = measure(load_config(args.config), args.data, WordPieceTokenizer())
    print(table(result["rows"]))  # type: ignore[arg-type]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"benchmark": "perspectives_bench", **result}, indent=2)
                        + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
