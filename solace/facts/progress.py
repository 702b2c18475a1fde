"""A plan or an unfinished activity, and the later statement that it is done.

"Joanna plans to submit her screenplay to film festivals" is no longer current once
"Joanna submitted her screenplay to a film festival"; neither is "Dave is working on
restoring a car" once "Dave finished restoring the car". Pure helpers for
classification (:mod:`solace.facts.classify`): the old fact states the plan or the
activity with a verb, the new one states that verb done (its past tense, or
"finished/completed <verb>ing") about the same thing (a content word of the plan's
object in common). Irregular past tenses ("write" -> "wrote") are not recognised.
"""

from __future__ import annotations

import re

from solace.memory.lexical import stem, terms

__all__ = ["fulfils"]

# "plans to submit", "is going to submit", "gonna", "will", "hopes to", "wants to".
_PLAN = re.compile(
    r"\b(?:plans?|planning|planned|intends?|intending|going|gonna|hopes?|hoping|wants?|"
    r"wanting|aims?|aiming|about|will|is\s+set|are\s+set|'ll|'s\s+set)\s+(?:to\s+|on\s+)?"
    r"(?P<verb>[a-z]+)\b(?P<rest>.*)", re.IGNORECASE)
# "is working on restoring", "started writing", "is restoring", "is in the middle of".
_DOING = re.compile(
    r"\b(?:(?:is|are|am|was|'s|'re|'m)\s+(?:currently\s+|still\s+|now\s+|busy\s+)?"
    r"(?:working\s+on\s+|in\s+the\s+middle\s+of\s+)?|working\s+on\s+|"
    r"(?:has\s+|have\s+)?(?:started|begun|began)\s+)(?P<verb>[a-z]+ing)\b(?P<rest>.*)",
    re.IGNORECASE)
_DONE_ING = re.compile(r"\b(?:finished|completed|done|wrapped\s+up)\s+(?P<verb>[a-z]+ing)\b",
                       re.IGNORECASE)
_AUXILIARY = frozenset(("be", "do", "have", "go", "get", "make", "keep", "try", "start", "see"))


def _root(word: str) -> str:
    """The verb's stem with a final "i" read as "y" ("applied" and "apply" agree)."""
    s = stem(word.casefold())
    if s.endswith("i"):
        s = s[:-1] + "y"
    for suffix in ("ing", "e"):
        if s.endswith(suffix) and len(s) > len(suffix) + 2:
            s = s[: -len(suffix)]
    return s


def _open(text: str) -> tuple[str, str] | None:
    """``(verb root, object)`` of the plan or unfinished activity ``text`` states."""
    for pattern in (_PLAN, _DOING):
        m = pattern.search(text)
        if m is not None and m["verb"].casefold() not in _AUXILIARY:
            return _root(m["verb"]), m["rest"]
    return None


def _done_roots(text: str) -> set[str]:
    """Roots of the verbs ``text`` states as done: past tenses and "finished <verb>ing"."""
    done = {_root(m["verb"]) for m in _DONE_ING.finditer(text)}
    done |= {_root(w) for w in re.findall(r"[A-Za-z]+ed\b", text)}
    return done


def fulfils(new: str, old: str) -> bool:
    """True iff ``new`` states done what ``old`` states as a plan or an activity under
    way: the same verb, and a content word of the plan's object in common.

    Never when ``new`` is itself still a plan or under way with that verb ("Ana plans
    to submit the thesis" never fulfils "Ana plans to submit the thesis draft").
    """
    opened = _open(old)
    if opened is None:
        return False
    verb, obj = opened
    still = _open(new)
    if still is not None and still[0] == verb:
        return False
    if verb not in _done_roots(new):
        return False
    return bool(set(terms(obj)) & set(terms(new)))
