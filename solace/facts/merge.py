"""The deterministic compactor: cluster facts, merge each cluster, keep every salient item.

Seed 004's compactor hands an id's live facts to the model and asks for fewer,
denser entries. Without a model (or when the model's proposal is refused) this
merger does the same work with rules: it groups facts that are about the same thing
and writes each group as one entry holding every *distinct clause* of the group,
dropping the clauses that merely restate another one.

Facts are grouped when one restates a clause of the other (so a lexical
restatement is merged even when its vector lands below the threshold), and groups
join a cluster whose centroid is at least ``threshold`` similar to theirs
(greedy-centroid, in input order) unless both state single-valued attributes and
not the same ones: an entry never holds two facts that a later update of one would
supersede together ("Marek's partner is Ines" / "Marek joined Nestle"). A clause
*restates* another when its key, the set of its content words (stemmed, with a few
synonyms of common fact verbs folded together, framing words such as "user" or
"mentioned" ignored, negation kept as a marker) plus its canonical numbers and
dates, equals or is contained in the other's key. Of equal keys the shortest clause
is kept. "Alice lives in Paris." / "The user, Alice, lives in Paris" / "Alice's home
is in Paris" have one key and become "Alice lives in Paris".

A clause also restates another when both state the same single-valued attribute
(:func:`solace.facts.subjects.attributes`: residence, employer, phone, partner, a
favourite, a deadline ...) of the same named subject, and everything the first says
apart from the attribute's phrasing (the value, any detail, every name/number/date,
its negation and relation words) is in the second: "Ana joined Siemens" / "Ana's
employer is Siemens". Of such clauses the most precise is kept (most names, numbers
and dates, then most detail words, then the newest). A different relation ("works
in Paris" / "lives in Paris"), another value, a negation or an extra detail is never
dropped.

Keys (and the clause splitting) are :mod:`solace.facts.restatement`'s: there a
favourite ("likes teal best of all colours") is keyed as "prefer" plus its kind and
a recurring weekday ("every Friday") as "week", so they meet "prefers the colour
teal" and "on Friday each week". The kept clauses of a cluster are then written
short (:mod:`solace.facts.fold`): clauses of one subject stating one value with
different verbs become one clause ("Elif owns and drives a VW Golf"), a clause
naming what a value is to its subject becomes an apposition to a clause of that
subject ending in the value ("Ana always orders oat latte, Ana's favourite drink"),
and a repeated leading subject is stated once. Each drops only words said twice.

Guarantee: every name, number and date of every input survives in the output (as
:func:`lost_salient` judges it, the same rule the safety check applies); a merged
entry that would lose one is replaced by its inputs, unchanged. Output order and
text depend only on the inputs, the vectors and the threshold.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from solace.facts.fold import (
    DETERMINERS,
    appose_possessives,
    elide_subjects,
    fold_shared_frames,
)
from solace.facts.restatement import EXACT, NEGATED, ORDER_WORDS, clauses, restatement_key
from solace.facts.salience import lost_salient
from solace.facts.subjects import attribute_phrasing, attributes, subject
from solace.models.entities import salient

__all__ = ["clauses", "lost_salient", "merge_deterministic", "restatement_key"]

@dataclass(frozen=True, slots=True)
class _Clause:
    text: str
    key: frozenset[str]
    order: tuple[str, ...]  # key words in first-occurrence order
    position: int  # global position, for stable order
    who: str = ""  # subject (solace.facts.subjects), inherited by an elided clause
    attributes: frozenset[str] = frozenset()  # single-valued attributes it states
    detail: frozenset[str] = frozenset()  # key without the attribute phrasing


def _who(text: str, previous: str) -> str:
    """Who a clause is about: its subject (:func:`solace.facts.subjects.subject`), or,
    for a clause that opens with a lowercase verb (its subject elided, "works at
    Acme"), the subject of the clause before it in the same fact."""
    found = subject(text)
    if found:
        return found
    first = text.split()[0] if text.split() else ""
    if previous and first[:1].islower() and first.casefold() not in DETERMINERS:
        return previous
    return ""


def _clause(text: str, position: int, previous: str) -> _Clause:
    key, order = restatement_key(text)
    found = attributes(text)
    detail = restatement_key(attribute_phrasing(text))[0] if found else key
    negation = key & {NEGATED}
    return _Clause(text, key, order, position, _who(text, previous), found, detail | negation)


def _same_order(small: _Clause, big: _Clause) -> bool:
    if not (small.key | big.key) & ORDER_WORDS:
        return True
    shared = [w for w in small.order if w in big.key]
    return shared == [w for w in big.order if w in small.key]


def _restates(small: _Clause, big: _Clause) -> bool:
    """True iff ``small`` says nothing ``big`` does not.

    Its key is contained in ``big``'s, both have the same relation words and
    negation ("works at Acme" does not restate "worked at Acme until 2020", "eats
    meat" does not restate "does not eat meat"), and order words keep their order.
    """
    return (
        small.key <= big.key and small.key & EXACT == big.key & EXACT and _same_order(small, big)
    )


def _preferred(a: _Clause, b: _Clause) -> bool:
    """Of two clauses with equal keys, the one kept: fewer words, then earlier."""
    return (len(a.text.split()), a.position) < (len(b.text.split()), b.position)


def _redundant(clause: _Clause, others: Iterable[_Clause]) -> bool:
    for other in others:
        if other is clause or not _restates(clause, other):
            continue
        if clause.key != other.key or _preferred(other, clause):
            return True
    return False


def _same_attribute(small: _Clause, big: _Clause) -> bool:
    """True iff ``big`` says what ``small`` says: the same single-valued attribute.

    Both about the same named subject, ``small``'s attributes (at least one) all
    stated by ``big``, the same negation and relation words once the attribute
    phrasing is set aside, a value besides the subject, every other word of
    ``small`` (the value and any detail) in ``big``, and every name, number and date
    of ``small`` kept by ``big``. "Ana joined Siemens" / "Ana's employer is Siemens";
    never "Ana works in Paris" / "Ana lives in Paris" (no shared attribute).
    """
    if not small.who or small.who != big.who or not small.attributes:
        return False
    if not small.attributes <= big.attributes:
        return False
    if small.detail & EXACT != big.detail & EXACT:
        return False
    value = small.detail - EXACT - set(small.who.split())
    if not value or not small.detail <= big.key | big.detail:
        return False
    return not lost_salient([small.text], [big.text])


def _precision(clause: _Clause) -> tuple[int, int, int]:
    """How precise a clause is: names/numbers/dates, then detail words, then newest."""
    found = salient(clause.text)
    items = len(found.names) + len(found.numbers) + len(found.dates)
    return items, len(clause.detail - EXACT), clause.position


def _drop_same_attribute(members: list[_Clause]) -> list[_Clause]:
    """``members`` without the clauses a more precise kept one restates by attribute.

    Greedy, most precise first (:func:`_precision`): a clause is kept unless an
    already kept clause states the same attribute of the same subject with all its
    words and items (:func:`_same_attribute`). So every dropped clause has a kept
    clause that says it. Input order is kept.
    """
    kept: list[_Clause] = []
    for clause in sorted(members, key=_precision, reverse=True):
        if not any(_same_attribute(clause, other) for other in kept):
            kept.append(clause)
    return sorted(kept, key=lambda c: c.position)


def _check_args(inputs: Sequence[str], vectors: np.ndarray, threshold: float) -> None:
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
        raise TypeError(f"threshold must be a number, got {threshold!r}")
    if not (math.isfinite(threshold) and 0.0 <= threshold <= 1.0):
        raise ValueError(f"threshold must be in [0, 1], got {threshold!r}")
    shape = getattr(vectors, "shape", None)
    if shape is None or len(shape) != 2 or shape[0] != len(inputs):
        raise ValueError(f"vectors must have shape ({len(inputs)}, dim), got {shape!r}")
    if not np.isfinite(vectors).all():
        raise ValueError("vectors hold a non-finite value")
    for i, text in enumerate(inputs):
        if not isinstance(text, str):
            raise TypeError(f"inputs[{i}] must be str, got {type(text).__name__}")


def _clusters(
    inputs: Sequence[str], vectors: np.ndarray, threshold: float, by_owner: list[list[_Clause]]
) -> list[list[int]]:
    """Groups of input indexes, each sorted, ordered by first member.

    Lexical restatements are grouped first (transitively). Then, group by group in
    input order, a group joins the existing cluster whose centroid is most similar
    to its own (earliest on a tie) when that cosine is at least ``threshold``, else
    opens a cluster: greedy-centroid, so a chain of pairwise-similar facts about
    different things does not become one cluster. A group and a cluster that both
    state single-valued attributes (:func:`_subjects`) join only if they state the
    same ones, so two facts a later update would replace separately ("Marek's
    partner is Ines" / "Marek joined Nestle") are never fused into one entry that
    an update of either would replace whole.
    """
    parent = list(range(len(inputs)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i in range(len(inputs)):
        for j in range(i + 1, len(inputs)):
            if find(i) != find(j) and _linked(by_owner[i], by_owner[j]):
                parent[max(find(i), find(j))] = min(find(i), find(j))
    lexical: dict[int, list[int]] = {}
    for i in range(len(inputs)):
        lexical.setdefault(find(i), []).append(i)

    rows = np.asarray(vectors, dtype=np.float64)
    clusters: list[list[int]] = []
    sums: list[np.ndarray] = []
    kinds: list[frozenset[tuple[str, str]]] = []
    for group in sorted(lexical.values(), key=lambda g: g[0]):
        total = rows[group].sum(axis=0)
        kind = _subjects(c for i in group for c in by_owner[i])
        best, best_cosine = -1, threshold
        for index, other in enumerate(sums):
            if kind and kinds[index] and kinds[index] != kind:
                continue
            cosine = _cosine(total, other)
            if cosine >= best_cosine and (best < 0 or cosine > best_cosine):
                best, best_cosine = index, cosine
        if best < 0:
            clusters.append(list(group))
            sums.append(total)
            kinds.append(kind)
        else:
            clusters[best].extend(group)
            sums[best] = sums[best] + total
            kinds[best] = kinds[best] | kind
    return sorted((sorted(c) for c in clusters), key=lambda c: c[0])


def _subjects(clauses: Iterable[_Clause]) -> frozenset[tuple[str, str]]:
    """The (subject, single-valued attribute) pairs the clauses state: what a later
    update of any of them replaces (:mod:`solace.facts.classify`'s same subject)."""
    return frozenset((c.who, attribute) for c in clauses for attribute in c.attributes)


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    norm = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(a @ b) / norm if norm > 0.0 else 0.0


def _linked(a: list[_Clause], b: list[_Clause]) -> bool:
    """Some clause of one restates a clause of the other (keys of >= 2 items, or the
    same attribute of the same subject)."""
    return any(
        (min(len(x.key), len(y.key)) >= 2 and (_restates(x, y) or _restates(y, x)))
        or _same_attribute(x, y)
        or _same_attribute(y, x)
        for x in a
        for y in b
    )


def merge_deterministic(
    inputs: Sequence[str], vectors: np.ndarray, *, threshold: float
) -> list[str]:
    """Cluster ``inputs`` and merge each cluster into one entry.

    Args:
        inputs: the facts, one text each.
        vectors: one L2-normalised row per input (cosine == inner product).
        threshold: cosine to a cluster's centroid at or above which a fact joins
            it (greedy-centroid, in input order, the most similar cluster first);
            lexical restatements join regardless.

    Returns:
        One entry per cluster, clusters in the order of their first input. A
        singleton passes unchanged; a cluster becomes its kept clauses joined by
        ``"; "`` in input order, a clause dropped only when another clause of the
        cluster restates it (its key is equal, the other being shorter or earlier,
        or a strict subset; or a kept, at least as precise clause states the same
        attribute of the same subject with all its words and items), clauses of
        one subject stating one value with different verbs folded into one
        (:func:`solace.facts.fold.fold_shared_frames`), a naming clause written as
        an apposition (:func:`solace.facts.fold.appose_possessives`), and a
        repeated leading subject stated once. Every
        name, number and date of every input survives (a cluster whose merge would
        lose one is emitted unchanged, input by input). Deterministic.

    Raises:
        ValueError: ``vectors`` is not ``(len(inputs), dim)`` or not finite, or
            ``threshold`` is outside [0, 1].
        TypeError: an input is not a str, or ``threshold`` is not a number.
    """
    _check_args(inputs, vectors, threshold)
    by_owner: list[list[_Clause]] = []
    position = 0
    for text in inputs:
        own: list[_Clause] = []
        for piece in clauses(text):
            own.append(_clause(piece, position, own[-1].who if own else ""))
            position += 1
        by_owner.append(own)
    out: list[str] = []
    for group in _clusters(inputs, vectors, threshold, by_owner):
        if len(group) == 1:
            out.append(inputs[group[0]])
            continue
        members = [c for i in group for c in by_owner[i]]
        kept = _drop_same_attribute([c for c in members if not _redundant(c, members)])
        written = appose_possessives(fold_shared_frames([(c.text, c.who) for c in kept]))
        entry = "; ".join(elide_subjects(written))
        sources = [inputs[i] for i in group]
        if entry and not lost_salient(sources, [entry]):
            out.append(entry)
        else:
            out.extend(sources)
    return out
