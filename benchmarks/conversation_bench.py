"""The conversation layer on LoCoMo: drift forks against known boundaries, and the
token cost of the context stack against the naive whole-history prompt.

**Drift.** Segments of real conversation (12-30 consecutive turns of one LoCoMo
session) from *different* conversations are spliced into one stream, so every
segment start is a known subject change. The stream is fed message by message to a
real :class:`~solace.conversation.Conversations` (substrate, projection, the
10-message drift interval, forks), one evaluation settled after each message. A fork's
first relocated message is a detected boundary; it matches a true boundary within
``--tolerance`` messages. Reported: precision, recall, F1 and boundary offset, for
MiniLM at a sweep of thresholds (the configured default marked), with baselines in
the same run: the same detector on the hashing embedder (lexical overlap only), and
"always fork" (threshold above any similarity: a fork at every check).

**Context cost.** The first ``--turns`` LoCoMo turns (one user; every LoCoMo session
a Solace session) go through the layer; after every turn the context stack is built
(identity + built-in tools + memory + facts + drift result, topic notes and prior
topics, trailing window) and its tokens counted with the runtime's WordPiece
counter, next to the naive prompt (identity + the whole history). Reported: mean,
max and final tokens of both, their least-squares slopes (tokens per turn, whole run
and second half), the ratio, and the share of turns whose stable prefix is
byte-identical to the previous turn's.

Summaries are deterministic (LLM ``none``): the benchmark measures the layer, not a
model. The substrate runs with ``fsync="never"`` in a temporary directory.

Usage::

    python benchmarks/conversation_bench.py [DATA] [--segments 60] [--turns 2000]
        [--tolerance 4] [--seed 0] [--embedder minilm|hashing] [--out FILE]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import secrets
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import trio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from solace.clock import ReplayClock  # noqa: E402
from solace.config import ConversationConfig  # noqa: E402
from solace.conversation import (  # noqa: E402
    CONVERSATION_KINDS,
    Conversations,
    Scope,
    open_conversations,
)
from solace.locomo import Conversation, load_locomo  # noqa: E402
from solace.models import (  # noqa: E402
    Embedder,
    Guard,
    HashingEmbedder,
    MiniLMEmbedder,
    NoLLM,
    WordPieceTokenizer,
)
from solace.offload import Offloader  # noqa: E402
from substrate.aio import open_trio_substrate  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "locomo" / "locomo10.json"
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "conversation_bench.json"
SCOPE = Scope("user", "Main", "bench")
IDENTITY = (
    "You are Main, the conversational agent of Solace. You remember what matters across "
    "sessions and say so when you do not know."
)
THRESHOLDS = (0.35, 0.4, 0.45, 0.5, 0.55, 0.6)

Message = tuple[str, str]  # (role, text)


class CachedEmbedder:
    """Embeds each distinct text once, so threshold sweeps reuse the vectors."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name = f"cached:{inner.name}"
        self.dim = inner.dim
        self._cache: dict[str, np.ndarray] = {}

    def warm(self, texts: Sequence[str]) -> None:
        missing = sorted({t for t in texts if t not in self._cache})
        for text, vector in zip(missing, self.inner.embed(missing), strict=True):
            self._cache[text] = vector

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.warm(texts)
        return np.stack([self._cache[t] for t in texts]) if texts else np.zeros((0, self.dim))


# ----------------------------------------------------------------- data


def _roles(turns: Sequence[Any]) -> list[Message]:
    first = turns[0].speaker
    return [("user" if t.speaker == first else "assistant", t.text) for t in turns]


def spliced_stream(
    conversations: Sequence[Conversation], segments: int, rng: random.Random
) -> tuple[list[Message], list[int]]:
    """Segments from alternating conversations; returns messages and segment starts."""
    messages: list[Message] = []
    starts: list[int] = []
    previous = -1
    for _ in range(segments):
        choice = rng.choice([i for i in range(len(conversations)) if i != previous])
        previous = choice
        sessions = [s for s in conversations[choice].sessions if len(s) >= 12]
        session = rng.choice(sessions)
        length = rng.randint(12, min(30, len(session)))
        offset = rng.randint(0, len(session) - length)
        starts.append(len(messages))
        messages.extend(_roles(session[offset : offset + length]))
    return messages, starts


