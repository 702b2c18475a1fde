"""Which record stands for each event, in one array indexed by entry id.

Every agent maps each event it ingested to the record standing for it, and a
restart's replay state keeps the same map while it rebuilds the tiers. As a dict that
cost about 100 bytes an entry (a hash slot and two int objects; a tracemalloc trace of
a growing home put the agents' dicts at 105 bytes an event). Entry ids are dense from
1, so an int64 array indexed by entry id holds it in 8 bytes a slot per agent, -1
where no record stands for the event.

Pure: numpy, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

__all__ = ["EntryIndex", "grown_map"]

_NONE = -1


class EntryIndex:
    """entry id -> record id (both >= 0), grown as entry ids grow."""

    __slots__ = ("_ids", "_count")

    def __init__(self) -> None:
        self._ids = np.full(0, _NONE, dtype=np.int64)
        self._count = 0

    def __contains__(self, entry_id: object) -> bool:
        return self.get(entry_id) is not None  # type: ignore[arg-type]

    def __len__(self) -> int:
        return self._count

    def __repr__(self) -> str:
        return f"EntryIndex({self._count} entries)"

    def get(self, entry_id: int, default: int | None = None) -> int | None:
        """The record standing for ``entry_id``, or ``default``."""
        if not isinstance(entry_id, int | np.integer) or not 0 <= entry_id < len(self._ids):
            return default
        record_id = int(self._ids[entry_id])
        return default if record_id == _NONE else record_id

    def __getitem__(self, entry_id: int) -> int:
        record_id = self.get(entry_id)
        if record_id is None:
            raise KeyError(entry_id)
        return record_id

    def __setitem__(self, entry_id: int, record_id: int) -> None:
        if entry_id < 0 or record_id < 0:
            raise ValueError(f"entry and record ids are >= 0, got {entry_id!r} -> "
                             f"{record_id!r}")
        self._ids = grown_map(self._ids, entry_id + 1)
        self._count += int(self._ids[entry_id] == _NONE)
        self._ids[entry_id] = record_id

    def __delitem__(self, entry_id: int) -> None:
        if self.get(entry_id) is None:
            raise KeyError(entry_id)
        self._ids[entry_id] = _NONE
        self._count -= 1

    def set_many(self, entry_ids: Sequence[int] | np.ndarray,
                 record_ids: Sequence[int] | np.ndarray) -> None:
        """``self[e] = r`` for each pair in order (a later pair for the same entry
        wins), in a few array operations: a restart seeds a million entries at once,
        where one ``[]=`` each would cost ~0.5 s of the event loop."""
        entries = np.asarray(entry_ids, dtype=np.int64)
        records = np.asarray(record_ids, dtype=np.int64)
        if entries.shape != records.shape:
            raise ValueError(f"{len(entries)} entry ids but {len(records)} record ids")
        if not len(entries):
            return
        if int(entries.min()) < 0 or int(records.min()) < 0:
            raise ValueError(f"entry and record ids are >= 0, got {int(entries.min())} / "
                             f"{int(records.min())}")
        # the last pair of each entry: the first of each in the reversed arrays
        unique, first = np.unique(entries[::-1], return_index=True)
        values = records[::-1][first]
        self._ids = grown_map(self._ids, int(unique[-1]) + 1)
        self._count += int(np.count_nonzero(self._ids[unique] == _NONE))
        self._ids[unique] = values

    def items(self) -> Iterator[tuple[int, int]]:
        """``(entry id, record id)`` pairs, in entry-id order."""
        held = np.flatnonzero(self._ids != _NONE)
        return zip(held.tolist(), self._ids[held].tolist(), strict=True)

    def copy(self) -> EntryIndex:
        """An independent copy (one array copy)."""
        out = EntryIndex()
        out._ids = self._ids.copy()
        out._count = self._count
        return out


def grown_map(ids: np.ndarray, size: int) -> np.ndarray:
    """``ids`` (an int64 map indexed by id, -1 where unset) with room for ``size``
    entries: itself if it has it, else a copy at least twice as long (and at least
    1,024)."""
    if size <= len(ids):
        return ids
    grown = np.full(max(2 * len(ids), size, 1024), _NONE, dtype=np.int64)
    grown[: len(ids)] = ids
    return grown
