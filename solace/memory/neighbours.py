"""Candidates for the turns said just after an agent's best candidates.

The context part (:mod:`solace.memory.adjacent`) lifts a turn said next to a better
candidate: a reply rarely repeats the question's words, but it is said right after
the turn that asked. It lifts only a turn that is a candidate itself, and a turn is
one by its own similarity or words. In a small memory the reply usually is, far down.
In a big one the candidate pools fill with near-copies of the turns most like the
query (the same question asked in many conversations), and the reply is crowded out:
in a home of 111k events (LoCoMo's conversations repeated with speakers renamed,
``benchmarks/scale_bench.py``), Main's reply to "What are Caroline's plans for the
summer?" was not among its 100 hits, though the question it answers was second.

So each agent also offers, as candidates, the events it holds within
:data:`~solace.memory.adjacent.REACH` after each of its :data:`NEIGHBOUR_SEEDS` best
candidates standing for one event (best by similarity plus lexical score), when no
candidate stands for them alone yet. A candidate saying what a better seed said is no
seed, so near-copies of one turn take one seed. They are scored like every other
candidate; only context can lift them, and only by a better neighbour.

First chosen on LoCoMo's tuning split (conversations 0-4), Main's answer recall at
500 / 1,000 tokens, in the 111k home and in homes of one conversation each (the same
questions; the rule: the best sum of the two at 500, then at 1,000):

========================================  ===========  ===========
neighbours offered                        111k home    one conv.
========================================  ===========  ===========
none                                      71.4 / 77.4  73.2 / 78.9
after, 4 seeds (kept then)                72.6 / 78.7  73.0 / 78.9
after, the next event only, 4 seeds       72.0 / 77.9  73.2 / 78.9
after, the next event only, 16 seeds      72.4 / 78.3  72.8 / 78.8
both sides, 2 seeds                       72.7 / 78.4  72.9 / 79.0
both sides, 4 seeds                       72.6 / 78.5  72.9 / 78.9
both sides, 16 seeds (also 8, 32, 64)     72.7 / 78.5  72.7 / 78.7
========================================  ===========  ===========

In the 1M home (each turn there about 170 times, renamed), four seeds were often
copies of one or two turns, and 67 answer-bearing turns that a home of the ten
conversations alone put in budget, lifted by context, were not among its 100 hits.
Seeds counted in distinct statements, same rule, tuning split, kept single homes:

========================================  ===========  ===========
seeds (after, within REACH)               1M home      one conv.
========================================  ===========  ===========
4, copies each a seed (until now)         71.8 / 77.6  72.4 / 78.4
16, copies each a seed                    71.9 / 78.0  72.1 / 78.1
4 distinct                                71.9 / 77.7  72.4 / 78.4
8 distinct (kept)                         72.0 / 78.1  72.3 / 78.2
16 distinct                               71.9 / 78.1  72.1 / 78.1
32 distinct                               72.0 / 78.1  72.1 / 78.1
========================================  ===========  ===========

With eight distinct seeds, also offering the two turns before each of the best two
(or all eight) gave the 1M home 72.1 / 77.9 (72.0 / 78.0) and the single homes
72.3 / 78.2: not kept.

Offered on both sides, a turn before a good one rose above better candidates in the
small homes (13 questions lost 5.4 points of answer recall, 7 gained 2.0). Keeping
the pools free of near-copies instead (each pool drawn from four times as many and
a candidate left out when its embedding's cosine with a kept one is 0.9 or more)
gave the big home 71.8 / 77.7 and the small ones 73.2 / 78.8; with the neighbours
too, 72.8 / 78.5 in the big home: not worth its cost.

:func:`neighbour_events` and :func:`seed_events` are pure; :class:`Singles` is the
entry id -> single-event record map the retriever keeps in step with its tiers (a
unit's record is the view's ``owners``).
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Sequence

import numpy as np

from solace.memory.adjacent import REACH, SPAN
from solace.memory.hit_merge import Statements
from solace.memory.record import MemoryRecord
from solace.memory.retrieval import Candidate, Gathered
from solace.memory.tier_view import TierView

__all__ = ["NEIGHBOUR_SEEDS", "Singles", "neighbour_events", "neighbours_of", "seed_events",
           "with_neighbours"]

#: How many of an agent's best single-event candidates have the turns after them offered.
NEIGHBOUR_SEEDS = 8


def seed_events(entries: np.ndarray, scores: np.ndarray, n: int,
                says: Callable[[int], str] | None = None) -> list[int]:
    """The events of the ``n`` best-scored candidates standing for one event
    (``entries``: per candidate its event, or -1), best first, ties by entry id.

    With ``says`` (the ``i``-th candidate's text), a candidate saying what a better
    seed said (:class:`~solace.memory.hit_merge.Statements`) is no seed: near-copies
    of one turn take one seed, not all of them."""
    single = np.flatnonzero(np.asarray(entries) >= 0)
    if not len(single) or n < 1:
        return []
    events = np.asarray(entries)[single]
    order = np.lexsort((events, -np.asarray(scores, dtype=np.float64)[single]))
    statements = Statements()
    seeds: dict[int, None] = {}
    for i in order.tolist():
        event = int(events[i])
        if event in seeds or (says is not None and not statements.keep(says(int(single[i])))):
            continue
        seeds[event] = None
        if len(seeds) >= n:
            break
    return list(seeds)


def neighbour_events(seeds: Iterable[int], holds: Container[int], present: Container[int],
                     *, reach: int = REACH, span: int = SPAN) -> list[int]:
    """The events held (``holds``) among the first ``reach`` held after each seed, at
    most ``span`` entry ids on, that are not ``present`` (a candidate stands for them
    alone already): in the order found, each once.

    The ``k``-th held event after a seed has ``k - 1`` held events between them, so the
    first ``reach`` are the ones :func:`~solace.memory.adjacent.context_scores` counts as
    adjacent to it."""
    out: dict[int, None] = {}
    for seed in seeds:
        found = 0
        for event in range(seed + 1, seed + span + 1):
            if event not in holds:
                continue
            if event not in present:
                out[event] = None
            found += 1
            if found >= reach:
                break
    return list(out)


class Singles:
    """Entry id -> the ids of the records of one agent standing for that event alone,
    kept in step with the records its retriever indexes (:meth:`reset`, :meth:`change`).
    """

    __slots__ = ("_by_event",)

    def __init__(self) -> None:
        self._by_event: dict[int, list[int]] = {}

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self._by_event

    def __len__(self) -> int:
        return len(self._by_event)

    def reset(self, records: Iterable[MemoryRecord]) -> None:
        """Hold exactly ``records``' single-event records."""
        self._by_event = {}
        for record in records:
            self.change(None, record)

    def change(self, before: MemoryRecord | None, after: MemoryRecord | None) -> None:
        """One record changed from ``before`` to ``after`` (either None: added, removed)."""
        if before is not None and len(before.entry_ids) == 1:
            event = before.entry_ids[0]
            held = self._by_event.get(event, [])
            if before.record_id in held:
                held.remove(before.record_id)
                if not held:
                    del self._by_event[event]
        if after is not None and len(after.entry_ids) == 1:
            held = self._by_event.setdefault(after.entry_ids[0], [])
            if after.record_id not in held:
                held.append(after.record_id)

    def record_ids(self, entry_id: int) -> Sequence[int]:
        """The records standing for ``entry_id`` alone (none: empty)."""
        return tuple(self._by_event.get(entry_id, ()))


class _Either:
    """Membership in either of two containers."""

    __slots__ = ("_a", "_b")

    def __init__(self, a: Container[int], b: Container[int]) -> None:
        self._a, self._b = a, b

    def __contains__(self, item: object) -> bool:
        return item in self._a or item in self._b


def neighbours_of(view: TierView, singles: Singles, seeds: Iterable[int],
                  present: Container[int]) -> tuple[list[MemoryRecord], list[int]]:
    """What stands for the events just after ``seeds`` that no candidate stands for alone
    (``present``): the long-term records of ``view`` standing for one of them alone, and
    the units (entry ids) of the rest. An event a working record stands for alone is
    left out: every working record is a candidate already.

    ``singles`` may have been brought in line with a newer view than ``view`` (a query
    awaits between taking its view and gathering): only records of ``view`` standing for
    the event alone are offered, so such a race can miss a neighbour, never offer a
    record the view does not hold."""
    records: list[MemoryRecord] = []
    units: list[int] = []
    for event in neighbour_events(seeds, _Either(view.owners, singles), present):
        held = [view.records.get(rid) for rid in singles.record_ids(event)]
        alone = [r for r in held if r is not None and tuple(r.entry_ids) == (event,)]
        if alone:
            record = max(alone, key=lambda r: r.record_id)
            if record.record_id in view.longterm:
                records.append(record)
        elif event in view.owners:
            units.append(event)
    return records, units


def with_neighbours(gathered: Gathered, view: TierView, singles: Singles, seeds: int, *,
                    longterm: Callable[[list[MemoryRecord]], list[Candidate]],
                    units: Callable[[list[int]], list[Candidate]]) -> Gathered:
    """``gathered`` and, after it, candidates for the events just after its ``seeds``
    best single-event candidates (:func:`neighbours_of`), built by ``longterm`` (from
    long-term records; it leaves out what the asker may not see) and ``units`` (from
    unit entry ids)."""
    entries = gathered.entries()
    records, unit_ids = neighbours_of(
        view, singles, seed_events(entries, gathered.dense + gathered.lexical, seeds,
                                   lambda i: gathered.candidate(i).text),
        frozenset(entries[entries >= 0].tolist()))
    more = longterm(records) + units(unit_ids)
    return gathered.extended(more) if more else gathered
