"""The gate every LLM output must pass before it enters memory.

A 135M model chats well enough but invents content when asked to summarise (measured
on LoCoMo turns: asked to shorten "I went to a LGBTQ support group yesterday" it
wrote about "her life" and "a text-based AI assistant"). So a model may lower the
quality of memory, never corrupt it: its output is accepted only if it is non-empty,
shorter than its source, keeps most of the source's names, numbers and dates, and
introduces none of its own. A rejected output is simply not used; the caller keeps
the source or its deterministic compression.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from solace.models.entities import date_supported, number_values, salient, word_set
from solace.models.schema import SchemaError, validate
from solace.models.tokenizer import Tokenizer, WordPieceTokenizer

__all__ = ["REASONS", "Guard", "GuardPolicy", "Verdict"]

#: Every rejection reason, as counted in :attr:`Guard.counts`.
REASONS = ("empty", "not_shorter", "lost_salient", "invented", "schema")


@dataclass(frozen=True, slots=True)
class GuardPolicy:
    """How strict the guard is.

    Attributes:
        keep_share: share of the source's salient names+numbers+dates the output
            must keep (0..1).
        max_ratio: the output must have fewer than ``source tokens * max_ratio`` tokens.
        allow_new_names: names absent from the source tolerated in the output (new
            numbers and dates are never tolerated).
    """

    keep_share: float = 0.8
    max_ratio: float = 1.0
    allow_new_names: int = 0

    def __post_init__(self) -> None:
        if not 0.0 <= self.keep_share <= 1.0:
            raise ValueError(f"keep_share must be in [0, 1], got {self.keep_share!r}")
        if not self.max_ratio > 0.0:
            raise ValueError(f"max_ratio must be > 0, got {self.max_ratio!r}")
        if self.allow_new_names < 0:
            raise ValueError(f"allow_new_names must be >= 0, got {self.allow_new_names!r}")


@dataclass(frozen=True, slots=True)
class Verdict:
    """The guard's judgement of one output.

    Attributes:
        ok: True iff the output may enter memory (``reasons`` is empty).
        reasons: rejection reasons from :data:`REASONS`, in rule order.
        kept_share: share of the source's salient items found in the output
            (1.0 when the source has none).
        invented: the output's names, numbers and dates absent from the source,
            sorted, normalised, each prefixed ``name:``, ``number:`` or ``date:``.
    """

    ok: bool
    reasons: tuple[str, ...]
    kept_share: float
    invented: tuple[str, ...]


def _contains_phrase(haystack: str, phrase: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(phrase)}(?!\w)", haystack) is not None


class Guard:
    """Judges LLM outputs against their sources and counts the verdicts.

    Thread-safe: counters are updated under a lock, checks share no other state.

    Args:
        policy: thresholds; None uses ``GuardPolicy()``.
        tokenizer: the token counter for the length rule; None uses
            :class:`WordPieceTokenizer` (the runtime's one counter).
    """

    def __init__(
        self, policy: GuardPolicy | None = None, tokenizer: Tokenizer | None = None
    ) -> None:
        self.policy = policy if policy is not None else GuardPolicy()
        self.tokenizer = tokenizer if tokenizer is not None else WordPieceTokenizer()
        self.counts: dict[str, int] = dict.fromkeys(("accepted", "rejected", *REASONS), 0)
        self._lock = threading.Lock()

    def _count(self, verdict: Verdict) -> Verdict:
        with self._lock:
            self.counts["accepted" if verdict.ok else "rejected"] += 1
            for reason in verdict.reasons:
                self.counts[reason] += 1
        return verdict

    def _judge(self, source: str, output: str) -> Verdict:
        if not output.strip():
            return Verdict(False, ("empty",), 0.0, ())
        reasons: list[str] = []
        source_tokens, output_tokens = self.tokenizer.count_many([source, output])
        if not output_tokens < source_tokens * self.policy.max_ratio:
            reasons.append("not_shorter")

        src, out = salient(source), salient(output)
        folded_output = output.casefold().replace("\u2019", "'")
        kept = sum(_contains_phrase(folded_output, name) for name in src.names)
        kept += len(src.numbers & (out.numbers | number_values(output)))
        kept += sum(date_supported(date, out.dates) for date in src.dates)
        total = len(src)
        kept_share = kept / total if total else 1.0
        if kept_share < self.policy.keep_share:
            reasons.append("lost_salient")

        source_words = word_set(source)
        new_names = sorted(n for n in out.names if not set(n.split()) <= source_words)
        source_numbers = number_values(source)
        new_numbers = sorted(n for n in out.numbers if n not in source_numbers)
        new_dates = sorted(d for d in out.dates if not date_supported(d, src.dates))
        invented = tuple(
            [f"name:{n}" for n in new_names]
            + [f"number:{n}" for n in new_numbers]
            + [f"date:{d}" for d in new_dates]
        )
        if len(new_names) > self.policy.allow_new_names or new_numbers or new_dates:
            reasons.append("invented")
        return Verdict(not reasons, tuple(reasons), kept_share, invented)

    def check(self, source: str, output: str) -> Verdict:
        """Judge ``output`` as a rewrite of ``source`` and count the verdict.

        Rules, all applied (``reasons`` lists every one broken): non-empty; fewer
        tokens than ``source`` times ``max_ratio``; keeps at least ``keep_share`` of
        the source's salient items; invents no number or date, and at most
        ``allow_new_names`` names.

        Returns:
            The verdict; ``counts`` has been incremented for it.
        """
        return self._count(self._judge(source, output))

    def check_json(
        self,
        source: str,
        obj: object,
        schema: Mapping[str, Any],
        text_fields: Sequence[str],
    ) -> Verdict:
        """Validate ``obj`` against ``schema``, then judge its text fields as one output.

        Args:
            source: the text the model was asked to rewrite.
            obj: the model's parsed JSON output.
            schema: the schema it must match.
            text_fields: top-level keys whose values (strings or lists of strings)
                are joined, in this order, into the text judged by :meth:`check`.

        Returns:
            The verdict, counted once; ``("schema",)`` if ``obj`` fails the schema.
        """
        try:
            validate(obj, schema)
        except SchemaError:
            return self._count(Verdict(False, ("schema",), 0.0, ()))
        parts: list[str] = []
        for name in text_fields:
            value = obj.get(name) if isinstance(obj, dict) else None
            if isinstance(value, str):
                parts.append(value)
            elif isinstance(value, list):
                parts.extend(v for v in value if isinstance(v, str))
            elif value is not None:
                raise TypeError(f"text field {name!r} holds {type(value).__name__}, not text")
        return self._count(self._judge(source, "\n".join(parts)))
