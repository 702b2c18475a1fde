"""Agents with the same perspective derive a rung-3 record's form once: a sibling's form
for the same record and entry ids is taken, anything else is derived."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from solace.memory.longterm import LongTermTier
from solace.memory.record import MemoryRecord
from solace.memory.testing import retriever_over
from solace.memory.working import WorkingTier

DIM = 4


@dataclass
class Memory:
    agent: str
    working: WorkingTier
    longterm: LongTermTier


def _record(agent: str, rid: int, entries: Sequence[int], span: tuple[int, int] | None = None
            ) -> MemoryRecord:
    return MemoryRecord(record_id=rid, agent=agent, rung=3, text="", tokens=0,
                        source_tokens=4, entry_ids=tuple(entries),
                        embedding=np.ones(DIM, dtype=np.float32) / 2, span=span or ())


def _memory(agent: str, records: list[MemoryRecord]) -> Memory:
    longterm = LongTermTier(dim=DIM)
    longterm.add(records)
    return Memory(agent, WorkingTier(10**6, dim=DIM), longterm)


async def test_a_sibling_derived_form_is_taken_and_others_are_derived() -> None:
    derived: list[tuple[str, tuple[int, ...]]] = []

    def counting(agent: str) -> Any:
        def rehydrate(events: Sequence[Any], rung: int) -> str:
            derived.append((agent, tuple(e.entry_id for e in events)))
            return " ".join(e.content for e in events)
        return rehydrate

    sup_forms: dict[int, Any] = {}
    main_forms: dict[int, Any] = {}
    supervisor = retriever_over(
        _memory("Supervisor", [_record("Supervisor", 1, (1, 2)), _record("Supervisor", 5, (5, 6)),
                               _record("Supervisor", 9, (9,), span=(0, 4))]),
        rehydrate=counting("Supervisor"), record_forms=sup_forms, sibling_forms=[main_forms])
    main = retriever_over(
        _memory("Main", [_record("Main", 1, (1, 2)), _record("Main", 5, (5, 6, 7)),
                         _record("Main", 9, (9,), span=(4, 8))]),
        rehydrate=counting("Main"), record_forms=main_forms, sibling_forms=[sup_forms])
    theirs = await supervisor.refresh()
    derived.clear()
    view = await main.refresh()

    main_derived = {entries for agent, entries in derived if agent == "Main"}
    assert (1, 2) not in main_derived  # the same record and entry ids: Supervisor's form
    assert (5, 6, 7) in main_derived  # other entry ids: derived
    assert (9,) in main_derived  # a chunk: its span is not in the id, so never shared
    assert view.forms[1] == (sup_forms[1][1], sup_forms[1][2])
    assert main.injected_form(view.records[1]) == supervisor.injected_form(theirs.records[1])
