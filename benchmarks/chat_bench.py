"""Does the default chat use its memory? A scripted 40-turn conversation through the REPL.

The user plants facts early (name, dog, allergy, city, job, favourite colour; a
sister later), chats about other things, and asks about the facts later, some
right after planting them and some after a restart of the whole runtime (closed
with ``/quit``: the exit trigger runs, every memory is snapshotted; then reopened
on the same home). Every line goes through :class:`solace.surfaces.repl.Repl`,
exactly what ``solace run`` does with a typed line.

Reported:

* **verbatim repeats** — replies identical (case and punctuation aside) to an
  earlier reply in the run (target 0);
* **facts recalled** — factual questions whose reply holds the planted fact
  (target >= 80 %), with the share answered by grounded mode (``From memory: ...``)
  and the model's own share;
* **reply latency** — p50 / p95 / max seconds per chat turn (the line typed to the
  reply printed), and the model's tokens per second;
* how each reply was made (Main's ``answers_by``): the model's first reply, a retry
  after a repeat, grounded, a fact noted, or stuck.

Backends: the default is the shipped SmolLM2-135M through llama-cpp; ``--gguf PATH``
runs any GGUF file, ``--base-url URL --model NAME`` any OpenAI-compatible server
(Ollama, llama.cpp's server, vLLM). ``--no-grounded`` turns grounded mode off to
measure the model alone. Some questions are phrased unlike the planted sentence
("Which food must I avoid?") and two use words grounded mode has no alias for
("What pet do I have?"), so the number is not a lookup of the script.

Usage::

    python benchmarks/chat_bench.py [--gguf PATH | --base-url URL --model NAME]
        [--embedder minilm|hashing] [--no-grounded] [--turns 40] [--out FILE]
"""

from __future__ import annotations

import argparse
import io
import json
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import trio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from solace.config import Config, ModelsConfig, SubstrateConfig  # noqa: E402
from solace.runtime import open_runtime  # noqa: E402
from solace.surfaces.repl import Repl  # noqa: E402

#: (line, expected substring of the reply or None). ``RESTART`` restarts the runtime.
RESTART = "<restart>"
SCRIPT: list[tuple[str, str | None]] = [
    ("Hi! My name is Ada.", None),
    ("My dog's name is Rex.", None),
    ("What is my name?", "Ada"),
    ("What is my dog's name?", "Rex"),
    ("I'm severely allergic to peanuts.", None),
    ("I live in Lisbon.", None),
    ("I work as a nurse.", None),
    ("My favourite colour is green.", None),
    ("Tell me a fun fact about octopuses.", None),
    ("What should I cook tonight? Something quick.", None),
    ("Am I allergic to anything?", "peanut"),
    ("Where do I live?", "Lisbon"),
    ("I'm thinking about a weekend trip, any ideas?", None),
    ("What's a good name for a sailboat?", None),
    ("What do I do for work?", "nurse"),
    ("Can you suggest a snack for me?", None),
    ("What is my favourite colour?", "green"),
    ("How do I make my mornings less rushed?", None),
    ("What pet do I have?", "dog"),
    ("Thanks, that's all for now.", None),
    (RESTART, None),
    ("Hello again.", None),
    ("Do you remember my name?", "Ada"),
    ("What is my dog called?", "Rex"),
    ("Recommend a book for a rainy day.", None),
    ("Which food must I avoid?", "peanut"),
    ("Which city do I live in?", "Lisbon"),
    ("My sister's name is Maria.", None),
    ("What is my sister's name?", "Maria"),
    ("Give me a short workout idea.", None),
    ("What is my job?", "nurse"),
    ("What colour do I like best?", "green"),
    ("Tell me a joke.", None),
    ("How can I sleep better?", None),
    ("What's my name?", "Ada"),
    ("What's the name of my pet?", "Rex"),
    ("Any tips for learning Portuguese?", None),
    ("What am I allergic to?", "peanut"),
    ("Where do I live?", "Lisbon"),
    ("Who is Maria?", "sister"),
    ("Goodbye!", None),
]


def _norm(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.casefold()))


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def _config(args: argparse.Namespace) -> Config:
    if args.base_url:
        models = ModelsConfig(embedder=args.embedder, llm_backend="openai-compatible",
                              llm_base_url=args.base_url, llm_model=args.model)
    else:
        models = ModelsConfig(embedder=args.embedder, llm_backend="llama-cpp",
                              llm_model_path=args.gguf)
    return Config(models=models, substrate=SubstrateConfig(fsync="never"))


async def _open(home: Path, config: Config, grounded: bool) -> tuple[Any, Any, Repl]:
    cm = open_runtime(home, config)
    rt = await cm.__aenter__()
    main = rt.agent("Main")
    if hasattr(main, "grounded"):
        main.grounded = grounded
    repl = Repl(rt, io.StringIO())
    await repl.start()
    return cm, rt, repl


async def _close(cm: Any, repl: Repl) -> None:
    repl.trigger("quit")
    await repl.finish()
    await cm.__aexit__(None, None, None)


