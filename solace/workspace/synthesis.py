"""MEMORY.md: curated long-term knowledge synthesised from the daily logs.

Pure and synchronous (run it through the offloader): daily documents, the human
layer of MEMORY.md and an embedding function in, the document out. Every daily
bullet, oldest first, is classified against what MEMORY.md already holds with fact
memory's own read-first-then-classify step (:func:`solace.facts.classify.classify`):

* NOOP, a restatement: dropped;
* UPDATE, a newer value of the same subject: replaces the older bullet in place;
* CONFLICT, a contradiction that cannot be ordered: both kept, each marked for the
  human (``<!-- CONFLICT: ... -->``), never silently overwritten;
* ADD: appended under its section.

A topic summary's or a note's bullet is an excerpt of a conversation, not a fact: it
may restate (NOOP) anything, but update or contradict only other excerpts; against a
fact or a decision it is added beside it.

The human's own items (added or rewritten in MEMORY.md) are held first, as of their
edit's time: a restatement of one is dropped, an older contradiction yields to it,
and a newer value marks it ``CLASH`` (the human's words are kept; the human
decides). A bullet the human removed is never synthesised again. Sections follow
the daily headings' subjects: Identity, Preferences, Decisions, Facts, one per other subject
(a fact slot, a heading a human wrote), Topics, Notes. A decision's or a
preference's heading subject is its classification slot (:func:`subject_slot`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, tzinfo

import numpy as np

from solace.facts.classify import classify
from solace.facts.model import Candidate, Fact, FactStatus, WriteClass
from solace.workspace.markdown import Hasher
from solace.workspace.model import Doc, Item, Section
from solace.workspace.overlay import HumanLayer, apply

__all__ = [
    "MEMORY_PREAMBLE", "SynthesisCounts", "memory_section", "subject_slot", "synthesize_memory",
]

MEMORY_PREAMBLE = (
    "<!-- Curated long-term memory, synthesised by Solace from the daily logs. Loaded "
    "only in main sessions. Edit freely: your bullets stay, removed bullets stay "
    "removed, and a CLASH or CONFLICT note marks what needs your decision. -->",
)
_FIRST = ("Identity", "Preferences", "Decisions", "Facts")
_LAST = ("Topics", "Notes")
_HEADER_TIME = re.compile(r"(\d{4}-\d{2}-\d{2})(?:[ T](\d{2}):(\d{2}))?")
_NEIGHBOURS = 24  # a bullet is classified against its most similar bullets only


@dataclass(slots=True)
class SynthesisCounts:
    """What one synthesis did with the daily bullets it read."""

    read: int = 0
    added: int = 0
    noop: int = 0
    updated: int = 0
    conflicts: int = 0
    clashes: int = 0
    removed_by_human: int = 0


@dataclass(slots=True)
class _Bullet:
    text: str
    section: str
    ts: float
    human: bool
    vector: np.ndarray
    slot: str


def memory_section(subject: str) -> str:
    """The MEMORY.md section of a daily heading's subject."""
    family = subject.split(":", 1)[0].strip().casefold()
    if family.startswith("preference"):
        return "Preferences"
    if family in ("residence", "origin", "employer", "job", "age", "birthday", "allergy",
                  "name", "identity"):
        return "Identity"
    if family == "decision":
        return "Decisions"
    if family == "topic":
        return "Topics"
    if family == "notes":
        return "Notes"
    if subject == "Facts learned" or not subject.strip():
        return "Facts"
    return subject.strip()


def subject_slot(subject: str) -> str:
    """The classification slot of a daily heading's subject: a decision's or a
    preference's own subject (``Decision: garden_visit``), so a later value of the
    same key updates it and two different keys never merge; '' for free text (facts
    learned, topic summaries, notes, a heading a human wrote)."""
    family, _, rest = subject.partition(":")
    family = family.strip().casefold()
    if rest.strip() and (family == "decision" or family.startswith("preference")):
        return f"{family}:{rest.strip().casefold()}"
    return ""


def _header_ts(header: str, day: date, tz: tzinfo) -> tuple[float, str]:
    """When a daily section was written and its subject."""
    subject = header.split(" - ", 1)[1] if " - " in header else header
    m = _HEADER_TIME.match(header)
    when = datetime(day.year, day.month, day.day, tzinfo=tz)
    if m:
        try:
            when = datetime.fromisoformat(m.group(1)).replace(tzinfo=tz)
            if m.group(2):
                when = when.replace(hour=int(m.group(2)), minute=int(m.group(3)))
        except ValueError:
            pass
        if " - " not in header:
            subject = header[m.end():].strip(" -") or "Facts learned"
    return when.timestamp(), subject


