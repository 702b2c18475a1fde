"""Scoring rules of the fact-memory benchmark: pure functions on small inputs.

``benchmarks/facts_bench.py`` drives the fact memory; this module says how what it
put in front of the model is scored, so the rules can be tested on hand-made inputs
(``tests/test_facts_bench_scoring.py``).

Rules:

* A value is *in* a block when it occurs there as whole words, case-folded
  (``"red"`` is not in ``"preferred"``; ``"555-0134"`` is in ``"... 555-0134 (as of"``).
  A sequence's value may have alternatives (``keys``): any one counts.
* Only the rendered block counts (``RecallBlock.text``, what the model is given),
  never the facts stored or their scores.
* Each update sequence ends in one of four outcomes: ``newest_only`` (the new value
  is in the block, the old one is not), ``both`` (old and new), ``only_old`` (the old
  value without the new one: the model is told a stale value) and ``neither``.
  *Newest* = ``newest_only`` + ``both``; *stale present* = ``both`` + ``only_old``.
* Compaction keeps a salient item (a name, number or date of
  :func:`solace.models.entities.salient`) when it is among the salient items of the
  live facts after compaction, joined.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from solace.models.entities import salient

__all__ = [
    "OUTCOMES",
    "contains_value",
    "outcome",
    "percentile",
    "rates",
    "salient_items",
    "salient_kept",
]

OUTCOMES = ("newest_only", "both", "only_old", "neither")


def contains_value(block: str, keys: Iterable[str]) -> bool:
    """True iff some key occurs in ``block`` as whole words, case-folded."""
    text = block.casefold()
    for key in keys:
        k = key.casefold().strip()
        if k and re.search(rf"(?<![0-9a-z]){re.escape(k)}(?![0-9a-z])", text):
            return True
    return False


def outcome(block: str, new_keys: Sequence[str], old_keys: Sequence[str]) -> str:
    """The sequence's outcome (one of :data:`OUTCOMES`) for the rendered ``block``."""
    new, old = contains_value(block, new_keys), contains_value(block, old_keys)
    if new:
        return "both" if old else "newest_only"
    return "only_old" if old else "neither"


def rates(outcomes: Sequence[str]) -> dict[str, Any]:
    """Counts and percentages of ``outcomes``: per outcome, plus ``newest`` (new value
    present) and ``stale_present`` (old value present), one decimal."""
    n = len(outcomes)
    c = Counter(outcomes)
    unknown = set(c) - set(OUTCOMES)
    if unknown:
        raise ValueError(f"unknown outcomes {sorted(unknown)}")

    def pct(k: int) -> float:
        return round(100.0 * k / n, 1) if n else 0.0

    out: dict[str, Any] = {"n": n}
    for name in OUTCOMES:
        out[name] = pct(c[name])
    out["newest"] = pct(c["newest_only"] + c["both"])
    out["stale_present"] = pct(c["both"] + c["only_old"])
    return out


def salient_items(texts: Iterable[str]) -> frozenset[str]:
    """Every name, number and date of ``texts`` (each text read on its own)."""
    items: set[str] = set()
    for t in texts:
        s = salient(t)
        items |= s.names | s.numbers | s.dates
    return frozenset(items)


def salient_kept(before: Sequence[str], after: Sequence[str]) -> tuple[int, int, list[str]]:
    """(kept, total, lost): the salient items of ``before`` found in ``after``.

    An item counts as kept when it is among the salient items of any text of
    ``after`` or of ``after`` joined (a merged entry may carry two facts' items).
    """
    want = salient_items(before)
    have = salient_items(after) | salient_items(["\n".join(after)])
    lost = sorted(want - have)
    return len(want) - len(lost), len(want), lost


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (linear, numpy's default), 0.0 for no values."""
    return round(float(np.percentile(np.asarray(values, dtype=float), q)), 3) if values \
        else 0.0