# ----------------------------------------------------------------- harness


async def _open(
    directory: Path, config: ConversationConfig, embedder: Embedder, tokenizer: WordPieceTokenizer
) -> tuple[Any, Conversations]:
    sub = await open_trio_substrate(
        directory, secrets.token_bytes(32), fsync="never", extra_kinds=CONVERSATION_KINDS
    )
    conv = await open_conversations(
        substrate=sub, config=config, llm=NoLLM(), embedder=embedder, tokenizer=tokenizer,
        guard=Guard(tokenizer=tokenizer), offloader=Offloader(2), clock=ReplayClock(0.0),
    )
    return sub, conv


async def detect_forks(
    messages: Sequence[Message], config: ConversationConfig, embedder: Embedder,
    tokenizer: WordPieceTokenizer,
) -> list[int]:
    """Feed the stream to a fresh layer; return the stream index of every fork start."""
    with tempfile.TemporaryDirectory() as tmp:
        sub, conv = await _open(Path(tmp), config, embedder, tokenizer)
        async with sub, trio.open_nursery() as nursery:
            await nursery.start(conv.run)
            session = await conv.open_session(SCOPE)
            index_of: dict[int, int] = {}
            for i, (role, text) in enumerate(messages):
                item = await conv.add_message(session.session_id, role, text)
                index_of[item.entry_id] = i
                await conv.settle()
            forks = sorted(
                index_of[t.items[0]] for t in conv.topics(session.session_id)
                if t.origin == "fork" and t.items
            )
            nursery.cancel_scope.cancel()
    return forks


def score(detected: Sequence[int], truth: Sequence[int], tolerance: int) -> dict[str, float]:
    """Greedy nearest matching within ``tolerance`` messages."""
    unmatched = set(truth)
    offsets: list[int] = []
    for d in detected:
        near = sorted((abs(d - t), t) for t in unmatched if abs(d - t) <= tolerance)
        if near:
            unmatched.discard(near[0][1])
            offsets.append(d - near[0][1])
    matched = len(offsets)
    precision = matched / len(detected) if detected else 0.0
    recall = matched / len(truth) if truth else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "forks": len(detected),
        "boundaries": len(truth),
        "matched": matched,
        "precision": round(precision, 3),
        "recall": round(recall, 3),
        "f1": round(f1, 3),
        "mean_abs_offset": round(float(np.mean(np.abs(offsets))), 2) if offsets else None,
        "mean_signed_offset": round(float(np.mean(offsets)), 2) if offsets else None,
    }  # type: ignore[dict-item]


async def drift_bench(
    conversations: Sequence[Conversation], args: argparse.Namespace,
    embedder: CachedEmbedder, tokenizer: WordPieceTokenizer,
) -> dict[str, Any]:
    rng = random.Random(args.seed)
    messages, starts = spliced_stream(conversations, args.segments, rng)
    truth = starts[1:]
    embedder.warm([t for _, t in messages])
    default = ConversationConfig()
    rows = []
    for threshold in sorted({*THRESHOLDS, default.drift_threshold}):
        cfg = dataclasses.replace(default, drift_threshold=threshold)
        t0 = time.perf_counter()
        forks = await detect_forks(messages, cfg, embedder, tokenizer)
        rows.append({"detector": embedder.inner.name, "threshold": threshold,
                     "default": threshold == default.drift_threshold,
                     **score(forks, truth, args.tolerance),
                     "seconds": round(time.perf_counter() - t0, 1)})
    hashing = CachedEmbedder(HashingEmbedder())
    hashing.warm([t for _, t in messages])
    baselines = []
    for name, emb, threshold in (
        ("hashing (lexical)", hashing, default.drift_threshold),
        ("always fork", embedder, 1.0),
    ):
        cfg = dataclasses.replace(default, drift_threshold=threshold)
        forks = await detect_forks(messages, cfg, emb, tokenizer)
        baselines.append({"detector": name, "threshold": threshold,
                          **score(forks, truth, args.tolerance)})
    return {"messages": len(messages), "segments": len(starts), "tolerance": args.tolerance,
            "sweep": rows, "baselines": baselines}


