"""Deterministic extraction of the salient facts of a text: names, numbers, dates.

The guard (:mod:`solace.models.guard`) uses these to judge whether a model's rewrite
kept what mattered and invented nothing, and the deterministic compressors use them to
decide what a key point must keep. It runs on every record, so it is regular
expressions compiled once, no model. It is a heuristic tuned for chat turns
(``Caroline: I went to a LGBTQ support group yesterday``): precision on names comes
from a list of common sentence-initial words, recall from treating every other
capitalised word as a name.

Everything returned is normalised for comparison: casefolded, number words as
digits (``two`` -> ``2``, ``1,000`` -> ``1000``), calendar dates in ISO form
(``July 2023`` -> ``2023-07``, ``4 July`` -> ``--07-04``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from solace.models.remembered import remembered

__all__ = ["Salient", "calendar_parts", "date_supported", "number_values", "salient",
           "word_set"]


@dataclass(frozen=True, slots=True)
class Salient:
    """The salient items of one text, normalised (see module docstring).

    Attributes:
        names: casefolded proper nouns, multiword ones joined by one space.
        numbers: numbers as canonical digit strings (``"2"``, ``"3.5"``, ``"10%"``).
        dates: ISO calendar forms, weekdays (``"monday"``) and relative expressions
            (``"yesterday"``, ``"last week"``, ``"2 week ago"``).
    """

    names: frozenset[str]
    numbers: frozenset[str]
    dates: frozenset[str]

    def __len__(self) -> int:
        return len(self.names) + len(self.numbers) + len(self.dates)


# Never names, wherever they stand.
_ALWAYS_STOP = frozenset(
    "i i'm i've i'd i'll ok okay omg lol lmao haha hahaha btw fyi asap tbh idk am pm tv"
    " diy imo".split()
)
# Common words that are capitalised only because they open a sentence (or follow a
# speaker label): not names there. Elsewhere a capitalised word is a name.
_SENTENCE_START_COMMON = frozenset(
    """a about above across actually after again against agreed ah all already also
    although always am amazing an and another any anyone anything anyway anyways are
    around as ask asked at aw aww awesome basically be beautiful because been before
    being below best better between both but by bye can can't cheers check come came
    congrats congratulations cool could couldn't cute dear definitely did didn't do
    does doesn't don't done down during each either even every everybody everyone
    everything exactly except fantastic feel felt few finally first for fortunately
    from get glad go going good goodbye got great guess had has have having he he's
    hello her here here's hers hey hi him his hmm honestly hope hopefully hoping how
    however i if imagine in indeed into is isn't it it's its just keep know knew last
    later less let let's like liked look looking lots love loved luckily made make many
    may maybe me might mine more most much must my myself nah near need needed neither never
    next nice no nobody nope nor not nothing now of off often oh on once only onto ooh
    or other our ours out over perhaps please plus probably really remember right said
    same saw say see seen she she's should shouldn't since so some somebody someone
    something sometimes soon sorry speaking still such sure sweet take talking tell thank
    thanks than that that's the their theirs them then there there's these they they're
    they've think thinking this those though thought through till to told too totally
    toward towards true try tried ugh um under unfortunately unless until up upon us
    usually very wanted want was wasn't we we'll we're we've well went were what
    what's whatever when whenever where wherever whether which while who who's whoa
    whoever whom whose why will wish with within without won't wonderful would wouldn't
    wow yay yeah yep yes yet you you'll you're you've your yours yourself yup""".split()
)
_FULL_MONTHS = frozenset(
    "january february march april may june july august september october november december".split()
)

_MONTHS = {
    "january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6,
    "july": 7, "august": 8, "september": 9, "october": 10, "november": 11, "december": 12,
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8,
    "sep": 9, "sept": 9, "oct": 10, "nov": 11, "dec": 12,
}  # fmt: skip
_WEEKDAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_UNITS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
    "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17,
    "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40,
    "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "dozen": 12,
}  # fmt: skip
_SCALES = {"hundred": 100, "thousand": 1000, "million": 10**6, "billion": 10**9}
_SMALL = (
    "zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|"
    "fourteen|fifteen|sixteen|seventeen|eighteen|nineteen"
)
_TENS = "twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety"
_NUM = rf"(?:(?:{_TENS})(?:[\s-]+(?:{_SMALL}))?|{_SMALL}|dozen)"
_SCALE = "hundred|thousand|million|billion"

