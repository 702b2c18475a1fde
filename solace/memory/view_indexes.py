"""What a retriever keeps in line with a view of its agent's tiers, by the records that
changed: the two BM25 indexes, the single-event records by entry id, and the runtime's
holdings of the agent.

* **records** — every record of both tiers, by its text; a rung-3 record (an
  embedding and tags) by its tags plus its form, the text it is injected in
  (:mod:`~solace.memory.derived_forms`);
* **units** — every event of a record that stands for several events, in that event's
  own rung-1 form (one text per unit, shared by every agent's index);
* **singles** — entry id -> the records standing for that event alone
  (:class:`~solace.memory.neighbours.Singles`, for the neighbours a query offers).

:meth:`ViewIndexes.sync` brings them from the view they hold to another by the records
changed between the two (:func:`~solace.memory.tier_view.changed_between`), or in full
when the tiers' change logs do not reach back that far. The indexes can be seeded from
a restart's kept forms (:meth:`ViewIndexes.seed`); the first full sync then checks each
document's text against the tiers' records.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from solace.memory.bm25 import LexicalIndex
from solace.memory.derived_forms import DerivedForms
from solace.memory.holdings import Holdings
from solace.memory.neighbours import Singles
from solace.memory.record import MemoryRecord
from solace.memory.retrieval_forms import Forms
from solace.memory.tier_view import TierVersions, TierView, changed_between

__all__ = ["ViewIndexes"]


class ViewIndexes:
    """One agent's BM25 indexes, single-event map and holdings, in line with ``indexed``.

    Args:
        agent: whose records these are (what ``holdings`` is told).
        derived: the retriever's derived texts (units' forms, rung-3 records' forms).
        holdings: the runtime's one :class:`~solace.memory.holdings.Holdings`, told
            every record change synced here (None: nothing is told).

    Attributes:
        records, units: the two BM25 indexes. singles: the single-event map.
        indexed: the tiers' versions and the view all of them hold (None: none yet).
    """

    def __init__(self, agent: str, derived: DerivedForms, holdings: Holdings | None) -> None:
        self.agent = agent
        self.records = LexicalIndex()
        self.units = LexicalIndex()
        self.singles = Singles()
        self.holdings = holdings
        self.indexed: tuple[TierVersions, TierView] | None = None
        self._derived = derived

    def seed(self, forms: Forms) -> None:
        """Take ``forms``' BM25 indexes while nothing has been indexed here (their unit
        texts are the shared units', which ``forms.units`` was merged into)."""
        if self.indexed is not None or len(self.records) or len(self.units):
            return
        if forms.records_index is not None:
            self.records = LexicalIndex.from_state(forms.records_index)
        state = forms.units_index
        if state is not None:  # its texts: the shared units', kept once
            units = self._derived.units
            if forms.units is not units:  # not read against them: take their strings
                state = replace(state, texts=[units[e][0] for e in state.ids.tolist()])
            self.units = LexicalIndex.from_state(state)

    def sync(self, key: TierVersions, view: TierView, working: Any, longterm: Any) -> None:
        """Make everything here hold exactly ``view``'s records and units (``view`` of
        the tiers ``working`` and ``longterm`` at versions ``key``): by the records
        changed between the view held and this one, or in full."""
        held = self.indexed
        changed = None if held is None else changed_between(working, longterm, held[0], key)
        if changed is None:
            self.records.sync({rid: _doc(view, r) for rid, r in view.records.items()})
            self._sync_units(view.unit_ids)
            self._derived.keep_only(view.records)
            self.singles.reset(view.records.values())
            if self.holdings is not None:
                self.holdings.reset(self.agent, view.records.values())
        else:
            before = held[1]  # type: ignore[index]
            for rid in changed:
                record = view.records.get(rid)
                was = before.records.get(rid)
                if was is not record:
                    self.singles.change(was, record)
                    if self.holdings is not None:
                        self.holdings.change(self.agent, was, record)
                if record is None:
                    self.records.remove(rid)
                    self._derived.forget(rid)
                else:
                    self.records.add(rid, _doc(view, record))
                for e in (*_units_of(was), *_units_of(record)):
                    if e in view.owners:
                        self.units.add(e, self._derived.units[e][0])
                    else:
                        self.units.remove(e)
        self.indexed = (key, view)

    def _sync_units(self, wanted: np.ndarray) -> None:
        """Make the units index hold exactly the units ``wanted`` (sorted ids). A unit's
        text never changes (an event never does, and every index takes it from the one
        shared units' forms), so only the ids that came or went are touched, found as
        two array differences instead of each unit's text compared (at a million events
        that compare was a third of a restart's first recall)."""
        held = np.fromiter(self.units.ids(), dtype=np.int64, count=len(self.units))
        for eid in np.setdiff1d(held, wanted, assume_unique=True).tolist():
            self.units.remove(eid)
        for eid in np.setdiff1d(wanted, held, assume_unique=True).tolist():
            self.units.add(eid, self._derived.units[eid][0])


def _doc(view: TierView, record: MemoryRecord) -> str:
    """What BM25 indexes a record by: its text; a rung-3 record's tags and its form."""
    if record.rung < 3:
        return record.text
    return record.text + "\n" + view.forms[record.record_id][0]


def _units_of(record: MemoryRecord | None) -> tuple[int, ...]:
    if record is None or len(record.entry_ids) < 2:
        return ()
    return tuple(record.entry_ids)
