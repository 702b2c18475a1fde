"""Inputs of the fact-memory benchmark: templated update sequences, the real LoCoMo
ones (locators only), the restatement stream and the compaction corpus.

Pure and deterministic (seeded ``random.Random``); no fact memory, no models.

Templated sequences. Twelve subjects (residence, job, employer, phone number,
favourite colour, favourite food, partner, car, a deadline date, a count, a weekly
meeting day, a favourite drink), each with three or four third-person phrasings
(for ``remember``) and first-person phrasings of an old and of a new value (for
``extract_turn``: "I live in Lisbon." then "Actually I moved to Berlin."). A
sequence picks a person, an old and a new value, a phrasing for each (usually
different ones), a gap of 1-90 days, and 0-3 unrelated facts in between. The
phrasings were written before any run and are not adjusted to the results.

Real sequences (``benchmarks/data/facts_updates_locomo.jsonl``): a LoCoMo speaker's
fact that changes between two observations (LoCoMo's own third-person session
observations, each with the ``dia_id`` of its evidence turn). The file holds only
locators (sample id, session, speaker, index, dia_id) and the value keys; the text
is read from the dataset. Which sequences were added when, and the labelling rules:
``facts_bench.py``'s docstring, section 2.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "DISTRACTORS",
    "SUBJECTS",
    "CorpusFact",
    "RealSequence",
    "check_phrasings",
    "Subject",
    "TemplatedSequence",
    "compaction_corpus",
    "compaction_facts",
    "load_real",
    "restatement_stream",
    "templated_sequences",
]

MAX_BETWEEN = 30  # a real sequence's in-between observations, at most

PEOPLE = ("Ana", "Bruno", "Chloe", "Dmitri", "Elif", "Farah", "Goran", "Hana", "Ivo",
          "Jasmin", "Kenji", "Lucia", "Marek", "Nadia", "Omar")


@dataclass(frozen=True, slots=True)
class Subject:
    """One kind of fact that changes: phrasings and the values it takes.

    Templates use ``{n}`` (the person), ``{v}`` (the value) and ``{t}`` (the thing,
    for subjects that have one, e.g. which report is due).
    """

    name: str
    question: str
    values: tuple[str, ...]
    remember: tuple[str, ...]
    said_old: tuple[str, ...]
    said_new: tuple[str, ...]
    things: tuple[str, ...] = ("",)


SUBJECTS: tuple[Subject, ...] = (
    Subject("residence", "Where does {n} live?",
            ("Lisbon", "Berlin", "Oslo", "Denver", "Osaka", "Toronto", "Madrid", "Nairobi"),
            ("{n} lives in {v}", "{n} is based in {v}", "{n}'s home is in {v}",
             "{n} has moved to {v}"),
            ("I live in {v}.", "I'm based in {v}.", "Home for me is {v}."),
            ("Actually I moved to {v}.", "I live in {v} now.",
             "We relocated to {v} last month.")),
    Subject("job", "What is {n}'s job?",
            ("nurse", "teacher", "architect", "pilot", "accountant", "chef", "electrician"),
            ("{n} works as a {v}", "{n} is a {v}", "{n}'s job is {v}",
             "{n} is employed as a {v}"),
            ("I work as a {v}.", "I'm a {v}."),
            ("I'm a {v} now.", "Actually I work as a {v} these days.",
             "I changed careers, I'm now a {v}.")),
    Subject("employer", "Which company does {n} work for?",
            ("Siemens", "Bosch", "Airbus", "Spotify", "Nestle", "Philips", "Zalando"),
            ("{n} works at {v}", "{n} is employed by {v}", "{n}'s employer is {v}",
             "{n} joined {v}"),
            ("I work at {v}.", "I'm employed by {v}."),
            ("I just started a new job at {v}.", "Actually I work at {v} now.",
             "I left my old company and joined {v}.")),
    Subject("phone", "What is {n}'s phone number?",
            ("555-0134", "555-0199", "555-0172", "555-0118", "555-0156", "555-0163"),
            ("{n}'s phone number is {v}", "{n} can be reached at {v}",
             "{n}'s mobile number is {v}"),
            ("My phone number is {v}.", "You can reach me at {v}."),
            ("My new number is {v}.", "Actually my phone number is {v} now.",
             "I changed my number, it's {v}.")),
    Subject("colour", "What is {n}'s favourite colour?",
            ("green", "blue", "red", "yellow", "purple", "orange"),
            ("{n}'s favourite colour is {v}", "{n} likes {v} best of all colours",
             "{n} prefers the colour {v}"),
            ("My favourite colour is {v}.", "I love the colour {v}."),
            ("Actually my favourite colour is {v} now.", "These days my favourite colour "
             "is {v}.", "I've gone off my old favourite colour, it's {v} now.")),
    Subject("food", "What is {n}'s favourite food?",
            ("sushi", "lasagna", "ramen", "tacos", "paella", "curry"),
            ("{n}'s favourite food is {v}", "{n} loves {v} more than any other dish",
             "{n}'s go-to meal is {v}"),
            ("My favourite food is {v}.", "I could eat {v} every day."),
            ("My favourite food is {v} now.", "Actually these days I like {v} best.",
             "I've switched, my favourite dish is {v} now.")),
    Subject("partner", "Who is {n}'s partner?",
            ("Sam", "Maya", "Leo", "Priya", "Tomas", "Ines"),
            ("{n}'s partner is {v}", "{n} is in a relationship with {v}",
             "{n}'s partner is named {v}"),
            ("My partner is called {v}.", "I'm dating {v}."),
            ("I'm with {v} now.", "Actually my partner is {v} these days.",
             "I broke up with my ex and now I'm dating {v}.")),
    Subject("car", "What car does {n} drive?",
            ("Toyota Corolla", "Honda Civic", "Tesla Model 3", "VW Golf", "Ford Focus",
             "Mazda CX-5"),
            ("{n} drives a {v}", "{n}'s car is a {v}", "{n} owns a {v}"),
            ("I drive a {v}.", "My car is a {v}."),
            ("I sold my old car and bought a {v}.", "My car is a {v} now.",
             "I drive a {v} these days.")),
    Subject("deadline", "When is {n}'s {t} due?",
            ("14 March 2027", "2 April 2027", "30 June 2027", "15 September 2027",
             "1 December 2027"),
            ("{n}'s {t} is due on {v}", "The deadline for {n}'s {t} is {v}",
             "{n} must submit the {t} by {v}"),
            ("My {t} is due on {v}.", "The deadline for my {t} is {v}."),
            ("The deadline for my {t} moved to {v}.", "Actually my {t} is due on {v} now.",
             "They extended my {t} deadline to {v}."),
            ("tax report", "grant proposal", "thesis draft")),
    Subject("count", "How many cats does {n} have?",
            ("two", "three", "four", "five"),
            ("{n} has {v} cats", "{n} owns {v} cats", "{n} looks after {v} cats at home"),
            ("I have {v} cats.", "We have {v} cats at home."),
            ("We adopted another one, so now I have {v} cats.", "I have {v} cats now.",
             "Actually we're up to {v} cats.")),
    Subject("meeting", "When is {n}'s weekly team meeting?",
            ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday"),
            ("{n}'s weekly team meeting is on {v}", "{n} meets the team every {v}",
             "{n}'s team meets on {v} each week"),
            ("My weekly team meeting is on {v}.", "We meet as a team every {v}."),
            ("Our team meeting moved to {v}.", "Actually the weekly meeting is on {v} now.",
             "We switched the team meeting to {v}.")),
    Subject("drink", "What does {n} like to drink?",
            ("espresso", "green tea", "matcha", "chai", "oat latte"),
            ("{n}'s favourite drink is {v}", "{n} prefers {v}", "{n} always orders {v}"),
            ("My favourite drink is {v}.", "I always order {v}."),
            ("I drink {v} now.", "Actually my favourite drink is {v} these days.",
             "I've switched to {v}.")),
)

#: Unrelated facts written between the old and the new value: (remembered, said).
DISTRACTORS: tuple[tuple[str, str], ...] = (
    ("{n} enjoys hiking on weekends", "I enjoy hiking on weekends."),
    ("{n} is allergic to peanuts", "I'm allergic to peanuts."),
    ("{n} has a brother named Oskar", "My brother is named Oskar."),
    ("{n} plays the cello", "I play the cello."),
    ("{n} is learning Japanese", "I'm learning Japanese."),
    ("{n} volunteers at the animal shelter", "I volunteer at the animal shelter."),
)


@dataclass(frozen=True, slots=True)
class TemplatedSequence:
    """One templated knowledge update: old value, then (days later) the new one."""

    seq_id: str
    subject: str
    person: str
    question: str
    old_value: str
    new_value: str
    old_remember: str
    new_remember: str
    old_said: str
    new_said: str
    gap_days: float
    distractors: tuple[tuple[str, str], ...] = field(default=())


def templated_sequences(per_subject: int, seed: int) -> list[TemplatedSequence]:
    """``per_subject`` sequences of each subject, deterministic for ``seed``."""
    rng = random.Random(seed)
    out = []
    for subject in SUBJECTS:
        for i in range(per_subject):
            person = PEOPLE[(i + rng.randrange(len(PEOPLE))) % len(PEOPLE)]
            old, new = rng.sample(subject.values, 2)
            thing = rng.choice(subject.things)
            r_old = rng.randrange(len(subject.remember))
            r_new = (r_old + rng.randrange(1, len(subject.remember))) % len(subject.remember) \
                if rng.random() < 0.75 else r_old
            fill = {"n": person, "t": thing}
            n_distract = rng.randrange(4)
            distract = tuple((a.format(**fill), b.format(**fill))
                             for a, b in rng.sample(DISTRACTORS, n_distract))
            out.append(TemplatedSequence(
                f"{subject.name}-{i}", subject.name, person, subject.question.format(**fill),
                old, new,
                subject.remember[r_old].format(v=old, **fill),
                subject.remember[r_new].format(v=new, **fill),
                rng.choice(subject.said_old).format(v=old, **fill),
                rng.choice(subject.said_new).format(v=new, **fill),
                float(rng.randint(1, 90)), distract))
    return out


@dataclass(frozen=True, slots=True)
class RealSequence:
    """One real LoCoMo change: both observations' text, turn text and times."""

    seq_id: str
    split: str
    speaker: str
    question: str
    old_text: str
    new_text: str
    old_turn: str
    new_turn: str
    old_at: float
    new_at: float
    old_keys: tuple[str, ...]
    new_keys: tuple[str, ...]
    change: str
    between: tuple[tuple[str, str, float], ...] = ()  # (observation, turn text, time)


