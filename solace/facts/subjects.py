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

from solace.facts.extract_patterns import REL_NORMAL, RELATIVES
from solace.memory.lexical import stem
from solace.models.entities import salient

__all__ = ["attribute_phrasing", "attributes", "predicate", "subject"]

#: Single-valued attributes and the phrasings that state them (casefolded text). A
#: phrasing never takes another attribute's words: "moved to" a date or a weekday is a
#: rescheduling, not a residence; "due to" is a cause, not a deadline; "joined a club"
#: is not an employer; "engaged in" is not a partner; "call at 5 pm" and "my lucky
#: number is 7" are not a phone number (a phone number has at least six digits).
_WHEN = (r"(?:\d|(?:next|last|this|tomorrow|today|tonight|(?:mon|tues|wednes|thurs|fri|satur|sun)"
         r"day|jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
         r"sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b)")
_PHONE_NUMBER = r"\+?\d[\d\s().-]{4,}\d"
#: Professions: "Ana is a nurse" states her occupation as "Ana works as a nurse" does. A
#: closed list, so "is a mother", "is a runner" or "is a big fan" state none; "student"
#: is left out (one can study and work as something at once).
_PROFESSIONS = (
    "accountant|actor|actress|analyst|architect|artist|attorney|baker|banker|barber|barista|"
    "biologist|butcher|carpenter|cashier|chef|chemist|cleaner|clerk|coach|consultant|cook|"
    "counsell?or|courier|dancer|dentist|designer|developer|diplomat|doctor|driver|economist|"
    "editor|electrician|engineer|farmer|firefighter|florist|gardener|hairdresser|illustrator|"
    "interpreter|janitor|journalist|judge|lawyer|lecturer|librarian|lifeguard|manager|"
    "mathematician|mechanic|midwife|musician|nurse|optician|painter|paralegal|paramedic|"
    "pharmacist|photographer|physician|physicist|physiotherapist|pilot|plumber|police officer|"
    "professor|programmer|psychologist|receptionist|reporter|researcher|sailor|salesperson|"
    "scientist|secretary|singer|social worker|soldier|surgeon|surveyor|tailor|teacher|"
    "technician|therapist|translator|tutor|vet|veterinarian|waiter|waitress|writer"
)
_ATTRIBUTES = {
    "residence": r"\b(?:lives?|lived|living|resides?|resided|based|moved|moving|relocat\w*)"
                 rf"\s+(?:in|to|at|near)\b(?!\s+{_WHEN})|\bhome\s+(?:is|was)\b|\baddress\b",
    "occupation": r"\b(?:works?|worked|working|employed)\s+as\b"
                  r"|\b(?:job|profession|occupation|career)\s+(?:is|was|as)\b"
                  r"|\b(?:is|was)\s+(?:now\s+)?an?\b(?=\s+(?:(?!(?:of|fan|for|with|the)\b)"
                  rf"[\w-]+\s+){{0,2}}?(?:{_PROFESSIONS})\b)",
    "employer": r"\b(?:works?|worked|working)\s+(?:at|for)\b|\bemployer\b"
                r"|\bemployed\s+(?:by|at)\b|\bhired\s+(?:by|at)\b|\bjob\s+(?:at|with)\b"
                r"|\bjoined\b(?!\s+(?:a|an|in|us|me|him|her|them|my|our|his|their)\b)",
    "phone": r"\b(?:phone|cell|mobile)\b"
             rf"|\bnumber\s+is\s+(?:now\s+)?(?={_PHONE_NUMBER})"
             r"|\b(?:reach(?:ed|able)?|call(?:ed)?|text(?:ed)?)\s+(?:\w+\s+)?(?:at|on)"
             rf"(?=\s+{_PHONE_NUMBER})",
    "email": r"\be-?mail\b",
    "partner": r"\b(?:partner|married|wife|husband|girlfriend|boyfriend|dating|spouse)\b"
               r"|\bengaged\b(?!\s+in\b)|\b(?:in\s+a\s+)?relationship\s+with\b",
    "car": r"\bdrives\b|\bcar\b",
    "age": r"\b\d+\s+years?\s+old\b|\baged?\b",
    "deadline": r"\b(?:deadline|due(?!\s+to\b)|renews|renewal|expires)\b"
                r"|\b(?:(?:must|has\s+to|have\s+to|needs?\s+to|should)\s+)?"
                r"(?:submit|hand\s+in|turn\s+in|file|deliver|finish)\b(?=.*\bby\b)",
}
_ATTRIBUTE_RES = {name: re.compile(pattern) for name, pattern in _ATTRIBUTES.items()}
# A favourite, the thing it is a favourite of in group "noun": "favourite colour", "likes
# X best of all colours", "loves X more than any other dish", "go-to meal".
_FAVOURITES = (
    re.compile(r"\bfavou?rite\s+(?P<noun>[a-z]+)"),
    re.compile(r"\b(?:likes?|loves?|prefers?|enjoys?)\b(?=.{1,40}?\b(?:best|most)\s+of\s+all\s+"
               r"[a-z]+)|\b(?:best|most)\s+of\s+all\s+(?P<noun>[a-z]+)"),
    re.compile(r"\b(?:likes?|loves?|prefers?|enjoys?)\b(?=.{1,40}?\bmore\s+than\s+any\s+other\s+"
               r"[a-z]+)|\bmore\s+than\s+any\s+other\s+(?P<noun>[a-z]+)"),
    re.compile(r"\bgo-to\s+(?P<noun>[a-z]+)"),
)
# Words for one kind of favourite.
_FAVOURITE_NOUNS = {"dish": "food", "meal": "food", "beverage": "drink", "color": "colour"}
_USER = re.compile(r"^\s*(?:the\s+)?user\b", re.IGNORECASE)


