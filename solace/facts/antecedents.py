"""A sentence that opens with "he", "she" or "they" about the relative just named.

"My sister lives in Lima. She moved to Quito last year." says where the sister moved;
read alone, the second sentence names no one and the extractor drops it. Pure: the
pronoun is replaced by the relative ("my sister moved to Quito last year") only when
the sentence before names exactly one relative of the speaker ("my <relative>", the
extractor's :data:`~solace.facts.extract_patterns.RELATIVES`) and the pronoun fits
them (she: a sister, a mother ...; he: a brother, a father ...; they: parents,
children; either for a friend, a partner, a boss ...). Anything else is left as
written: a pronoun that cannot be placed states no fact.
"""

from __future__ import annotations

import re

from solace.facts.extract_patterns import RELATIVES

__all__ = ["relative_named", "with_antecedent"]

_MY_RELATIVE = re.compile(
    rf"\b(?:my|our)\s+(?P<phrase>(?:(?:older|younger|little|big|eldest|youngest|twin|step|best)"
    rf"\s+)?(?P<rel>{RELATIVES}))\b", re.IGNORECASE)
_SHE = frozenset("""wife daughter sister mother mom mum girlfriend fiancee grandma grandmother
    aunt niece""".split())
_HE = frozenset("""husband son brother father dad boyfriend fiance grandpa grandfather uncle
    nephew""".split())
_THEY = frozenset("kids children parents family crew".split())
_OPENING = re.compile(r"^(?P<pronoun>he|she|they)(?P<be>'s|'re|\s+(?=\w))", re.IGNORECASE)
_HAS = re.compile(r"\s*(?:been|got|gotten|had)\b", re.IGNORECASE)


def relative_named(sentence: str) -> str:
    """The one relative ``sentence`` names ("my younger sister"), or ``""`` when it names
    none or several different ones."""
    found = {m["phrase"].casefold() for m in _MY_RELATIVE.finditer(sentence)}
    return f"my {found.pop()}" if len(found) == 1 else ""


def _fits(pronoun: str, relative: str) -> bool:
    rel = relative.rsplit(" ", 1)[-1]
    if pronoun == "they":
        return rel in _THEY
    if rel in _THEY:
        return False
    return rel not in (_HE if pronoun == "she" else _SHE)


def with_antecedent(sentence: str, relative: str) -> str:
    """``sentence`` with an opening "he"/"she"/"they" replaced by ``relative`` (from
    :func:`relative_named` of the sentence before) when the pronoun fits them;
    otherwise ``sentence`` unchanged. "She's" becomes "my sister is" ("has" before
    "been"/"got")."""
    m = _OPENING.match(sentence.lstrip())
    if not relative or m is None or not _fits(m["pronoun"].casefold(), relative):
        return sentence
    rest = sentence.lstrip()[m.end():]
    be = m["be"].casefold()
    if be == "'s":
        be = " has" if _HAS.match(rest) else " is"
    elif be == "'re":
        be = " have" if _HAS.match(rest) else " are"
    else:
        be = " "
    return f"{relative}{be}{rest}"
