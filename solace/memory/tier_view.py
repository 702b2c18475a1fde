"""One instant of an agent's two tiers, as retrieval reads them, kept up by delta.

A query works from one :class:`TierView`, taken in a single synchronous step, so
records that fade, merge or move while it awaits change nothing it sees. A view is
built once from every record (:func:`take_view`); after that each new one is the last
one with the records the tiers changed since it applied (:func:`follow_view`, the ids
come from the tiers' :class:`~solace.memory.changes.ChangeLog`): the cost of keeping
retrieval in line with the tiers follows what changed, not how much they hold. Its
maps and its set of long-term ids are copy-on-write (:mod:`solace.memory.layered`):
a view shares them with the one it follows and holds only its own changes on top.

Pure: no I/O, no awaits; the tiers are read, never changed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from solace.memory.layered import LayeredDict, LayeredSet
from solace.memory.record import MemoryRecord

__all__ = ["TierVersions", "TierView", "WorkingColumns", "changed_between", "follow_view",
           "take_view", "versions_of"]

#: ``(id of the working tier, its version, id of the long-term tier, its version)``.
TierVersions = tuple[int, int, int, int]


@dataclass(frozen=True, slots=True)
class TierView:
    """Both tiers of one agent as they were at one instant, with what a query needs.

    Attributes:
        records: every record of both tiers by id (long-term's if one is mid-move and
            in both). working: the working records, in row order.
        working_matrix: their embeddings, row-aligned (a copy).
        working_columns: their record ids, newest event times and emotional weights,
            row-aligned arrays (what recall scores every working record on).
        longterm: ids of the long-term records; longterm_ids: the same, a sorted array.
        owners: unit entry id -> the multi-event record holding it (of several, the
            one with the highest id: the newest, e.g. a cue re-added to working).
        shared: unit entry id -> ids of every multi-event record holding it, for the
            entries held by more than one.
        unit_ids: the keys of ``owners``, a sorted array.
        forms: rung-3 record id -> (injected text, tokens); filled in by the view's
            taker before anyone else reads it.
    """

    records: LayeredDict[int, MemoryRecord]
    working: tuple[MemoryRecord, ...]
    working_matrix: np.ndarray
    working_columns: WorkingColumns
    longterm: LayeredSet[int]
    longterm_ids: np.ndarray
    owners: LayeredDict[int, MemoryRecord]
    shared: LayeredDict[int, frozenset[int]]
    unit_ids: np.ndarray
    forms: LayeredDict[int, tuple[str, int]]


@dataclass(frozen=True, slots=True)
class WorkingColumns:
    """A view's working records as row-aligned arrays: ``record_id`` (int64),
    ``event_ts`` (the newest event each stands for) and ``emotion`` (its emotional
    weight), both float64, and ``single`` (bool: it stands for one event)."""

    record_id: np.ndarray
    event_ts: np.ndarray
    emotion: np.ndarray
    single: np.ndarray


def versions_of(working: Any, longterm: Any) -> TierVersions:
    """The tiers' identities and versions: equal, the same records."""
    return (id(working), working.version, id(longterm), longterm.version)


def changed_between(working: Any, longterm: Any, a: TierVersions,
                    b: TierVersions) -> set[int] | None:
    """The ids of every record that may differ between the tiers at versions ``a`` and
    ``b`` (both of these tier objects), or None when that cannot be told (another tier
    object, or changes older than the tiers' logs keep)."""
    if a[0] != id(working) or b[0] != id(working) or a[2] != id(longterm) \
            or b[2] != id(longterm):
        return None
    in_working: set[int] | None = working.changes.since(min(a[1], b[1]))
    in_longterm: set[int] | None = longterm.changes.since(min(a[3], b[3]))
    if in_working is None or in_longterm is None:
        return None
    return in_working | in_longterm


def _multi(record: MemoryRecord | None) -> Iterable[int]:
    return record.entry_ids if record is not None and len(record.entry_ids) > 1 else ()


def _working_part(working: Any) -> tuple[tuple[MemoryRecord, ...], np.ndarray, WorkingColumns]:
    # Row-aligned views of live columns: copied.
    _ids, matrix = working.embeddings()
    ids, event_ts, emotion, events = working.recall_columns()
    return tuple(working.records()), matrix.copy(), WorkingColumns(
        record_id=ids.copy(), event_ts=event_ts.copy(), emotion=emotion.copy(),
        single=events == 1)


