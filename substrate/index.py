"""The in-memory index: entry id → (segment, offset, size) plus header fields for scans.

Ids are consecutive from 1, so entry ``i`` lives at position ``i - 1`` of compact
parallel arrays (~28 bytes per event). Agent and kind names are interned as small codes.
Appends happen under the substrate's lock; readers only look at positions below the
published ``last_id``, which is set after every array has grown.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Mapping

__all__ = ["FrameIndex"]

_OFFSET_BITS = 40  # offsets within a segment < 1 TiB; segment numbers < 2**24


class FrameIndex:
    """Where every frame is, and its agent, kind, key id and timestamp."""

    __slots__ = ("_agent_codes", "_kind_codes", "_meta", "_pos", "_size", "_ts", "agents", "kinds")

    def __init__(self) -> None:
        self._pos = array("Q")  # segment << 40 | offset
        self._size = array("I")
        self._ts = array("d")
        self._meta = array("Q")  # agent code << 32 | kind code << 16 | key id
        self.agents: list[str] = []
        self.kinds: list[str] = []
        self._agent_codes: dict[str, int] = {}
        self._kind_codes: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._pos)

    def agent_code(self, agent: str) -> int | None:
        """The code of ``agent``, or None if no event has it."""
        return self._agent_codes.get(agent)

    def kind_code(self, kind: str) -> int | None:
        """The code of ``kind``, or None if no event has it."""
        return self._kind_codes.get(kind)

    def _code(self, codes: dict[str, int], names: list[str], name: str) -> int:
        code = codes.get(name)
        if code is None:
            code = codes[name] = len(names)
            names.append(name)
        return code

    def add(
        self, segment: int, offset: int, size: int, ts: float, agent: str, kind: str, key_id: int
    ) -> None:
        """Record the next entry (id ``len(self) + 1``)."""
        a = self._agent_codes.get(agent)
        if a is None:
            a = self._code(self._agent_codes, self.agents, agent)
        k = self._kind_codes.get(kind)
        if k is None:
            k = self._code(self._kind_codes, self.kinds, kind)
        self._pos.append(segment << _OFFSET_BITS | offset)
        self._size.append(size)
        self._ts.append(ts)
        self._meta.append(a << 32 | k << 16 | key_id)

    def locate(self, entry_id: int) -> tuple[int, int, int]:
        """``(segment number, offset, size)`` of an indexed entry."""
        pos = self._pos[entry_id - 1]
        return pos >> _OFFSET_BITS, pos & ((1 << _OFFSET_BITS) - 1), self._size[entry_id - 1]

    def matches(
        self, entry_id: int, agent: int | None, kind: int | None, until_ts: float | None
    ) -> bool:
        """Whether the entry has agent code ``agent``, kind code ``kind`` (None = any) and
        ``ts <= until_ts``."""
        meta = self._meta[entry_id - 1]
        if agent is not None and meta >> 32 != agent:
            return False
        if kind is not None and (meta >> 16) & 0xFFFF != kind:
            return False
        return until_ts is None or self._ts[entry_id - 1] <= until_ts

    def matches_kinds(self, entry_id: int, after: Mapping[int, int]) -> bool:
        """Whether the entry's kind code is in ``after`` (kind code -> since id) and its
        id is above that kind's."""
        since = after.get((self._meta[entry_id - 1] >> 16) & 0xFFFF)
        return since is not None and entry_id > since

    def key_id(self, entry_id: int) -> int:
        """The key id entry ``entry_id`` was sealed with."""
        return self._meta[entry_id - 1] & 0xFFFF

    def last_by_key(self) -> dict[int, int]:
        """Key id -> the last entry sealed with it."""
        out: dict[int, int] = {}
        meta = self._meta
        for i in range(len(meta) - 1, -1, -1):
            out.setdefault(meta[i] & 0xFFFF, i + 1)
        return out

    def state(self) -> tuple[list[str], list[str], list[bytes]]:
        """``(agents, kinds, arrays)``: what :meth:`from_state` rebuilds this index from
        (the arrays as machine-order bytes: positions, sizes, timestamps, codes)."""
        arrays = [a.tobytes() for a in (self._pos, self._size, self._ts, self._meta)]
        return list(self.agents), list(self.kinds), arrays

    @classmethod
    def from_state(cls, agents: list[str], kinds: list[str], arrays: list[bytes]
                   ) -> FrameIndex:
        """The index :meth:`state` described.

        Raises:
            ValueError: the arrays do not hold the same number of entries, or a code
                names no agent or kind.
        """
        index = cls()
        for target, blob in zip((index._pos, index._size, index._ts, index._meta), arrays,
                                strict=True):
            if len(blob) % target.itemsize:
                raise ValueError(f"an index array of {len(blob)} bytes is not whole items")
            target.frombytes(blob)
        n = len(index._pos)
        if not len(index._size) == len(index._ts) == len(index._meta) == n:
            raise ValueError("the index arrays hold different numbers of entries")
        if n and max(index._meta) >> 32 >= len(agents):
            raise ValueError("an index entry names an agent code it does not list")
        index.agents, index.kinds = list(agents), list(kinds)
        index._agent_codes = {a: i for i, a in enumerate(agents)}
        index._kind_codes = {k: i for i, k in enumerate(kinds)}
        return index

    def counts(self) -> tuple[dict[str, int], dict[str, int], dict[int, int]]:
        """Event counts by agent, by kind and by key id."""
        meta = Counter(self._meta)
        by_agent: Counter[str] = Counter()
        by_kind: Counter[str] = Counter()
        by_key: Counter[int] = Counter()
        for m, n in meta.items():
            by_agent[self.agents[m >> 32]] += n
            by_kind[self.kinds[(m >> 16) & 0xFFFF]] += n
            by_key[m & 0xFFFF] += n
        return dict(by_agent), dict(by_kind), dict(by_key)
