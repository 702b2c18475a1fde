"""The conversation projection kept across restarts: a sealed snapshot and its checkpoint.

A restart folds only the layer's events after the snapshot's checkpoint instead of
the whole log (:class:`~solace.conversation.store.LayerReplay`). The snapshot is a
cache: a missing, damaged, foreign or newer-than-the-log one is refused (one log
line says why) and the projection is rebuilt from the substrate, which has every
event.

:func:`encode` / :func:`decode` are pure (msgpack of the projection's frozen records,
field by field in declaration order, behind a format version); :func:`write_encoded`
and :func:`read_snapshot` seal them with the substrate's key ring and write
atomically (:func:`solace.sealed.write_sealed`). Blocking: call through the offloader.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, TypeVar

import msgpack

from solace.conversation.model import Fact, Notes, Scope, Session, ThreadItem, Topic
from solace.conversation.projection import Projection
from solace.sealed import (
    SnapshotRefused,
    read_checkpointed,
    refusing_malformed,
    snapshot_body,
    write_sealed,
)
from substrate import KeyRing

__all__ = ["FORMAT", "SnapshotRefused", "decode", "encode", "read_snapshot",
           "write_encoded"]


#: Bumped whenever the projection's records or their meaning change: a snapshot of
#: another format is refused and the projection rebuilt.
FORMAT = 1
_PURPOSE, _ROLE = "snapshot", "conversation-projection"

R = TypeVar("R")
#: The projection's tables of records, each by the field it is keyed on.
_KEYED: tuple[tuple[str, type[Any], str], ...] = (
    ("sessions", Session, "session_id"), ("topics", Topic, "topic_id"),
    ("items", ThreadItem, "entry_id"), ("notes", Notes, "topic_id"),
)


def _row(record: Any) -> list[Any]:
    return [_plain(getattr(record, f.name)) for f in dataclasses.fields(record)]


def _plain(value: Any) -> Any:
    if isinstance(value, Scope):
        return [value.user, value.agent, value.org]
    if isinstance(value, tuple):
        return list(value)
    return value


def _record(cls: type[R], row: list[Any]) -> R:
    values = []
    for f, value in zip(dataclasses.fields(cls), row, strict=True):  # type: ignore[arg-type]
        if f.name == "scope":
            value = Scope(*value)
        elif isinstance(value, list):
            value = tuple(value)
        values.append(value)
    return cls(*values)


def encode(projection: Projection, checkpoint: int) -> bytes:
    """The snapshot of ``projection``, holding every layer event up to ``checkpoint``."""
    body = {
        "format": FORMAT,
        "checkpoint": int(checkpoint),
        "last_entry_id": projection.last_entry_id,
        "max_session_no": projection.max_session_no,
        "max_topic_no": projection.max_topic_no,
        **{name: [_row(r) for r in getattr(projection, name).values()]
           for name, _cls, _key in _KEYED},
        "facts": [[_plain(scope), [_row(f) for f in facts.values()]]
                  for scope, facts in projection.facts.items()],
        "scope_topics": [[_plain(scope), ids] for scope, ids in projection.scope_topics.items()],
    }
    return msgpack.packb(body, use_bin_type=True)  # type: ignore[no-any-return]


def decode(data: bytes) -> tuple[Projection, int]:
    """``(projection, checkpoint)`` from :func:`encode`'s bytes.

    Raises:
        SnapshotRefused: not a snapshot of :data:`FORMAT`, or malformed.
    """
    with refusing_malformed("conversation snapshot"):
        body = snapshot_body(data, format=FORMAT, what="conversation snapshot",
                             strict_map_key=False)
        projection = Projection()
        projection.last_entry_id = int(body["last_entry_id"])
        projection.max_session_no = int(body["max_session_no"])
        projection.max_topic_no = int(body["max_topic_no"])
        for name, cls, key in _KEYED:
            table = getattr(projection, name)
            for row in body[name]:
                record = _record(cls, row)
                table[getattr(record, key)] = record
        for scope, rows in body["facts"]:
            projection.facts[Scope(*scope)] = {
                fact.key: fact for fact in (_record(Fact, r) for r in rows)}
        for scope, ids in body["scope_topics"]:
            projection.scope_topics[Scope(*scope)] = list(ids)
        return projection, int(body["checkpoint"])


def write_encoded(path: Path, data: bytes, *, ring: KeyRing) -> Path:
    """Seal :func:`encode`'s ``data`` and write it atomically
    (:func:`solace.sealed.write_private`)."""
    return write_sealed(path, data, ring=ring, purpose=_PURPOSE, role=_ROLE,
                        what="the conversation snapshot")


def read_snapshot(path: Path, *, ring: KeyRing, last_id: int) -> tuple[Projection, int] | None:
    """The kept projection and its checkpoint, or None (logged at INFO or WARNING) when
    there is none or it cannot be used: it fails authentication, is of another format,
    or covers entries the log (ending at ``last_id``) does not hold."""
    return read_checkpointed(path, ring=ring, purpose=_PURPOSE, role=_ROLE,
                             decode=decode, last_id=last_id, what="conversation snapshot")
