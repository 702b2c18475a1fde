"""Lexical analysis: the terms a text is indexed and queried by.

Terms are casefolded word tokens (letters and digits), stop words removed, with a
light suffix-stripping stemmer so that "painted", "painting" and "paints" meet. The
BM25 index over them is :mod:`solace.memory.bm25`; this module is only what derives
terms from text, so the retrieval forms' stamp (:mod:`~solace.memory.retrieval_forms`)
covers how a text is analysed and not how the index stores it.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["STOP_WORDS", "content_words", "query_terms", "stem", "terms"]

# A compact English stop-word list (function words, auxiliaries, pronouns). Content
# words — names, nouns, verbs, numbers — are what remain.
STOP_WORDS: frozenset[str] = frozenset(
    """a about above after again against all am an and any are aren't as at be because
    been before being below between both but by can can't cannot could couldn't did didn't
    do does doesn't doing don't down during each few for from further had hadn't has hasn't
    have haven't having he he'd he'll he's her here here's hers herself him himself his how
    how's i i'd i'll i'm i've if in into is isn't it it's its itself let's me more most
    mustn't my myself no nor not of off on once only or other ought our ours ourselves out
    over own same shan't she she'd she'll she's should shouldn't so some such than that
    that's the their theirs them themselves then there there's these they they'd they'll
    they're they've this those through to too under until up very was wasn't we we'd we'll
    we're we've were weren't what what's when when's where where's which while who who's
    whom why why's will with won't would wouldn't you you'd you'll you're you've your yours
    yourself yourselves s t d ll m re ve just also yes yeah oh really""".split()
)

_WORD_RE = re.compile(r"[0-9a-z]+(?:'[a-z]+)?")


def stem(word: str) -> str:
    """A light, deterministic suffix stripper (plural, -ing, -ed, final -e).

    It only has to map a word and its common inflections to one key, for query
    and document alike ("hike", "hikes", "hiked", "hiking" -> "hik"); it never
    needs to produce a real word.
    """
    if word.isdigit() or len(word) <= 3:
        return word
    base = word
    if base.endswith("ies") and len(base) > 4:
        base = base[:-3] + "y"
    elif base.endswith("es") and base[:-2].endswith(("s", "x", "z", "ch", "sh")):
        base = base[:-2]
    elif base.endswith("s") and not base.endswith(("ss", "us", "is")):
        base = base[:-1]
    elif base.endswith("ing") and len(base) >= 6:
        base = base[:-3]
    elif base.endswith("ed") and len(base) >= 5:
        base = base[:-2]
    if base.endswith("e") and len(base) > 3:
        base = base[:-1]
    if len(base) > 3 and base[-1] == base[-2] and base[-1] not in "aeiouylsz":
        base = base[:-1]  # running -> runn -> run
    return base


def content_words(text: str) -> list[str]:
    """Casefolded words of ``text`` with punctuation and stop words removed (unstemmed)."""
    out = []
    for word in _WORD_RE.findall(text.casefold().replace("\u2019", "'")):
        word = word.removesuffix("'s")
        if word and word not in STOP_WORDS:
            out.append(word)
    return out


@lru_cache(maxsize=1 << 16)
def _term(word: str) -> str:
    """The index term of one casefolded word ("" for a stop word): a vocabulary
    repeats, so each word is stripped and stemmed once."""
    word = word.removesuffix("'s")
    return stem(word) if word and word not in STOP_WORDS else ""


def terms(text: str) -> list[str]:
    """The index terms of ``text``: content words, stemmed, in order (with repeats)."""
    return [t for t in map(_term, _WORD_RE.findall(text.casefold().replace("\u2019", "'")))
            if t]


@lru_cache(maxsize=4096)
def query_terms(query: str) -> tuple[str, ...]:
    """The distinct index terms of a query, sorted (each counts once; one order, so a
    score sums its terms the same way in every process). Cached: a recall asks every
    agent's indexes the same query."""
    return tuple(sorted(set(terms(query))))
