"""The compactor (seed 004): fewer, denser facts, or no change at all.

When an id's live facts grow past the store's ``compact_above_tokens``, the fact
service hands them here one per line. A proposal comes from the LLM (one
``complete_json`` call, then the guard) or from the deterministic merger
(:mod:`solace.facts.merge`), and :func:`check_compaction`, the safety check, decides:
a proposal is accepted only if it parses into ``{"facts": [str, ...]}``, is
non-empty, is strictly smaller in tokens than its inputs, and keeps every name,
number and date of every input. A refused proposal changes nothing; its reason is
one of :data:`REFUSAL_REASONS`.

Everything here is synchronous and pure apart from the LLM call; the caller runs it
off the trio loop. ``detail`` strings name reasons and counts, never fact text (logs
are plaintext; a deleted fact must not survive in them).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from solace.facts.merge import lost_salient, merge_deterministic
from solace.facts.model import Compaction
from solace.models.guard import Guard, GuardPolicy
from solace.models.llm import LLM, ChatMessage, LLMOutputError, LLMUnavailableError, NoLLM

__all__ = [
    "COMPACTION_PROMPT",
    "COMPACTION_SCHEMA",
    "REFUSAL_REASONS",
    "check_compaction",
    "compact_with_llm",
    "merge_deterministic",
    "propose",
]

log = logging.getLogger(__name__)

#: Why a proposal was refused, in the order the rules are applied.
REFUSAL_REASONS = ("unparsable", "empty", "not_smaller", "lost_salient")

#: What the LLM must return: the compacted facts, one string each.
COMPACTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"facts": {"type": "array", "items": {"type": "string"}}},
    "required": ["facts"],
    "additionalProperties": False,
}

COMPACTION_PROMPT = (
    "You compact a memory of facts about one person or project. The user message "
    "lists the facts, one per line. Merge, deduplicate and restate them densely as "
    "fewer entries that together still say every distinct thing: keep every name, "
    'number and date exactly as written, and add nothing. Answer with JSON {"facts": '
    '["...", ...]}, one self-contained third-person fact per string. Combine facts '
    "into one entry only where that loses nothing."
)


def _parse(proposal: object) -> list[str] | str:
    """The proposal's entries (stripped, blanks dropped), or why it does not parse."""
    if proposal is None:
        return "no proposal"
    if isinstance(proposal, str):
        try:
            proposal = json.loads(proposal)
        except ValueError as exc:
            return f"not JSON ({exc.__class__.__name__})"
    if isinstance(proposal, dict):
        if set(proposal) != {"facts"}:
            return f"an object with {len(proposal)} keys, expected exactly 'facts'"
        proposal = proposal["facts"]
    if not isinstance(proposal, list):
        return f"a {type(proposal).__name__}, expected a list of strings"
    bad = [i for i, item in enumerate(proposal) if not isinstance(item, str)]
    if bad:
        return f"facts[{bad[0]}] is a {type(proposal[bad[0]]).__name__}, not a string"
    return [item.strip() for item in proposal if item.strip()]


def check_compaction(
    inputs: Sequence[str], proposal: object, *, count_tokens: Callable[[str], int]
) -> Compaction:
    """The safety check: accept ``proposal`` as a replacement for ``inputs``, or refuse it.

    Args:
        inputs: the facts being compacted.
        proposal: a JSON string, a parsed ``{"facts": [str, ...]}`` (no other key),
            a list of str, or None (no proposal: unparsable).
        count_tokens: the token counter (the runtime's WordPiece ``count``).

    Returns:
        The verdict. Rules in order, the first broken one is the refusal
        ``reason``: ``unparsable`` (not that structure), ``empty`` (no non-blank
        entry), ``not_smaller`` (its entries joined one per line have at least as
        many tokens as the inputs joined one per line), ``lost_salient`` (some
        name, number or date of some input is in no entry; ``lost`` lists them).
        Accepted: ``outputs`` are the entries, stripped, blanks dropped, in order.
        ``tokens_before``/``tokens_after`` are set once the proposal parsed.
        ``detail`` names counts and reasons, never fact text. Pure.
    """
    parsed = _parse(proposal)
    if isinstance(parsed, str):
        return Compaction(False, reason="unparsable", detail=parsed)
    if not parsed:
        return Compaction(False, reason="empty", detail="the proposal holds no fact")
    before = count_tokens("\n".join(inputs))
    after = count_tokens("\n".join(parsed))
    sizes = f"{len(inputs)} -> {len(parsed)} facts, {before} -> {after} tokens"
    if after >= before:
        return Compaction(False, tuple(parsed), "not_smaller", sizes, before, after)
    lost = lost_salient(inputs, parsed)
    if lost:
        return Compaction(
            False, tuple(parsed), "lost_salient", f"{sizes}; {len(lost)} lost", before, after, lost
        )
    return Compaction(True, tuple(parsed), "", sizes, before, after)


