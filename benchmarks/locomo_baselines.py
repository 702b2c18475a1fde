"""LoCoMo recall baselines: cheap systems over a conversation's raw turns.

Each unit is one turn, so every hit stands for its turn alone. The systems: BM25
(Solace's own stemmed BM25), MiniLM flat search (cosine over normalised embeddings),
their reciprocal rank fusion, and that fusion over turns rewritten by the ladder's
``resolve_relative_dates`` and ``resolve_pronouns`` (called, not copied). Plus the
ceilings: answer recall with every turn read, raw and resolved.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from locomo_scoring import (
    Injected,
    Tally,
    answer_recall,
    rrf_fuse,
    score_question,
    word_set,
)

from solace.locomo import Conversation, Turn
from solace.memory.bm25 import LexicalIndex
from solace.memory.ladder import resolve_pronouns, resolve_relative_dates

__all__ = [
    "BASELINES", "CEILING", "CEILING_RESOLVED", "SPLITS", "raw_unit", "resolved_unit",
    "run_baselines",
]

SPLITS = ("tuning", "test")
CEILING = "(every turn read)"
CEILING_RESOLVED = "(every turn read, resolved)"
BASELINES = ("BM25 raw", "MiniLM flat raw", "hybrid RRF raw", "resolved hybrid RRF")


def raw_unit(turn: Turn) -> str:
    """The raw baselines' unit of text for one turn."""
    return f'{turn.speaker} said, "{turn.text}"'


def resolved_unit(turn: Turn, addressee: str) -> str:
    """One turn as the ladder's resolution writes it: dates, then "I"/"you" named.

    Labelled with the speaker unless the rewrite already names them.
    """
    text = resolve_relative_dates(turn.text, turn.at.timestamp())
    text, named = resolve_pronouns(text, turn.speaker, addressee)
    text = " ".join(text.split())
    return text if named else f'{turn.speaker} said, "{text}"'


# ---------------------------------------------------------------------- baselines

Ranker = Callable[[str], list[int]]


def bm25_ranker(texts: list[str], depth: int) -> Ranker:
    index = LexicalIndex()
    for i, text in enumerate(texts):
        index.add(i, text)

    def rank(question: str) -> list[int]:
        scores = index.scores(question)
        return sorted(scores, key=lambda i: (-scores[i], i))[:depth]

    return rank


def dense_ranker(vectors: np.ndarray, embed: Callable[[list[str]], np.ndarray],
                 depth: int) -> Ranker:
    def rank(question: str) -> list[int]:
        sims = vectors @ embed([question])[0]
        return [int(i) for i in np.argsort(-sims, kind="stable")[:depth]]

    return rank


def fused_ranker(first: Ranker, second: Ranker, depth: int) -> Ranker:
    """The reciprocal rank fusion of two rankers (``locomo_scoring.rrf_fuse``)."""

    def rank(question: str) -> list[int]:
        return rrf_fuse([first(question), second(question)], depth)

    return rank


def run_baselines(conversations: Sequence[tuple[str, Conversation]], tokenizer: Any,
                  embedder: Any, depth: int) -> dict[str, dict[str, Tally]]:
    """Every baseline and the ceiling, per split, over each conversation's own turns."""
    names = (*BASELINES, CEILING, CEILING_RESOLVED)
    out = {split: {name: Tally() for name in names} for split in SPLITS}
    for split, conv in conversations:
        tallies = out[split]
        turns = conv.turns
        speakers = sorted({t.speaker for t in turns})
        other = {s: (speakers[1 - i] if len(speakers) == 2 else "") for i, s in enumerate(speakers)}
        turn_words = {t.dia_id: word_set(t.text) for t in turns}
        raw = [raw_unit(t) for t in turns]
        res = [resolved_unit(t, other[t.speaker]) for t in turns]
        units = {}
        for kind, texts in (("raw", raw), ("res", res)):
            counts = tokenizer.count_many(texts)
            units[kind] = [Injected(frozenset({t.dia_id}), 1, x, c)
                           for t, x, c in zip(turns, texts, counts, strict=True)]
        bm_raw, bm_res = bm25_ranker(raw, depth), bm25_ranker(res, depth)
        dn_raw = dense_ranker(embedder.embed(raw), embedder.embed, depth)
        dn_res = dense_ranker(embedder.embed(res), embedder.embed, depth)
        rankers: dict[str, tuple[str, Ranker]] = {
            "BM25 raw": ("raw", bm_raw),
            "MiniLM flat raw": ("raw", dn_raw),
            "hybrid RRF raw": ("raw", fused_ranker(bm_raw, dn_raw, depth)),
            "resolved hybrid RRF": ("res", fused_ranker(bm_res, dn_res, depth)),
        }
        for q in conv.questions:
            for name, (kind, rank) in rankers.items():
                t0 = time.perf_counter()
                order = rank(q.question)
                tallies[name].latencies.append(time.perf_counter() - t0)
                score_question(tallies[name], q, [units[kind][i] for i in order], turn_words)
            words = word_set(q.answer) if q.answer else frozenset()
            if words:
                tallies[CEILING].add(q.category, "ans@all", answer_recall(units["raw"], words))
                tallies[CEILING_RESOLVED].add(q.category, "ans@all",
                                              answer_recall(units["res"], words))
    return out
