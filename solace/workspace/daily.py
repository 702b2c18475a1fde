"""Daily logs: which events become bullets, on which day, under which heading.

Sans-IO. :class:`Ledger` folds substrate events into per-day entries (and the bits
NOW.md needs: topic titles, the active topic, open notes, the last decisions);
:func:`render_day` turns one day's entries into a document. What becomes a bullet:

* a fact-memory write (``memfact`` ``op=write``, not a compaction's restatement):
  the fact's text, looked up in the fact memory's projection at render time, so a
  deleted or forgotten fact is simply absent from the next render;
* a topic's summary when the topic closes (``topic`` ``op=summary``, ``close``);
* notes (``note`` ``$set`` and ``update``);
* decisions: curation moves (``curation``) and durable facts (``fact`` ``$set`` /
  ``$unset``);
* an imported day's digest (``workspace`` ``op=digest``): its points under
  ``Conversation``, at the day's last imported event's time; a later digest of the
  same day replaces the earlier one's bullets.

Never a ``message`` or tool event: a daily log holds no transcript. Days are the
events' dates in the configured time zone.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date, datetime, tzinfo

from solace.conversation.events import LoggedEvent
from solace.conversation.extractive import sentences
from solace.workspace.events import WORKSPACE_KIND, digest_of, edit_of
from solace.workspace.model import Doc, Edit, Item, Section

__all__ = [
    "DAILY_PREAMBLE", "DIGEST_SUBJECT", "LEDGER_KINDS", "Change", "Entry", "Ledger",
    "fact_subject", "render_day", "summary_points",
]

DAILY_PREAMBLE = (
    "<!-- Written by Solace from its memory (facts learned, decisions, topic summaries, "
    "notes). Edit freely: bullets you add stay, bullets you remove stay removed. -->",
)
_CURATION_WORDS = {
    "promote": "promoted to long-term memory",
    "demote": "taken out of long-term memory",
    "deprecate": "deprecated",
    "undeprecate": "no longer deprecated",
}
_KEEP_DECISIONS = 20
#: The heading subject of an imported day's digest.
DIGEST_SUBJECT = "Conversation"
#: The substrate kinds the ledger reads.
LEDGER_KINDS: tuple[str, ...] = ("memfact", "topic", "note", "curation", "fact", WORKSPACE_KIND)


@dataclass(frozen=True, slots=True)
class Entry:
    """One bullet source: when, under which subject, and its text, or the fact
    (memory id, fact id) whose text the render looks up."""

    ts: float
    subject: str
    text: str = ""
    fact: tuple[str, str] | None = None


@dataclass(slots=True)
class Change:
    """What one batch of events changed: days to re-render, whether a fact was
    deleted (every derived file must be re-rendered), human edits (ts, edit)."""

    days: set[date] = field(default_factory=set)
    shredded: bool = False
    edits: list[tuple[float, Edit]] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.days or self.shredded or self.edits)


_FAMILIES = {"preference": "Preferences", "relationship": "Relationships", "plan": "Plans",
             "event": "Events", "possession": "Possessions", "obligation": "Obligations",
             "identity": "Identity", "correction": "Corrections"}


def fact_subject(slot: str) -> str:
    """The heading subject of a fact with extractor slot ``slot``: its family
    (``preference:drink`` -> ``Preferences``, ``event:charity`` -> ``Events``), a plain
    slot capitalised (``residence`` -> ``Residence``), none -> ``Facts learned``. The
    specific slot stays fact memory's business: it already classified the fact."""
    if not slot:
        return "Facts learned"
    family = slot.partition(":")[0].replace("_", " ").strip().casefold()
    return _FAMILIES.get(family) or family.capitalize() or "Facts learned"


_ROLE_JOIN = re.compile(r";\s+(?=(?:user|assistant|note|tool):)")


def summary_points(text: str) -> list[str]:
    """A topic summary's bullets: its sentences, and the parts of a deterministic
    summary (``user: ...; assistant: ...``) one by one."""
    return [s for part in _ROLE_JOIN.split(text) for s in sentences(part)]


