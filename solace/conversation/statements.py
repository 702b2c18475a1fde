"""Durable facts taken from what the user says, deterministically.

"My dog's name is Rex" or "I'm severely allergic to peanuts" is exactly what seed 000's
durable facts are for (identity, standing facts that must always be right), and a
small model cannot be trusted to notice it. So the user's own statements are read
with a fixed set of patterns; each match is a ``(key, value)`` pair whose value is
the user's words, cut at the end of the clause. Questions ("What is my name?"),
negations ("my name is not Bob") and hedges ("I think I live in Oslo") give nothing.
Same text, same facts; nothing here is invented.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from solace.conversation.events import Draft
from solace.conversation.facts import set_fact
from solace.conversation.model import Fact, Scope

__all__ = ["STATEMENT_PATTERNS", "facts_from_statement", "statement_facts"]

#: A name: a first word (any case, not a common word) and up to two capitalised ones.
_NAME = (r"(?!(?:a|an|the|not|no|very|pretty|quite|hard|easy|long|short|really|just|"
         r"also|too|so|still|actually)\b)(?P<value>[A-Za-z][\w'-]*(?:\s+[A-Z][\w'-]*){0,2})")
_PHRASE = r"(?P<value>[^.!?;,\n]{2,60}?)"
_END = r"(?=\s*(?:[.!?;,\n]|\band\b|\bbut\b|\bbecause\b|\bso\b|\bwho\b|\bwhich\b|$))"
_RELATIVE = (
    r"(?P<who>dog|cat|pet|wife|husband|partner|son|daughter|boss|brother|sister|mother|"
    r"father|mom|mum|dad|friend|girlfriend|boyfriend|horse|bird|rabbit|hamster|fish|"
    r"parrot|puppy|kitten|baby|manager|doctor|cousin)"
)


def _key(*parts: str) -> str:
    return "_".join(re.sub(r"[^a-z0-9]+", "_", p.casefold()).strip("_") for p in parts if p)


#: ``(pattern, key maker)``: the key maker gets the match and returns the fact key.
STATEMENT_PATTERNS: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], str]], ...] = (
    (re.compile(rf"(?i:\bmy {_RELATIVE}'?s name is) {_NAME}{_END}"),
     lambda m: _key(m["who"], "name")),
    (re.compile(rf"(?i:\bmy {_RELATIVE} is (?:called|named)) {_NAME}{_END}"),
     lambda m: _key(m["who"], "name")),
    (re.compile(rf"(?i:\bi have an? {_RELATIVE} (?:called|named)) {_NAME}{_END}"),
     lambda m: _key(m["who"].casefold(), "name")),
    (re.compile(rf"(?i:\b(?:my name is|call me|i'm called|i am called)) {_NAME}{_END}"),
     lambda m: "name"),
    (re.compile(rf"\b(?:i'm|i am)\s+(?P<how>severely |very |deathly |mildly |highly )?"
                rf"allergic to {_PHRASE}{_END}", re.IGNORECASE),
     lambda m: "allergy"),
    (re.compile(rf"\bi live in {_PHRASE}{_END}", re.IGNORECASE), lambda m: "lives_in"),
    (re.compile(rf"\bi(?:'m| am) from {_PHRASE}{_END}", re.IGNORECASE), lambda m: "from"),
    (re.compile(rf"\bi work (?:at|for) {_PHRASE}{_END}", re.IGNORECASE), lambda m: "works_at"),
    (re.compile(rf"\bi work as an? {_PHRASE}{_END}", re.IGNORECASE), lambda m: "job"),
    (re.compile(rf"\bmy favou?rite (?P<what>[a-z]+(?: [a-z]+)?) is {_PHRASE}{_END}",
                re.IGNORECASE),
     lambda m: _key("favourite", m["what"])),
    (re.compile(rf"\bmy birthday is (?:on )?{_PHRASE}{_END}", re.IGNORECASE),
     lambda m: "birthday"),
    (re.compile(r"\bi(?:'m| am) (?P<value>\d{1,3}) years old\b", re.IGNORECASE),
     lambda m: "age"),
)

_HEDGE = re.compile(r"\b(i think|maybe|perhaps|probably|if|would|what if|suppose|not sure)\b",
                    re.IGNORECASE)
_NEGATION = re.compile(r"^\s*(not|no longer|never)\b", re.IGNORECASE)
_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n+")


def facts_from_statement(text: str) -> dict[str, str]:
    """The durable facts the user states in ``text``, by key (later ones win).

    Args:
        text: one user message.

    Returns:
        ``{key: value}``; empty for questions, negations, hedged statements and
        anything the patterns do not cover. Values are the user's words, trimmed;
        an allergy's severity is kept (``"peanuts (severe)"``).
    """
    found: dict[str, str] = {}
    for sentence in _SENTENCES.split(text):
        sentence = sentence.strip()
        if not sentence or sentence.endswith("?") or _HEDGE.search(sentence):
            continue
        for pattern, key_of in STATEMENT_PATTERNS:
            for match in pattern.finditer(sentence):
                value = " ".join(match["value"].split()).strip(" '\"")
                if not value or _NEGATION.match(value):
                    continue
                if key_of(match) == "allergy" and match["how"]:
                    value = f"{value} ({_severity(match['how'])})"
                found[key_of(match)] = value
    return found


def _severity(how: str) -> str:
    how = how.strip().casefold()
    return {"severely": "severe", "deathly": "severe", "very": "severe",
            "highly": "severe", "mildly": "mild"}.get(how, how)


def statement_facts(scope: Scope, text: str, known: Mapping[str, Fact]) -> list[Draft]:
    """The ``$set`` events for the facts ``text`` states that ``known`` lacks or holds
    with another value (restating a fact writes nothing)."""
    return [
        set_fact(scope, key, value)
        for key, value in sorted(facts_from_statement(text).items())
        if key not in known or known[key].value != value
    ]