_MONTH = (
    r"(?:January|February|March|April|May|June|July|August|September|October|November"
    r"|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec)\b\.?"
)
_DAY = r"(?:3[01]|[12]\d|0?[1-9])(?:st|nd|rd|th)?(?!\d)"
_YEAR = r"(?:1[89]\d\d|20\d\d|2100)(?!\d)"

_ISO_RE = re.compile(r"(?<!\d)(\d{4})[-/](0?[1-9]|1[0-2])[-/](3[01]|[12]\d|0?[1-9])(?!\d)")
_SLASH_RE = re.compile(r"(?<![\d/])(\d{1,2})/(\d{1,2})/(\d{4}|\d{2})(?![\d/])")
_DAY_MONTH_RE = re.compile(rf"\b(?P<d>{_DAY})\s+(?:of\s+)?(?P<m>{_MONTH})(?:,?\s+(?P<y>{_YEAR}))?")
_MONTH_DAY_RE = re.compile(rf"\b(?P<m>{_MONTH})(?:\s+(?P<d>{_DAY}))?(?:,?\s+(?P<y>{_YEAR}))?")
_RELATIVE_RE = re.compile(
    rf"\b(?:the\s+day\s+(?:before|after)\s+(?:yesterday|tomorrow)|yesterday|today|tonight"
    rf"|tomorrow|(?:last|next|this|past|coming)\s+(?:weekend|week|month|year|night|morning"
    rf"|afternoon|evening|summer|winter|spring|fall|autumn|{_WEEKDAYS}|few\s+(?:days|weeks"
    rf"|months|years))|(?:a|an|\d+|{_NUM}|a\s+few|a\s+couple\s+of|couple\s+of|few|several)"
    rf"\s+(?:day|week|month|year|hour|minute)s?\s+ago|(?:earlier|later)\s+(?:this|that)"
    rf"\s+(?:day|week|month|year))\b",
    re.IGNORECASE,
)
_WEEKDAY_RE = re.compile(rf"\b({_WEEKDAYS})s?\b", re.IGNORECASE)
_YEAR_RE = re.compile(rf"(?<![\d$.,])({_YEAR})(s|'s)?(?![\d%]|[.,]\d)")
_DIGITS_RE = re.compile(
    r"(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?:st|nd|rd|th)?(?:\s*(%|percent\b|per\s+cent\b))?",
    re.IGNORECASE,
)
_NUMBER_WORDS_RE = re.compile(
    rf"\b(?:(?:{_NUM})\s+)?(?:{_SCALE})(?:\s+(?:and\s+)?(?:{_NUM}))?\b|\b{_NUM}\b", re.IGNORECASE
)
_ASCII_WORD_RE = re.compile(r"[a-z]+")
_ANY_DIGIT_RE = re.compile(r"\d")
_MONTH_KEYS = frozenset(_MONTHS)
_WEEKDAY_KEYS = frozenset(_WEEKDAYS.split("|")) | {d + "s" for d in _WEEKDAYS.split("|")}
_RELATIVE_KEYS = frozenset(
    "yesterday today tonight tomorrow last next this past coming ago earlier later".split()
)
_NUMBER_KEYS = frozenset(_UNITS) | frozenset(_SCALES)
_WORD_RE = re.compile(r"[^\W\d_][\w'\-]*")
_SPACE_RE = re.compile(r"\s+")
_SENTENCE_END = frozenset('.!?:;"(\n*-\u2013\u2014\u201c')
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'"})


def _words_value(phrase: str) -> int:
    """Value of a number-word phrase matched by ``_NUMBER_WORDS_RE``."""
    total = current = 0
    for word in re.split(r"[\s-]+", phrase.casefold()):
        if word in _UNITS:
            current += _UNITS[word]
        elif word in _SCALES:
            scale = _SCALES[word]
            if scale == 100:
                current = max(current, 1) * 100
            else:
                total += max(current, 1) * scale
                current = 0
    return total + current