async def run(args: argparse.Namespace) -> dict[str, Any]:
    config = _config(args)
    script = SCRIPT[: args.turns + (1 if args.turns > 20 else 0)]
    turns: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="chat_bench_") as tmp:
        home = Path(tmp)
        cm, rt, repl = await _open(home, config, not args.no_grounded)
        llm = rt.agent("Main").llm
        try:
            for line, expected in script:
                if line == RESTART:
                    await _close(cm, repl)
                    cm, rt, repl = await _open(home, config, not args.no_grounded)
                    llm = rt.agent("Main").llm
                    continue
                before = dict(getattr(rt.agent("Main"), "answers_by", {}))
                started = time.perf_counter()
                reply = await repl.handle(line) or ""
                seconds = time.perf_counter() - started
                after = dict(getattr(rt.agent("Main"), "answers_by", {}))
                how = next((k for k in after if after[k] != before.get(k, 0)), "?")
                text = reply.removeprefix("Solace: ")
                turns.append({"line": line, "reply": text, "seconds": round(seconds, 3),
                              "expected": expected, "how": how})
                print(f"[{len(turns):2}] {seconds:5.1f}s  you: {line}\n"
                      f"            solace: {text[:160]}", flush=True)
            stats = llm.stats
            tokens_per_second = round(stats.tokens_per_second, 1)
            llm_name = llm.name
        finally:
            await _close(cm, repl)

    seen: list[str] = []
    repeats = 0
    for turn in turns:
        key = _norm(turn["reply"])
        turn["repeat"] = bool(key) and key in seen
        repeats += turn["repeat"]
        seen.append(key)
    questions = [t for t in turns if t["expected"]]
    for turn in questions:
        turn["recalled"] = turn["expected"].casefold() in turn["reply"].casefold()
        turn["grounded"] = turn["how"] == "grounded"
    recalled = sum(t["recalled"] for t in questions)
    grounded = sum(t["recalled"] and t["grounded"] for t in questions)
    seconds = [t["seconds"] for t in turns]
    return {
        "llm": llm_name,
        "embedder": args.embedder,
        "grounded_mode": not args.no_grounded,
        "turns": len(turns),
        "restarts": sum(1 for line, _ in script if line == RESTART),
        "verbatim_repeats": repeats,
        "distinct_replies": len(set(seen)),
        "questions": len(questions),
        "facts_recalled": recalled,
        "facts_recalled_pct": round(100 * recalled / len(questions), 1) if questions else 0.0,
        "recalled_by_grounded_mode": grounded,
        "recalled_by_the_model": recalled - grounded,
        "latency_p50_s": round(statistics.median(seconds), 2) if seconds else 0.0,
        "latency_p95_s": round(_percentile(seconds, 0.95), 2),
        "latency_max_s": round(max(seconds, default=0.0), 2),
        "tokens_per_second": tokens_per_second,
        "answers_by": {how: sum(t["how"] == how for t in turns)
                       for how in sorted({t["how"] for t in turns})},
        "transcript": turns,
    }


def table(result: dict[str, Any]) -> str:
    rows = [
        ("model", result["llm"]),
        ("embedder", result["embedder"]),
        ("grounded mode", "on" if result["grounded_mode"] else "off"),
        ("chat turns (restarts)", f"{result['turns']} ({result['restarts']})"),
        ("verbatim repeats (target 0)", str(result["verbatim_repeats"])),
        ("distinct replies", f"{result['distinct_replies']} / {result['turns']}"),
        ("facts recalled (target >= 80 %)",
         f"{result['facts_recalled']} / {result['questions']} "
         f"({result['facts_recalled_pct']} %)"),
        ("  by grounded mode / by the model",
         f"{result['recalled_by_grounded_mode']} / {result['recalled_by_the_model']}"),
        ("reply latency p50 / p95 / max (s)",
         f"{result['latency_p50_s']} / {result['latency_p95_s']} / {result['latency_max_s']}"),
        ("model tokens per second", str(result["tokens_per_second"])),
        ("replies by how they were made",
         ", ".join(f"{k} {v}" for k, v in result["answers_by"].items())),
    ]
    width = max(len(k) for k, _ in rows)
    lines = [f"{'metric':<{width}}  value", f"{'-' * width}  -----"]
    lines += [f"{k:<{width}}  {v}" for k, v in rows]
    misses = [t for t in result["transcript"] if t.get("expected") and not t["recalled"]]
    if misses:
        lines.append("missed questions:")
        lines += [f"  {t['line']!r} -> {t['reply'][:100]!r}" for t in misses]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--gguf", metavar="PATH", help="a GGUF chat model (llama-cpp)")
    source.add_argument("--base-url", metavar="URL",
                        help="an OpenAI-compatible server, e.g. http://127.0.0.1:11434/v1/")
    parser.add_argument("--model", help="the model name on --base-url")
    parser.add_argument("--embedder", choices=("minilm", "hashing"), default="minilm")
    parser.add_argument("--no-grounded", action="store_true",
                        help="turn grounded mode off (the model alone)")
    parser.add_argument("--turns", type=int, default=40, help="chat turns (default 40)")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.base_url and not args.model:
        parser.error("--base-url needs --model")
    if not 1 <= args.turns <= 40:
        parser.error(f"--turns must be within 1..40, got {args.turns}")
    result = trio.run(run, args)
    print(table(result))
    suffix = "" if not args.no_grounded else "_model_only"
    if args.gguf or args.base_url:
        suffix += "_" + re.sub(r"[^A-Za-z0-9.-]+", "-", Path(args.gguf).stem if args.gguf
                               else str(args.model)).strip("-")
    out = args.out or ROOT / "benchmarks" / "results" / f"chat_bench{suffix}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
