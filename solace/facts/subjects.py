"""What a fact is about: its subject (who) and, for single-valued attributes, which one.

Pure helpers for classification. A person has one residence, one employer, one phone
number, one partner at a time: a newer statement of another value of such an
attribute replaces the old one even when the value is a common noun ("works as an
accountant" -> "works as an electrician") or the wording changes ("Omar's home is in
Oslo" -> "Omar has moved to Lisbon"). Likes, possessions and events are not
single-valued: "likes tea" and "likes coffee" can both hold.
"""

from __future__ import annotations

import re

from solace.memory.lexical import stem
from solace.models.entities import salient

__all__ = ["attributes", "subject"]

#: Single-valued attributes and the phrasings that state them (casefolded text).
_ATTRIBUTES = {
    "residence": r"\b(?:lives?|lived|living|resides?|resided|based|moved|moving|relocat\w*)"
                 r"\s+(?:in|to|at|near)\b|\bhome\s+(?:is|was)\b|\baddress\b",
    "occupation": r"\b(?:works?|worked|working|employed)\s+as\b"
                  r"|\b(?:job|profession|occupation|career)\s+(?:is|was|as)\b",
    "employer": r"\b(?:works?|worked|working)\s+(?:at|for)\b|\bemployer\b"
                r"|\bemployed\s+(?:by|at)\b|\bjoined\b|\bhired\s+(?:by|at)\b",
    "phone": r"\b(?:phone|cell|mobile)\b|\bnumber\s+is\b",
    "email": r"\be-?mail\b",
    "partner": r"\b(?:partner|married|wife|husband|girlfriend|boyfriend|dating|spouse|"
               r"engaged)\b",
    "car": r"\bdrives\b|\bcar\b",
    "age": r"\b\d+\s+years?\s+old\b|\baged?\b",
    "deadline": r"\b(?:deadline|due|renews|renewal|expires)\b",
}
_ATTRIBUTE_RES = {name: re.compile(pattern) for name, pattern in _ATTRIBUTES.items()}
_FAVOURITE = re.compile(r"\bfavou?rite\s+([a-z]+)")
_USER = re.compile(r"^\s*(?:the\s+)?user\b", re.IGNORECASE)


def subject(text: str) -> str:
    """Who ``text`` is about: the name it opens with (casefolded), ``"user"`` for "The
    user ...", or ``""`` when it opens with anything else ("The office is in Porto")."""
    if _USER.match(text):
        return "user"
    lowered = text.casefold().lstrip()
    opening = [n for n in salient(text).names if lowered.startswith(n)]
    return max(opening, key=len) if opening else ""


def attributes(text: str) -> frozenset[str]:
    """The single-valued attributes ``text`` states (``residence``, ``favourite:food``...)."""
    lowered = text.casefold().replace("\u2019", "'")
    found = {name for name, pattern in _ATTRIBUTE_RES.items() if pattern.search(lowered)}
    found.update(f"favourite:{stem(m.group(1))}" for m in _FAVOURITE.finditer(lowered))
    return frozenset(found)
