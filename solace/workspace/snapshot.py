"""The workspace's projection kept across restarts: a sealed snapshot and its checkpoint.

A restart folds only the ``SOURCE_KINDS`` events after the snapshot's checkpoint
instead of every one since entry 1 (:meth:`~solace.workspace.Workspace.replaying`).
What is kept is what a replay folds: the :class:`~solace.workspace.daily.Ledger` (each
day's bullet sources, topic titles, notes, decisions, imported digests, which days
hold which fact) and each file's :class:`~solace.workspace.overlay.HumanLayer`.

No fact memory text is in it. The ledger names a fact-memory bullet by its
``(memory id, fact id)`` only and a render looks the text up in fact memory's
projection (whose own snapshot seals each text under the fact's key,
:mod:`solace.facts.snapshot`); a human's edit keeps a removed item's hash, never its
text. So a fact deleted or forgotten after the snapshot was written is not readable
from this file even with the home's key ring, and its bullet is not rendered again
after a restart (fact memory no longer knows its text). There is no fact text here
to seal a second time under the fact's own key.

The snapshot is a cache: one that is missing, damaged, of another format, of another
time zone (the ledger's days are calendar dates in ``[workspace] timezone``) or
newer than the log is refused (one WARNING line) and the workspace replays the
substrate from the start. :func:`encode` / :func:`decode` are pure;
:func:`write_encoded` / :func:`read_snapshot` seal with the substrate's key ring and
write atomically (:func:`solace.sealed.write_sealed`). Blocking: call through the
offloader.

The snapshot is the ledger's persistence, so it reads and sets the ledger's private
indexes (``_fact_days``, ``_memory_days``, ``_seen``) in this one place.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from datetime import date, tzinfo
from pathlib import Path
from typing import Any

import msgpack

from solace.sealed import (
    SnapshotRefused,
    read_checkpointed,
    refusing_malformed,
    snapshot_body,
    write_sealed,
)
from solace.workspace.daily import Entry, Ledger
from solace.workspace.overlay import HumanItem, HumanLayer
from substrate import KeyRing

__all__ = ["FORMAT", "Kept", "SnapshotRefused", "decode", "encode", "read_snapshot",
           "write_encoded"]

#: Bumped whenever the ledger's or the layers' contents or meaning change: a snapshot
#: of another format is refused and the workspace replays the substrate.
FORMAT = 1
_PURPOSE, _ROLE = "snapshot", "workspace-projection"


@dataclass(slots=True)
class Kept:
    """What a snapshot restores: the ledger and each file's human layer."""

    ledger: Ledger
    layers: dict[str, HumanLayer] = field(default_factory=dict)


# ------------------------------------------------------------------ encoding


def _entry(e: Entry) -> list[Any]:
    return [e.ts, e.subject, e.text, list(e.fact) if e.fact is not None else None]


def _digest_rows(ledger: Ledger) -> list[list[Any]]:
    """Each day's digest as (day, coverage, the positions of its entries in the day's
    list): the ledger finds a superseded digest's bullets by identity."""
    rows = []
    for day, (coverage, entries) in ledger.digests.items():
        where = {id(x): i for i, x in enumerate(ledger.days.get(day, ()))}
        rows.append([day.isoformat(), coverage,
                     [where[id(e)] for e in entries if id(e) in where]])
    return rows


def _layer_row(rel: str, layer: HumanLayer) -> list[Any]:
    return [rel, sorted(layer.removed),
            [[h, i.section, i.text, i.ts, i.replaces] for h, i in layer.items.items()]]


def encode(ledger: Ledger, layers: dict[str, HumanLayer], checkpoint: int, *,
           zone: str) -> bytes:
    """The snapshot of ``ledger`` and ``layers`` (every ``SOURCE_KINDS`` event up to
    ``checkpoint`` folded in, and the later ones the ledger has seen), its days dated
    in the time zone named ``zone``."""
    body = {
        "format": FORMAT,
        "checkpoint": int(checkpoint),
        "zone": zone,
        "last_entry_id": ledger.last_entry_id,
        "seen_after": sorted(i for i in ledger._seen if i > checkpoint),
        "days": [[d.isoformat(), [_entry(e) for e in es]] for d, es in ledger.days.items()],
        "digests": _digest_rows(ledger),
        "titles": [[t, title] for t, title in ledger.titles.items()],
        "active_topic": ledger.active_topic,
        "notes": [[t, list(lines)] for t, lines in ledger.notes.items()],
        "decisions": [[ts, text] for ts, text in ledger.decisions],
        "fact_days": [[m, f, d.isoformat()] for (m, f), d in ledger._fact_days.items()],
        "memory_days": [[m, sorted(d.isoformat() for d in ds)]
                        for m, ds in ledger._memory_days.items()],
        "layers": [_layer_row(rel, layer) for rel, layer in layers.items()],
    }
    return msgpack.packb(body, use_bin_type=True)  # type: ignore[no-any-return]


