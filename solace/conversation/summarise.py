"""Just-in-time summarisation: one call regenerates a topic's title, summary and flag.

Three ways to a summary, each recorded in the summary event's ``mode``:

* ``llm`` — one JSON-schema call with the seed's prompt over the topic's full thread
  (tool calls, results and notes included). Its output must pass the guard
  (schema-valid; no names, numbers or dates the thread lacks; shorter than the
  thread); an output that fails counts as a failed call. Its title must come from
  the user's side of the thread (:func:`~.extractive.user_side_title`); one that
  does not (copied from an assistant reply, or with glued words) is replaced by
  the deterministic title.
* ``fallback`` — what a *failed* call gets: the first user message, never promoted.
* ``deterministic`` — extractive title and summary, rule-based flag
  (:mod:`solace.conversation.extractive`). The default when the LLM is ``none``, and
  what ``auto`` switches to once the LLM has failed the guard ``weak_after`` times
  in a row (a 135M model invents when it summarises).

Everything here is synchronous and blocking (LLM, tokenizer): the service runs
:meth:`Summariser.summarise` through the offloader.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from solace.conversation.extractive import (
    extractive_summary,
    fallback_summary,
    topic_title,
    user_side_title,
)
from solace.conversation.model import SummaryMode, ThreadItem
from solace.models.guard import Guard, GuardPolicy
from solace.models.llm import LLM, ChatMessage, ModelError
from solace.models.schema import LENIENT
from solace.models.tokenizer import Tokenizer

__all__ = [
    "SUMMARY_PROMPT",
    "SUMMARY_SCHEMA",
    "SummaryResult",
    "Summariser",
    "render_thread",
]

log = logging.getLogger(__name__)

#: The seed's prompt, verbatim: a terse note a smart person left for themselves.
SUMMARY_PROMPT = """Summarize this conversation. Return a JSON object with:
- 'title' (short descriptive label)
- 'summary' (concise note — roughly half the length of a verbose
  paragraph; keep all durable decisions, preferences, and key context,
  but cut filler; lead with the topic, use terse phrasing and
  parenthetical lists where natural; it should read like a sharp note a
  smart person left for themselves — same voice, zero bloat)
- 'include_in_memory' (boolean: true if this conversation contains durable
  decisions, preferences, or context the agent should remember across
  sessions; false if it's casual or ephemeral)"""

#: What the model is asked to fill (constrained decoding where the backend can) and
#: what its answer must satisfy. ``include_in_memory`` is a soft value
#: (:data:`~solace.models.schema.LENIENT`): a grammar still forces a boolean there, but
#: a missing flag or ``"true"`` does not fail the call; anything but a strict ``true``
#: simply means false, and the title and summary are used.
SUMMARY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "minLength": 1, "maxLength": 120},
        "summary": {"type": "string", "minLength": 1},
        "include_in_memory": {"type": "boolean", LENIENT: True},
    },
    "required": ["title", "summary", "include_in_memory"],
}

#: The thread shown to the model is cut (head and tail kept) beyond this many tokens,
#: so it fits a small model's context; the guard still judges against the full thread.
MAX_SOURCE_TOKENS = 1400


@dataclass(frozen=True, slots=True)
class SummaryResult:
    """One summarisation's outcome.

    Attributes:
        include_in_memory: True only if the summariser said a strict boolean true
            (LLM) or the durable-content rule fired (deterministic); never for
            ``fallback``. The minimum-turn threshold is applied by the caller.
        failure: why the LLM call failed (``fallback`` only), e.g. the guard reasons.
    """

    title: str
    summary: str
    include_in_memory: bool
    mode: SummaryMode
    failure: str = ""


def render_thread(items: Sequence[ThreadItem], notes: str = "") -> str:
    """The thread as the summariser reads it: one line per item, then the notes."""
    lines = [item.render() for item in items]
    if notes.strip():
        lines.append(f"notes: {notes.strip()}")
    return "\n".join(lines)


