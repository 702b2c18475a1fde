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

from solace.memory.lexical import content_words, stem
from solace.models.entities import salient

__all__ = ["attributes", "subject"]

#: Single-valued attribute families and the words that state them.
_FAMILIES = {
    "residence": "live lives lived living reside resides resided home based moved move "
                 "moving relocated relocate address",
    "employment": "work works worked working job employed employer employs profession "
                  "career hired occupation",
    "phone": "phone number cell mobile",
    "email": "email",
    "partner": "partner married wife husband girlfriend boyfriend dating spouse engaged",
    "car": "car drives",
    "age": "age aged",
    "deadline": "deadline due renews renewal expires",
}
_FAMILY_OF = {stem(w): family for family, words in _FAMILIES.items() for w in words.split()}
_FAVOURITE = re.compile(r"\bfavou?rite\s+([a-z]+)", re.IGNORECASE)
_USER = re.compile(r"^\s*(?:the\s+)?user\b", re.IGNORECASE)


def subject(text: str) -> str:
    """Who ``text`` is about: its first name (casefolded), ``"user"`` for "The user ...",
    or ``""`` when it does not say."""
    if _USER.match(text):
        return "user"
    names = salient(text).names
    if not names:
        return ""
    lowered = text.casefold()
    return min(names, key=lambda n: (lowered.find(n) if n in lowered else len(lowered), n))


def attributes(text: str) -> frozenset[str]:
    """The single-valued attributes ``text`` states (``residence``, ``favourite:food``...)."""
    found = {_FAMILY_OF[s] for s in (stem(w) for w in content_words(text)) if s in _FAMILY_OF}
    found.update(f"favourite:{stem(m.group(1).casefold())}" for m in _FAVOURITE.finditer(text))
    return frozenset(found)
