"""The compactor's salience rule: which names, numbers and dates a rewrite lost.

One rule for the safety check (:mod:`solace.facts.compactor`) and the deterministic
merger (:mod:`solace.facts.merge`, which re-exports it), so the merger never
proposes what the check would refuse.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from solace.models.entities import date_supported, number_values, salient

__all__ = ["lost_salient"]


def _contains_phrase(haystack: str, phrase: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(phrase)}(?!\w)", haystack) is not None


def lost_salient(inputs: Sequence[str], outputs: Sequence[str]) -> tuple[str, ...]:
    """The names, numbers and dates of ``inputs`` that no output keeps.

    The guard's rules, applied to every item (no share tolerated), each output read
    on its own (no item is made up across two outputs): a name survives if some
    output has it among its names or contains it as a phrase (casefolded); a number
    if some output states it (dates' digits count); a date if some output states it
    or a more precise form of it (``"2027-03"`` is kept by ``"2027-03-01"``), all
    compared in the canonical forms of :mod:`solace.models.entities` ("March 2027"
    == "Mar 2027", "two" == "2"). An input is always judged to keep its own items.

    Returns:
        The lost items, sorted, each prefixed ``name:``, ``number:`` or ``date:``.
    """
    names: set[str] = set()
    numbers: set[str] = set()
    dates: set[str] = set()
    folded = [text.casefold().replace("\u2019", "'") for text in outputs]
    for text in outputs:
        found = salient(text)
        names.update(found.names)
        numbers.update(found.numbers | number_values(text))
        dates.update(found.dates)
    out_dates = frozenset(dates)
    lost: set[str] = set()
    for text in inputs:
        found = salient(text)
        lost.update(
            f"name:{n}"
            for n in found.names
            if n not in names and not any(_contains_phrase(f, n) for f in folded)
        )
        lost.update(f"number:{n}" for n in found.numbers if n not in numbers)
        lost.update(f"date:{d}" for d in found.dates if not date_supported(d, out_dates))
    return tuple(sorted(lost))