def _one_line(text: str) -> str:
    return " ".join(text.split())


class Ledger:
    """Everything the workspace renders, folded from the substrate's events.

    Args:
        tz: the time zone whose calendar dates the daily logs.
    """

    def __init__(self, tz: tzinfo) -> None:
        self.tz = tz
        self.days: dict[date, list[Entry]] = {}
        self.titles: dict[str, str] = {}
        self.active_topic = ""
        self.notes: dict[str, list[str]] = {}
        self.decisions: list[tuple[float, str]] = []
        self.last_entry_id = 0
        #: Every event with an id up to this one is folded in (a restored snapshot's
        #: checkpoint, :mod:`solace.workspace.snapshot`); later ones are in ``_seen``.
        self.floor = 0
        self._fact_days: dict[tuple[str, str], date] = {}
        self._memory_days: dict[str, set[date]] = {}
        self._seen: set[int] = set()
        #: day -> (coverage, entries) of the day's newest imported digest.
        self.digests: dict[date, tuple[str, list[Entry]]] = {}

    def day_of(self, ts: float) -> date:
        """The calendar date of ``ts`` in the ledger's time zone."""
        return datetime.fromtimestamp(ts, self.tz).date()

    def apply_all(self, events: Iterable[LoggedEvent]) -> Change:
        """Fold ``events`` in entry-id order; kinds not in :data:`LEDGER_KINDS` are
        ignored (and not remembered). An event already folded is skipped, so a batch
        may be delivered twice, or by both :meth:`Workspace.on_events` and a scan."""
        change = Change()
        for event in sorted(events, key=lambda e: e.entry_id):
            if event.kind not in LEDGER_KINDS or self.seen(event.entry_id):
                continue
            self._seen.add(event.entry_id)
            self.last_entry_id = max(self.last_entry_id, event.entry_id)
            self._apply(event, change)
        return change

    def seen(self, entry_id: int) -> bool:
        """Whether the event ``entry_id`` (of a ledger kind) is folded in."""
        return entry_id <= self.floor or entry_id in self._seen

    def _add(self, change: Change, entry: Entry) -> date:
        day = self.day_of(entry.ts)
        self.days.setdefault(day, []).append(entry)
        change.days.add(day)
        return day

    def _title(self, topic: str) -> str:
        return self.titles.get(topic) or f"topic {topic}"

    def _decide(self, change: Change, ts: float, subject: str, text: str) -> None:
        self._add(change, Entry(ts, subject, text))
        self.decisions = [*self.decisions, (ts, text)][-_KEEP_DECISIONS:]

    def _apply(self, e: LoggedEvent, change: Change) -> None:
        a = e.attrs
        op = str(a.get("op", ""))
        conversation = a.get("layer") == "conversation"
        if e.kind == "memfact":
            self._apply_fact(e, op, change)
        elif e.kind == "topic" and conversation:
            topic = str(a.get("topic", ""))
            if op == "open" and e.content.strip():
                self.titles[topic] = _one_line(e.content)
            elif op == "activate":
                self.active_topic = topic
            elif op == "summary":
                try:
                    body = json.loads(e.content)
                except ValueError:
                    body = {}
                title = _one_line(str(body.get("title", "")))
                if title:
                    self.titles[topic] = title
                if a.get("close") == "true":
                    for s in summary_points(str(body.get("summary", ""))):
                        self._add(change, Entry(e.ts, f"Topic: {self._title(topic)}",
                                                _one_line(s)))
        elif e.kind == "note" and conversation:
            topic = str(a.get("topic", ""))
            lines = [_one_line(x) for x in e.content.splitlines() if x.strip()]
            if op == "$set":
                self.notes.setdefault(topic, []).extend(lines)
            elif op == "update":
                self.notes[topic] = list(lines)
            elif op == "archive":
                self.notes.pop(topic, None)
            if op in ("$set", "update"):
                for line in lines:
                    self._add(change, Entry(e.ts, f"Notes: {self._title(topic)}", line))
        elif e.kind == "curation" and conversation and op in _CURATION_WORDS:
            title = self._title(str(a.get("topic", "")))
            self._decide(change, e.ts, f"Decision: {title}",
                         f"Topic \"{title}\" {_CURATION_WORDS[op]} by the {a.get('by', 'user')}")
        elif e.kind == "fact" and conversation and op in ("$set", "$unset"):
            key = str(a.get("key", ""))
            text = f"{key}: {_one_line(e.content)}" if op == "$set" else f"{key}: removed"
            self._decide(change, e.ts, f"Decision: {key}", text)
        elif op == "digest":
            self._apply_digest(e, change)
        else:
            edit = edit_of(e.kind, e.content, a)
            if edit is not None:
                change.edits.append((e.ts, edit))

    def _apply_digest(self, e: LoggedEvent, change: Change) -> None:
        digest = digest_of(e.kind, e.content, e.attrs)
        if digest is None:
            return
        old = self.digests.pop(digest.day, None)
        if old is not None:  # superseded: the day's earlier digest leaves its log
            kept = self.days.get(digest.day, [])
            self.days[digest.day] = [x for x in kept if all(x is not o for o in old[1])]
            change.days.add(digest.day)
        entries = [Entry(digest.at, DIGEST_SUBJECT, _one_line(p)) for p in digest.points]
        for entry in entries:
            self.days.setdefault(digest.day, []).append(entry)
        change.days.add(digest.day)
        self.digests[digest.day] = (digest.coverage, entries)

    def _apply_fact(self, e: LoggedEvent, op: str, change: Change) -> None:
        a = e.attrs
        memory_id = str(a.get("memory_id", ""))
        if op == "write" and a.get("source") != "compact":
            ref = (memory_id, str(a.get("fact_id", "")))
            day = self._add(change, Entry(e.ts, fact_subject(str(a.get("slot", ""))), fact=ref))
            self._fact_days[ref] = day
            self._memory_days.setdefault(memory_id, set()).add(day)
        elif op == "delete":
            gone = self._fact_days.pop((memory_id, str(a.get("fact_id", ""))), None)
            if gone is not None:
                change.days.add(gone)
                change.shredded = True
        elif op == "forget":
            days = self._memory_days.pop(memory_id, set())
            change.days |= days
            change.shredded = change.shredded or bool(days)

    def open_notes(self) -> list[str]:
        """The active topic's open notes (then other topics'), oldest first."""
        first = self.notes.get(self.active_topic, [])
        rest = [n for t, ns in self.notes.items() if t != self.active_topic for n in ns]
        return [*first, *rest]


