"""The application API's fact-memory calls (seeds 001 and 004), mixed into
:class:`~solace.app.api.Solace`.

Every call acts on the runtime's :class:`~solace.facts.FactMemory`; with fact
memory switched off (``[facts] enabled = false``) or failed to open, every call
raises :class:`~solace.facts.FactsDisabledError` (the surfaces answer 503) and
nothing is written. A chat turn, by contrast, proceeds without memory.

Results are the fact layer's own frozen values (:class:`~solace.facts.WriteResult`,
:class:`~solace.facts.RecallBlock`, :class:`~solace.facts.Fact`,
:class:`~solace.facts.Compaction`) and :class:`ImportResult`;
:func:`solace.facts.fact_record` turns a fact into the JSON object the surfaces show.
Bad arguments raise the fact layer's errors, which name the bad value:
``InvalidMemoryIdError``, ``UnknownStoreError`` and ``InvalidFactError`` (and its
``ImportFileError`` for a malformed import row) are ``ValueError``\\ s,
``UnknownFactIdError`` a ``KeyError``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from solace.facts import (
    Compaction,
    Fact,
    FactMemory,
    FactsDisabledError,
    RecallBlock,
    WriteResult,
)

if TYPE_CHECKING:
    from solace.facts.transfer import ImportRow
    from solace.runtime import Runtime

__all__ = ["ImportResult", "MemoryCalls"]


@dataclass(frozen=True, slots=True)
class ImportResult:
    """What one imported row became: its memory id, write class, reason and fact id
    (the existing fact's id for a NOOP)."""

    memory_id: str
    write_class: str
    reason: str
    fact_id: str


class MemoryCalls:
    """The fact-memory calls of the application API (a mixin: ``self.runtime``)."""

    runtime: Runtime

    def fact_memory(self) -> FactMemory:
        """The runtime's fact memory.

        Raises:
            FactsDisabledError: fact memory is switched off or failed to open.
        """
        facts = self.runtime.facts
        if facts is None:
            raise FactsDisabledError("fact memory is off ([facts] enabled = false, or it "
                                     "could not be opened: see the log)")
        return facts

    async def remember(self, memory_id: str, text: str, store: str | None = None,
                       importance: float | None = None) -> WriteResult:
        """Classify and write ``text`` as a fact of ``memory_id`` (ADD, UPDATE, NOOP or
        CONFLICT, with the reason); ``store``: the request's, else ``default``."""
        result = await self.fact_memory().remember(memory_id, text, store=store,
                                                   importance=importance)
        return result

    async def recall_facts(self, query: str, memory_id: str, store: str | None = None,
                           k: int | None = None) -> RecallBlock:
        """The facts of ``memory_id`` best matching ``query`` (the store's ``top_k``, or
        ``k``), decayed, above ``min_score``, with the rendered block and its tokens."""
        return await self.fact_memory().recall(query, memory_id, store=store, k=k)

    def memory_ids(self, store: str | None = None) -> list[str]:
        """The memory ids holding facts (in ``store`` if given), sorted."""
        return self.fact_memory().memory_ids(store)

    def memory_facts(self, memory_id: str, all: bool = False) -> list[Fact]:  # noqa: A002
        """``memory_id``'s live and conflicting facts, oldest first; ``all``: history
        too (superseded and evicted facts)."""
        return self.fact_memory().facts(memory_id, include_history=all)

    async def delete_fact(self, memory_id: str, fact_id: str) -> Fact:
        """Delete one fact for good (its key destroyed: a data-subject request); the
        fact as it was. ``UnknownFactIdError`` (a ``KeyError``) names an unknown id."""
        fact = await self.fact_memory().delete(memory_id, fact_id)
        return fact

    async def forget(self, memory_id: str) -> int:
        """Forget every fact of ``memory_id`` (keys destroyed); how many there were."""
        count = await self.fact_memory().forget(memory_id)
        return count

    async def consolidate(self, memory_id: str) -> list[Compaction]:
        """Compact ``memory_id``'s live facts now; one verdict per store it has facts in
        (a refused compaction changes nothing and says why)."""
        verdicts = await self.fact_memory().consolidate(memory_id)
        return verdicts

    def export_facts(self, memory_id: str) -> list[dict[str, Any]]:
        """Every fact of ``memory_id``, history included, as JSON-ready objects
        (:func:`solace.facts.fact_record`), oldest first."""
        return self.fact_memory().export(memory_id)

    async def import_facts(self, rows: Sequence[Mapping[str, Any]],
                           store: str) -> list[ImportResult]:
        """Write ``rows`` into ``store`` with extraction off (seed 001: "seed a store
        from your CRM export"), each classified like any write, in order per memory id
        (:func:`solace.facts.transfer.import_rows`).

        A row is ``{"memory_id", "text", "importance"?, "at"?, "slot"?}`` (an exported
        fact's other keys are accepted and ignored; one that is history is skipped);
        ``at`` is when it was stated (epoch seconds or an ISO date-time; default now).
        Every row is checked first: one bad row refuses the call, nothing is written.

        Returns:
            One :class:`ImportResult` per imported row, in the rows' order.

        Raises:
            ImportFileError: a malformed row (a ``ValueError`` naming its index and field).
            UnknownStoreError: ``store`` is not configured.
        """
        from solace.facts.transfer import rows_from_records

        return await self.import_rows(rows_from_records(rows, source="import"), store)

    async def import_rows(self, rows: Sequence[ImportRow], store: str) -> list[ImportResult]:
        """:meth:`import_facts` of rows already checked (``solace memory import`` reads
        and checks its whole file before anything opens)."""
        from solace.facts.transfer import import_rows

        done = await import_rows(self.fact_memory(), rows, store=store,
                                 now=self.runtime.clock.now())
        return [ImportResult(row.memory_id, result.write_class.value, result.reason,
                             result.fact.fact_id) for row, result in done]
