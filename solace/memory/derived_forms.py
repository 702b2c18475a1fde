"""The texts one retriever derives from substrate events, kept between queries.

A rung-3 record (an embedding and tags) is offered and injected in its *form*: the
text it would have at ``inject_rung``, rebuilt from its events. A unit (one event of a
record that stands for several) is offered in its event's rung-1 form. Both are
derived once, on the first query that sees the record or unit, and kept here:

* **record forms**, by record id, with the entry ids they were made from (a record
  that grows or merges is derived again). A *sibling* (a retriever of the same
  perspective) may already hold the form for the same record and entry ids; it is
  taken, not derived again. A chunk's form is never a sibling's: a chunk's id and
  entry id do not say which span it is.
* **unit forms**, by entry id, shared by every retriever of a runtime whose unit form
  is the same: an event never changes, so neither does its unit.

Units without an embedding (after a restart) are embedded in the same build
(:func:`~solace.memory.form_parts.derive_in_parts`).
"""

from __future__ import annotations

from collections.abc import Callable, Container, Sequence
from typing import Any

import numpy as np
import trio

from solace.memory.event_vectors import EventVectorStore
from solace.memory.form_parts import derive_in_parts
from solace.memory.record import MemoryRecord
from solace.memory.retrieval import EventReader
from solace.memory.retrieval_forms import Forms

__all__ = ["DerivedForms", "RecordForm", "Rehydrate", "UnitForm"]

Rehydrate = Callable[[Sequence[Any], int], str]
#: A rung-3 record's derived form: (the entry ids it was made from, text, tokens).
RecordForm = tuple[tuple[int, ...], str, int]
#: A unit's derived form: (text, tokens).
UnitForm = tuple[str, int]