def render_day(day: date, entries: Iterable[Entry],
               fact_text: Callable[[str, str], str | None], tz: tzinfo) -> Doc:
    """The daily log of ``day``: one ``## YYYY-MM-DD HH:MM - subject`` section per
    minute and subject, bullets in event order (an imported digest's after the other
    bullets of its instant). A fact whose text ``fact_text`` no
    longer knows (deleted) is left out; a section left empty is dropped."""
    groups: dict[tuple[str, str], list[Item]] = {}
    # A digest is folded when the workspace writes it, a fact when it catches up: at
    # the same instant the digest goes last, so a live render and a rebuild agree.
    for entry in sorted(entries, key=lambda x: (x.ts, x.subject == DIGEST_SUBJECT)):
        text = entry.text
        if entry.fact is not None:
            found = fact_text(*entry.fact)
            if found is None:
                continue
            text = _one_line(found)
        if not text:
            continue
        minute = datetime.fromtimestamp(entry.ts, tz).strftime("%H:%M")
        items = groups.setdefault((minute, entry.subject), [])
        if all(i.text != text for i in items):
            items.append(Item(text))
    sections = tuple(Section(f"{day.isoformat()} {minute} - {subject}", tuple(items))
                     for (minute, subject), items in groups.items() if items)
    return Doc(f"{day.isoformat()} ({day.strftime('%A')})", DAILY_PREAMBLE, sections)
