"""Rehydration: long-term hits as transient cues for one reasoning step.

Seed 002, "Retrieval": when a long-term hit scores high enough it is rehydrated —
brought back as a cue that lives only for the current reasoning step. If the step
uses it, it earns its way back into working with fresh fade tracking; if not, it
returns to long-term unchanged. :func:`open_reasoning_step` is that scope.

"Used" is either said (``step.mark_used(cue)``) or detected: a cue counts as used
by an output that repeats at least :data:`USE_MIN_TERMS` of its content terms that
the query did not already contain (so echoing the question is not use).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from typing import Any

from solace.memory.chunks import record_events
from solace.memory.lexical import terms
from solace.memory.record import Hit

__all__ = ["USE_MIN_TERMS", "ReasoningStep", "open_reasoning_step"]

log = logging.getLogger(__name__)

USE_MIN_TERMS = 2


@dataclass(slots=True)
class ReasoningStep:
    """What one reasoning step sees of memory, and which cues it used.

    Attributes:
        query: what the step is about.
        hits: the recall results, best first (working, long-term and read-through).
        cues: the asking agent's own long-term hits scoring above the threshold,
            rehydrated (their ``text`` is the rehydrated form).
    """

    query: str
    hits: list[Hit]
    cues: list[Hit]
    _used: dict[tuple[str, int], Hit] = field(default_factory=dict)

    @property
    def used(self) -> tuple[Hit, ...]:
        """The hits (cues and own working hits) marked or detected as used so far."""
        return tuple(self._used.values())

    def _own(self) -> list[Hit]:
        return [h for h in self.hits if h.owner is None and h.tier == "working"] + self.cues

    def mark_used(self, hit: Hit) -> None:
        """Say that the step used ``hit`` (a cue, or one of the agent's working hits).

        Raises:
            ValueError: ``hit`` is neither a cue nor an own working hit of this step.
        """
        key = (hit.tier, hit.record_id)
        if not any((h.agent, h.owner, h.tier, h.record_id) == (hit.agent, hit.owner, *key)
                   for h in self._own()):
            raise ValueError(
                f"{hit.tier} record {hit.record_id} is not a cue or own working hit of this step"
            )
        self._used[key] = hit

    def detect_use(self, output: str) -> list[Hit]:
        """Mark the cues and own working hits ``output`` draws on; return the new ones."""
        out_terms = set(terms(output))
        query_terms = set(terms(self.query))
        found = []
        for hit in self._own():
            key = (hit.tier, hit.record_id)
            if key in self._used:
                continue
            shared = (set(terms(hit.text)) - query_terms) & out_terms
            if len(shared) >= USE_MIN_TERMS:
                self._used[key] = hit
                found.append(hit)
        return found


@asynccontextmanager
async def open_reasoning_step(
    query: str,
    hits: Sequence[Hit],
    *,
    memory: Any,
    retriever: Any,
    threshold: float,
    cue_rung: int,
    clock: Any,
) -> AsyncIterator[ReasoningStep]:
    """The rehydration scope behind ``Actor.reasoning_step``.

    On normal exit each used cue leaves long-term and re-enters working at
    ``cue_rung`` (text rebuilt from its substrate events — a chunk's from its part of
    its event — fresh tracking: created
    and last referenced now, one more reference); used working hits are touched.
    Unused cues are not touched at all. On an exception nothing moves.
    """
    if cue_rung not in (0, 1, 2):
        raise ValueError(f"cue_rung must be 0, 1 or 2, got {cue_rung!r}")
    cues = [
        h for h in hits if h.tier == "longterm" and h.owner is None and h.score > threshold
    ]
    step = ReasoningStep(query, list(hits), cues)
    yield step
    now = clock.now()
    for hit in step.used:
        if hit.tier == "working":
            if memory.working.get(hit.record_id) is not None:
                memory.touch(hit.record_id, now)
            continue
        record = memory.longterm.get(hit.record_id)
        if record is None:  # faded or moved since the recall: nothing to bring back
            continue
        events = record_events(record, await retriever.events.get_many(record.entry_ids))
        text = await retriever.offloader.run(retriever.rehydrate, events, cue_rung)
        tokens = retriever.tokenizer.count(text)
        revived = replace(
            record, rung=cue_rung, text=text, tokens=tokens, created=now,
            last_referenced=now, references=record.references + 1,
        )
        await memory.add_record(revived)  # leaves long-term, logged as a fade "add" event
        log.debug("%s: cue %d re-entered working at rung %d", record.agent, record.record_id,
                  cue_rung)
