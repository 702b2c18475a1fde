"""The working tier: an agent's recent material at rungs 0–2, under a token budget.

Records are kept twice over, on purpose: as :class:`MemoryRecord` objects (what
callers read and what the ladder rewrites) and as columnar numpy arrays (what the
fade score reads), so that scoring 100k records is a handful of vector operations
and no Python loop. Rows are packed: removing a record moves the last row into its
place, so every column is a contiguous ``[:len]`` view.

The tier enforces nothing about its budget — the fade coroutine does — but it keeps
``total_tokens`` exact at every step, which is what the budget is checked against.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from solace.memory.changes import ChangeLog
from solace.memory.fade import FadeColumns
from solace.memory.record import MemoryRecord, check_record

__all__ = ["WorkingTier"]

_INITIAL_CAPACITY = 64


class WorkingTier:
    """One agent's working tier.

    Args:
        budget_tokens: the working budget (> 0); retunable through :attr:`budget_tokens`.
        dim: embedding width; every record added must carry an embedding of this width.

    Guarantees: ``total_tokens == sum(r.tokens for r in records())`` after every call;
    record ids are unique; every record has rung 0, 1 or 2.
    """

    def __init__(self, budget_tokens: int, *, dim: int) -> None:
        self.budget_tokens = budget_tokens
        if dim <= 0:
            raise ValueError(f"dim must be > 0, got {dim!r}")
        self.dim = dim
        self._records: list[MemoryRecord] = []
        self._row: dict[int, int] = {}
        self._total = 0
        #: Bumped by every add, replace and remove (not by touch): equal versions,
        #: the same records (what retrieval's indexes were built from).
        self.version = 0
        #: Which records each bump changed (retrieval follows the tier by it).
        self.changes = ChangeLog()
        cap = _INITIAL_CAPACITY
        self._record_id = np.zeros(cap, dtype=np.int64)
        self._rung = np.zeros(cap, dtype=np.int8)
        self._tokens = np.zeros(cap, dtype=np.int64)
        self._created = np.zeros(cap, dtype=np.float64)
        self._last_referenced = np.zeros(cap, dtype=np.float64)
        self._references = np.zeros(cap, dtype=np.float64)
        self._emotional_weight = np.zeros(cap, dtype=np.float64)
        self._event_ts = np.zeros(cap, dtype=np.float64)
        self._n_events = np.zeros(cap, dtype=np.int64)
        self._n_tags = np.zeros(cap, dtype=np.float64)
        self._embeddings = np.zeros((cap, dim), dtype=np.float32)

    # ------------------------------------------------------------------ reading

    @property
    def budget_tokens(self) -> int:
        """The token budget the fade keeps the tier within."""
        return self._budget

    @budget_tokens.setter
    def budget_tokens(self, value: int) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValueError(f"budget_tokens must be a positive int, got {value!r}")
        self._budget = value

    @property
    def total_tokens(self) -> int:
        """Sum of the records' tokens (exact)."""
        return self._total

    def __len__(self) -> int:
        return len(self._records)

    def __contains__(self, record_id: object) -> bool:
        return record_id in self._row

    def __iter__(self) -> Iterator[MemoryRecord]:
        return iter(list(self._records))

    def records(self) -> list[MemoryRecord]:
        """Every record (a new list; row order, which changes as records leave)."""
        return list(self._records)

    def get(self, record_id: int) -> MemoryRecord | None:
        """The record with ``record_id``, or None if it is not in working."""
        row = self._row.get(record_id)
        return None if row is None else self._records[row]

    def row_of(self, record_id: int) -> int:
        """The record's row in the columns.

        Raises:
            KeyError: naming the id, if it is not in working.
        """
        try:
            return self._row[record_id]
        except KeyError:
            raise KeyError(f"record {record_id} is not in the working tier") from None

    def at_rows(self, rows: np.ndarray) -> list[MemoryRecord]:
        """The records at ``rows`` (as returned by the fade planner), in that order."""
        return [self._records[int(r)] for r in rows]

    def columns(self) -> FadeColumns:
        """Views of the fade columns, valid until the tier next changes."""
        n = len(self._records)
        return FadeColumns(
            record_id=self._record_id[:n],
            rung=self._rung[:n],
            tokens=self._tokens[:n],
            created=self._created[:n],
            last_referenced=self._last_referenced[:n],
            references=self._references[:n],
            emotional_weight=self._emotional_weight[:n],
            n_tags=self._n_tags[:n],
        )

    def embeddings(self) -> tuple[np.ndarray, np.ndarray]:
        """``(record ids int64 (n,), embeddings float32 (n, dim))``, row-aligned views.

        Valid until the tier next changes; copy them to keep them across an ``await``.
        """
        n = len(self._records)
        return self._record_id[:n], self._embeddings[:n]

    def recall_columns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(record ids int64, newest event times, emotional weights, events each
        stands for int64)`` (n,) each, row-aligned views: what recall scores every
        working record on. Valid until the tier next changes."""
        n = len(self._records)
        return (self._record_id[:n], self._event_ts[:n], self._emotional_weight[:n],
                self._n_events[:n])

    def tokens_by_rung(self) -> dict[int, int]:
        """Working tokens at each rung (0, 1, 2)."""
        n = len(self._records)
        sums = np.bincount(self._rung[:n], weights=self._tokens[:n], minlength=3)
        return {r: int(sums[r]) for r in range(3)}

    def count_by_rung(self) -> dict[int, int]:
        """Number of working records at each rung (0, 1, 2)."""
        counts = np.bincount(self._rung[: len(self._records)], minlength=3)
        return {r: int(counts[r]) for r in range(3)}

    # ----------------------------------------------------------------- changing

    def add(self, record: MemoryRecord) -> None:
        """Add ``record`` (rung 0–2, with an embedding of width ``dim``).

        Raises:
            ValueError: the id is already in working, the rung is not 0–2, or the
                embedding is missing or of the wrong shape.
        """
        check_record(record, tier="working", dim=self.dim)
        if record.record_id in self._row:
            raise ValueError(f"record {record.record_id} is already in the working tier")
        n = len(self._records)
        if n == len(self._record_id):
            self._grow()
        self._records.append(record)
        self._row[record.record_id] = n
        self._write_row(n, record)
        self._total += record.tokens
        self.version += 1
        self.changes.note(self.version, (record.record_id,))

    def replace(self, record: MemoryRecord) -> MemoryRecord:
        """Put ``record`` in place of the working record with the same id; return the old.

        Raises:
            KeyError: no record with that id is in working.
            ValueError: as :meth:`add`.
        """
        check_record(record, tier="working", dim=self.dim)
        row = self.row_of(record.record_id)
        old = self._records[row]
        self._records[row] = record
        self._write_row(row, record)
        self._total += record.tokens - old.tokens
        self.version += 1
        self.changes.note(self.version, (record.record_id,))
        return old

    def remove(self, record_id: int) -> MemoryRecord:
        """Take the record out of working and return it.

        Raises:
            KeyError: naming the id, if it is not in working.
        """
        row = self.row_of(record_id)
        last = len(self._records) - 1
        record = self._records[row]
        if row != last:
            moved = self._records[last]
            self._records[row] = moved
            self._row[moved.record_id] = row
            for column in self._arrays():
                column[row] = column[last]
        self._records.pop()
        del self._row[record_id]
        self._total -= record.tokens
        self.version += 1
        self.changes.note(self.version, (record_id,))
        return record

    def touch(self, record_id: int, now: float) -> None:
        """Count one reference to the record: ``references += 1``, ``last_referenced = now``.

        Raises:
            KeyError: naming the id, if it is not in working.
        """
        row = self.row_of(record_id)
        record = self._records[row]
        record.references += 1
        record.last_referenced = now
        self._references[row] = record.references
        self._last_referenced[row] = now

    # ---------------------------------------------------------------- internals

    def _arrays(self) -> tuple[np.ndarray, ...]:
        return (
            self._record_id, self._rung, self._tokens, self._created, self._last_referenced,
            self._references, self._emotional_weight, self._event_ts, self._n_events,
            self._n_tags, self._embeddings,
        )

    def _write_row(self, row: int, record: MemoryRecord) -> None:
        self._record_id[row] = record.record_id
        self._rung[row] = record.rung
        self._tokens[row] = record.tokens
        self._created[row] = record.created
        self._last_referenced[row] = record.last_referenced
        self._references[row] = record.references
        self._emotional_weight[row] = record.emotional_weight
        self._event_ts[row] = record.event_ts
        self._n_events[row] = len(record.entry_ids)
        self._n_tags[row] = len(record.tags)
        assert record.embedding is not None  # checked by _check
        self._embeddings[row] = record.embedding

    def _grow(self) -> None:
        cap = len(self._record_id) * 2
        self._record_id = _resized(self._record_id, cap)
        self._rung = _resized(self._rung, cap)
        self._tokens = _resized(self._tokens, cap)
        self._created = _resized(self._created, cap)
        self._last_referenced = _resized(self._last_referenced, cap)
        self._references = _resized(self._references, cap)
        self._emotional_weight = _resized(self._emotional_weight, cap)
        self._event_ts = _resized(self._event_ts, cap)
        self._n_events = _resized(self._n_events, cap)
        self._n_tags = _resized(self._n_tags, cap)
        self._embeddings = _resized(self._embeddings, cap)


def _resized(array: np.ndarray, capacity: int) -> np.ndarray:
    out = np.zeros((capacity, *array.shape[1:]), dtype=array.dtype)
    out[: len(array)] = array
    return out
