"""First and second person resolved to the people they mean.

A compressed record is read out of its conversation: "I went" no longer says who
went, and "your idea" no longer says whose. So the compressed forms name them:
"Caroline: I went ..." becomes "Caroline went ...", and "you" becomes the other
party of a two-person conversation. Verbs are made to agree ("I have" -> "Caroline
has", "are you" -> "is Melanie"). It is a small rule set over chat English, not a
parser; what it cannot place ("we", a generic "you" in a group) is left as written.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

__all__ = ["resolve_pronouns"]

# Present-tense verbs common in chat that take an -s after "she"/"he".
_VERBS = frozenset(
    """admire adore agree appreciate believe bet cherish consider cook care doubt draw
    dream enjoy feel find forget get go guess hate have hear hope imagine keep know
    learn like listen live look love make mean miss need notice owe paint plan play
    prefer read recommend remember run say see seem spend struggle take teach tend think
    treasure try understand use value volunteer want watch wish wonder work write""".split()
)
_ADVERBS = r"(?:\s+(?:really|also|just|still|always|never|usually|often|sometimes|totally|" \
    r"definitely|actually|truly|absolutely|honestly|even|only|already|kinda|so|def))*"
_PARTICIPLES = frozenset("been gone done had seen got known made taken never already".split())


def _third_person(verb: str) -> str:
    low = verb.casefold()
    if low == "have":
        out = "has"
    elif low.endswith(("s", "sh", "ch", "x", "z", "o")):
        out = low + "es"
    elif low.endswith("y") and low[-2:-1] not in "aeiou":
        out = low[:-1] + "ies"
    else:
        out = low + "s"
    return out.capitalize() if verb[0].isupper() else out


# (pattern, replacement maker, whether the pronoun it replaces is the subject)
Rule = tuple[re.Pattern[str], Callable[[re.Match[str], str], str], bool]


def _cap(m: re.Match[str], text: str) -> str:
    return text[0].upper() + text[1:] if m.group()[0].isupper() else text


def _build_rules(pronoun: str) -> list[Rule]:
    """Substitution rules for one person (``"I"`` or ``"you"``), in application order.

    Each rule maps a match and the person's name to the replacement. Patterns are
    compiled once; names only enter through the replacement.
    """
    if pronoun == "I":
        subj, obj, poss, poss_pron, be_now, be_past = "I", "me", "my", "mine", "am", "was"
        reflexive = "myself"
    else:
        subj, obj, poss, poss_pron = "you", "you", "your", "yours"
        reflexive = "yourself|yourselves"
        be_now, be_past = "are", "were"
    inversions = {be_now: "is", "have": "has", "do": "does", be_past: "was",
                  "aren't": "isn't", "haven't": "hasn't", "don't": "doesn't"}  # fmt: skip
    modals = r"did|can|could|would|will|should|shall|didn't|can't|couldn't|won't|wouldn't|" \
        r"may|might|must"

    def compile_(pattern: str) -> re.Pattern[str]:
        return re.compile(pattern, re.IGNORECASE)

    def contracted_d(m: re.Match[str], name: str) -> str:
        following = (m.group(2) or "").casefold()
        return f"{name} {'had' if following in _PARTICIPLES else 'would'}{m.group(1) or ''}"

    def verb(m: re.Match[str], name: str) -> str:
        word = m.group(2)
        return f"{name}{m.group(1)} " + (
            _third_person(word) if word.casefold() in _VERBS else word
        )

    alternatives = "|".join(map(re.escape, inversions))
    subject: list[tuple[re.Pattern[str], Callable[[re.Match[str], str], str]]] = [
        (
            compile_(rf"\b({alternatives})\s+{subj}\b"),
            lambda m, name: _cap(m, f"{inversions[m.group(1).casefold()]} {name}"),
        ),
        (compile_(rf"\b({modals})\s+{subj}\b"), lambda m, name: f"{m.group(1)} {name}"),
        (compile_(rf"\b{subj}'m\b|\b{subj}'re\b|\b{subj}\s+{be_now}\b"),
         lambda m, name: f"{name} is"),
        (compile_(rf"\b{subj}\s+(?:{be_now}n't|aren't)\b"), lambda m, name: f"{name} isn't"),
        (compile_(rf"\b{subj}\s+{be_past}\b"), lambda m, name: f"{name} was"),
        (compile_(rf"\b{subj}\s+weren't\b"), lambda m, name: f"{name} wasn't"),
        (compile_(rf"\b{subj}'ve\b|\b{subj}\s+have\b"), lambda m, name: f"{name} has"),
        (compile_(rf"\b{subj}\s+haven't\b"), lambda m, name: f"{name} hasn't"),
        (compile_(rf"\b{subj}'d(\s+(\w+))?"), contracted_d),
        (compile_(rf"\b{subj}'ll\b"), lambda m, name: f"{name} will"),
        (compile_(rf"\b{subj}\s+don't\b"), lambda m, name: f"{name} doesn't"),
        (compile_(rf"\b{subj}\s+do\s+not\b"), lambda m, name: f"{name} does not"),
        (compile_(rf"\b{subj}\s+do\b"), lambda m, name: f"{name} does"),
        (compile_(rf"\b{subj}({_ADVERBS})\s+([a-z]+)\b"), verb),
    ]
    other: list[tuple[re.Pattern[str], Callable[[re.Match[str], str], str]]] = [
        # "express yourself" is usually generic; "themself" keeps it true and readable
        (compile_(rf"\b(?:{reflexive})\b"), lambda m, name: "themself"),
        (compile_(rf"\b{poss_pron}\b"), lambda m, name: f"{name}'s"),
        (compile_(rf"\b{poss}\b"), lambda m, name: f"{name}'s"),
        (compile_(rf"\b{obj}\b"), lambda m, name: name),
    ]
    last = (compile_(rf"\b{subj}\b"), lambda m, name: name)  # a lone "I": a subject
    return [(p, f, True) for p, f in subject] + [(p, f, False) for p, f in other] + [
        (*last, True)
    ]


_FIRST = _build_rules("I")
_SECOND = _build_rules("you")
_FILLERS = (
    (re.compile(r",\s*you know\s*\?", re.IGNORECASE), "."),
    (re.compile(r",\s*you know\b", re.IGNORECASE), ""),
    (re.compile(r"^\s*you know,\s*", re.IGNORECASE), ""),
)
_THANK_RE = re.compile(r"\b(thank)\s+you\b", re.IGNORECASE)
_PLACEHOLDER = "\u0001"


def _apply(make: Callable[[re.Match[str], str], str], name: str, m: re.Match[str]) -> str:
    return make(m, name)


def resolve_pronouns(text: str, speaker: str, addressee: str = "") -> tuple[str, bool]:
    """Replace "I/me/my" with ``speaker`` and "you/your" with ``addressee``.

    Args:
        text: one sentence or utterance by ``speaker``.
        speaker: the speaker's name; empty leaves first person as written.
        addressee: who "you" means; empty leaves second person as written.

    Returns:
        ``(resolved, named)``: the rewritten text (verbs agreeing, "thank you" and
        the filler "you know" left out of the rewrite) and whether a first-person
        subject was replaced by ``speaker`` (then the text says who is speaking).
    """
    text = text.replace("\u2019", "'")
    for pattern, replacement in _FILLERS:
        text = pattern.sub(replacement, text)
    named = False
    if speaker:
        for pattern, make, is_subject in _FIRST:
            text, count = pattern.subn(functools.partial(_apply, make, speaker), text)
            named = named or (is_subject and count > 0)
    if addressee and _PLACEHOLDER not in text:
        text = _THANK_RE.sub(lambda m: m.group(1) + _PLACEHOLDER, text)
        for pattern, make, _ in _SECOND:
            text = pattern.sub(functools.partial(_apply, make, addressee), text)
        text = text.replace(_PLACEHOLDER, " you")
    return text, named
