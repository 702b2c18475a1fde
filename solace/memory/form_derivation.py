"""How a retriever derives the texts it indexes from substrate events: its forms.

A rung-3 record is indexed and injected as its rehydrated form, and each unit (one
event of a faded episode) as its own line; both are pure functions of the events, the
config and this code (with the ``rehydrate`` and ``unit_form`` the runtime passes,
:mod:`solace.retrieval_texts`). The retrieval-forms file keeps them across restarts,
stamped with the source this module reaches (:data:`~solace.memory.retrieval_forms.
FORMS_SOURCES`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from solace.memory.chunks import record_events
from solace.memory.record import MemoryRecord

__all__ = ["derive_forms"]


def derive_forms(
    records: Sequence[tuple[MemoryRecord, Sequence[Any]]], units: Sequence[Any], *,
    rehydrate: Callable[[Sequence[Any], int], str], rung: int,
    unit_form: Callable[[Any], str], tokenizer: Any,
) -> tuple[list[str], list[str], list[int]]:
    """The forms a retriever derives: each record rehydrated at ``rung`` from the events
    it stands for, and each unit event's line. Returns ``(record texts, unit texts,
    token counts)``, the counts of the record texts first, then of the unit texts."""
    texts = [rehydrate(record_events(record, events), rung) for record, events in records]
    unit_texts = [unit_form(event) for event in units]
    return texts, unit_texts, list(tokenizer.count_many(texts + unit_texts))