class DerivedForms:
    """One retriever's record forms, and the units' forms it shares.

    Args:
        unit_forms: entry id -> :data:`UnitForm` derived so far, shared by the
            retrievers of one runtime when their ``unit_form`` is the same (it does not
            depend on the agent): each unit's text is then kept once, not once per
            agent holding it (~240 bytes per event for Supervisor and Main).
        record_forms: this retriever's record id -> :data:`RecordForm`, filled here
            (passed in so that the other retrievers' ``sibling_forms`` can hold it).
        sibling_forms: the ``record_forms`` of retrievers whose ``rehydrate`` is this
            one's (the same perspective): a record they derived for the same entry
            ids is taken, not derived again (Main's and Supervisor's rung-3 records
            are nearly all the same episodes: 3,235 of Main's 3,279 at 111k events).
        The rest: as :class:`~solace.memory.candidates.Retriever`'s of the same names.
    """

    def __init__(
        self,
        *,
        offloader: Any,
        events: EventReader,
        rehydrate: Rehydrate,
        inject_rung: int,
        tokenizer: Any,
        vectors: EventVectorStore,
        embed: Callable[[Sequence[str]], np.ndarray] | None,
        unit_form: Callable[[Any], str],
        unit_forms: dict[int, UnitForm] | None = None,
        record_forms: dict[int, RecordForm] | None = None,
        sibling_forms: Sequence[dict[int, RecordForm]] = (),
        deriving: trio.Lock | None = None,
    ) -> None:
        self.offloader = offloader
        self.events = events
        self.rehydrate = rehydrate
        self.inject_rung = inject_rung
        self.tokenizer = tokenizer
        self.vectors = vectors
        self.embed = embed
        self.unit_form = unit_form
        #: record id -> :data:`RecordForm`, of the rung-3 records seen so far
        self.records: dict[int, RecordForm] = record_forms if record_forms is not None else {}
        #: entry id -> :data:`UnitForm` (shared: an event never changes, nor its unit)
        self.units: dict[int, UnitForm] = unit_forms if unit_forms is not None else {}
        self._siblings = tuple(sibling_forms)
        self._deriving = deriving if deriving is not None else trio.Lock()

    def seed(self, forms: Forms) -> None:
        """Take ``forms`` (kept by an earlier process) as derived; what was derived here
        is kept. A record's form is still only used for the entry ids it was made from."""
        # setdefault for each, as whole-dict operations (a million units at 1M events)
        self.records.update({**forms.records, **self.records})
        if forms.units is not self.units:  # read against these shared forms: all here
            self.units.update({**forms.units, **self.units})  # shared: in place

    def keep_only(self, record_ids: Container[int]) -> None:
        """Drop the forms of every record not in ``record_ids`` (the records a view
        holds)."""
        for rid in [r for r in self.records if r not in record_ids]:
            del self.records[rid]

    def forget(self, record_id: int) -> None:
        """Drop ``record_id``'s form (the record left the view)."""
        self.records.pop(record_id, None)

    def injected(self, record: MemoryRecord) -> UnitForm:
        """The text ``record`` is injected as, and its tokens (rung 3: its form, which a
        :meth:`build` that saw it derived)."""
        if record.rung < 3:
            return record.text, record.tokens
        _ids, text, tokens = self.records[record.record_id]
        return text, tokens

    def derived(self, record: MemoryRecord) -> RecordForm | None:
        """``record``'s form as derived here or by a sibling for its entry ids (a
        sibling's is kept here too), or None."""
        entries = tuple(record.entry_ids)
        have = self.records.get(record.record_id)
        if have is not None and have[0] == entries:
            return have
        if record.span:
            return None
        for forms in self._siblings:
            have = forms.get(record.record_id)
            if have is not None and have[0] == entries:
                self.records[record.record_id] = have
                return have
        return None

    async def build(self, records: Sequence[MemoryRecord], unit_ids: set[int]
                    ) -> dict[int, UnitForm]:
        """Derive the forms of the rung-3 ``records`` and the units of ``unit_ids`` not
        derived yet, and embed the units without a vector.

        One build derives at a time among the retrievers sharing ``deriving``: what
        is left to derive is decided once the one before has stored its forms, so a
        sibling's form or a shared unit is never derived twice at once (the five
        agents' index keepers wake together once a burst of observes ends).

        Returns:
            record id -> (injected text, tokens) of every rung-3 record of ``records``:
            a private copy, so a concurrent refresh dropping a form from :attr:`records`
            cannot take it from the query that asked.
        """
        async with self._deriving:
            return await self._build(records, unit_ids)

    async def _build(self, records: Sequence[MemoryRecord], unit_ids: set[int]
                     ) -> dict[int, UnitForm]:
        forms: dict[int, UnitForm] = {}
        todo = []
        for r in records:
            if r.rung < 3:
                continue
            have = self.derived(r)
            if have is not None:
                forms[r.record_id] = (have[1], have[2])
            else:
                todo.append(r)
        units = sorted(e for e in unit_ids if e not in self.units)
        unembedded: list[int] = []
        if self.embed is not None and unit_ids:  # one array lookup: 1.3M units at 1M events
            ids = np.fromiter(unit_ids, dtype=np.int64, count=len(unit_ids))
            unembedded = np.sort(ids[self.vectors.rows_of(ids) < 0]).tolist()
        if not todo and not units and not unembedded:
            return forms
        wanted = sorted({e for r in todo for e in r.entry_ids} | set(units) | set(unembedded))
        events = dict(zip(wanted, await self.events.get_many(wanted), strict=True))

        texts, unit_texts, counts, vectors = await derive_in_parts(
            self.offloader, todo, units, unembedded, events, rehydrate=self.rehydrate,
            rung=self.inject_rung, unit_form=self.unit_form, tokenizer=self.tokenizer,
            embed=self.embed)
        for record, text, tokens in zip(todo, texts, counts[: len(texts)], strict=True):
            self.records[record.record_id] = (tuple(record.entry_ids), text, tokens)
            forms[record.record_id] = (text, tokens)
        for eid, text, tokens in zip(units, unit_texts, counts[len(texts):], strict=True):
            self.units[eid] = (text, tokens)
        if vectors is not None:
            for eid, vector in zip(unembedded, vectors, strict=True):
                self.vectors.setdefault(eid, np.asarray(vector, dtype=np.float32))
        return forms
