"""Rung 2: the deterministic abstractive form — gist, entities, relations (~0.1x).

Input is rung-1 text, whose sentences already name their people and their dates
(see :mod:`extractive`). Condensation works on clauses: each is cut to a
telegraphic fragment (articles, copulas, intensifiers, interjections and fillers
dropped; names, numbers, negations and date phrases always kept), then fragments
are chosen in two passes — first a greedy cover of every salient item (name,
number, date) at the fewest tokens, so who, how many and when survive; then, while
the budget lasts, the clauses most central to the episode. Fragments are written in
their original order, each line under the name of the person it is about.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from solace.memory.ladder.extractive import centrality
from solace.memory.ladder.sentences import LABEL_RE, split_clauses, split_sentences
from solace.models.entities import salient
from solace.models.tokenizer import Tokenizer

__all__ = ["condense", "telegraphic"]

_MONTH = r"(?:January|February|March|April|May|June|July|August|September|October|November" \
    r"|December)"
_UNIT = r"(?:days?|weeks?|weekends?|months?|years?|night|morning|afternoon|evening|Monday|" \
    r"Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)"
# Date phrases as written by :mod:`dates` (and plain calendar dates): kept whole.
_DATE_PHRASE_RE = re.compile(
    rf"(?:(?:the\s+)?(?:(?:\w+|a\s+few|a\s+couple\s+of)\s+)?{_UNIT}\s+(?:before|after|of)\s+)?"
    rf"(?:\d{{1,2}}\s+{_MONTH}\s+\d{{4}}|{_MONTH}\s+\d{{4}}|\d{{1,2}}\s+{_MONTH}|{_MONTH}\s+\d{{1,2}}"
    rf"(?:,?\s+\d{{4}})?|(?:summer|winter|spring|fall|autumn)\s+\d{{4}}(?:/\d{{2}})?|"
    rf"(?<![\d/])(?:19|20)\d\d(?:'?s)?(?![\d/]))",
    re.IGNORECASE,
)
_DROP = frozenset(
    """a an the is are was were am be been being 's 're 'm it it's its that that's this
    these those there there's here here's which who whom so very really just totally
    definitely actually honestly literally absolutely truly super pretty quite such
    too also even still kinda sorta basically anyway anyways oh wow hey hi hello yeah
    yes yep yup ok okay haha hahaha lol omg aw aww ooh um hmm well and but plus or
    then gonna wanna gotta some all any way thing things stuff
    something much many more most own sure""".split()
)
_KEEP_ALWAYS = frozenset("not no never nothing nobody none without".split())
_LEADING_DROP = frozenset("on in at during".split())  # before a date phrase
_EDGE_PUNCT = "\"'()[]{}.,;:!?\u201c\u201d\u2018\u2019*-\u2013\u2014~"


def _keep_word(word: str, first: bool, next_word: str) -> str | None:
    """The word as a fragment keeps it, or None to drop it.

    A capitalised function word inside a name ("The Witcher", "Super Mario") is
    part of the name and is kept.
    """
    core = word.strip(_EDGE_PUNCT)
    if not core or not any(ch.isalnum() for ch in core):
        return None  # punctuation, emoji
    folded = core.casefold().replace("\u2019", "'")
    if folded in _KEEP_ALWAYS or folded.endswith("n't") or any(ch.isdigit() for ch in core):
        return core
    in_name = core[0].isupper() and folded != "i" and (
        not first or next_word[:1].isupper() and word == core
    )
    if folded in _DROP and not in_name:
        return None
    return core


def telegraphic(clause: str) -> str:
    """``clause`` cut to a telegraphic fragment.

    Date phrases ("the week before 9 June 2023", "7 May 2023") are kept whole, a
    leading "on"/"in" before them dropped; names, numbers and negations are always
    kept; function words and fillers in ``_DROP`` go.
    """
    out: list[str] = []
    position = 0
    for match in _DATE_PHRASE_RE.finditer(clause):
        out.extend(_words(clause[position : match.start()], first=not out, before_date=True))
        out.append(match.group().strip())
        position = match.end()
    out.extend(_words(clause[position:], first=not out, before_date=False))
    return " ".join(out)


def _words(text: str, *, first: bool, before_date: bool) -> list[str]:
    kept = []
    words = text.split()
    for i, word in enumerate(words):
        if before_date and i == len(words) - 1 and word.casefold() in _LEADING_DROP:
            continue
        next_word = words[i + 1] if i + 1 < len(words) else ""
        keep = _keep_word(word, first and i == 0, next_word)
        if keep is not None:
            kept.append(keep)
    return kept


# A clause added for its centrality alone must say something ("they bring" does not).
_MIN_FILL_WORDS = 3


@dataclass(slots=True)
class _Clause:
    line: int
    order: int
    fragment: str
    tokens: int
    items: frozenset[str]


def _items(text: str) -> frozenset[str]:
    found = salient(text)
    return frozenset(
        [f"n:{n}" for n in found.names]
        + [f"#:{n}" for n in found.numbers]
        + [f"d:{d}" for d in found.dates]
    )


def _owner(line: str, speakers: Sequence[str]) -> tuple[str, str]:
    """``(owner, text)``: whom the line is about, and the line without its label."""
    match = LABEL_RE.match(line)
    if match and match.group(1) in speakers:
        return match.group(1), line[match.end() :]
    for speaker in speakers:  # an unlabelled rung-1 line names its speaker
        if re.search(rf"(?<!\w){re.escape(speaker)}(?!\w)", line):
            return speaker, line
    return "", line


def condense(
    text: str, budget_tokens: int, tokenizer: Tokenizer, speakers: Sequence[str] = ()
) -> str:
    """The rung-2 form of rung-1 ``text`` within about ``budget_tokens``.

    Args:
        text: rung-1 text (resolved sentences, one per line, maybe ``Speaker:``
            labelled); any text works, with less to go on.
        budget_tokens: the target size. Covering every salient item comes first
            and may exceed it; other clauses are added only while it lasts.
        tokenizer: the runtime's token counter.
        speakers: the record's speakers, to attribute lines.

    Returns:
        Fragments in original order, ``"; "``-joined, each line's fragments under
        its owner's name; never empty if ``text`` has a word. Deterministic.
    """
    lines = [s for line in text.splitlines() for s in split_sentences(line)]
    owners: list[str] = []
    clauses: list[_Clause] = []
    for index, line in enumerate(lines):
        owner, body = _owner(line, speakers)
        owners.append(owner)
        for piece in split_clauses(body):
            fragment = telegraphic(piece)
            if not fragment:
                continue
            clauses.append(_Clause(index, len(clauses), fragment, 0, _items(piece)))
    if not clauses:
        return " ".join(text.split())
    counts = tokenizer.count_many([c.fragment for c in clauses])
    for clause, count in zip(clauses, counts, strict=True):
        clause.tokens = count + 1  # and the separator
    chosen: set[int] = set()
    uncovered = set().union(*(c.items for c in clauses))
    while uncovered:
        best = max(
            clauses,
            key=lambda c: (len(c.items & uncovered) / c.tokens, -c.order),
        )
        if not best.items & uncovered:
            break
        chosen.add(best.order)
        uncovered -= best.items
    # Greedy cover picks cheap one-item fragments first ("John looks"); drop any whose
    # items the rest of the cover also carries.
    for order in sorted(chosen, key=lambda o: (len(clauses[o].fragment.split()), -o)):
        others = set().union(*(clauses[o].items for o in chosen if o != order))
        if clauses[order].items <= others:
            chosen.discard(order)
    used = sum(clauses[i].tokens for i in chosen)
    central = centrality([c.fragment for c in clauses], exclude={s.casefold() for s in speakers})
    for clause in sorted(clauses, key=lambda c: (-central[c.order], c.order)):
        if (
            clause.order not in chosen
            and used + clause.tokens <= budget_tokens
            and len(clause.fragment.split()) >= _MIN_FILL_WORDS
        ):
            chosen.add(clause.order)
            used += clause.tokens
    if not chosen:
        chosen.add(max(clauses, key=lambda c: (central[c.order], -c.order)).order)
    return _render(clauses, chosen, owners)


def _render(clauses: Sequence[_Clause], chosen: set[int], owners: Sequence[str]) -> str:
    parts: list[str] = []
    current_line = -1
    for clause in clauses:
        if clause.order not in chosen:
            continue
        if clause.line != current_line:
            current_line = clause.line
            parts.append(clause.fragment)
        else:
            parts[-1] += ", " + clause.fragment
    line_of = [c.line for c in clauses if c.order in chosen]
    rendered = []
    previous_owner = ""
    for line, part in zip(dict.fromkeys(line_of), parts, strict=True):
        owner = owners[line]
        named = owner and re.search(rf"(?<!\w){re.escape(owner)}(?!\w)", part)
        if owner and not named and owner != previous_owner:
            part = f"{owner}: {part}"
        previous_owner = owner  # named or labelled: the lines after it may rely on it
        rendered.append(part)
    return "; ".join(rendered)
