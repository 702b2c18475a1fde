"""Fact memory's projection kept across restarts, without keeping a deleted fact's text.

A restart folds only the ``memfact`` events after the snapshot's checkpoint. Delete
and forget destroy a fact's key (:mod:`solace.facts.vault`) so that its text cannot
be recovered from anything under the home; a snapshot keeps that promise by holding
every fact's text sealed under the fact's own key, exactly as its event does
(:func:`~solace.facts.events.seal_text`): a fact whose key is gone when the snapshot
is read is dropped, as a replay of its event would drop it. The whole file is sealed
with the substrate's key ring too.

:func:`encode` / :func:`decode` are pure apart from the vault's key lookups;
:func:`write_encoded` / :func:`read_snapshot` do the sealed file I/O (blocking: call
through the offloader). A snapshot that is missing, damaged, of another format or
newer than the log is refused (one log line) and the events are replayed instead.
"""

from __future__ import annotations

import dataclasses
import functools
import secrets
from collections.abc import Callable
from pathlib import Path

import msgpack

from solace.facts.events import open_text, seal_text
from solace.facts.model import Fact, FactStatus, WriteClass
from solace.facts.projection import FactProjection
from solace.sealed import (
    SnapshotRefused,
    read_checkpointed,
    refusing_malformed,
    snapshot_body,
    write_sealed,
)
from substrate import KeyRing

__all__ = ["FORMAT", "SnapshotRefused", "decode", "encode", "read_snapshot", "write_encoded"]


FORMAT = 1
_PURPOSE, _ROLE = "snapshot", "fact-projection"
_FIELDS = tuple(f.name for f in dataclasses.fields(Fact))
_NONCE = 12

#: ``(memory id, fact id) -> the fact's key``, None once it is destroyed.
KeyOf = Callable[[str, str], bytes | None]


def encode(projection: FactProjection, checkpoint: int, key_of: KeyOf) -> bytes:
    """The snapshot of ``projection`` (every ``memfact`` event up to ``checkpoint``
    folded in), each fact's text sealed under its own key; a fact whose key is gone
    is left out."""
    rows = []
    for memory_id in projection.memory_ids():
        for fact in projection.facts(memory_id):
            key = key_of(fact.memory_id, fact.fact_id)
            if key is None:
                continue
            row = [getattr(fact, name) for name in _FIELDS]
            row[_FIELDS.index("text")] = seal_text(
                fact.text, key=key, memory_id=fact.memory_id, fact_id=fact.fact_id,
                nonce=secrets.token_bytes(_NONCE))
            row[_FIELDS.index("conflicts_with")] = list(fact.conflicts_with)
            row[_FIELDS.index("status")] = fact.status.value
            row[_FIELDS.index("write_class")] = fact.write_class.value
            rows.append(row)
    body = {"format": FORMAT, "checkpoint": int(checkpoint),
            "last_entry_id": projection.last_entry_id, "fields": list(_FIELDS), "facts": rows}
    return msgpack.packb(body, use_bin_type=True)  # type: ignore[no-any-return]


def decode(data: bytes, key_of: KeyOf) -> tuple[FactProjection, int]:
    """``(projection, checkpoint)`` from :func:`encode`'s bytes; facts whose key is gone
    are dropped.

    Raises:
        SnapshotRefused: not a snapshot of :data:`FORMAT` (or of another field list),
            malformed, or a text that does not open under its key.
    """
    with refusing_malformed("fact snapshot"):
        body = snapshot_body(data, format=FORMAT, what="fact snapshot")
        if body.get("fields") != list(_FIELDS):
            raise SnapshotRefused(f"fact snapshot format {FORMAT} of other fields: "
                                  f"{body.get('fields')!r}")
        facts = []
        for row in body["facts"]:
            values = dict(zip(_FIELDS, row, strict=True))
            key = key_of(values["memory_id"], values["fact_id"])
            if key is None:
                continue  # deleted or forgotten after the snapshot: its text is gone
            values["text"] = open_text(values["text"], key=key,
                                       memory_id=values["memory_id"],
                                       fact_id=values["fact_id"])
            values["conflicts_with"] = tuple(values["conflicts_with"])
            values["status"] = FactStatus(values["status"])
            values["write_class"] = WriteClass(values["write_class"])
            facts.append(Fact(**values))
        return FactProjection.restored(facts, int(body["last_entry_id"])), \
            int(body["checkpoint"])


def write_encoded(path: Path, data: bytes, *, ring: KeyRing) -> Path:
    """Seal :func:`encode`'s ``data`` with ``ring`` and write it atomically."""
    return write_sealed(path, data, ring=ring, purpose=_PURPOSE, role=_ROLE,
                        what="the fact memory snapshot")


def read_snapshot(path: Path, *, ring: KeyRing, key_of: KeyOf,
                  last_id: int) -> tuple[FactProjection, int] | None:
    """The kept projection and its checkpoint, or None (logged) when there is none or
    it cannot be used (damaged, another format, or newer than the log at ``last_id``)."""
    return read_checkpointed(path, ring=ring, purpose=_PURPOSE, role=_ROLE,
                             decode=functools.partial(decode, key_of=key_of),
                             last_id=last_id, what="fact memory snapshot")
