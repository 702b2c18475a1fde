"""What a clause says, as a key: two clauses with one key restate each other.

Pure helpers of the deterministic merger (:mod:`solace.facts.merge`): a fact is split
into clauses (:func:`clauses`), and each clause gets a *restatement key*
(:func:`restatement_key`), the set of its content words (stemmed, with a few
synonyms of common fact verbs folded together, framing words such as "user" or
"mentioned" ignored, negation kept as a marker) plus its canonical numbers and
dates. "Alice lives in Paris." / "The user, Alice, lives in Paris" / "Alice's home is
in Paris" have one key.

Two phrasings are read as the words they stand for, so their keys meet:

* a favourite stated as such ("likes teal best of all colours", "loves pho more than
  any other dish", "go-to meal": :func:`solace.facts.subjects.attributes`) is keyed
  as "prefer" plus the kind of favourite, the key of "favourite colour" / "prefers
  the colour";
* a weekday that recurs ("every Friday", "on Fridays") adds "week", the key of "on
  Friday each week" / "weekly on Friday" (and drops "every").

Each rule only adds the words the phrasing means or removes the words that only
phrase it; names, numbers, dates, negation and relation words are never removed.
"""

from __future__ import annotations

import re
from functools import lru_cache

from solace.facts.subjects import attribute_phrasing, attributes
from solace.memory.ladder.sentences import split_sentences
from solace.memory.lexical import content_words, stem
from solace.models.entities import number_values, salient

__all__ = [
    "EXACT",
    "NEGATED",
    "NEGATION_RE",
    "ORDER_WORDS",
    "clauses",
    "restatement_key",
]

# Stop words that carry a fact's meaning ("before 11am" is not "after 11am"): kept
# in keys although lexical search ignores them.
_RELATION_WORDS = frozenset(
    "before after above below over under against more most few until during off out up"
    " down only than from".split()
)
#: Words whose order decides the meaning ("tea over coffee" vs "coffee over tea"): a
#: key holding one is only a restatement of a key whose words come in the same order.
ORDER_WORDS = frozenset(
    w if w in _RELATION_WORDS else stem(w)
    for w in "over than before after rather instead more less above below".split()
)
# Framing, not content: who the fact is about when unnamed, and reporting verbs.
_FRAMING = frozenset(
    stem(w)
    for w in "user users person mentioned mentions said says told tells stated states"
    " noted notes reported reports explained explains shared shares apparently named called".split()
)
# Common fact verbs and their near-synonyms, folded into one key word each.
_SYNONYM_GROUPS = (
    "live lives lived living reside resides resided home based",
    "work works worked working job employed employee",
    "own owns owned owner possess possesses",
    "like likes liked love loves loved enjoy enjoys enjoyed fond",
    "prefer prefers preferred preference favourite favorite",
    "born birthday birth",
    "contact contacted contacting message messaged messaging reach reached",
    "morning mornings",
    "week weeks weekly",
    "meet meets meeting meetings met",
)
_SYNONYMS = {stem(w): stem(g.split()[0]) for g in _SYNONYM_GROUPS for w in g.split()}
_PREFER = _SYNONYMS[stem("favourite")]
_WEEK = _SYNONYMS[stem("weekly")]
_EVERY = stem("every")
_RELATION_RE = re.compile(rf"\b(?:{'|'.join(sorted(_RELATION_WORDS))})\b")
#: A negation word, anywhere in a clause.
NEGATION_RE = re.compile(r"\b(?:not|no|never|nor|cannot|without)\b|n't\b", re.IGNORECASE)
_CLAUSE_SPLIT_RE = re.compile(r"\s*;\s*|,\s+and\s+")
# A reporting lead-in at the start of a clause ("mentioned they're usually free ...").
_LEAD_IN_RE = re.compile(
    r"^(?:(?:has\s+|had\s+)?(?:mentioned|said|says|noted|stated|explained|shared)"
    r"|told\s+(?:us|me|the\s+assistant))(?:\s+that)?\s+"
    r"(?:(?:they|he|she)(?:'re|'s|\u2019re|\u2019s|\s+are|\s+is)\s+)?",
    re.IGNORECASE,
)
_TRAILING = ".;, \t"
#: The key item a negated clause holds.
NEGATED = "\u00acnot"
#: Key items two clauses must share exactly to restate one another.
EXACT = _RELATION_WORDS | {NEGATED}


def clauses(text: str) -> list[str]:
    """Split a fact into clauses: sentences, then at ';' and ', and'.

    Trailing punctuation is stripped and a reporting lead-in ("mentioned that",
    "said they're") is dropped when at least two words remain.

    Returns:
        The non-empty clauses in text order.
    """
    out: list[str] = []
    for sentence in split_sentences(text):
        for piece in _CLAUSE_SPLIT_RE.split(sentence):
            piece = piece.strip().rstrip(_TRAILING).strip()
            if not piece:
                continue
            bare = _LEAD_IN_RE.sub("", piece, count=1)
            out.append(bare if len(bare.split()) >= 2 else piece)
    return out


@lru_cache(maxsize=8192)
def _is_salient_word(word: str) -> bool:
    """A number or date word, represented in a key by its canonical form instead."""
    if any(ch.isdigit() for ch in word) or number_values(word):
        return True
    return bool(salient(f"on {word.capitalize()}").dates)


def _key_words(text: str) -> list[str]:
    """Content words, stemmed and synonym-folded, framing and number/date words out."""
    words = [
        _SYNONYMS.get(base, base)
        for word in content_words(text)
        if not _is_salient_word(word) and (base := stem(word)) not in _FRAMING
    ]
    return words + _RELATION_RE.findall(text.casefold())


def _favourite_words(text: str) -> list[str] | None:
    """The key words of a clause that states a favourite, its phrasing read as "prefer"
    plus the kind ("likes teal best of all colours" -> teal, prefer, colour); None
    when it states none. Only a clause stating favourites alone loses its phrasing
    words (blanking another attribute's phrasing would drop its relation)."""
    found = attributes(text)
    kinds = sorted(a.partition(":")[2] for a in found if a.startswith("favourite:"))
    if not kinds:
        return None
    alone = len(kinds) == len(found)
    words = _key_words(attribute_phrasing(text) if alone else text)
    return [*words, _PREFER, *(stem(kind) for kind in kinds)]


def _recurring_days(text: str, dates: frozenset[str]) -> bool:
    """True iff a weekday date of ``text`` recurs: "every Friday", "on Fridays"."""
    lowered = text.casefold()
    return any(
        day.isalpha() and re.search(rf"\b(?:every\s+{day}|{day}s)\b", lowered) is not None
        for day in dates
    )


def restatement_key(text: str) -> tuple[frozenset[str], tuple[str, ...]]:
    """The key two clauses share when one restates the other, and its word order.

    Returns:
        ``(key, order)``: the key holds stemmed content words (synonyms folded,
        framing dropped, a favourite's phrasing read as "prefer" and its kind, a
        recurring weekday as "week"), ``#number`` and ``@date`` items in canonical
        form, and a negation marker; ``order`` lists the key's words in
        first-occurrence order. Pure.
    """
    found = salient(text)
    words = _favourite_words(text) or _key_words(text)
    if _recurring_days(text, found.dates):
        words = [w for w in words if w != _EVERY] + [_WEEK]
    order = tuple(dict.fromkeys(words))
    key = set(order)
    key.update(f"#{n}" for n in found.numbers)
    key.update(f"@{d}" for d in found.dates)
    if NEGATION_RE.search(text.replace("\u2019", "'")):
        key.add(NEGATED)
    return frozenset(key), order