def load_real(locators_path: Path, data_path: Path) -> list[RealSequence]:
    """The real sequences, text read from the LoCoMo file at ``data_path``.

    Conversations 0-4 of the file are the tuning split, 5-9 the test split.

    Raises:
        ValueError: a locator names an observation the file lacks, or its dia_id
            does not match the observation's evidence.
    """
    from solace.locomo import load_locomo

    raw = json.loads(data_path.read_text(encoding="utf-8"))
    convs = {c.sample_id: c for c in load_locomo(data_path)}
    index = {item["sample_id"]: i for i, item in enumerate(raw)}
    out = []
    for line in locators_path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        loc = json.loads(line)
        item = raw[index[loc["sample_id"]]]
        turns = {t.dia_id: t for t in convs[loc["sample_id"]].turns}
        texts, said, ats = [], [], []
        for part in ("old", "new"):
            where = loc[part]
            obs = item["observation"][f"session_{where['session']}_observation"]
            try:
                text, evidence = obs[loc["speaker"]][where["index"]]
            except (KeyError, IndexError):
                raise ValueError(f"{loc['id']}: no observation {where}") from None
            if where["dia_id"] not in str(evidence):
                raise ValueError(f"{loc['id']}: observation {where} cites {evidence}, "
                                 f"not {where['dia_id']}")
            turn = turns[where["dia_id"]]
            texts.append(text)
            said.append(turn.text)
            ats.append(turn.at.timestamp())
        split = "tuning" if index[loc["sample_id"]] < 5 else "test"
        between = _between(item, loc, turns, ats[0], ats[1])
        out.append(RealSequence(loc["id"], split, loc["speaker"], loc["question"], texts[0],
                                texts[1], said[0], said[1], ats[0], ats[1],
                                tuple(loc["old_keys"]), tuple(loc["new_keys"]), loc["change"],
                                between))
    return out


