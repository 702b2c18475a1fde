"""A retriever's build, spread over the offloader's threads: the forms of the records
and units a view brought (:func:`~solace.memory.form_derivation.derive_forms`) and the
embeddings of the units without a vector.

A query's few changed records are one thread call. A first build after a full rebuild
(every record of a year) is parts that run on every thread at once: rehydration holds
the GIL and the embedder does not, so the two overlap on two cores, and the embedding
parts run side by side once the rehydration is done. The results come back in order,
so which part ran when changes no text.

This is not in :mod:`~solace.memory.form_derivation`: that module's source stamps the
kept forms (:data:`~solace.memory.retrieval_forms.FORMS_SOURCES`), and how the work is
scheduled must not make a home derive them again.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from solace.memory.form_derivation import derive_forms
from solace.memory.record import MemoryRecord
from solace.offload import Offloader, concurrently

__all__ = ["EMBED_PART", "RECORDS_PART", "UNITS_PART", "derive_in_parts"]

#: Items per thread call when a build is split: records to rehydrate, unit lines,
#: events to embed. Each part is roughly half a second of work on these cores.
RECORDS_PART = 64
UNITS_PART = 2048
EMBED_PART = 256


async def derive_in_parts(
    offloader: Offloader, records: Sequence[MemoryRecord], units: Sequence[int],
    to_embed: Sequence[int], events: Mapping[int, Any], *,
    rehydrate: Callable[[Sequence[Any], int], str], rung: int,
    unit_form: Callable[[Any], str], tokenizer: Any,
    embed: Callable[[list[str]], np.ndarray] | None,
) -> tuple[list[str], list[str], list[int], np.ndarray | None]:
    """:func:`derive_forms` of the rung-3 ``records`` and the ``units`` (entry ids), and
    the embeddings of the ``to_embed`` events' raw texts (none without ``embed``), each
    event read from ``events`` (entry id -> event) in the worker threads. In one thread
    call when each kind fits in one part, else in parts (:data:`RECORDS_PART`,
    :data:`UNITS_PART`, :data:`EMBED_PART`; :meth:`~solace.offload.Offloader.run_chunks`)
    that run on all of the offloader's threads at once.

    Returns:
        ``(record texts, unit texts, token counts, vectors)``: as :func:`derive_forms`
        returns them, and the vectors in ``to_embed``'s order (``None`` if none).
    """
    to_embed = to_embed if embed is not None else []

    def derive(records: Sequence[MemoryRecord], units: Sequence[int]
               ) -> tuple[list[str], list[str], list[int]]:
        return derive_forms([(r, [events[e] for e in r.entry_ids]) for r in records],
                            [events[e] for e in units], rehydrate=rehydrate, rung=rung,
                            unit_form=unit_form, tokenizer=tokenizer)

    def vectors_of(ids: Sequence[int]) -> np.ndarray:
        assert embed is not None  # to_embed is empty without it
        return embed([rehydrate([events[e]], 0) for e in ids])

    if len(records) <= RECORDS_PART and len(units) <= UNITS_PART \
            and len(to_embed) <= EMBED_PART:
        def build() -> tuple[list[str], list[str], list[int], np.ndarray | None]:
            return (*derive(records, units), vectors_of(to_embed) if to_embed else None)
        return await offloader.run(build)
    record_parts, unit_parts, embedded = await concurrently([
        functools.partial(_in_parts, offloader, functools.partial(derive, units=()),
                          records, RECORDS_PART),
        functools.partial(_in_parts, offloader, functools.partial(derive, ()), units,
                          UNITS_PART),
        functools.partial(_in_parts, offloader, vectors_of, to_embed, EMBED_PART)])
    derived = record_parts + unit_parts
    return ([t for part in record_parts for t in part[0]],
            [t for part in unit_parts for t in part[1]],
            [n for part in derived for n in part[2]],
            np.concatenate(embedded) if embedded else None)


async def _in_parts(offloader: Offloader, fn: Callable[[Sequence[Any]], Any],
                    items: Sequence[Any], size: int) -> list[Any]:
    """``fn`` over ``items`` in parts of at most ``size``; no call for no items."""
    return await offloader.run_chunks(fn, items, max_chunk=size) if items else []
