"""The one codec for :class:`~solace.memory.record.MemoryRecord`.

A record is written in two places: as the attrs of a ``fade`` event in the substrate
(strings only; its text is the event's content) and as a row of a snapshot (a
msgpack-ready list). Both forms come from one field table, so a field added to the
record is added to both or to neither, and a record read back equals the record
written (the embedding travels only in snapshot rows; a fade event says where its
vector came from instead).

Pure: no I/O, no clock.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from solace.memory.record import MemoryRecord

__all__ = ["record_from_attrs", "record_from_row", "record_to_attrs", "record_to_row"]


@dataclass(frozen=True, slots=True)
class _Field:
    name: str
    to_str: Callable[[Any], str]
    from_str: Callable[[str], Any]
    to_row: Callable[[Any], Any]
    from_row: Callable[[Any], Any] | None  # None: the row value is the field's value


# To attr string, from it, to row value, from it. A row value is read back as msgpack
# gives it: to_row made it an int, float, str or bool, which msgpack returns as one,
# so only a sequence (returned as a list) is converted, to the record's tuple.
_Codec = tuple[Callable[[Any], str], Callable[[str], Any], Callable[[Any], Any],
               Callable[[Any], Any] | None]

_INT: _Codec = (lambda v: str(int(v)), int, int, None)
_FLOAT: _Codec = (lambda v: repr(float(v)), float, float, None)
_STR: _Codec = (str, str, str, None)
_BOOL: _Codec = (lambda v: "1" if v else "0", lambda s: s == "1", bool, None)
_INTS: _Codec = (
    lambda v: json.dumps([int(x) for x in v]),
    lambda s: tuple(int(x) for x in json.loads(s)),
    lambda v: list(map(int, v)),  # 6x a listcomp's speed: 4M ids a close at 1M events
    tuple,
)
_STRS: _Codec = (
    lambda v: json.dumps([str(x) for x in v]),
    lambda s: tuple(str(x) for x in json.loads(s)),
    lambda v: list(map(str, v)),
    tuple,
)


# Row order is the snapshot format: append new fields at the end, never reorder.
_FIELDS: tuple[_Field, ...] = tuple(
    _Field(name, *codec) for name, codec in (
        ("record_id", _INT), ("agent", _STR), ("rung", _INT), ("text", _STR),
        ("tokens", _INT), ("source_tokens", _INT), ("entry_ids", _INTS), ("kind", _STR),
        ("speakers", _STRS), ("first_event_ts", _FLOAT), ("event_ts", _FLOAT),
        ("created", _FLOAT), ("last_referenced", _FLOAT), ("references", _INT),
        ("emotional_weight", _FLOAT), ("tags", _STRS), ("private", _BOOL),
        ("span", _INTS),
    )
)
# Fields added after records were first written: a fade event or snapshot row written
# before them reads back with the default (the record's dataclass default).
_OPTIONAL = frozenset({"span"})
_REQUIRED = sum(1 for f in _FIELDS if f.name not in _OPTIONAL)
# A row is the record's fields in its dataclass order (a test holds the two to it), so
# it is passed positionally.
_CONVERTED = tuple((i, f.from_row) for i, f in enumerate(_FIELDS) if f.from_row is not None)
# Carried by the fade event itself (its author and content), not by its attrs.
_OUTSIDE_ATTRS = frozenset({"agent", "text"})


def record_to_attrs(record: MemoryRecord) -> dict[str, str]:
    """The record's fields as fade-event attrs (all but ``agent``, ``text`` and the
    embedding, which the event carries as its author, its content and a recipe)."""
    return {f.name: f.to_str(getattr(record, f.name))
            for f in _FIELDS if f.name not in _OUTSIDE_ATTRS}


def record_from_attrs(agent: str, text: str, attrs: Mapping[str, str]) -> MemoryRecord:
    """The record a fade event describes (embedding None).

    Raises:
        KeyError: a field is missing. ValueError / TypeError: a field does not parse.
    """
    values: dict[str, Any] = {"agent": str(agent), "text": str(text)}
    for f in _FIELDS:
        if f.name not in _OUTSIDE_ATTRS and (f.name in attrs or f.name not in _OPTIONAL):
            values[f.name] = f.from_str(attrs[f.name])
    return MemoryRecord(**values)


def record_to_row(record: MemoryRecord, *, with_embedding: bool) -> list[Any]:
    """The record as a msgpack-ready list in the fixed field order, its embedding's
    float32 bytes last (None when ``with_embedding`` is false or it has none)."""
    emb = record.embedding
    return [
        *(f.to_row(getattr(record, f.name)) for f in _FIELDS),
        np.asarray(emb, dtype=np.float32).tobytes() if with_embedding and emb is not None
        else None,
    ]


def record_from_row(row: list[Any]) -> MemoryRecord:
    """The inverse of :func:`record_to_row`, for the row as msgpack gives it back.

    Only the sequences are converted (lists to tuples); every other value is taken as
    it is (at a million events, converting each value again was a second of a
    restart's snapshot reading).

    Raises:
        ValueError: the row has the wrong number of fields.
    """
    if not _REQUIRED + 1 <= len(row) <= len(_FIELDS) + 1:
        raise ValueError(f"a record row has {len(_FIELDS) + 1} fields, or if written before "
                         f"{sorted(_OPTIONAL)} {_REQUIRED + 1} fields, got {len(row)}")
    values = row[:-1]
    for i, convert in _CONVERTED:
        if i < len(values):
            values[i] = convert(values[i])
    record = MemoryRecord(*values)
    emb = row[-1]
    if emb is not None:
        record.embedding = np.frombuffer(emb, dtype=np.float32).copy()
    return record
