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
from collections.abc import Callable, Sequence
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
    offloader: Offloader,
    records: Sequence[tuple[MemoryRecord, Sequence[Any]]], units: Sequence[Any],
    to_embed: Sequence[Any], *, rehydrate: Callable[[Sequence[Any], int], str], rung: int,
    unit_form: Callable[[Any], str], tokenizer: Any,
    embed: Callable[[list[str]], np.ndarray] | None,
) -> tuple[list[str], list[str], list[int], np.ndarray | None]:
    """:func:`derive_forms` of ``records`` and ``units``, and the embeddings of the
    ``to_embed`` events' raw texts (none without ``embed``), through ``offloader``: in
    one thread call when each kind fits in one part, else in parts (:data:`RECORDS_PART`,
    :data:`UNITS_PART`, :data:`EMBED_PART`) that run on all of its threads at once.

    Returns:
        ``(record texts, unit texts, token counts, vectors)``: as :func:`derive_forms`
        returns them, and the vectors in ``to_embed``'s order (``None`` if none).
    """
    derive = functools.partial(derive_forms, rehydrate=rehydrate, rung=rung,
                               unit_form=unit_form, tokenizer=tokenizer)
    to_embed = to_embed if embed is not None else []

    def build(records: Sequence[tuple[MemoryRecord, Sequence[Any]]], units: Sequence[Any],
              to_embed: Sequence[Any]) -> tuple[list[str], list[str], list[int],
                                                np.ndarray | None]:
        derived = derive(records, units) if records or units else ([], [], [])
        if not to_embed or embed is None:
            return (*derived, None)
        return (*derived, embed([rehydrate([event], 0) for event in to_embed]))

    if len(records) <= RECORDS_PART and len(units) <= UNITS_PART \
            and len(to_embed) <= EMBED_PART:
        return await offloader.run(build, records, units, to_embed)
    parts = [functools.partial(offloader.run, build, part, [], [])
             for part in _split(records, RECORDS_PART)]
    parts += [functools.partial(offloader.run, build, [], part, [])
              for part in _split(units, UNITS_PART)]
    parts += [functools.partial(offloader.run, build, [], [], part)
              for part in _split(to_embed, EMBED_PART)]
    built = await concurrently(parts)
    vectors = [part[3] for part in built if part[3] is not None]
    return ([t for part in built for t in part[0]], [t for part in built for t in part[1]],
            [n for part in built for n in part[2]], np.concatenate(vectors) if vectors else None)


def _split(items: Sequence[Any], size: int) -> list[Sequence[Any]]:
    return [items[i:i + size] for i in range(0, len(items), size)]