def _between(item: dict[str, Any], loc: dict[str, Any], turns: dict[str, Any], start: float,
             end: float, cap: int = MAX_BETWEEN) -> tuple[tuple[str, str, float], ...]:
    """The speaker's other observations whose evidence turn falls strictly between the
    old and the new one (the first ``cap``, in time order): what else they said."""
    found = []
    for n in range(loc["old"]["session"], loc["new"]["session"] + 1):
        obs = item["observation"].get(f"session_{n}_observation", {})
        for text, evidence in obs.get(loc["speaker"], []):
            ids = [d for d in re.findall(r"D\d+:\d+", str(evidence)) if d in turns]
            if not ids:
                continue
            turn = turns[ids[0]]
            at = turn.at.timestamp()
            if start < at < end:
                found.append((at, text, turn.text))
    found.sort(key=lambda x: x[0])
    return tuple((text, said, at) for at, text, said in found[:cap])


def _growth_facts() -> list[tuple[str, str, tuple[str, ...], tuple[str, ...]]]:
    """(key, subject, phrasings, values) of the stream's distinct facts: five people
    times the twelve subjects."""
    out = []
    for p, person in enumerate(PEOPLE[:5]):
        for subject in SUBJECTS:
            fill = {"n": person, "t": subject.things[p % len(subject.things)]}
            phrasings = tuple(r.replace("{n}", person).replace("{t}", fill["t"])
                              for r in subject.remember)
            out.append((f"{person}/{subject.name}", subject.name, phrasings, subject.values))
    return out


