"""Writing a merged cluster's kept clauses in fewer words, saying all they say.

Pure helpers of the deterministic merger (:mod:`solace.facts.merge`), applied after
it has dropped the clauses another clause restates. Three rules; none drops a
name, a number, a date, a negation or a relation word, and each drops only words
said twice (a shared frame, a repeated subject, a naming clause's "is" and the
value it repeats):

* **fold**: clauses about the same subject that state one value with different
  verbs share their frame: "Elif owns a VW Golf" / "Elif drives a VW Golf" ->
  "Elif owns and drives a VW Golf". The clauses must open with the same words and
  end with the same value, a noun phrase (it opens with a determiner, a number or a
  content word, never a preposition: "works in Paris" / "lives in Paris" stay two
  clauses, each with its relation), and what differs (the verbs) holds no name,
  number or date and no negation, so two values ("is 30" / "is 31 years old") or a
  negated and an affirmed verb are never folded into one sentence;
* **appose**: a clause naming what a value is to its subject ("Ana's favourite drink
  is oat latte") beside another clause of that subject ending in the same value
  ("Ana always orders oat latte") becomes an apposition to it: "Ana always orders
  oat latte, Ana's favourite drink". The naming clause must be "<owner>'s <one to
  three words> is|are <value>" with no negation, the value a noun phrase as for a
  fold, and the owner the other clause's subject;
* **elide**: a subject a clause repeats from the opening of the clause before it is
  stated once: "Alice lives in Paris; Alice works at Acme" -> "Alice lives in Paris;
  works at Acme" (the subject only, never its verb).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from solace.facts.restatement import NEGATION_RE
from solace.memory.lexical import content_words
from solace.models.entities import salient

__all__ = ["DETERMINERS", "appose_possessives", "elide_subjects", "fold_shared_frames"]

#: Clause openings that are not an elided subject's verb ("the office ...", "his ...").
DETERMINERS = frozenset("the a an this that these those his her their its our my your".split())
_MAX_VERB_WORDS = 3  # a fold joins verbs ("looks after"), never whole clauses
# "<owner>'s <noun, one to three words> is|are <value>": what the value is to its owner.
_NAMING_RE = re.compile(
    r"^(?P<owner>\S+(?:'s|\u2019s))\s+(?P<noun>[\w-]+(?:\s+[\w-]+){0,2}?)\s+(?:is|are)\s+"
    r"(?P<value>.+)$")


@dataclass(slots=True)
class _Frame:
    """Clauses folded into one: shared opening and value, the differing middles."""

    who: str
    words: list[str]  # the first clause's words (the shared parts are taken from it)
    prefix: int = 0
    suffix: int = 0
    middles: list[list[str]] = field(default_factory=list)

    def text(self) -> str:
        if not self.middles:
            return " ".join(self.words)
        joined = [" ".join(m) for m in self.middles]
        verbs = joined[0] if len(joined) == 1 else ", ".join(joined[:-1]) + " and " + joined[-1]
        head = self.words[: self.prefix]
        tail = self.words[len(self.words) - self.suffix :]
        return " ".join([*head, verbs, *tail])


def _same(a: Sequence[str], b: Sequence[str]) -> bool:
    return [w.casefold() for w in a] == [w.casefold() for w in b]


def _foldable_middle(words: Sequence[str]) -> bool:
    """A differing part that may be folded: a verb's few words (one to three), no
    name/number/date, no negation."""
    if not words or len(words) > _MAX_VERB_WORDS:
        return False
    text = " ".join(words)
    found = salient(text)
    return not (found.names or found.numbers or found.dates or NEGATION_RE.search(text))


def _value_phrase(words: Sequence[str]) -> bool:
    """A shared ending that is a noun phrase holding a content word (not "in Paris")."""
    if not words or not content_words(" ".join(words)):
        return False
    first = words[0].casefold()
    return first in DETERMINERS or bool(content_words(first)) or bool(salient(first).numbers)


def _frame(a: Sequence[str], b: Sequence[str]) -> tuple[int, int] | None:
    """The longest shared opening and ending of two clauses' words, if they fold."""
    limit = min(len(a), len(b)) - 1  # each keeps at least one word of its own
    p = 0
    while p < limit and a[p].casefold() == b[p].casefold():
        p += 1
    s = 0
    while p + s < limit and a[-1 - s].casefold() == b[-1 - s].casefold():
        s += 1
    if not p or not s or not _value_phrase(a[len(a) - s :]):
        return None
    if not (_foldable_middle(a[p : len(a) - s]) and _foldable_middle(b[p : len(b) - s])):
        return None
    return p, s


