"""Which records a tier changed, by version: how retrieval's indexes follow a tier.

Each tier bumps its ``version`` on every add, replace and remove, and notes the ids of
the records it changed in its :class:`ChangeLog`. Retrieval's view of the tiers and
its BM25 indexes (:mod:`solace.memory.tier_view`, :class:`~solace.memory.candidates.
Retriever`) then apply only what changed since the version they were built at,
instead of rebuilding from every record after each change. The log keeps the most
recent changes only; a reader older than that is told so (None) and rebuilds.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable

__all__ = ["ChangeLog"]


class ChangeLog:
    """``(version, record id)`` of a tier's recent changes, versions non-decreasing.

    Args:
        keep: at least this many of the newest changes are kept.
    """

    def __init__(self, keep: int = 8192) -> None:
        if keep < 1:
            raise ValueError(f"keep must be >= 1, got {keep!r}")
        self.keep = keep
        self._versions: list[int] = []
        self._ids: list[int] = []
        self._forgotten = -1  # changes at versions up to this one are no longer listed

    def note(self, version: int, record_ids: Iterable[int]) -> None:
        """Record that ``record_ids`` changed, making the tier's version ``version``."""
        for rid in record_ids:
            self._versions.append(version)
            self._ids.append(rid)
        if len(self._ids) > 2 * self.keep:
            cut = len(self._ids) - self.keep
            self._forgotten = self._versions[cut - 1]
            del self._versions[:cut], self._ids[:cut]

    def since(self, version: int) -> set[int] | None:
        """The ids of the records changed after ``version`` (made by later bumps), or
        None when the log no longer reaches back that far."""
        if version < self._forgotten:
            return None
        return set(self._ids[bisect_right(self._versions, version):])
