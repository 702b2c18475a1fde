"""Persistent memory: the promoted (and deprecated) topics of a scope, as one block.

The block lists every promoted topic's summary across the scope's sessions and
every deprecated topic's title alone (``[DEPRECATED] <title>``: the agent learns a
decision was reversed without paying for its summary). It is capped at a token
budget with FIFO truncation: the entries that entered memory first are dropped
first. Blocks are cached per ``agent:user:org`` scope; the service invalidates an
entry whenever the projection reports a promotion, demotion, deprecation or a change
to a shown title or summary, so the next turn never serves a stale list.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from solace.conversation.model import Scope, Topic
from solace.models.tokenizer import Tokenizer

__all__ = ["MemoryBlock", "MemoryCache", "fifo_fit", "memory_entry", "render_memory_block"]


def fifo_fit(counts: Sequence[int], budget: int) -> int:
    """Index of the first entry kept when the oldest entries are dropped until the
    token ``counts`` of the rest add up to at most ``budget``."""
    total, start = sum(counts), 0
    while start < len(counts) and total > budget:
        total -= counts[start]
        start += 1
    return start


def memory_entry(topic: Topic) -> str:
    """One line of the block: the summary of a promoted topic, the title of a deprecated one."""
    if topic.deprecated:
        return f"- [DEPRECATED] {topic.label}"
    summary = " ".join(topic.summary.split())
    return f"- {topic.label}: {summary}" if summary else f"- {topic.label}"


@dataclass(frozen=True, slots=True)
class MemoryBlock:
    """A rendered memory block.

    Attributes:
        text: the lines, oldest entry first ('' when empty).
        topic_ids: the topics shown, in order.
        dropped: topic ids dropped by FIFO truncation, oldest first.
        tokens: token count of ``text``.
    """

    text: str
    topic_ids: tuple[str, ...]
    dropped: tuple[str, ...]
    tokens: int


def render_memory_block(topics: Iterable[Topic], budget: int, tokenizer: Tokenizer) -> MemoryBlock:
    """Render the memory block of ``topics`` within ``budget`` tokens.

    Only topics in the memory block (promoted or deprecated) are shown, ordered by
    when they entered it (``memory_since``). While the lines exceed the budget the
    oldest is dropped (FIFO). Same topics, same bytes.
    """
    shown = sorted(
        (t for t in topics if t.in_memory_block), key=lambda t: (t.memory_since, t.topic_id)
    )
    lines = [memory_entry(t) for t in shown]
    counts = tokenizer.count_many(lines) if lines else []
    start = fifo_fit(counts, budget)  # WordPiece never merges across a line break
    text = "\n".join(lines[start:])
    tokens = tokenizer.count(text)
    while start < len(lines) and tokens > budget:  # a tokenizer whose counts do not add up
        start += 1
        text = "\n".join(lines[start:])
        tokens = tokenizer.count(text)
    return MemoryBlock(
        text,
        tuple(t.topic_id for t in shown[start:]),
        tuple(t.topic_id for t in shown[:start]),
        tokens,
    )


class MemoryCache:
    """Rendered memory blocks keyed by scope (the seed's ``agentId:userId:orgId``)."""

    def __init__(self) -> None:
        self._blocks: dict[str, MemoryBlock] = {}
        self.hits = 0
        self.misses = 0
        self.invalidations = 0

    def get(self, scope: Scope) -> MemoryBlock | None:
        """The cached block of ``scope``, or None (counted as a hit or a miss)."""
        block = self._blocks.get(scope.key)
        if block is None:
            self.misses += 1
        else:
            self.hits += 1
        return block

    def put(self, scope: Scope, block: MemoryBlock) -> None:
        """Cache ``block`` for ``scope``."""
        self._blocks[scope.key] = block

    def invalidate(self, scope: Scope) -> None:
        """Drop the cached block of ``scope``, so the next read re-renders it."""
        if self._blocks.pop(scope.key, None) is not None:
            self.invalidations += 1