# ----------------------------------------------------------------- context cost


def slope(ys: Sequence[float]) -> float:
    """Least-squares tokens per turn."""
    if len(ys) < 2:
        return 0.0
    x = np.arange(len(ys), dtype=float)
    return float(np.polyfit(x, np.asarray(ys, dtype=float), 1)[0])


async def context_bench(
    conversations: Sequence[Conversation], args: argparse.Namespace,
    embedder: Embedder, tokenizer: WordPieceTokenizer,
) -> dict[str, Any]:
    sessions = [s for c in conversations for s in c.sessions]
    stack_tokens: list[int] = []
    naive_tokens: list[int] = []
    layers = {"stable": [], "semi_stable": [], "volatile": []}  # type: dict[str, list[int]]
    identical = 0
    naive = tokenizer.count(IDENTITY)
    turns = 0
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        sub, conv = await _open(Path(tmp), ConversationConfig(), embedder, tokenizer)
        clock = conv.clock
        assert isinstance(clock, ReplayClock)
        async with sub, trio.open_nursery() as nursery:
            await nursery.start(conv.run)
            previous_stable: str | None = None
            for turns_in_session in sessions:
                if turns >= args.turns:
                    break
                session = await conv.open_session(SCOPE)
                for (role, text), turn in zip(_roles(turns_in_session), turns_in_session,
                                              strict=True):
                    if turns >= args.turns:
                        break
                    clock.observe(turn.at)
                    await conv.add_message(session.session_id, role, text)
                    await conv.settle()
                    stack = await conv.build_context(session.session_id, identity=IDENTITY)
                    counts = stack.tokens(tokenizer)
                    for name in layers:
                        layers[name].append(counts[name])
                    stack_tokens.append(counts["total"])
                    naive += tokenizer.count(f"{role}: {text}")
                    naive_tokens.append(naive)
                    identical += stack.stable == previous_stable
                    previous_stable = stack.stable
                    turns += 1
                # the user walks away: the exit triggers summarise the last topic
                conv.on_disconnect(session.session_id)
                conv.on_navigation(session.session_id)
                await trio.sleep(ConversationConfig().debounce_ms / 1000 + 0.01)
                await conv.settle()
            stats = conv.stats()
            topics = conv.topics_of(SCOPE)
            nursery.cancel_scope.cancel()
    half = len(stack_tokens) // 2
    return {
        "turns": turns,
        "sessions": stats["sessions"],
        "topics": len(topics),
        "forks": sum(t.origin == "fork" for t in topics),
        "promoted": sum(t.keep_in_memory for t in topics),
        "stack": _summary(stack_tokens, half),
        "naive": _summary(naive_tokens, half),
        "layers_max": {k: max(v) for k, v in layers.items()},
        "layers_mean": {k: round(float(np.mean(v)), 1) for k, v in layers.items()},
        "final_ratio_stack_to_naive": round(stack_tokens[-1] / naive_tokens[-1], 4),
        "mean_ratio_stack_to_naive": round(float(np.mean(stack_tokens)) / float(
            np.mean(naive_tokens)), 4),
        "slope_ratio_stack_to_naive": round(slope(stack_tokens) / slope(naive_tokens), 4),
        "stable_prefix_identical_share": round(identical / max(turns - 1, 1), 4),
        "memory_cache": stats["memory_cache"],
        "seconds": round(time.perf_counter() - t0, 1),
    }


