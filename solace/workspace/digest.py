"""Imported days' digests (issue 10): replayed history counts as lived.

Sans-IO. An import's lines are grouped by calendar day (:func:`by_day`); each day is
summarised by the conversation layer's deterministic extractive summariser
(:func:`~solace.conversation.extractive.extractive_summary`, the one topic summaries
use), each point credited to the speaker whose line it comes from, and passed through
the one secret detector (:func:`~solace.actors.mouth_filter.looks_like_credential`):
a line that trips it is dropped before summarising, and so is a point. A day's digest
is keyed by its :func:`coverage` (the import keys it covers), so the same lines never
yield a second digest.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from datetime import date
from typing import Protocol

from solace.actors.mouth_filter import looks_like_credential
from solace.conversation.extractive import extractive_summary
from solace.conversation.model import ThreadItem
from solace.models.tokenizer import Tokenizer
from solace.workspace.daily import Ledger, summary_points
from solace.workspace.events import Digest

__all__ = ["ImportedLine", "by_day", "coverage", "day_digest", "new_digests"]

_TOPIC = "import"


class ImportedLine(Protocol):
    """One imported event: its import key, speaker, text and time (an
    :class:`~solace.importing.ImportItem` is one)."""

    @property
    def key(self) -> str: ...
    @property
    def speaker(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def at(self) -> float: ...


def coverage(keys: Iterable[str]) -> str:
    """A stable digest of a set of import keys (order and repeats do not matter)."""
    joined = "\n".join(sorted(set(keys)))
    return hashlib.sha256(joined.encode("utf-8")).hexdigest()[:24]


def by_day(lines: Iterable[ImportedLine],
           day_of: Callable[[float], date]) -> dict[date, list[ImportedLine]]:
    """``lines`` grouped by ``day_of`` their time, each day's lines in time order (one
    line a key: a repeated key keeps its first line)."""
    days: dict[date, dict[str, ImportedLine]] = {}
    for line in lines:
        days.setdefault(day_of(line.at), {}).setdefault(line.key, line)
    return {d: sorted(found.values(), key=lambda x: (x.at, x.key))
            for d, found in sorted(days.items())}


def day_digest(day: date, lines: Sequence[ImportedLine], tokenizer: Tokenizer) -> Digest | None:
    """The digest of one day's imported ``lines``, or None if nothing is left to say.

    Guarantees: deterministic (same lines, same digest); every point is a sentence (or
    a word-boundary cut of one) of a line, prefixed by its speaker; no line or point
    that :func:`looks_like_credential` reaches the digest; ``at`` is the latest line's
    time and ``coverage`` covers every line given (secret ones included, so they are
    not summarised again).
    """
    if not lines:
        return None
    clean = [x for x in lines if not looks_like_credential(x.text)]
    items = [ThreadItem(i, x.at, "message", "user", x.text, _TOPIC)
             for i, x in enumerate(clean)]
    points: list[str] = []
    if items:
        summary = extractive_summary(items, "", tokenizer).summary
        for point in summary_points(summary):
            text = point.removeprefix("user:").strip()
            speaker = next((x.speaker for x in clean if text in x.text), "")
            said = f"{speaker}: {text}" if speaker else text
            if text and not looks_like_credential(said) and said not in points:
                points.append(said)
    if not points:
        return None
    return Digest(day, max(x.at for x in lines), coverage(x.key for x in lines), len(lines),
                  tuple(points))


def new_digests(lines: Iterable[ImportedLine], ledger: Ledger,
                tokenizer: Tokenizer) -> list[Digest]:
    """The digest of each day of ``lines`` whose newest digest in ``ledger`` does not
    cover exactly that day's import keys (so the same lines never yield a second)."""
    found = []
    for day, held in by_day(lines, ledger.day_of).items():
        digest = day_digest(day, held, tokenizer)
        known = ledger.digests.get(day)
        if digest is not None and (known is None or known[0] != digest.coverage):
            found.append(digest)
    return found
