"""What the fact-memory benchmark drives: a fact memory on a temporary substrate, the
append-only baseline, and a settable clock.

The baseline is what a user could build cheaply: every write is appended (no
read-first classification: everything is an ADD), and recall is Solace's own
scoring (:func:`solace.facts.ranking.score_facts`, same embedder, same store
policy, same rendering), so the only difference measured is the classification.
"""

from __future__ import annotations

import secrets
import tempfile
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import numpy as np

from solace.config.schema import Config
from solace.facts import FactMemory, open_fact_memory
from solace.facts.model import Fact, FactStatus, RecallBlock, WriteClass
from solace.facts.ranking import render_block, score_facts
from solace.models.guard import Guard
from solace.offload import Offloader

__all__ = ["AppendOnly", "ManualClock", "live_tokens", "open_memory"]


class ManualClock:
    """A clock the benchmark sets (``t``); it may be set backwards between sequences."""

    def __init__(self, t: float = 1_700_000_000.0) -> None:
        self.t = t

    def now(self) -> float:
        return self.t


@asynccontextmanager
async def open_memory(config: Config, embedder: Any, tokenizer: Any,
                      clock: ManualClock, llm: Any = None) -> AsyncIterator[FactMemory]:
    """A :class:`FactMemory` on a fresh temporary substrate (fsync off), closed after."""
    from solace.runtime import extra_kinds
    from substrate.aio import open_trio_substrate

    with tempfile.TemporaryDirectory(prefix="facts-bench-") as d:
        sub = await open_trio_substrate(Path(d) / "substrate", secrets.token_bytes(32),
                                        fsync="never", extra_kinds=extra_kinds(config))
        async with sub:
            yield await open_fact_memory(facts_dir=Path(d) / "facts", substrate=sub,
                                         config=config, embedder=embedder,
                                         tokenizer=tokenizer, offloader=Offloader(2),
                                         clock=clock, llm=llm,
                                         guard=Guard(tokenizer=tokenizer))


def live_tokens(fm: FactMemory, memory_id: str, count: Any) -> tuple[int, int]:
    """(live facts, their tokens) of ``memory_id``: each recallable fact's text counted."""
    facts = fm.facts(memory_id)
    return len(facts), sum(count(f.text) for f in facts)


class AppendOnly:
    """The baseline: every write appended; recall scored and rendered as Solace does."""

    def __init__(self, config: Config, embedder: Any, tokenizer: Any, store: str = "default"):
        self._config = config
        self._embedder = embedder
        self._tokenizer = tokenizer
        self._store = store
        self._facts: dict[str, list[Fact]] = {}
        self._cache: dict[str, np.ndarray] = {}

    def _vectors(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            raw = np.asarray(self._embedder.embed(missing), dtype=np.float32)
            norms = np.linalg.norm(raw, axis=1, keepdims=True)
            vs = (raw / np.where(norms == 0, 1.0, norms)).astype(np.float32)
            self._cache.update(zip(missing, vs, strict=True))
        return np.stack([self._cache[t] for t in texts])

    def write(self, memory_id: str, text: str, ts: float) -> None:
        """Append ``text`` as a live fact stated at ``ts``."""
        facts = self._facts.setdefault(memory_id, [])
        facts.append(Fact(f"b{len(facts)}", memory_id, self._store, text, 0.5, FactStatus.LIVE,
                          ts, ts, 1, "remember", WriteClass.ADD, "append-only"))

    def facts(self, memory_id: str) -> list[Fact]:
        return list(self._facts.get(memory_id, []))

    def recall(self, query: str, memory_id: str, now: float) -> RecallBlock:
        """Top-k by Solace's scoring over every appended fact, rendered as Solace does."""
        facts = self._facts.get(memory_id, [])
        if not facts:
            return render_block(memory_id, self._store, [], self._tokenizer.count)
        vectors = self._vectors([f.text for f in facts])
        (qv,) = self._vectors([query])
        scored = score_facts(query, qv, facts, vectors, now=now,
                             store=self._config.stores[self._store],
                             lexical_weight=self._config.facts.lexical_weight)
        return render_block(memory_id, self._store, scored, self._tokenizer.count)
