"""Holdings: what each agent holds, and what a peer could add to an asker, kept by
record changes, always equal to recounting every record from scratch."""

from __future__ import annotations

import random

import pytest

from solace.memory.holdings import Holdings
from solace.memory.record import MemoryRecord

AGENTS = ("Main", "Supervisor", "Mood")


def record(rid: int, ids: tuple[int, ...], private: bool = False) -> MemoryRecord:
    return MemoryRecord(record_id=rid, agent="x", rung=0, text="t", tokens=1,
                        source_tokens=1, entry_ids=ids, private=private)


def expected(state: dict[str, dict[int, MemoryRecord]]
             ) -> tuple[dict[str, set[int]], dict[tuple[str, str], set[int]]]:
    held = {a: {e for r in recs.values() for e in r.entry_ids} for a, recs in state.items()}
    shown = {a: {e for r in recs.values() if not r.private for e in r.entry_ids}
             for a, recs in state.items()}
    lacking = {(p, a): shown[p] - held[a] for p in AGENTS for a in AGENTS if p != a}
    return held, lacking


def check(h: Holdings, state: dict[str, dict[int, MemoryRecord]]) -> None:
    held, lacking = expected(state)
    for a in AGENTS:
        view = h.held(a)
        assert len(view) == len(held[a])
        assert {e for e in range(0, 70) if e in view} == held[a]
    for (p, a), events in lacking.items():
        assert h.lacking(p, a) == events
        assert h.can_add(p, a) == bool(events)


@pytest.mark.parametrize("seed", range(5))
def test_incremental_changes_equal_a_recount_of_every_record(seed: int) -> None:
    rng = random.Random(seed)
    h = Holdings(AGENTS)
    state: dict[str, dict[int, MemoryRecord]] = {a: {} for a in AGENTS}
    for step in range(400):
        agent = rng.choice(AGENTS)
        records = state[agent]
        rid = rng.randrange(12)
        before = records.get(rid)
        if before is not None and rng.random() < 0.3:
            after = None  # removed (moved away, merged into another)
        else:  # added, grown, or replaced; ids overlap across records and agents
            ids = tuple(sorted(rng.sample(range(1, 60), rng.randint(1, 4))))
            after = record(rid, ids, private=rng.random() < 0.15)
        h.change(agent, before, after)
        if after is None:
            records.pop(rid, None)
        else:
            records[rid] = after
        if step % 50 == 49:
            check(h, state)
            if rng.random() < 0.5:  # a full resync of one agent changes nothing
                again = rng.choice(AGENTS)
                h.reset(again, state[again].values())
                check(h, state)
    check(h, state)


def test_a_peer_adds_only_shown_events_the_asker_lacks() -> None:
    h = Holdings(AGENTS)
    h.change("Main", None, record(1, (1, 2)))
    h.change("Supervisor", None, record(1, (1, 2)))
    assert not h.can_add("Supervisor", "Main")  # both hold the messages
    h.change("Supervisor", None, record(2, (3,)))  # Supervisor's own reflection
    assert h.lacking("Supervisor", "Main") == {3}
    h.change("Mood", None, record(1, (4,), private=True))  # a draft is never shown
    assert not h.can_add("Mood", "Main") and h.lacking("Main", "Mood") == {1, 2}
    h.change("Main", None, record(2, (3, 5)))  # Main now holds 3 too
    assert not h.can_add("Supervisor", "Main")
    h.change("Main", record(2, (3, 5)), None)  # and no longer does
    assert h.lacking("Supervisor", "Main") == {3}


def test_an_event_held_by_two_records_stays_held_until_both_go() -> None:
    h = Holdings(AGENTS)
    h.change("Supervisor", None, record(1, (7,)))
    h.change("Main", None, record(1, (7,)))
    h.change("Main", None, record(2, (6, 7)))  # the episode holding it too
    h.change("Main", record(1, (7,)), None)
    assert 7 in h.held("Main") and not h.can_add("Supervisor", "Main")
    h.change("Main", record(2, (6, 7)), None)
    assert 7 not in h.held("Main") and h.lacking("Supervisor", "Main") == {7}


def test_bad_agents_and_ids_are_refused_naming_them() -> None:
    with pytest.raises(ValueError, match="distinct"):
        Holdings(("Main", "Main"))
    h = Holdings(AGENTS)
    with pytest.raises(KeyError, match="Nobody"):
        h.held("Nobody")
    with pytest.raises(KeyError, match="'Main', 'Main'"):
        h.can_add("Main", "Main")
    with pytest.raises(ValueError, match="-3"):
        h.change("Main", None, record(1, (-3,)))
    assert "x" not in h.held("Main") and 1.5 not in h.held("Main")


def test_an_event_still_being_delivered_is_not_something_the_asker_lacks() -> None:
    h = Holdings(AGENTS)
    h.change("Supervisor", None, record(1, (8,)))  # Supervisor got it first
    h.in_flight.add(8)
    assert not h.can_add("Supervisor", "Main") and h.lacking("Supervisor", "Main") == {8}
    h.in_flight.discard(8)  # delivered, and Main never perceived it
    assert h.can_add("Supervisor", "Main")


def test_between_counts_the_held_events_strictly_between_two_ids() -> None:
    h = Holdings(AGENTS)
    h.reset("Main", [record(1, (3,)), record(2, (5, 6)), record(3, (9,)), record(4, (9,))])
    held = h.held("Main")
    assert [held.between(3, 9), held.between(5, 6), held.between(0, 4),
            held.between(6, 5000), held.between(9, 3)] == [2, 0, 1, 1, 0]
