"""solace.projections: one read of the substrate feeds every projection."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest

from solace.projections import replay
from substrate import Event


def _event(entry_id: int, kind: str) -> Event:
    return Event(entry_id=entry_id, ts=float(entry_id), agent="Main", kind=kind,
                 content=f"{kind} {entry_id}", attrs={})


class Source:
    """A log in memory that counts its reads."""

    def __init__(self, kinds: Iterable[str]) -> None:
        self.events = [_event(i, kind) for i, kind in enumerate(kinds, start=1)]
        self.scans: list[tuple[int | None, dict[str, int] | None]] = []

    @property
    def last_id(self) -> int:
        return len(self.events)

    async def scan(self, agent: str | None = None, kind: str | None = None,
                   since_id: int | None = None, until_ts: float | None = None, *,
                   kinds: Mapping[str, int] | None = None) -> list[Event]:
        self.scans.append((since_id, None if kinds is None else dict(kinds)))
        if kinds is None:
            return [e for e in self.events if e.entry_id > (since_id or 0)]
        return [e for e in self.events if e.kind in kinds and e.entry_id > kinds[e.kind]]


@dataclass
class Recorder:
    name: str
    kinds: frozenset[str] | None
    checkpoint: int = 0
    fail_at: int | None = None
    seen: list[int] = field(default_factory=list)
    finished: list[tuple[str, int]] = field(default_factory=list)
    order: list[str] | None = None

    def apply(self, event: Any) -> None:
        if event.entry_id == self.fail_at:
            raise ValueError(f"{self.name} cannot fold entry {event.entry_id}")
        self.seen.append(event.entry_id)

    async def finish(self, head: int) -> None:
        self.finished.append((self.name, head))
        if self.order is not None:
            self.order.append(self.name)


LOG = ["message", "fade", "topic", "memfact", "message", "fade", "workspace", "memfact"]


async def test_each_projection_gets_its_kinds_above_its_checkpoint_in_id_order() -> None:
    source = Source(LOG)
    tiers = Recorder("tiers", frozenset({"message", "fade"}), checkpoint=4)
    facts = Recorder("facts", frozenset({"memfact"}))
    everything = Recorder("all", None, checkpoint=6)
    report = await replay(source, [tiers, facts, everything])
    assert tiers.seen == [5, 6]
    assert facts.seen == [4, 8]
    assert everything.seen == [7, 8]
    assert report.applied == {"tiers": 2, "facts": 2, "all": 2}
    assert (report.since, report.head) == (0, 8)


async def test_one_read_of_the_log_each_kind_from_the_oldest_checkpoint_reading_it() -> None:
    source = Source(LOG)
    await replay(source, [Recorder("a", frozenset({"fade", "memfact"}), checkpoint=5),
                          Recorder("b", frozenset({"memfact"}), checkpoint=2)])
    assert source.scans == [(2, {"fade": 5, "memfact": 2})]
    source.scans.clear()
    await replay(source, [Recorder("a", frozenset({"fade"})), Recorder("b", None)])
    assert source.scans == [(None, None)]  # one projection reads every kind


async def test_finish_runs_once_per_projection_in_the_given_order_with_the_head() -> None:
    source = Source(LOG)
    order: list[str] = []
    first = Recorder("first", frozenset({"topic"}), order=order)
    second = Recorder("second", frozenset({"nothing-here"}), order=order)
    await replay(source, [first, second])
    assert order == ["first", "second"]
    assert first.finished == [("first", 8)] and second.finished == [("second", 8)]


async def test_an_optional_projection_that_fails_is_dropped_and_the_others_finish() -> None:
    source = Source(LOG)
    facts = Recorder("facts", frozenset({"memfact"}), fail_at=4)
    tiers = Recorder("tiers", frozenset({"message"}))
    report = await replay(source, [facts, tiers], optional={"facts"})
    assert tiers.seen == [1, 5] and tiers.finished == [("tiers", 8)]
    assert facts.seen == [] and facts.finished == []  # nothing after its failure
    assert "entry 4" in str(report.failed["facts"])


async def test_a_required_projection_that_fails_stops_the_replay() -> None:
    source = Source(LOG)
    with pytest.raises(ValueError, match="cannot fold entry 4"):
        await replay(source, [Recorder("facts", frozenset({"memfact"}), fail_at=4)])


async def test_no_projection_reads_nothing() -> None:
    source = Source(LOG)
    report = await replay(source, [])
    assert source.scans == [] and report.read == 0


async def test_a_batched_projection_folds_what_it_keeps_once_with_the_head() -> None:
    from solace.projections import Batched

    source = Source(LOG)
    folded: list[tuple[list[int], int]] = []

    async def fold(events: list[Event], head: int) -> None:
        folded.append(([e.entry_id for e in events], head))

    batched = Batched("tiers", frozenset({"message", "fade"}), 1, fold,
                      keep=lambda e: e.kind == "fade" or e.entry_id > 4)
    report = await replay(source, [batched])
    assert folded == [([2, 5, 6], 8)]
    assert report.applied == {"tiers": 3}
