"""Read first, then classify: what a new fact is against an id's live facts.

Pure: vectors and texts in, a :class:`Decision` out. The four classes (seed 003's
discussion, issue 9 §4):

* **NOOP**: a restatement. Similarity at or above the store's
  ``deduplication_threshold`` (or the same words), no name, number or date the known
  fact lacks, and the same polarity. The known fact is confirmed instead.
* **UPDATE**: the same subject with another value, and the new fact is the newer
  one. Same subject means the same extractor slot; or the same person and the same
  single-valued attribute (residence, employment, phone, partner, a favourite ...:
  :mod:`solace.facts.subjects`), never two different ones; or a plan or an activity
  under way now stated as done (:mod:`solace.facts.progress`); or (for free text)
  similar enough (``update_similarity``) with most content words shared, and a
  replaced value: a name, number or date, a flipped negation, or a correction cue
  ("actually", "no longer", ...). A relative ("Ana's sister") is a subject of their
  own.
* **CONFLICT**: the same, but it cannot be ordered: the new fact is not newer than
  the known one (two values stated at the same moment, an older value arriving
  late). Both are kept and flagged.
* **ADD**: anything else.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from solace.facts.model import Candidate, Fact, WriteClass
from solace.facts.progress import fulfils
from solace.facts.subjects import attributes, predicate, subject
from solace.memory.lexical import terms
from solace.models.entities import salient

__all__ = ["Decision", "classify", "fact_similarity", "lexical_overlap", "normalised"]

_NEGATION = re.compile(r"\b(?:not|never|no longer|n't|don't|doesn't|isn't|won't|no)\b", re.I)
_CORRECTION = re.compile(
    r"\b(?:actually|now|no longer|anymore|any more|instead|changed|moved|switched|"
    r"new|became|has become|corrected?|updated?)\b", re.I)


@dataclass(frozen=True, slots=True)
class Decision:
    """The class, the reason in words, and the known fact it concerns (None for ADD)."""

    write_class: WriteClass
    reason: str
    target: Fact | None = None
    similarity: float = 0.0


def normalised(text: str) -> str:
    """Casefolded words only: two texts equal under this say the same thing."""
    return " ".join(re.findall(r"[0-9a-z]+", text.casefold()))


def lexical_overlap(query_terms: Sequence[str], fact_terms: Sequence[str]) -> float:
    """Share of the query's distinct stemmed content words found in the fact, in [0, 1]."""
    q = set(query_terms)
    return len(q & set(fact_terms)) / len(q) if q else 0.0


def fact_similarity(cosine: float, a_terms: Sequence[str], b_terms: Sequence[str],
                    lexical_weight: float) -> float:
    """Similarity of two texts: cosine blended with symmetric word overlap."""
    a, b = set(a_terms), set(b_terms)
    jaccard = len(a & b) / len(a | b) if a | b else 0.0
    return (1.0 - lexical_weight) * max(0.0, cosine) + lexical_weight * jaccard


def _single_valued_slot(slot: str, who: str) -> bool:
    """True iff the extractor's ``slot`` names one value at a time: any slot but a
    relative's, except who the partner is (``relationship:partner`` said of the speaker,
    "Rosa is dating Kai"; not "Rosa's wife is a nurse", a fact about the partner)."""
    if not slot.startswith("relationship:"):
        return True
    return slot == "relationship:partner" and "'s " not in who


def _values(text: str) -> frozenset[str]:
    s = salient(text)
    return s.names | s.numbers | s.dates


def _negated(text: str) -> bool:
    return _NEGATION.search(text) is not None


