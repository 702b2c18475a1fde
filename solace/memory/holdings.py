"""Which events each agent's memory holds, and which of them a peer could add.

Read-through recall (seed 002: "read-through with attribution") lets an agent's recall
draw on its peers' memories. Most of what a peer holds, the asker holds too: every
message reaches Supervisor and Main, Mouth's speech reaches both as well. A peer's
record of an event the asker holds adds nothing the asker's own record does not (the
asker's own record wins, and can be rehydrated as its cue), so a peer is asked only
for the events the asker lacks, and a peer holding none of those is not asked at all.

:class:`Holdings` keeps, per agent, how many of its records hold each event (all of
them; and apart, the ones it may show a peer: not private), and per ordered pair
``(peer, asker)`` how many events the peer may show that the asker holds in no record
(which ones, :meth:`Holdings.lacking` reads off the counts when asked). The retrievers
report every record change as they follow their tiers, so the cost follows what
changed. Counts are numpy arrays indexed by entry id (entry ids are dense from 1): two
bytes per event per agent, and nothing per event per pair (a set of the lacking events
per pair cost 460 bytes per event at 15k events, mostly Supervisor's messages that
Mood, Time and Mouth never hold).

Pure: no I/O, no clock, no awaits.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from solace.memory.record import MemoryRecord

__all__ = ["Held", "Holdings"]

_COUNT = np.uint16
_LIMIT = int(np.iinfo(_COUNT).max)


class Held:
    """The events one agent's records hold (a live view: it follows later changes)."""

    __slots__ = ("_counts",)

    def __init__(self, counts: _Counts) -> None:
        self._counts = counts

    def __contains__(self, entry_id: object) -> bool:
        return isinstance(entry_id, int | np.integer) and self._counts.get(int(entry_id)) > 0

    def __len__(self) -> int:
        return self._counts.nonzero

    def between(self, first: int, last: int) -> int:
        """How many of these events lie strictly between entry ids ``first`` and
        ``last`` (one slice of the counts: keep ``last - first`` small)."""
        counts = self._counts.array
        return int(np.count_nonzero(counts[max(first + 1, 0):min(last, len(counts))]))

    def __repr__(self) -> str:
        return f"Held({len(self)} events)"


class _Counts:
    """entry id -> how many records hold it, grown as ids grow."""

    __slots__ = ("array", "nonzero")

    def __init__(self) -> None:
        self.array = np.zeros(1024, dtype=_COUNT)
        self.nonzero = 0

    def get(self, entry_id: int) -> int:
        return int(self.array[entry_id]) if 0 <= entry_id < len(self.array) else 0

    def bump(self, entry_id: int, by: int) -> tuple[int, int]:
        """Add ``by`` (±) to ``entry_id``'s count; (count before, count after)."""
        if entry_id < 0:
            raise ValueError(f"entry ids are >= 0, got {entry_id!r}")
        if entry_id >= len(self.array):
            grown = np.zeros(max(2 * len(self.array), entry_id + 1), dtype=_COUNT)
            grown[: len(self.array)] = self.array
            self.array = grown
        before = int(self.array[entry_id])
        after = before + by
        if not 0 <= after <= _LIMIT:
            raise ValueError(f"event {entry_id} would be held by {after} records "
                             f"(0..{_LIMIT} are counted)")
        self.array[entry_id] = after
        self.nonzero += (after > 0) - (before > 0)
        return before, after

    def set_all(self, entry_ids: list[int]) -> None:
        """Count exactly ``entry_ids`` (one per record holding each), nothing else."""
        ids = np.asarray(entry_ids, dtype=np.int64)
        if len(ids) and int(ids.min()) < 0:
            raise ValueError(f"entry ids are >= 0, got {int(ids.min())}")
        counts = np.bincount(ids, minlength=len(self.array)) if len(ids) else \
            np.zeros(len(self.array), dtype=np.int64)
        if len(counts) and int(counts.max()) > _LIMIT:
            raise ValueError(f"event {int(counts.argmax())} would be held by "
                             f"{int(counts.max())} records (0..{_LIMIT} are counted)")
        self.array = counts.astype(_COUNT)
        self.nonzero = int(np.count_nonzero(self.array))


def _tally(record: MemoryRecord | None, sign: int, held: dict[int, int],
           shown: dict[int, int]) -> None:
    if record is None:
        return
    for e in record.entry_ids:
        held[e] = held.get(e, 0) + sign
        if not record.private:
            shown[e] = shown.get(e, 0) + sign


