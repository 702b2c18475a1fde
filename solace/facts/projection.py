"""The fact store the runtime queries: a pure fold of ``memfact`` events.

:class:`FactProjection` holds every memory id's facts (live, superseded,
conflicting, evicted) with their mentions and dates. It is rebuilt by applying the
events in entry-id order and kept current by applying each new batch, so the live
view always equals the rebuilt one. A deleted or forgotten fact is dropped from it
entirely: its text exists nowhere but in the (now unopenable) event.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import cast

from solace.conversation.events import LoggedEvent
from solace.facts.events import FACT_KIND, split_ids
from solace.facts.model import Fact, FactStatus, Source, WriteClass

__all__ = ["FactProjection"]


def _stated(event: LoggedEvent) -> float:
    """When the event's statement was made: its ``as_of``, else the event's time."""
    return float(event.attrs.get("as_of") or event.ts)


class FactProjection:
    """Every memory id's facts, by fact id, in the order they were written."""

    def __init__(self) -> None:
        self._facts: dict[str, dict[str, Fact]] = {}
        self.last_entry_id = 0

    @classmethod
    def restored(cls, facts: Iterable[Fact], last_entry_id: int) -> FactProjection:
        """A projection holding ``facts`` (in their write order) as a snapshot kept them."""
        projection = cls()
        for fact in facts:
            projection._facts.setdefault(fact.memory_id, {})[fact.fact_id] = fact
        projection.last_entry_id = last_entry_id
        return projection

    # ------------------------------------------------------------------ reading
    def memory_ids(self, store: str | None = None) -> list[str]:
        """Ids holding at least one fact (any status), optionally only in ``store``."""
        return sorted(m for m, facts in self._facts.items()
                      if facts and (store is None or any(f.store == store
                                                          for f in facts.values())))

    def facts(self, memory_id: str) -> list[Fact]:
        """All of ``memory_id``'s facts, oldest first (history included)."""
        return list(self._facts.get(memory_id, {}).values())

    def live(self, memory_id: str, store: str | None = None) -> list[Fact]:
        """The recallable facts (live and conflicting), oldest first."""
        return [f for f in self._facts.get(memory_id, {}).values()
                if f.recallable and (store is None or f.store == store)]

    def get(self, memory_id: str, fact_id: str) -> Fact | None:
        return self._facts.get(memory_id, {}).get(fact_id)

    # ------------------------------------------------------------------ folding
    def apply(self, event: LoggedEvent, text: str | None = None) -> None:
        """Fold one event in. ``text`` is the decrypted text of a ``write`` (None when
        its key is gone: the fact was deleted, and is skipped). Other kinds are ignored.
        """
        if event.kind != FACT_KIND:
            return
        self.last_entry_id = max(self.last_entry_id, event.entry_id)
        a = event.attrs
        op, memory_id = a.get("op", ""), a.get("memory_id", "")
        facts = self._facts.setdefault(memory_id, {})
        if op == "write":
            if text is not None:
                self._write(facts, event, text)
        elif op == "confirm":
            self._confirm(facts, a.get("fact_id", ""), _stated(event))
        elif op == "evict":
            self._set_status(facts, split_ids(a.get("facts", "")), FactStatus.EVICTED)
        elif op == "delete":
            facts.pop(a.get("fact_id", ""), None)
        elif op == "forget":
            facts.clear()
        elif op == "compact":
            outputs = split_ids(a.get("outputs", ""))
            self._set_status(facts, split_ids(a.get("inputs", "")), FactStatus.SUPERSEDED,
                             by=outputs[0] if outputs else "")

    def apply_all(self, items: Iterable[tuple[LoggedEvent, str | None]]) -> None:
        for event, text in items:
            self.apply(event, text)

    def _write(self, facts: dict[str, Fact], event: LoggedEvent, text: str) -> None:
        a = event.attrs
        fact_id = a["fact_id"]
        write_class = WriteClass(a.get("class", "ADD"))
        supersedes = split_ids(a.get("supersedes", ""))
        conflicts = tuple(c for c in split_ids(a.get("conflicts", "")) if c in facts)
        self._set_status(facts, supersedes, FactStatus.SUPERSEDED, by=fact_id)
        for other in conflicts:
            old = facts[other]
            facts[other] = dataclasses.replace(
                old, status=FactStatus.CONFLICTING if old.recallable else old.status,
                conflicts_with=(*old.conflicts_with, fact_id))
        facts[fact_id] = Fact(
            fact_id=fact_id, memory_id=a.get("memory_id", ""), store=a.get("store", "default"),
            text=text, importance=float(a.get("importance", "0.5")),
            status=FactStatus.CONFLICTING if conflicts else FactStatus.LIVE,
            created=_stated(event), last_confirmed=_stated(event), mentions=1,
            source=cast(Source, a.get("source", "remember")), write_class=write_class,
            reason=a.get("reason", ""), slot=a.get("slot", ""), conflicts_with=conflicts,
            entry_id=event.entry_id,
        )

    @staticmethod
    def _confirm(facts: dict[str, Fact], fact_id: str, ts: float) -> None:
        old = facts.get(fact_id)
        if old is not None:
            facts[fact_id] = dataclasses.replace(
                old, mentions=old.mentions + 1, last_confirmed=max(old.last_confirmed, ts))

    @staticmethod
    def _set_status(facts: dict[str, Fact], ids: Iterable[str], status: FactStatus,
                    by: str = "") -> None:
        for fid in ids:
            old = facts.get(fid)
            if old is not None:
                facts[fid] = dataclasses.replace(old, status=status,
                                                 superseded_by=by or old.superseded_by)