def _summary(values: Sequence[int], half: int) -> dict[str, float]:
    return {
        "mean": round(float(np.mean(values)), 1),
        "max": int(max(values)),
        "final": int(values[-1]),
        "slope_per_turn": round(slope(values), 3),
        "slope_second_half": round(slope(values[half:]), 3),
    }


# ----------------------------------------------------------------- report


def print_report(result: dict[str, Any]) -> None:
    drift = result["drift"]
    print(f"\nDrift: {drift['segments']} spliced LoCoMo segments, {drift['messages']} messages, "
          f"match tolerance ±{drift['tolerance']} messages")
    head = (f"{'detector':<20}{'thresh':>7}{'forks':>7}{'P':>7}{'R':>7}{'F1':>7}"
            f"{'|off|':>7}{'off':>7}")
    print(head)
    print("-" * len(head))
    for row in drift["sweep"] + drift["baselines"]:
        mark = " *" if row.get("default") else ""
        off = row["mean_abs_offset"]
        signed = row["mean_signed_offset"]
        print(f"{row['detector'][:19]:<20}{row['threshold']:>7.2f}{row['forks']:>7}"
              f"{row['precision']:>7.3f}{row['recall']:>7.3f}{row['f1']:>7.3f}"
              f"{'-' if off is None else off:>7}{'-' if signed is None else signed:>7}{mark}")
    default = next(r for r in drift["sweep"] if r["default"])
    for base in drift["baselines"]:
        if base["f1"]:
            print(f"F1 ratio default / {base['detector']}: {default['f1'] / base['f1']:.2f}")
    ctx = result["context"]
    print(f"\nContext cost over {ctx['turns']} turns ({ctx['sessions']} sessions, "
          f"{ctx['topics']} topics, {ctx['forks']} forks, {ctx['promoted']} promoted)")
    head = f"{'prompt':<18}{'mean':>9}{'max':>8}{'final':>8}{'slope':>9}{'slope 2nd half':>16}"
    print(head)
    print("-" * len(head))
    for name in ("stack", "naive"):
        s = ctx[name]
        print(f"{name:<18}{s['mean']:>9}{s['max']:>8}{s['final']:>8}"
              f"{s['slope_per_turn']:>9.3f}{s['slope_second_half']:>16.3f}")
    print(f"stack/naive: final {ctx['final_ratio_stack_to_naive']:.3f}, mean "
          f"{ctx['mean_ratio_stack_to_naive']:.3f}, slope {ctx['slope_ratio_stack_to_naive']:.4f}")
    print(f"layer max tokens: {ctx['layers_max']}  mean: {ctx['layers_mean']}")
    print(f"stable prefix byte-identical to the previous turn: "
          f"{ctx['stable_prefix_identical_share']:.1%}; memory cache {ctx['memory_cache']}")


async def amain(args: argparse.Namespace) -> dict[str, Any]:
    conversations = load_locomo(args.data)
    tokenizer = WordPieceTokenizer()
    inner: Embedder = MiniLMEmbedder() if args.embedder == "minilm" else HashingEmbedder()
    embedder = CachedEmbedder(inner)
    t0 = time.perf_counter()
    drift = await drift_bench(conversations, args, embedder, tokenizer)
    context = await context_bench(conversations, args, embedder, tokenizer)
    return {
        "data": str(args.data),
        "embedder": inner.name,
        "seed": args.seed,
        "config": dataclasses.asdict(ConversationConfig()),
        "drift": drift,
        "context": context,
        "seconds": round(time.perf_counter() - t0, 1),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", nargs="?", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--segments", type=int, default=60)
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--tolerance", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--embedder", choices=("minilm", "hashing"), default="minilm")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    if not args.data.is_file():
        print(f"conversation_bench: no LoCoMo data at {args.data}; skipping "
              "(pass the path of locomo10.json)")
        return 0
    result = trio.run(amain, args)
    print_report(result)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