def restatement_stream(mentions: int, seed: int, *, start_facts: int = 30,
                       updates: int = 12) -> list[dict[str, Any]]:
    """A stream of ``mentions`` writes about one memory: mostly restatements (a known
    fact in a random phrasing), new facts introduced over time (``start_facts`` known
    at first, the other 30 spread evenly), and ``updates`` value changes late on.

    Each item: ``{"text", "key", "value", "kind": "new"|"restate"|"update",
    "distinct"}``
    where ``distinct`` is how many distinct current facts exist after it.
    """
    rng = random.Random(seed)
    facts = _growth_facts()
    rng.shuffle(facts)
    value = {key: rng.choice(values) for key, _s, _p, values in facts}
    pending = list(range(start_facts, len(facts)))
    span = mentions - start_facts
    new_at = {start_facts + round(span * (k + 1) / (len(pending) + 1)): i
              for k, i in enumerate(pending)}
    update_at = set(rng.sample([t for t in range(mentions // 2, mentions) if t not in new_at],
                               updates))
    known = list(range(start_facts))
    out: list[dict[str, Any]] = []
    for step in range(mentions):
        if step < start_facts:
            i, kind = step, "new"
        elif step in new_at:
            i, kind = new_at[step], "new"
            known.append(i)
        elif step in update_at:
            i, kind = rng.choice(known), "update"
            key, _s, _p, values = facts[i]
            value[key] = rng.choice([v for v in values if v != value[key]])
        else:
            i, kind = rng.choice(known), "restate"
        key, _s, phrasings, _v = facts[i]
        text = rng.choice(phrasings).format(v=value[key])
        out.append({"text": text, "key": key, "value": value[key], "kind": kind,
                    "distinct": len(known)})
    return out


@dataclass(frozen=True, slots=True)
class CorpusFact:
    """One distinct fact of the compaction corpus: its question, value and phrasings,
    and a later value of it stated in its first phrasing (for the update after)."""

    subject: str
    question: str
    value: str
    phrasings: tuple[str, ...]
    later_value: str = ""
    later: str = ""


def _compaction_ids(ids: int, seed: int, facts_per_id: int,
                    restatements: int) -> list[tuple[str, list[str], list[CorpusFact]]]:
    """(memory id, texts in write order, distinct facts) of each corpus id."""
    rng = random.Random(seed)
    out = []
    for i in range(ids):
        person = PEOPLE[i % len(PEOPLE)]
        subjects = rng.sample(SUBJECTS, facts_per_id)
        texts: list[str] = []
        facts: list[CorpusFact] = []
        for subject in subjects:
            v = rng.choice(subject.values)
            fill = {"n": person, "t": rng.choice(subject.things), "v": v}
            phrasings = tuple(p.format(**fill) for p in subject.remember[:restatements])
            texts.extend(phrasings)
            later = next(x for x in subject.values if x != v)  # no draw: the corpus stays
            facts.append(CorpusFact(subject.name, subject.question.format(**fill), v, phrasings,
                                    later, subject.remember[0].format(**{**fill, "v": later})))
        rng.shuffle(texts)
        out.append((f"compact-{i}", texts, facts))
    return out


def compaction_corpus(ids: int, seed: int, *, facts_per_id: int = 6,
                      restatements: int = 4) -> dict[str, list[str]]:
    """``ids`` memories, each ``facts_per_id`` distinct facts, each written in up to
    ``restatements`` different phrasings (a restatement corpus), in a shuffled order.

    Templated: the twelve :data:`SUBJECTS`' third-person phrasings (three or four
    each), one person per id, values drawn from each subject's list."""
    return {mid: texts for mid, texts, _f in _compaction_ids(ids, seed, facts_per_id,
                                                             restatements)}


def compaction_facts(ids: int, seed: int, *, facts_per_id: int = 6,
                     restatements: int = 4) -> dict[str, list[CorpusFact]]:
    """The distinct facts behind :func:`compaction_corpus` (same arguments, same ids):
    what each id's texts restate, for scoring recall and the one-phrasing floor."""
    return {mid: facts for mid, _t, facts in _compaction_ids(ids, seed, facts_per_id,
                                                             restatements)}


def check_phrasings(subjects: Sequence[Subject] = SUBJECTS) -> None:
    """Every phrasing names its value: a subject whose template drops ``{v}`` would make
    the "contains the newest value" check meaningless.

    Raises:
        ValueError: naming the subject and the template.
    """
    for s in subjects:
        for t in (*s.remember, *s.said_old, *s.said_new):
            if "{v}" not in t:
                raise ValueError(f"subject {s.name}: template {t!r} lacks {{v}}")