def take_view(working: Any, longterm: Any) -> TierView:
    """A view of every record of both tiers (no forms yet: the caller builds them)."""
    rows, matrix, columns = _working_part(working)
    held = list(longterm.records())
    records: dict[int, MemoryRecord] = {r.record_id: r for r in rows}
    records.update((r.record_id, r) for r in held)
    owners: dict[int, MemoryRecord] = {}
    shared: dict[int, frozenset[int]] = {}
    for record in records.values():
        for e in _multi(record):
            other = owners.get(e)
            if other is None:
                owners[e] = record
                continue
            shared[e] = shared.get(e, frozenset({other.record_id})) | {record.record_id}
            if record.record_id > other.record_id:
                owners[e] = record
    return TierView(
        records=LayeredDict.owning(records), working=rows, working_matrix=matrix,
        working_columns=columns, longterm=LayeredSet(r.record_id for r in held),
        longterm_ids=np.sort(np.array([r.record_id for r in held], dtype=np.int64)),
        owners=LayeredDict.owning(owners), shared=LayeredDict.owning(shared),
        unit_ids=_sorted_ids(owners), forms=LayeredDict(),
    )


def _sorted_ids(ids: Iterable[int]) -> np.ndarray:
    return np.sort(np.fromiter(ids, dtype=np.int64))


def _with(ids: np.ndarray, added: Iterable[int], removed: Iterable[int]) -> np.ndarray:
    """The sorted array ``ids`` without ``removed`` and with ``added`` (found and
    inserted by binary search: no sort or scan of the whole array again)."""
    gone = np.unique(_sorted_ids(removed))
    if len(gone) and len(ids):
        at = np.minimum(np.searchsorted(ids, gone), len(ids) - 1)
        ids = np.delete(ids, at[ids[at] == gone])
    new = np.unique(_sorted_ids(added))
    if len(new):
        at = np.searchsorted(ids, new)
        held = (ids[np.minimum(at, len(ids) - 1)] == new) if len(ids) \
            else np.zeros(len(new), dtype=bool)
        ids = np.insert(ids, at[~held], new[~held])
    return ids


def follow_view(old: TierView, working: Any, longterm: Any,
                changed: Iterable[int]) -> tuple[TierView, list[MemoryRecord]]:
    """``old`` with the records ``changed`` since it taken from the tiers as they are.

    Every record not in ``changed`` must be as it was when ``old`` was taken (what
    :func:`changed_between` promises). The result equals :func:`take_view` of the
    tiers now, forms included for every unchanged rung-3 record.

    Returns:
        The new view, and its changed records (whose forms and units the caller
        builds).
    """
    rows, matrix, columns = _working_part(working)
    records = old.records.derived()
    owners, shared, forms = old.owners.derived(), old.shared.derived(), old.forms.derived()
    changed = set(changed)
    added: list[int] = []
    removed: list[int] = []
    fresh: list[MemoryRecord] = []
    entries: set[int] = set()  # units whose holders may have changed
    for rid in changed:
        before = records.pop(rid, None)
        entries.update(_multi(before))
        forms.pop(rid, None)
        if rid in old.longterm:
            removed.append(rid)
        now = longterm.get(rid)
        if now is not None:
            added.append(rid)
        else:
            now = working.get(rid)
        if now is not None:
            records[rid] = now
            fresh.append(now)
            entries.update(_multi(now))
    fresh_holders: dict[int, set[int]] = {}  # unit -> the changed records holding it now
    for record in fresh:
        for e in _multi(record):
            fresh_holders.setdefault(e, set()).add(record.record_id)
    for e in entries:
        was = old.shared.get(e) or (
            frozenset({old.owners[e].record_id}) if e in old.owners else frozenset())
        holders = (was - changed) | fresh_holders.get(e, set())
        shared.pop(e, None)
        owners.pop(e, None)
        if holders:
            owners[e] = records[max(holders)]
            if len(holders) > 1:
                shared[e] = frozenset(holders)
    members = old.longterm.changed(added, removed)
    units = _with(old.unit_ids, (e for e in entries if e in owners and e not in old.owners),
                  (e for e in entries if e in old.owners and e not in owners))
    view = TierView(records=records, working=rows, working_matrix=matrix,
                    working_columns=columns, longterm=members,
                    longterm_ids=_with(old.longterm_ids, added, removed), owners=owners,
                    shared=shared, unit_ids=units, forms=forms)
    return view, fresh