class Holdings:
    """Every agent's held events, and what each peer could add to each asker.

    Args:
        agents: the agents' names.
    """

    def __init__(self, agents: Sequence[str]) -> None:
        if len(set(agents)) != len(agents):
            raise ValueError(f"agents must be distinct, got {list(agents)!r}")
        self._agents = tuple(agents)
        self._held = {a: _Counts() for a in agents}
        self._shown = {a: _Counts() for a in agents}
        #: (peer, asker) -> how many events peer may show that asker holds in no record
        self._foreign: dict[tuple[str, str], int] = {
            (p, a): 0 for p in agents for a in agents if p != a}
        #: events appended and not yet delivered to every agent perceiving them (the
        #: runtime's observe marks them): one agent holding such an event while
        #: another does not yet is delivery under way, not something the other lacks
        self.in_flight: set[int] = set()

    def held(self, agent: str) -> Held:
        """The events ``agent``'s records hold, private ones included (a live view)."""
        return Held(self._counts(self._held, agent))

    def can_add(self, peer: str, asker: str) -> bool:
        """Whether ``peer`` holds, in a record it may show, an event ``asker`` lacks
        (one still being delivered does not count)."""
        foreign = self._foreign[self._pair(peer, asker)]
        if foreign and self.in_flight:
            shown, held = self._shown[peer], self._held[asker]
            foreign -= sum(1 for e in self.in_flight if shown.get(e) > 0 and held.get(e) == 0)
        return foreign > 0

    def lacking(self, peer: str, asker: str) -> frozenset[int]:
        """The events ``peer`` may show that ``asker`` holds in no record (one pass over
        both agents' counts)."""
        pair = self._pair(peer, asker)
        return frozenset(self._difference(self._shown[pair[0]], self._held[pair[1]]).tolist())

    def change(self, agent: str, before: MemoryRecord | None,
               after: MemoryRecord | None) -> None:
        """One record of ``agent`` went from ``before`` to ``after`` (None: absent),
        counted net per event (a record grown by one event moves one count)."""
        if (before is not None and after is not None and before.entry_ids == after.entry_ids
                and before.private == after.private):
            return  # moved between tiers, or faded: the same events, shown alike
        held: dict[int, int] = {}
        shown: dict[int, int] = {}
        _tally(before, -1, held, shown)
        _tally(after, 1, held, shown)
        held_counts = self._counts(self._held, agent)
        shown_counts = self._counts(self._shown, agent)
        for e, by in held.items():
            if by:
                self._held_moved(agent, e, *held_counts.bump(e, by))
        for e, by in shown.items():
            if by:
                self._shown_moved(agent, e, *shown_counts.bump(e, by))

    def reset(self, agent: str, records: Iterable[MemoryRecord]) -> None:
        """``agent`` holds exactly ``records`` (a full resync)."""
        held, shown = self._counts(self._held, agent), self._counts(self._shown, agent)
        held_ids: list[int] = []
        shown_ids: list[int] = []
        for record in records:
            held_ids.extend(record.entry_ids)
            if not record.private:
                shown_ids.extend(record.entry_ids)
        held.set_all(held_ids)
        shown.set_all(shown_ids)
        for other in self._agents:
            if other != agent:
                self._foreign[(agent, other)] = len(self._difference(shown, self._held[other]))
                self._foreign[(other, agent)] = len(self._difference(self._shown[other], held))

    # ------------------------------------------------------------ internals

    def _pair(self, peer: str, asker: str) -> tuple[str, str]:
        if (peer, asker) not in self._foreign:
            raise KeyError(f"no agent pair ({peer!r}, {asker!r}) among {self._agents!r}")
        return peer, asker

    def _counts(self, table: dict[str, _Counts], agent: str) -> _Counts:
        try:
            return table[agent]
        except KeyError:
            raise KeyError(f"unknown agent {agent!r} (one of {', '.join(self._agents)})"
                           ) from None

    @staticmethod
    def _difference(shown: _Counts, held: _Counts) -> np.ndarray:
        """The entry ids ``shown`` counts and ``held`` does not, ascending."""
        a = shown.array > 0
        n = min(len(a), len(held.array))
        a[:n] &= held.array[:n] == 0
        return np.flatnonzero(a)

    def _held_moved(self, agent: str, e: int, before: int, after: int) -> None:
        if (before == 0) == (after == 0):
            return
        by = -1 if after > 0 else 1  # held now: no peer adds it; lacked now: a showing peer does
        for peer in self._agents:
            if peer != agent and self._shown[peer].get(e) > 0:
                self._foreign[(peer, agent)] += by

    def _shown_moved(self, agent: str, e: int, before: int, after: int) -> None:
        if (before == 0) == (after == 0):
            return
        by = 1 if after > 0 else -1
        for asker in self._agents:
            if asker != agent and self._held[asker].get(e) == 0:
                self._foreign[(agent, asker)] += by