def classify(candidate: Candidate, vector: np.ndarray, live: Sequence[Fact],
             live_vectors: np.ndarray, *, as_of: float, dedup_threshold: float,
             update_similarity: float, lexical_weight: float) -> Decision:
    """Classify ``candidate`` against ``live`` (rows of ``live_vectors`` match ``live``;
    all vectors L2-normalised). ``as_of`` is when the candidate was stated.

    Deterministic: among equally similar facts the oldest (first in ``live``) wins.
    """
    if not live:
        return Decision(WriteClass.ADD, "no live fact yet")
    cand_terms = terms(candidate.text)
    cand_values = _values(candidate.text)
    cand_neg = _negated(candidate.text)
    cosines = live_vectors @ vector
    sims = [fact_similarity(float(c), cand_terms, terms(f.text), lexical_weight)
            for c, f in zip(cosines, live, strict=True)]
    order = sorted(range(len(live)), key=lambda i: (-sims[i], i))
    norm = normalised(candidate.text)
    for i in order:  # restatement first: the most similar fact that says it already
        fact, sim = live[i], sims[i]
        same_words = normalised(fact.text) == norm
        if same_words or (sim >= dedup_threshold and cand_values <= _values(fact.text)
                          and cand_neg == _negated(fact.text)
                          and not (candidate.slot and fact.slot and candidate.slot != fact.slot)):
            return Decision(WriteClass.NOOP, f"restates {fact.fact_id} (similarity {sim:.2f})",
                            fact, sim)
        if sim < dedup_threshold:
            break
    for i in order:
        fact, sim = live[i], sims[i]
        why = _same_subject_new_value(candidate, cand_terms, cand_values, cand_neg, fact, sim,
                                      update_similarity)
        if why is None:
            continue
        if as_of > fact.last_confirmed:
            return Decision(WriteClass.UPDATE, f"newer value for {fact.fact_id}: {why}",
                            fact, sim)
        return Decision(WriteClass.CONFLICT,
                        f"contradicts {fact.fact_id} ({why}) and is not newer", fact, sim)
    return Decision(WriteClass.ADD, "new: no live fact says this or about this",
                    None, sims[order[0]])


def _same_subject_new_value(candidate: Candidate, cand_terms: Sequence[str],
                            cand_values: frozenset[str], cand_neg: bool, fact: Fact,
                            sim: float, update_similarity: float) -> str | None:
    """Why ``candidate`` is a new value of ``fact``'s subject, or None if it is not.

    Never across two named subjects ("Dmitri's ..." does not replace "Chloe's ...",
    "Ana's sister ..." does not replace "Ana ..."). The same extractor slot is the
    same subject, except a relative's (``relationship:sister``: the sister is who the
    fact is about, and she has a residence, a job, children ... each its own; the
    partner's slot only when it says who the partner is). Otherwise: the same
    single-valued attribute (:func:`~solace.facts.subjects.attributes`) stated with
    other words, never two different ones ("works at Siemens" does not replace "works
    as a pilot", however alike the words); or the plan or activity under way it
    states, now done (:func:`~solace.facts.progress.fulfils`: "plans to submit X" ->
    "submitted X"); or similar text sharing most content words, one at least besides
    the subject's ("Dmitri joined Philips" shares only "Dmitri" with "Dmitri is an
    accountant"), with a *replaced* name, number or date (one the other lacks on both
    sides), a flipped negation, or a correction cue.
    """
    who, fact_who = subject(candidate.text), subject(fact.text)
    if who and fact_who and who != fact_who:
        return None
    if candidate.slot and candidate.slot == fact.slot and _single_valued_slot(candidate.slot, who):
        return f"same subject {candidate.slot!r}"
    a, b = set(cand_terms), set(terms(fact.text))
    cand_attributes = attributes(predicate(candidate.text))
    fact_attributes = attributes(predicate(fact.text))
    shared_attributes = cand_attributes & fact_attributes
    if shared_attributes and (who or fact_who) and a != b:
        return f"same subject, another {sorted(shared_attributes)[0]}"
    if cand_attributes and fact_attributes and not shared_attributes:
        return None  # an employer is not an occupation, however alike the words
    if (who or fact_who) and fulfils(candidate.text, fact.text):
        return "same subject, the plan or activity now done"
    if sim < update_similarity:
        return None
    if not a or not b or len(a & b) < 0.5 * min(len(a), len(b)):
        return None
    if not (a & b) - set(terms(who)) - set(terms(fact_who)):
        return None  # only the subject in common: who, not what
    fact_values = _values(fact.text)
    if cand_values - fact_values and fact_values - cand_values:
        return "same subject, another name, number or date"
    if cand_values > fact_values:
        return "same subject, stated more precisely"
    if cand_neg != _negated(fact.text):
        return "same subject, the opposite polarity"
    if (candidate.correction or _CORRECTION.search(candidate.text)) and a != b:
        return "same subject, stated as a correction"
    return None
