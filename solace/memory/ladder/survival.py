"""How much of a text's names, numbers and dates survive in its compressed form.

Rung 2 must keep who, how many and when of its rung-1 input (the issue asks for a
share >= 0.9, measured). The test is the guard's (:mod:`solace.models.guard`): a
name survives if it appears as a phrase, a number if its value appears (digits or
words), a date if the output states it or something more precise.
"""

from __future__ import annotations

import re

from solace.models.entities import date_supported, number_values, salient

__all__ = ["salient_survival"]


def _has_phrase(haystack: str, phrase: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(phrase)}(?!\w)", haystack) is not None


def salient_survival(before: str, after: str) -> tuple[int, int]:
    """Count the salient items of ``before`` and how many ``after`` still carries.

    Returns:
        ``(total, kept)`` with ``0 <= kept <= total``; ``total`` is
        ``len(salient(before))``.
    """
    src, out = salient(before), salient(after)
    folded = after.casefold().replace("\u2019", "'")
    kept = sum(_has_phrase(folded, name) for name in src.names)
    kept += len(src.numbers & (out.numbers | number_values(after)))
    kept += sum(date_supported(date, out.dates) for date in src.dates)
    return len(src), kept