def _canonical_number(digits: str, fraction: str | None, percent: str | None) -> str:
    text = digits.replace(",", "") + (fraction or "")
    try:
        value = Decimal(text)
    except InvalidOperation as exc:  # the regex only admits digits; this is a bug
        raise AssertionError(f"unparsable number {text!r}") from exc
    canon = format(value.normalize(), "f") if "." in text else str(int(value))
    return canon + ("%" if percent else "")


def _mask(text: str, start: int, end: int) -> str:
    return text[:start] + " " * (end - start) + text[end:]


def _calendar(year: int | None, month: int | None, day: int | None) -> str:
    if year is not None and month is None:
        return f"{year:04d}"
    date = f"{year:04d}" if year is not None else "-"
    if month is not None:
        date += f"-{month:02d}"
    if day is not None:
        date += f"-{day:02d}"
    return date


def _sentence_initial(text: str, start: int) -> bool:
    i = start - 1
    while i >= 0 and text[i].isspace():
        i -= 1
    return i < 0 or text[i] in _SENTENCE_END


def _extract_dates(text: str, words: frozenset[str], digits: bool) -> tuple[set[str], str]:
    """Return normalised dates and ``text`` with every date span blanked out.

    ``words`` (casefolded ASCII words of ``text``) and ``digits`` (``text`` has a
    digit) let passes that cannot match be skipped; most turns have no date at all.
    """
    dates: set[str] = set()
    for match in _ISO_RE.finditer(text) if digits else ():
        y, m, d = (int(g) for g in match.groups())
        dates.add(_calendar(y, m, d))
        text = _mask(text, *match.span())
    for match in _SLASH_RE.finditer(text) if digits else ():
        dates.add("/".join(str(int(g)) for g in match.groups()))
        text = _mask(text, *match.span())
    for regex in (_DAY_MONTH_RE, _MONTH_DAY_RE) if words & _MONTH_KEYS else ():
        for match in regex.finditer(text):
            month_word = match["m"].rstrip(".")
            day = int(re.sub(r"\D", "", match["d"])) if match["d"] else None
            year = int(match["y"]) if match["y"] else None
            bare = day is None and year is None
            if bare and month_word.casefold() not in _FULL_MONTHS:
                continue  # "Jan", "Mar": a name or a word unless it has a day or a year
            if bare and month_word == "May" and _sentence_initial(text, match.start()):
                continue  # "May I ...": the verb
            dates.add(_calendar(year, _MONTHS[month_word.casefold()], day))
            text = _mask(text, *match.span())
    for match in _RELATIVE_RE.finditer(text) if words & _RELATIVE_KEYS else ():
        dates.add(_normalise_relative(match.group()))
        text = _mask(text, *match.span())
    for match in _WEEKDAY_RE.finditer(text) if words & _WEEKDAY_KEYS else ():
        dates.add(match.group(1).casefold())
        text = _mask(text, *match.span())
    for match in _YEAR_RE.finditer(text) if digits else ():
        dates.add(match.group(1) + ("s" if match.group(2) else ""))
        text = _mask(text, *match.span())
    return dates, text


def _normalise_relative(phrase: str) -> str:
    phrase = _SPACE_RE.sub(" ", phrase.casefold())
    if not phrase.endswith(" ago"):
        return phrase
    words = phrase.split(" ")
    unit = words[-2].removesuffix("s")
    amount = " ".join(words[:-2])
    if amount in ("a", "an"):
        amount = "1"
    elif _NUMBER_WORDS_RE.fullmatch(amount):
        amount = str(_words_value(amount))
    return f"{amount} {unit} ago"


def _extract_numbers(text: str, words: frozenset[str], digits: bool) -> set[str]:
    numbers = (
        {_canonical_number(*m.groups()) for m in _DIGITS_RE.finditer(text)} if digits else set()
    )
    if words & _NUMBER_KEYS:
        numbers.update(str(_words_value(m.group())) for m in _NUMBER_WORDS_RE.finditer(text))
    return numbers


