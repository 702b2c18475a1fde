"""Rehydration: long-term hits as transient cues for one reasoning step.

Seed 002, "Retrieval": when a long-term hit scores high enough it is rehydrated —
brought back as a cue that lives only for the current reasoning step. If the step
uses it, it earns its way back into working with fresh fade tracking; if not, it
returns to long-term unchanged. :func:`open_reasoning_step` is that scope.

"Used" is either said (``step.mark_used(cue)``) or detected from the step's output
(``step.detect_use(output)``), and detection credits a hit only with what it brought to
the prompt:

* only hits the model was shown can be used. A caller that builds a prompt from some
  of the hits (a token budget, a line cap) says which with ``step.show(...)``;
  once it has, a hit it did not show is never detected as used, whatever the output
  says. A caller that never calls ``show`` is taken to have shown every hit as is.
* a hit's *added* terms are the content terms (:func:`~solace.memory.lexical.terms`,
  stemmed) of the text it was shown as, less the query's, less those of the other
  material shown beside it (the ``context`` given to ``detect_use``: the thread, the
  facts), less those of every other shown record. Two hits of one record (a faded
  episode and one of its events) are one record here: they share their terms.
* the hit is used when the output repeats at least :data:`USE_MIN_TERMS` of its added
  terms. So echoing the question is not use, and neither is repeating words the
  model could have taken from anything else in the prompt: when two shown records
  both carry a word, that word is evidence for neither. The rule reads only texts,
  so the same step and output always give the same verdict.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from typing import Any

from solace.memory.chunks import record_events
from solace.memory.lexical import terms
from solace.memory.record import Hit

__all__ = ["USE_MIN_TERMS", "ReasoningStep", "open_reasoning_step"]

log = logging.getLogger(__name__)

USE_MIN_TERMS = 2

_Key = tuple[str | None, str, int]  # (owner, tier, record id): one record of one agent


def _key(hit: Hit) -> _Key:
    return (hit.owner, hit.tier, hit.record_id)


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
    _shown: dict[_Key, list[str]] | None = None

    @property
    def used(self) -> tuple[Hit, ...]:
        """The hits (cues and own working hits) marked or detected as used so far."""
        return tuple(self._used.values())

    @property
    def shown(self) -> dict[_Key, tuple[str, ...]] | None:
        """(owner, tier, record id) -> the texts the record was shown as, or None if
        nothing was said (every hit then counts as shown in its own text)."""
        if self._shown is None:
            return None
        return {k: tuple(v) for k, v in self._shown.items()}

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

    def show(self, shown: Iterable[Hit | tuple[Hit, str]]) -> None:
        """Say which hits were put in front of the model, each as its text or as the
        text given with it (a line cut short is judged on what was kept).

        From the first call on, even one showing nothing, :meth:`detect_use` considers
        only shown hits. Calls add up; two texts of one record count together.

        Raises:
            ValueError: a hit is not one of this step's hits (nothing is recorded).
        """
        pairs = [(item, item.text) if isinstance(item, Hit) else item for item in shown]
        mine = {(_key(h), h.agent) for h in self.hits}
        for hit, _text in pairs:
            if (_key(hit), hit.agent) not in mine:
                raise ValueError(
                    f"{hit.tier} record {hit.record_id} (owner {hit.owner!r}) is not a hit "
                    "of this step"
                )
        if self._shown is None:
            self._shown = {}
        for hit, text in pairs:
            self._shown.setdefault(_key(hit), []).append(text)

    def detect_use(self, output: str, *, context: Iterable[str] = ()) -> list[Hit]:
        """Mark the cues and own working hits ``output`` draws on; return the new ones.

        A shown hit is used when ``output`` repeats at least :data:`USE_MIN_TERMS` of
        the terms it added to the prompt: its shown text's terms that are not in the
        query, not in ``context`` (the rest of what the model saw: the thread, the
        facts) and not in any other shown record's text (see the module docstring).
        Deterministic: the verdict depends on the texts only, not on hit order.

        Args:
            output: what the step produced (the model's answer).
            context: the other prompt material shown beside the hits.
        """
        out_terms = set(terms(output))
        if not out_terms:
            return []
        shown: dict[_Key, set[str]] = {}
        if self._shown is None:
            for hit in self.hits:
                shown.setdefault(_key(hit), set()).update(terms(hit.text))
        else:
            for seen, texts in self._shown.items():
                shown[seen] = {t for text in texts for t in terms(text)}
        background = set(terms(self.query))
        for text in context:
            background.update(terms(text))
        carriers = Counter(t for held in shown.values() for t in held)
        found = []
        for hit in self._own():
            own = (hit.tier, hit.record_id)
            held = shown.get(_key(hit))
            if own in self._used or held is None:
                continue
            added = {t for t in held - background if carriers[t] == 1}
            if len(added & out_terms) >= USE_MIN_TERMS:
                self._used[own] = hit
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
