"""Roll-ups: weekly summaries of daily logs, monthly summaries of weekly ones.

Deterministic by default, with the ladder's extractive summariser
(:func:`solace.memory.ladder.extractive.extract_key_points`: the most central and
salient sentences, intact, within a token budget), so nothing is invented. With an
LLM configured, each part (a day of a week, a week of a month) is offered to the
model first and its answer kept only if :class:`~solace.models.guard.Guard` accepts
it (shorter, keeps the names, numbers and dates, invents none); otherwise the
extractive form. Sans-IO and synchronous: run it through the offloader.

A week is ISO 8601's (Monday first; ``YYYY-Www``); a week belongs to the month of
its Thursday, so each week rolls into exactly one month.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from solace.memory.ladder.extractive import extract_key_points
from solace.memory.ladder.sentences import Turn
from solace.models.llm import ModelError
from solace.models.tokenizer import Tokenizer
from solace.workspace.model import Doc, Item, Section

__all__ = [
    "Summariser",
    "month_of_week",
    "monthly_doc",
    "monthly_rollups",
    "week_key",
    "weekly_doc",
    "weekly_rollups",
]

log = logging.getLogger(__name__)

ROLLUP_PREAMBLE = (
    "<!-- A roll-up written by Solace: the key points of the files below it. Rewritten "
    "when they change; your edits are kept like in any other file. -->",
)


def week_key(day: date) -> str:
    """``YYYY-Www``, the ISO week of ``day``."""
    year, week, _ = day.isocalendar()
    return f"{year}-W{week:02d}"


def week_monday(key: str) -> date:
    """The Monday of ISO week ``key`` (``YYYY-Www``)."""
    return date.fromisocalendar(int(key[:4]), int(key[6:8]), 1)


def month_of_week(key: str) -> str:
    """``YYYY-MM`` of the month week ``key`` rolls into (its Thursday's)."""
    return (week_monday(key) + timedelta(days=3)).strftime("%Y-%m")


@dataclass(slots=True)
class Summariser:
    """Summarises a part's lines: the guarded LLM when given, else extractive.

    Args:
        tokenizer: the runtime's token counter.
        llm: an :class:`~solace.models.llm.LLM`, or None for deterministic only.
        guard: the :class:`~solace.models.guard.Guard` every LLM answer must pass
            (required with ``llm``).
    """

    tokenizer: Tokenizer
    llm: Any = None
    guard: Any = None
    llm_calls: int = 0
    llm_accepted: int = 0

    def __call__(self, lines: Sequence[str], budget: int, ts: float = 0.0) -> list[str]:
        """Key points of ``lines`` within ``budget`` tokens (the best one always kept)."""
        turns = [Turn("", line, ts) for line in lines if line.strip()]
        if not turns:
            return []
        extractive = extract_key_points(turns, budget, self.tokenizer).splitlines()
        if self.llm is None or self.guard is None:
            return extractive
        source = "\n".join(lines)
        self.llm_calls += 1
        try:
            answer = self.llm.complete(
                [{"role": "system", "content": "Summarise these notes as a few short "
                  "bullet lines. Keep every name, number and date. Invent nothing."},
                 {"role": "user", "content": source}], max_tokens=max(32, budget))
        except ModelError as exc:  # the model failed: the deterministic form
            log.info("roll-up: the LLM failed (%s); extractive summary kept", exc)
            return extractive
        out = [line.strip().lstrip("-*• ").strip() for line in str(answer).splitlines()]
        out = [line for line in out if line]
        if out and self.guard.check(source, "\n".join(out)).ok \
                and self.tokenizer.count("\n".join(out)) <= budget * 1.5:
            self.llm_accepted += 1
            return out
        return extractive


def weekly_doc(key: str, days: Sequence[tuple[date, Doc]], budget: int,
               summarise: Summariser) -> Doc:
    """The roll-up of week ``key`` from its daily logs (date order): one section per
    day with that day's key points; the budget is shared evenly between the days."""
    share = max(16, budget // max(1, len(days)))
    sections = []
    for day, doc in days:
        ts = datetime(day.year, day.month, day.day, 12, tzinfo=UTC).timestamp()
        points = summarise([text for _, text in doc.items()], share, ts)
        sections.append(Section(f"{day.isoformat()} ({day.strftime('%A')})",
                                tuple(Item(p) for p in points)))
    monday = week_monday(key)
    title = f"Week {key} ({monday.isoformat()} to {(monday + timedelta(days=6)).isoformat()})"
    return Doc(title, ROLLUP_PREAMBLE, tuple(sections))


def monthly_doc(month: str, weeks: Sequence[tuple[str, Doc]], budget: int,
                summarise: Summariser) -> Doc:
    """The roll-up of ``month`` (``YYYY-MM``) from its weekly roll-ups (week order)."""
    share = max(16, budget // max(1, len(weeks)))
    sections = []
    for key, doc in weeks:
        points = summarise([text for _, text in doc.items()], share)
        sections.append(Section(f"Week {key}", tuple(Item(p) for p in points)))
    return Doc(f"Month {month}", ROLLUP_PREAMBLE, tuple(sections))


def weekly_rollups(daily: Sequence[tuple[date, Doc]], weeks: Iterable[str], budget: int,
                   summarise: Summariser) -> list[tuple[str, Doc]]:
    """(week key, roll-up) of each of ``weeks`` that has daily logs in ``daily``."""
    out = []
    for key in sorted(set(weeks)):
        days = [(d, doc) for d, doc in daily if week_key(d) == key]
        if days:
            out.append((key, weekly_doc(key, days, budget, summarise)))
    return out


def monthly_rollups(weekly: Sequence[tuple[str, Doc]], months: Iterable[str], budget: int,
                    summarise: Summariser) -> list[tuple[str, Doc]]:
    """(month, roll-up) of each of ``months`` that has weekly roll-ups in ``weekly``."""
    out = []
    for month in sorted(set(months)):
        part = [(k, doc) for k, doc in weekly if month_of_week(k) == month]
        if part:
            out.append((month, monthly_doc(month, part, budget, summarise)))
    return out
