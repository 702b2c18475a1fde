"""Test helpers for retrieval (like ``trio.testing``): a :class:`Retriever` over any
tiers with no model, no substrate and no threads.

Used by the test suite and ``benchmarks/view_follow.py``; nothing here is imported by
the runtime.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from solace.memory.candidates import Retriever
from solace.memory.derived_forms import Rehydrate

__all__ = ["SyntheticEvent", "retriever_over"]

_WORDS = ("kayak pottery lake violin sunrise museum adoption race Sweden camping painting "
          "charity interview daughter jolene ocean class friend weekend trip").split()


@dataclass(frozen=True)
class SyntheticEvent:
    """An event whose content is made from its id (a word of LoCoMo-like vocabulary)."""

    entry_id: int
    ts: float = 0.0
    agent: str = "user"
    kind: str = "message"
    attrs: Mapping[str, str] = field(default_factory=dict)

    @property
    def content(self) -> str:
        return f"{_WORDS[self.entry_id % len(_WORDS)]} event {self.entry_id}"


class _Events:
    async def get_many(self, ids: Sequence[int]) -> list[SyntheticEvent]:
        return [SyntheticEvent(i) for i in ids]


class _Words:
    def count_many(self, texts: Sequence[str]) -> list[int]:
        return [len(t.split()) for t in texts]


class _Inline:
    async def run(self, fn: Any, *args: Any) -> Any:
        return fn(*args)

    async def run_chunks(self, fn: Any, items: Sequence[Any], *, min_chunk: int = 8,
                         max_chunk: int | None = None) -> list[Any]:
        """:meth:`solace.offload.Offloader.run_chunks`' chunks, each run inline."""
        size = max_chunk or len(items) or 1
        return [fn(items[i:i + size]) for i in range(0, len(items), size)] or [fn(items)]


def retriever_over(memory: Any, *, rehydrate: Rehydrate | None = None,
                   **options: Any) -> Retriever:
    """A :class:`Retriever` over ``memory`` (anything with ``agent``, ``working`` and
    ``longterm``): events are :class:`SyntheticEvent`, tokens are words, blocking work
    runs inline, a rehydrated form is its events' contents joined (unless ``rehydrate``
    is given); ``options`` are the retriever's other keyword arguments."""
    return Retriever(memory, tokenizer=_Words(), offloader=_Inline(), events=_Events(),
                     rehydrate=rehydrate if rehydrate is not None else _joined, **options)


def _joined(events: Sequence[Any], rung: int) -> str:
    return " ".join(e.content for e in events)