# "The deadline for Ana's thesis ...": a thing of a named owner, opening the text.
_POSSESSOR = re.compile(r"^\s*(?:the|a|an)\s+[\w\s-]{0,40}?\b(?:of|for)\s+(\w+)'s\b", re.I)


# "Ana's younger sister ...": a relative of the opening subject, who is then the subject.
_RELATIVE = re.compile(rf"'s\s+(?:(?:older|younger|little|big|eldest|youngest|twin|step|new|"
                       rf"old)\s+)?(?P<rel>{RELATIVES})\b", re.IGNORECASE)
# "Ana's partner is Sam", "Ana's wife is called Ines": naming the partner states Ana's
# partner (one at a time: subjects' "partner"), not a fact about the partner.
_PARTNER_NAMED = re.compile(r"\s+(?:is|was)\s+(?:(?:now|named|called)\s+)*[A-Z]|'s\s+name\b")
_ONE_PARTNER = frozenset(("partner", "wife", "husband", "girlfriend", "boyfriend", "fiance",
                          "fiancee", "spouse"))


def subject(text: str) -> str:
    """Who ``text`` is about: the name it opens with (casefolded), ``"user"`` for "The
    user ...", the owner named by an opening "The <thing> of/for <Name>'s ..." ("The
    deadline for Ana's thesis is ..." is about Ana), or ``""`` when it opens with
    anything else ("The office is in Porto").

    A relative of that subject is a subject of their own: "Ana's sister lives in Lima"
    is about ``"ana's sister"`` (never a residence of Ana's), except naming Ana's
    partner ("Ana's partner is Sam" is about Ana: who her partner is).
    """
    return _subject(text)[0]


def predicate(text: str) -> str:
    """What ``text`` says of its subject: the text after an opening relative ("Ana's
    wife works at Bosch" -> " works at Bosch", so the word "wife" states no partner),
    else ``text`` itself."""
    return _subject(text)[1]


def _subject(text: str) -> tuple[str, str]:
    text = text.replace("\u2019", "'")
    lowered = text.casefold().lstrip()
    found = ""
    if _USER.match(text):
        found = "user"
    else:
        names = salient(text).names
        opening = [n for n in names if lowered.startswith(n)]
        if opening:
            found = max(opening, key=len)
        else:
            owner = _POSSESSOR.match(text)
            return (owner.group(1).casefold() if owner and owner.group(1).casefold() in names
                    else ""), text
    user = _USER.match(text)
    rest = text.lstrip()[user.end() if found == "user" and user else len(found):]
    relative = _RELATIVE.match(rest)
    if relative is None:
        return found, text
    rel = relative["rel"].casefold()
    if rel in _ONE_PARTNER and _PARTNER_NAMED.match(rest, relative.end()):
        return found, text
    return f"{found}'s {REL_NORMAL.get(rel, rel)}", rest[relative.end():]


def attributes(text: str) -> frozenset[str]:
    """The single-valued attributes ``text`` states (``residence``, ``favourite:food``...)."""
    lowered = text.casefold().replace("\u2019", "'")
    found = {name for name, pattern in _ATTRIBUTE_RES.items() if pattern.search(lowered)}
    for pattern in _FAVOURITES:
        for m in pattern.finditer(lowered):
            if m.group("noun"):
                noun = stem(m.group("noun"))
                found.add(f"favourite:{_FAVOURITE_NOUNS.get(noun, noun)}")
    return frozenset(found)


def attribute_phrasing(text: str) -> str:
    """``text`` with the words that state its single-valued attributes blanked out.

    What is left is the subject, the value and any other detail: "Ana joined Siemens"
    and "Ana's employer is Siemens" leave "Ana Siemens" and "Ana's  Siemens". The
    phrasings are the ones :func:`attributes` recognises; a value is never part of
    one. Unchanged when ``text`` states no attribute (or casefolding changes its
    length, so positions would not line up).
    """
    lowered = text.casefold().replace("\u2019", "'")
    if len(lowered) != len(text):
        return text
    chars = list(text)
    patterns = (*_ATTRIBUTE_RES.values(), *_FAVOURITES)
    for pattern in patterns:
        for m in pattern.finditer(lowered):
            chars[m.start():m.end()] = " " * (m.end() - m.start())
    return "".join(chars)