class Summariser:
    """Produces :class:`SummaryResult` for a topic's thread. Thread-safe.

    Args:
        llm: the model; :class:`~solace.models.NoLLM` (name ``none``) means
            deterministic under ``auto``.
        guard: the runtime's guard; its tokenizer and name/number/date rules are used
            with ``keep_share = 0`` (a terse note drops detail by design, it must only
            not invent).
        tokenizer: the token counter.
        mode: ``auto``, ``llm`` or ``deterministic``.
        max_tokens: reply cap for the LLM.
        weak_after: under ``auto``, consecutive guard failures before the LLM is
            judged too weak and the deterministic mode takes over.
    """

    def __init__(
        self,
        llm: LLM,
        guard: Guard,
        tokenizer: Tokenizer,
        *,
        mode: Literal["auto", "llm", "deterministic"] = "auto",
        max_tokens: int = 200,
        weak_after: int = 3,
    ) -> None:
        self.llm = llm
        self.tokenizer = tokenizer
        self.guard = Guard(
            GuardPolicy(
                keep_share=0.0,
                max_ratio=guard.policy.max_ratio,
                allow_new_names=guard.policy.allow_new_names,
            ),
            guard.tokenizer,
        )
        self.mode = mode
        self.max_tokens = max_tokens
        self.weak_after = weak_after
        self._failures_in_a_row = 0
        self._weak = False
        self._lock = threading.Lock()
        self.counts: dict[str, int] = {"llm": 0, "deterministic": 0, "fallback": 0}

    @property
    def uses_llm(self) -> bool:
        """True if the next summary will be asked of the LLM."""
        if self.mode == "deterministic":
            return False
        if self.mode == "llm":
            return True
        return self.llm.name != "none" and not self._weak

    def summarise(self, items: Sequence[ThreadItem], notes: str = "") -> SummaryResult:
        """Summarise a thread (blocking; run it off the event loop).

        Returns:
            The result; never raises for a model failure (that is the fallback).

        Raises:
            Exception: only what a buggy backend raises outside ``ModelError``.
        """
        if not self.uses_llm:
            extract = extractive_summary(items, notes, self.tokenizer)
            return self._count(SummaryResult(
                extract.title or "untitled", extract.summary, extract.include_in_memory,
                "deterministic",
            ))
        source = render_thread(items, notes)
        failure = self._ask(source, items, notes)
        if isinstance(failure, SummaryResult):
            return self._count(failure)
        fallback = fallback_summary(items)
        return self._count(
            SummaryResult(fallback.title, fallback.summary, False, "fallback", failure)
        )

    def _ask(self, source: str, items: Sequence[ThreadItem], notes: str) -> SummaryResult | str:
        """The LLM result, or why the call failed."""
        messages: list[ChatMessage] = [
            {"role": "system", "content": SUMMARY_PROMPT},
            {"role": "user", "content": self._fit(items, notes)},
        ]
        try:
            obj = self.llm.complete_json(messages, SUMMARY_SCHEMA, max_tokens=self.max_tokens)
        except ModelError as exc:
            log.info("topic summary: LLM call failed, using the fallback: %s", exc)
            return f"llm: {exc}"
        verdict = self.guard.check_json(source, obj, SUMMARY_SCHEMA, ("title", "summary"))
        if not verdict.ok:
            self._note_guard_failure()
            reasons = ", ".join(verdict.reasons)
            invented = f" (invented {', '.join(verdict.invented)})" if verdict.invented else ""
            # The log file is plaintext: it names the reasons, never the invented words.
            log.info("topic summary: LLM output failed the guard: %s (%d invented)", reasons,
                     len(verdict.invented))
            return f"guard: {reasons}{invented}"
        with self._lock:
            self._failures_in_a_row = 0
        strict_true = obj.get("include_in_memory") is True  # anything else is false
        title = (user_side_title(obj["title"], items, notes) or topic_title(items, notes)
                 or obj["title"].strip())
        return SummaryResult(title, obj["summary"].strip(), strict_true, "llm")

    def _fit(self, items: Sequence[ThreadItem], notes: str) -> str:
        text = render_thread(items, notes)
        if self.tokenizer.count(text) <= MAX_SOURCE_TOKENS:
            return text
        lines = [item.render() for item in items]
        head: list[str] = []
        tail: list[str] = []
        used = self.tokenizer.count(notes)
        counts = self.tokenizer.count_many(lines)
        lo, hi = 0, len(lines) - 1
        while lo <= hi:  # alternate head and tail until the budget is spent
            take_head = len(head) <= len(tail)
            idx = lo if take_head else hi
            if used + counts[idx] > MAX_SOURCE_TOKENS:
                break
            used += counts[idx]
            if take_head:
                head.append(lines[idx])
                lo += 1
            else:
                tail.insert(0, lines[idx])
                hi -= 1
        cut = [*head, "[…]", *tail]
        if notes.strip():
            cut.append(f"notes: {notes.strip()}")
        return "\n".join(cut)

    def _note_guard_failure(self) -> None:
        with self._lock:
            self._failures_in_a_row += 1
            weak = self._failures_in_a_row >= self.weak_after
            if self.mode == "auto" and not self._weak and weak:
                self._weak = True
                log.warning(
                    "topic summary: %s failed the guard %d times in a row; summaries are "
                    "deterministic from now on (summary_mode = 'auto')",
                    self.llm.name, self._failures_in_a_row,
                )

    def _count(self, result: SummaryResult) -> SummaryResult:
        with self._lock:
            self.counts[result.mode] += 1
        return result