def _fact(i: int, b: _Bullet) -> Fact:
    return Fact(str(i), "workspace", "workspace", b.text, 0.5, FactStatus.LIVE, b.ts, b.ts, 1,
                "import", WriteClass.ADD, "", b.slot)


def synthesize_memory(
    daily: Sequence[tuple[date, Doc]], layer: HumanLayer, hasher: Hasher,
    embed: Callable[[list[str]], np.ndarray], *, tz: tzinfo = UTC,
    dedup_threshold: float = 0.9, update_similarity: float = 0.55,
    lexical_weight: float = 0.3,
) -> tuple[Doc, SynthesisCounts]:
    """MEMORY.md from ``daily`` (date order) and the human's ``layer`` (see the module).

    Deterministic for the same inputs and embedding function.

    Returns:
        The document (human layer applied, marks attached) and what was done.
    """
    counts = SynthesisCounts()
    candidates: list[tuple[str, str, float, str]] = []
    for day, doc in daily:
        for part in doc.sections:
            ts, subject = _header_ts(part.header, day, tz)
            for k, item in enumerate(part.items):
                candidates.append((item.text, memory_section(subject), ts + k * 1e-3,
                                   subject_slot(subject)))
    humans = list(layer.items.values())
    texts = list(dict.fromkeys([h.text for h in humans] + [c[0] for c in candidates]))
    vectors = _normalised(embed(texts)) if texts else np.zeros((0, 1), np.float32)
    vec = {t: vectors[i] for i, t in enumerate(texts)}
    live = [_Bullet(h.text, h.section, h.ts, True, vec[h.text], "") for h in humans]
    marks: dict[int, str] = {}
    for text, section, ts, slot in candidates:
        counts.read += 1
        h = hasher.item(text)
        if h in layer.removed:
            counts.removed_by_human += 1
            continue
        if h in layer.items:
            counts.noop += 1
            continue
        v = vec[text]
        if live:
            matrix = np.stack([b.vector for b in live])
            near = sorted(np.argsort(-(matrix @ v), kind="stable")[:_NEIGHBOURS].tolist())
            decision = classify(Candidate(text, slot=slot), v, [_fact(i, live[i]) for i in near],
                                matrix[near], as_of=ts, dedup_threshold=dedup_threshold,
                                update_similarity=update_similarity,
                                lexical_weight=lexical_weight)
        else:
            decision = classify(Candidate(text, slot=slot), v, [],
                                np.zeros((0, len(v)), np.float32),
                                as_of=ts, dedup_threshold=dedup_threshold,
                                update_similarity=update_similarity,
                                lexical_weight=lexical_weight)
        target = int(decision.target.fact_id) if decision.target is not None else -1
        kind = decision.write_class
        if kind in (WriteClass.UPDATE, WriteClass.CONFLICT) and (
                (section in _LAST and live[target].section != section)
                or (slot and live[target].slot and slot != live[target].slot)):
            # an excerpt of a conversation never overrides a fact, and two decisions
            # (or preferences) on different subjects never replace each other
            kind = WriteClass.ADD
        if kind is WriteClass.NOOP:
            counts.noop += 1
            live[target].ts = max(live[target].ts, ts)
        elif kind is WriteClass.UPDATE and live[target].human:
            counts.clashes += 1
            marks[target] = (f"CLASH: a newer memory says \"{text}\"; you wrote this "
                             "bullet, so it is kept: edit it to settle")
        elif kind is WriteClass.UPDATE:
            counts.updated += 1
            live[target] = replace(live[target], text=text, ts=ts, vector=v, slot=slot,
                                   section=section)
            marks.pop(target, None)
        elif kind is WriteClass.CONFLICT and live[target].human:
            counts.noop += 1  # older than the human's own word on it
        elif kind is WriteClass.CONFLICT:
            counts.conflicts += 1
            live.append(_Bullet(text, section, ts, False, v, slot))
            marks[len(live) - 1] = f"CONFLICT: contradicts \"{live[target].text}\""
            marks[target] = f"CONFLICT: contradicts \"{text}\""
        else:
            counts.added += 1
            live.append(_Bullet(text, section, ts, False, v, slot))
    by_section: dict[str, list[Item]] = {}
    keyed: dict[str, str] = {}
    for i, b in enumerate(live):
        by_section.setdefault(b.section, []).append(Item(b.text))
        if i in marks:
            keyed[hasher.item(b.text)] = marks[i]
    names = sorted(by_section, key=lambda n: (
        _FIRST.index(n) if n in _FIRST else len(_FIRST) + (
            len(_LAST) + 1 + _LAST.index(n) if n in _LAST else 0), n))
    doc = Doc("MEMORY", MEMORY_PREAMBLE,
              tuple(Section(n, tuple(by_section[n])) for n in names))
    return apply(doc, layer, hasher, keyed), counts


def _normalised(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1.0, norms)