def compact_with_llm(
    inputs: Sequence[str], *, llm: LLM, max_tokens: int = 512
) -> dict[str, Any] | None:
    """Ask ``llm`` once to compact ``inputs`` (one ``complete_json`` call).

    Args:
        inputs: the facts, sent one per line.
        llm: the backend.
        max_tokens: the reply's token budget.

    Returns:
        The parsed object the backend returned (it validated against
        :data:`COMPACTION_SCHEMA`), or None when the backend is unavailable or its
        output was not schema-valid JSON. Judge it with :func:`check_compaction`.
    """
    messages: list[ChatMessage] = [
        {"role": "system", "content": COMPACTION_PROMPT},
        {"role": "user", "content": "\n".join(" ".join(text.split()) for text in inputs)},
    ]
    try:
        return llm.complete_json(messages, COMPACTION_SCHEMA, max_tokens=max_tokens)
    except (LLMUnavailableError, LLMOutputError) as exc:
        log.info("compaction: LLM call failed: %s", exc.__class__.__name__)
        return None


class _Counter:
    """A token counter function as the guard's :class:`Tokenizer`."""

    def __init__(self, count: Callable[[str], int]) -> None:
        self.count = count

    def count_many(self, texts: Sequence[str]) -> list[int]:
        return [self.count(text) for text in texts]


def _invented(
    inputs: Sequence[str], outputs: Sequence[str], count_tokens: Callable[[str], int]
) -> tuple[str, ...]:
    """What the guard finds invented: names, numbers or dates in no input."""
    guard = Guard(GuardPolicy(keep_share=1.0, max_ratio=1.0), tokenizer=_Counter(count_tokens))
    return guard.check("\n".join(inputs), "\n".join(outputs)).invented


def propose(
    inputs: Sequence[str],
    vectors: np.ndarray,
    *,
    llm: LLM | None,
    count_tokens: Callable[[str], int],
    threshold: float,
) -> Compaction:
    """Compact ``inputs``: the LLM's proposal if it passes, else the deterministic merge.

    Args:
        inputs: the facts, in the order they should keep.
        vectors: one L2-normalised row per input, for the merger's clusters.
        llm: the backend; None or :class:`NoLLM` skips the LLM (no call is made).
        count_tokens: the token counter.
        threshold: the merger's clustering cosine.

    Returns:
        The LLM's verdict if it was accepted by :func:`check_compaction` and
        invents no name, number or date (the guard's rule); otherwise the
        deterministic merger's verdict, accepted or refused, whose ``detail`` also
        records why the LLM's proposal was refused (``llm refused: <reason>``).
        ``detail`` starts with ``llm:`` or ``deterministic:``. At most one LLM call.

    Raises:
        ValueError, TypeError: bad ``vectors`` or ``threshold`` (see
            :func:`merge_deterministic`).
    """
    refusal = ""
    if llm is not None and not isinstance(llm, NoLLM) and llm.name != NoLLM.name:
        proposal = compact_with_llm(inputs, llm=llm)
        verdict = check_compaction(inputs, proposal, count_tokens=count_tokens)
        if verdict.accepted:
            invented = _invented(inputs, verdict.outputs, count_tokens)
            if not invented:
                return replace(verdict, detail=f"llm: {verdict.detail}")
            refusal = f"; llm refused: invented ({len(invented)} items)"
        else:
            refusal = f"; llm refused: {verdict.reason} ({verdict.detail})"
        if proposal is not None:  # a failed call was already counted by the backend
            llm.stats.mark_failed()
    merged = merge_deterministic(inputs, vectors, threshold=threshold)
    verdict = check_compaction(inputs, merged, count_tokens=count_tokens)
    return replace(verdict, detail=f"deterministic: {verdict.detail}{refusal}")
