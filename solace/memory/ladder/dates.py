"""Relative dates resolved against the time a turn was said.

"I went to a support group yesterday", said on 8 May 2023, means 7 May 2023. Raw
text keeps "yesterday" (rung 0 is verbatim); every compressed form writes the date
it means, because a compressed record is read long after the day it was said, and
a question like "when did Caroline go?" has its answer only in the resolved form.

Forms follow what people (and the LoCoMo annotators) write: a day becomes a
calendar date ("on 7 May 2023"), a month or a year becomes that month or year ("in
April 2023", "in 2022"), and a week, a weekend or a weekday stays anchored rather
than guessed ("the week before 9 June 2023", "the Friday before 15 July 2023").
Unanchorable phrases ("recently", "on Friday") are left as written.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta

__all__ = ["format_date", "resolve_relative_dates"]

_WEEKDAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_WEEKDAY_KEYS = {
    "mon": 0, "monday": 0, "tue": 1, "tues": 1, "tuesday": 1, "wed": 2, "wednesday": 2,
    "thu": 3, "thur": 3, "thurs": 3, "thursday": 3, "fri": 4, "friday": 4,
    "sat": 5, "saturday": 5, "sun": 6, "sunday": 6,
}  # fmt: skip
_COUNT_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
    "fifteen": 15, "twenty": 20, "thirty": 30,
}  # fmt: skip
_SEASONS = {"spring": (3, 5), "summer": (6, 8), "fall": (9, 11), "autumn": (9, 11)}
_PREPOSITIONS = frozenset(
    "on in since until till by from before after of during at for around about".split()
)
_SUBJECT_VERBS = frozenset("was is were has had will".split())
_WEEKDAY = r"mon(?:day)?|tue(?:s(?:day)?)?|wed(?:nesday)?|thu(?:r(?:s(?:day)?)?)?|fri(?:day)?" \
    r"|sat(?:urday)?|sun(?:day)?"
_COUNT = r"\d{1,3}|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve" \
    r"|fifteen|twenty|thirty|a\s+few|a\s+couple\s+of|a\s+couple|couple\s+of|few|several"

_PATTERN = re.compile(
    r"\b(?:"
    r"(?P<daybefore>the\s+day\s+before\s+yesterday)"
    r"|(?P<dayafter>the\s+day\s+after\s+tomorrow)"
    r"|(?P<part_rel>yesterday|this|last|tomorrow)\s+(?P<part>morning|afternoon|evening|night)"
    r"|(?P<day>yesterday|today|tonight|tomorrow)"
    r"|(?P<ago_n>" + _COUNT + r")\s+(?P<ago_unit>day|week|weekend|month|year)s?\s+ago"
    r"|(?P<few_rel>last|past|next|coming)\s+(?P<few_n>few|couple\s+of)\s+"
    r"(?P<few_unit>day|week|month|year)s"
    r"|(?P<edge>earlier|later)\s+this\s+(?P<edge_unit>week|month|year)"
    r"|(?P<rel>last|past|this\s+past|this|next|coming)\s+"
    r"(?:(?P<unit>weekend|week|month|year)|(?P<season>summer|winter|spring|fall|autumn)"
    r"|(?P<weekday>" + _WEEKDAY + r"))"
    r")\b\.?",
    re.IGNORECASE,
)


def format_date(day: date) -> str:
    """``date(2023, 5, 7)`` -> ``"7 May 2023"``: unambiguous, and what salience parses."""
    return f"{day.day} {day:%B} {day.year}"


def _month(day: date, delta: int) -> str:
    index = day.year * 12 + day.month - 1 + delta
    return f"{date(index // 12, index % 12 + 1, 1):%B} {index // 12}"


def _season(name: str, rel: str, today: date) -> str:
    if name == "winter":  # December to February, named by the year it starts
        current = today.year if today.month == 12 else today.year - 1
        if today.month not in (12, 1, 2):
            current = today.year  # the coming winter is "this winter"
        start = {"last": current - 1, "next": current + 1}.get(rel, current)
        if rel == "last" and today.month not in (12, 1, 2):
            start = today.year - 1
        return f"in winter {start}/{(start + 1) % 100:02d}"
    first, last = _SEASONS[name]
    if rel == "last":
        year = today.year if today.month > last else today.year - 1
    elif rel == "next":
        year = today.year if today.month < first else today.year + 1
    else:
        year = today.year
    return f"in {name} {year}"


def _count(text: str) -> int | None:
    text = " ".join(text.casefold().split())
    if text.isdigit():
        return int(text)
    return _COUNT_WORDS.get(text)


def _replacement(m: re.Match[str], today: date) -> str | None:
    """The resolved form of one match (with a leading "on"/"in" where it reads so)."""
    anchor = format_date(today)
    g = {k: (v.casefold() if v else v) for k, v in m.groupdict().items()}
    if g["daybefore"]:
        return f"on {format_date(today - timedelta(days=2))}"
    if g["dayafter"]:
        return f"on {format_date(today + timedelta(days=2))}"
    if g["part_rel"]:
        shift = {"yesterday": -1, "tomorrow": 1}.get(g["part_rel"], 0)
        if g["part_rel"] == "last":
            if g["part"] != "night":
                return None  # "last morning": not a phrase worth guessing
            shift = -1
        return f"on the {g['part']} of {format_date(today + timedelta(days=shift))}"
    if g["day"]:
        if g["day"] == "tonight":
            return f"on the night of {anchor}"
        shift = {"yesterday": -1, "today": 0, "tomorrow": 1}[g["day"]]
        return f"on {format_date(today + timedelta(days=shift))}"
    if g["ago_unit"]:
        n = _count(g["ago_n"])
        unit = g["ago_unit"]
        if unit == "day" and n is not None:
            return f"on {format_date(today - timedelta(days=n))}"
        written = " ".join(m.group("ago_n").split())
        plural = "" if n == 1 else "s"
        return f"{written} {unit}{plural} before {anchor}"
    if g["few_unit"]:
        direction = "before" if g["few_rel"] in ("last", "past") else "after"
        return f"the few {g['few_unit']}s {direction} {anchor}"
    if g["edge"]:
        unit = g["edge_unit"]
        where = {"week": f"the week of {anchor}", "month": f"{today:%B} {today.year}",
                 "year": str(today.year)}[unit]  # fmt: skip
        return f"{g['edge']} in {where}"
    rel = " ".join(g["rel"].split())
    past = rel in ("last", "past", "this past")
    future = rel in ("next", "coming")
    if g["unit"] in ("week", "weekend"):
        side = "before" if past else "after" if future else "of"
        return f"the {g['unit']} {side} {anchor}"
    if g["unit"] == "month":
        return f"in {_month(today, -1 if past else 1 if future else 0)}"
    if g["unit"] == "year":
        return f"in {today.year + (-1 if past else 1 if future else 0)}"
    if g["season"]:
        return _season(g["season"], "last" if past else "next" if future else "this", today)
    weekday = _WEEKDAY_NAMES[_WEEKDAY_KEYS[g["weekday"]]]
    if past:
        return f"the {weekday} before {anchor}"
    if future:
        return f"the {weekday} after {anchor}"
    return None  # "this Friday": past or coming, we cannot tell


def resolve_relative_dates(text: str, ts: float) -> str:
    """Rewrite relative date phrases in ``text`` as the dates they mean at ``ts``.

    Args:
        text: one utterance (or any text said at one moment).
        ts: when it was said, epoch seconds; the calendar day is taken in UTC.
            ``ts <= 0`` means unknown, and a ``ts`` past the year 9999 has no calendar
            day: the text is returned unchanged.

    Returns:
        ``text`` with each resolvable phrase replaced; everything else untouched.
        A leading "on"/"in" is dropped after a preposition ("since last year" ->
        "since 2022") or before "was"/"is" (the phrase is the subject), and a
        phrase that opened a sentence keeps its capital.
        Phrases after "the", "my", "our" or before "of" ("the last week of June")
        are left alone.
    """
    if ts <= 0:
        return text
    try:
        today = datetime.fromtimestamp(ts, tz=UTC).date()
    except (OverflowError, OSError, ValueError):  # beyond the calendar (a test clock's jump)
        return text

    def substitute(m: re.Match[str]) -> str:
        before = text[: m.start()].split()
        previous = before[-1].casefold().strip(",;:") if before else ""
        after = text[m.end() :].split(maxsplit=1)
        following = after[0].casefold() if after else ""
        if previous in ("the", "my", "our", "your", "their") or following == "of":
            return m.group()  # "the last week of June", "my last year": not relative
        new = _replacement(m, today)
        if new is None:
            return m.group()
        if new.startswith(("on ", "in ")) and (
            previous in _PREPOSITIONS or following in _SUBJECT_VERBS
        ):
            new = new[3:]  # "since 2022"; "7 May 2023 was great" (the phrase is a subject)
        if m.group().endswith("."):
            new += "."  # the optional dot we consumed ended a sentence or an abbreviation
        return new[0].upper() + new[1:] if m.group()[0].isupper() else new

    return _PATTERN.sub(substitute, text)