def _hints(text: str) -> tuple[frozenset[str], bool]:
    return frozenset(_ASCII_WORD_RE.findall(text.casefold())), _ANY_DIGIT_RE.search(
        text
    ) is not None


def _extract_names(text: str) -> set[str]:
    names: set[str] = set()
    run: list[str] = []
    run_end = -1
    for match in _WORD_RE.finditer(text):
        word = match.group().rstrip("'-")
        word = word[:-2] if word.endswith("'s") else word
        folded = word.casefold()
        keep = (
            bool(word)
            and word[0].isupper()
            and folded not in _ALWAYS_STOP
            and folded not in _UNITS
            and folded not in _SCALES
            and not (folded in _SENTENCE_START_COMMON and _sentence_initial(text, match.start()))
        )
        contiguous = run and text[run_end : match.start()] == " "
        if run and not (keep and contiguous):
            names.add(" ".join(run))
            run = []
        if keep:
            run.append(folded)
            run_end = match.start() + len(match.group())
            if match.group() != word:  # a possessive or trailing dash ends a name
                names.add(" ".join(run))
                run = []
    if run:
        names.add(" ".join(run))
    return names


@remembered(1 << 13)  # each agent perceiving or compressing an event asks again
def salient(text: str) -> Salient:
    """Extract the names, numbers and dates of ``text``, normalised.

    Dates are found first and blanked out, so a year or a day is a date, not a
    number, and a month or weekday is not a name.

    Args:
        text: any text; chat turns may carry a ``Speaker:`` prefix (a name).

    Returns:
        The salient items; deterministic, pure, and cheap (regex passes only; a
        short text asked about again is a lookup).
    """
    text = text.translate(_APOSTROPHES)
    words, digits = _hints(text)
    dates, rest = _extract_dates(text, words, digits)
    numbers = _extract_numbers(rest, words, digits)
    names = _extract_names(rest)
    return Salient(frozenset(names), frozenset(numbers), frozenset(dates))


def number_values(text: str) -> frozenset[str]:
    """Every number in ``text``, dates' digits included (``"July 4"`` gives ``"4"``).

    The guard uses this as the pool an output's numbers may come from.
    """
    text = text.translate(_APOSTROPHES)
    values = _extract_numbers(text, *_hints(text))
    values.update(str(int(m.group())) for m in re.finditer(r"\d+", text))
    return frozenset(values)


def word_set(text: str) -> frozenset[str]:
    """Casefolded words of ``text`` (possessive ``'s`` stripped), for name look-ups."""
    words = set()
    for match in _WORD_RE.finditer(text.translate(_APOSTROPHES)):
        word = match.group().rstrip("'-").casefold()
        words.add(word[:-2] if word.endswith("'s") else word)
    return frozenset(words)


_CALENDAR_RE = re.compile(r"(?:(\d{4})|-)(?:-(\d{2}))?(?:-(\d{2}))?")


def calendar_parts(date: str) -> tuple[str | None, str | None, str | None] | None:
    """``(year, month, day)`` of a normalised calendar date (:attr:`Salient.dates`:
    ``"2023-05-07"``, ``"2023-05"``, ``"2023"``, ``"-05-07"``), each None when absent;
    None for a relative date or a weekday."""
    match = _CALENDAR_RE.fullmatch(date)
    if match is None:
        return None
    year, month, day = match.groups()
    return year, month, day


def date_supported(date: str, source_dates: frozenset[str]) -> bool:
    """Whether normalised ``date`` is stated by (or less precise than) a source date.

    ``"2023"`` and ``"2023-07"`` are supported by ``"2023-07-01"``; ``"2023-07-01"`` is
    not supported by ``"2023-07"`` (the day would be invented). Relative dates and
    weekdays must match exactly.
    """
    if date in source_dates:
        return True
    parts = calendar_parts(date)
    if parts is None:
        return False
    for candidate in source_dates:
        other = calendar_parts(candidate)
        if other is not None and all(mine is None or mine == theirs
                                     for mine, theirs in zip(parts, other, strict=True)):
            return True
    return False