# ------------------------------------------------------------------ decoding


def _restore_entry(row: list[Any]) -> Entry:
    ts, subject, text, fact = row
    ref = (str(fact[0]), str(fact[1])) if fact is not None else None
    return Entry(float(ts), str(subject), str(text), ref)


def _restore_ledger(body: dict[str, Any], tz: tzinfo) -> Ledger:
    ledger = Ledger(tz)
    checkpoint = int(body["checkpoint"])
    ledger.floor = checkpoint  # every event up to the checkpoint is folded in
    ledger.last_entry_id = int(body["last_entry_id"])
    ledger._seen = {int(i) for i in body["seen_after"]}
    ledger.days = {date.fromisoformat(d): [_restore_entry(r) for r in rows]
                   for d, rows in body["days"]}
    for d, coverage, positions in body["digests"]:
        day = date.fromisoformat(d)
        held = ledger.days.get(day, [])
        ledger.digests[day] = (str(coverage), [held[int(i)] for i in positions])
    ledger.titles = {str(t): str(title) for t, title in body["titles"]}
    ledger.active_topic = str(body["active_topic"])
    ledger.notes = {str(t): [str(x) for x in lines] for t, lines in body["notes"]}
    ledger.decisions = [(float(ts), str(text)) for ts, text in body["decisions"]]
    ledger._fact_days = {(str(m), str(f)): date.fromisoformat(d)
                         for m, f, d in body["fact_days"]}
    ledger._memory_days = {str(m): {date.fromisoformat(d) for d in ds}
                           for m, ds in body["memory_days"]}
    return ledger


def _restore_layer(removed: list[Any], items: list[Any]) -> HumanLayer:
    return HumanLayer(
        removed={str(h) for h in removed},
        items={str(h): HumanItem(str(section), str(text), float(ts), str(replaces))
               for h, section, text, ts, replaces in items})


def decode(data: bytes, *, tz: tzinfo, zone: str) -> tuple[Kept, int]:
    """``(kept, checkpoint)`` from :func:`encode`'s bytes, its days dated in ``tz``.

    Raises:
        SnapshotRefused: not a snapshot of :data:`FORMAT`, written for another time
            zone than ``zone``, or malformed.
    """
    with refusing_malformed("workspace snapshot"):
        body = snapshot_body(data, format=FORMAT, what="workspace snapshot")
        if body.get("zone") != zone:
            raise SnapshotRefused(f"workspace snapshot dated in time zone "
                                  f"{body.get('zone')!r}, the workspace's is {zone!r}")
        layers = {str(rel): _restore_layer(removed, items)
                  for rel, removed, items in body["layers"]}
        return Kept(_restore_ledger(body, tz), layers), int(body["checkpoint"])


# ------------------------------------------------------------------ files


def write_encoded(path: Path, data: bytes, *, ring: KeyRing) -> Path:
    """Seal :func:`encode`'s ``data`` with ``ring`` and write it atomically."""
    return write_sealed(path, data, ring=ring, purpose=_PURPOSE, role=_ROLE,
                        what="the workspace snapshot")


def read_snapshot(path: Path, *, ring: KeyRing, tz: tzinfo, zone: str,
                  last_id: int) -> tuple[Kept, int] | None:
    """The kept ledger and layers and their checkpoint, or None (logged at WARNING)
    when there is none or it cannot be used: it fails authentication, is of another
    format or time zone, or covers entries the log (ending at ``last_id``) lacks."""
    return read_checkpointed(path, ring=ring, purpose=_PURPOSE, role=_ROLE,
                             decode=functools.partial(decode, tz=tz, zone=zone),
                             last_id=last_id, what="workspace snapshot")