def fold_shared_frames(clauses: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """Fold clauses that state one value of one subject with different verbs.

    Args:
        clauses: the kept clauses, in order, as ``(text, who)``: who is the
            clause's subject (:func:`solace.facts.subjects.subject`, or inherited);
            clauses of two subjects are never folded.

    Returns:
        The ``(text, who)`` clauses, a folded group written once at its first clause's place as
        "<opening> <verb>, <verb> and <verb> <value>". The shared words are taken
        from the first clause; every word of every clause is kept once or shared
        (compared casefolded). Deterministic; unfoldable clauses pass unchanged.
    """
    frames: list[_Frame] = []
    for text, who in clauses:
        words = text.split()
        placed = False
        for frame in frames:
            if frame.who != who:
                continue
            if frame.middles:
                p, s = frame.prefix, frame.suffix
                if (len(words) > p + s and _same(words[:p], frame.words[:p])
                        and _same(words[len(words) - s :], frame.words[len(frame.words) - s :])
                        and _foldable_middle(words[p : len(words) - s])
                        and _frame(frame.words, words) is not None):
                    frame.middles.append(words[p : len(words) - s])
                    placed = True
            elif (found := _frame(frame.words, words)) is not None:
                frame.prefix, frame.suffix = found
                p, s = found
                frame.middles = [frame.words[p : len(frame.words) - s], words[p : len(words) - s]]
                placed = True
            if placed:
                break
        if not placed:
            frames.append(_Frame(who, words))
    return [(frame.text(), frame.who) for frame in frames]


def _naming(text: str) -> tuple[str, list[str]] | None:
    """``("<owner>'s <noun>", value words)`` of a naming clause, or None."""
    m = _NAMING_RE.match(text)
    if m is None or NEGATION_RE.search(text) or salient(m.group("noun")).names:
        return None
    value = m.group("value").split()
    return (f"{m.group('owner')} {m.group('noun')}", value) if _value_phrase(value) else None


def appose_possessives(clauses: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """Write a naming clause as an apposition to a clause of its subject with its value.

    Args:
        clauses: the kept clauses, in order, as ``(text, who)``; a naming clause
            joins only a clause of the same (non-empty) subject.

    Returns:
        The ``(text, who)`` clauses, each naming clause ("Ana's favourite drink is oat latte") that
        has a partner (the first other clause of its subject ending in the same value
        words, casefolded, with words of its own before them, and not itself a
        naming clause) removed and its "<owner>'s <noun>" appended to the partner
        after a comma. Every word of both is kept except the naming clause's "is"
        and its repeated value. Deterministic.
    """
    out = [text for text, _who in clauses]
    used: set[int] = set()
    for i, (text, who) in enumerate(clauses):
        naming = _naming(text) if who else None
        if naming is None:
            continue
        name, value = naming
        for j, (other, other_who) in enumerate(clauses):
            words = other.split()
            if (j == i or j in used or i in used or other_who != who or _naming(other)
                    or len(words) <= len(value)
                    or not _same(words[len(words) - len(value):], value)):
                continue
            out[j] = f"{other}, {name}"
            out[i] = ""
            used.update((i, j))
            break
    return [(text, who) for text, (_t, who) in zip(out, clauses, strict=True) if text]


def elide_subjects(clauses: Sequence[tuple[str, str]]) -> list[str]:
    """State a subject once: drop a clause's opening subject when the clause before
    it opens with the same one.

    Args:
        clauses: ``(text, who)`` pairs in order; who is the clause's subject
            (casefolded), "" when unknown (such a clause is never elided).

    Returns:
        The texts, a clause whose first words are its subject's words (or "the"
        and them), repeated at the opening of the clause before it, without those
        words: "Alice lives in Paris; Alice works at Acme" -> "Alice lives in Paris;
        works at Acme". Only the subject: the verb and what follows stay ("Caroline
        attended an LGBTQ group; Caroline attended a pride parade" keeps "attended
        a pride parade"), and at least two words of every clause remain.
    """
    out = [text for text, _who in clauses[:1]]
    for (prev, _p), (text, who) in zip(clauses, clauses[1:], strict=False):
        a, b = prev.split(), text.split()
        n = _subject_words(b, who)
        if n and len(b) - n >= 2 and _same(a[:n], b[:n]):
            out.append(" ".join(b[n:]))
        else:
            out.append(text)
    return out


def _subject_words(words: Sequence[str], who: str) -> int:
    """How many opening words of a clause are its subject ``who`` (0 if they are not)."""
    if not who:
        return 0
    target = who.split()
    for skip in (0, 1):
        if skip and words[:1] and words[0].casefold() != "the":
            break
        n = skip + len(target)
        if [w.casefold() for w in words[skip:n]] == target:
            return n
    return 0
