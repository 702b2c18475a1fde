"""Copy-on-write maps and sets: a new version costs what changed, not what is held.

A :class:`~solace.memory.tier_view.TierView` is one instant of an agent's tiers, and
the next view is the last one with the records that changed since. Copying its
dictionaries for every view cost time in proportion to everything held (25 ms an
agent at a million events, paid by each recall while an import runs). A
:class:`LayeredDict` instead shares a *base* dict with the version it was derived
from and keeps its own changes in a small top layer (entries set, keys gone). When
the layer outgrows ``8 * sqrt(len(base))`` entries (at least 1,024), the next version
folds it into a fresh base, so a version costs O(sqrt(n)) amortised and a lookup
at most two dict probes.

A base is never written once shared: every write goes to the top layer of the one
version that makes it, so older versions read exactly what they held.

Pure: no I/O, no awaits.
"""

from __future__ import annotations

import math
from collections.abc import (
    ItemsView,
    Iterable,
    Iterator,
    KeysView,
    Mapping,
    MutableMapping,
    Set,
    ValuesView,
)
from typing import TypeVar

__all__ = ["LayeredDict", "LayeredSet"]

K = TypeVar("K")
V = TypeVar("V")

#: The top layer is folded into a new base past ``max(FLOOR, SCALE * sqrt(base))``.
FLOOR = 1024
SCALE = 8

_MISSING = object()


class LayeredDict(MutableMapping[K, V]):
    """A dict whose versions share one base (see the module docstring).

    ``LayeredDict(items)`` holds a copy of ``items``; :meth:`owning` takes a dict
    nobody will write again as its base, uncopied. :meth:`derived` is a new version
    equal to this one that changes independently of it. Iteration yields the base's
    keys first (in its order, less those changed), then the top layer's; a version
    with no layer iterates its base at dict speed, and its ``keys()``, ``items()`` and
    ``values()`` are the base's own views (they do not follow later writes: take them
    again after writing).
    """

    __slots__ = ("_base", "_gone", "_len", "_top")

    def __init__(self, items: Mapping[K, V] | Iterable[tuple[K, V]] = ()) -> None:
        self._base: dict[K, V] = dict(items)
        self._top: dict[K, V] = {}
        self._gone: set[K] = set()  # base keys deleted in this version (never in _top)
        self._len = len(self._base)

    @classmethod
    def owning(cls, base: dict[K, V]) -> LayeredDict[K, V]:
        """A map over ``base`` itself, which the caller must never write again."""
        layer: LayeredDict[K, V] = cls()
        layer._base, layer._len = base, len(base)
        return layer

    def derived(self) -> LayeredDict[K, V]:
        """A new version equal to this one; either may change without the other seeing."""
        child: LayeredDict[K, V] = LayeredDict.__new__(LayeredDict)
        if len(self._top) + len(self._gone) > max(FLOOR, SCALE * math.isqrt(len(self._base))):
            base = self._base.copy()
            for key in self._gone:
                del base[key]
            base.update(self._top)
            child._base, child._top, child._gone = base, {}, set()
        else:
            child._base, child._top, child._gone = self._base, dict(self._top), set(self._gone)
        child._len = self._len
        return child

    def __getitem__(self, key: K) -> V:
        value = self._top.get(key, _MISSING)
        if value is not _MISSING:
            return value  # type: ignore[return-value]
        if key in self._gone:
            raise KeyError(key)
        return self._base[key]

    def __contains__(self, key: object) -> bool:
        return key in self._top or (key in self._base and key not in self._gone)

    def __setitem__(self, key: K, value: V) -> None:
        if key not in self:
            self._len += 1
        self._gone.discard(key)
        self._top[key] = value

    def __delitem__(self, key: K) -> None:
        if key not in self:
            raise KeyError(key)
        self._top.pop(key, None)
        if key in self._base:
            self._gone.add(key)
        self._len -= 1

    def __iter__(self) -> Iterator[K]:
        top, gone = self._top, self._gone
        if top or gone:
            yield from (k for k in self._base if k not in top and k not in gone)
            yield from top
        else:
            yield from self._base

    def __len__(self) -> int:
        return self._len

    def keys(self) -> KeysView[K]:
        return self._base.keys() if self._flat() else super().keys()

    def items(self) -> ItemsView[K, V]:
        return self._base.items() if self._flat() else super().items()

    def values(self) -> ValuesView[V]:
        return self._base.values() if self._flat() else super().values()

    def _flat(self) -> bool:
        """Whether this version is its base alone (no layer of its own)."""
        return not self._top and not self._gone

    def __repr__(self) -> str:
        return f"LayeredDict({dict(self.items())!r})"


class LayeredSet(Set[K]):
    """A set whose versions share one base, as :class:`LayeredDict` (its members are
    that dict's keys). Immutable: :meth:`changed` is a new version."""

    __slots__ = ("_members",)

    def __init__(self, members: Iterable[K] = ()) -> None:
        self._members: LayeredDict[K, None] = LayeredDict((m, None) for m in members)

    def changed(self, added: Iterable[K] = (), removed: Iterable[K] = ()) -> LayeredSet[K]:
        """This set without ``removed`` and with ``added`` (a member in both stays)."""
        child: LayeredSet[K] = LayeredSet.__new__(LayeredSet)
        child._members = members = self._members.derived()
        for m in removed:
            members.pop(m, None)
        for m in added:
            members[m] = None
        return child

    def __contains__(self, member: object) -> bool:
        return member in self._members

    def __iter__(self) -> Iterator[K]:
        return iter(self._members)

    def __len__(self) -> int:
        return len(self._members)

    def __repr__(self) -> str:
        return f"LayeredSet({set(self)!r})"
