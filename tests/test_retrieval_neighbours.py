"""An agent offers the turns said just after its best candidates as candidates too: a
reply crowded out of every pool by near-copies of its question is still offered (and
then lifted by context), nothing is offered twice, and the map of single-event records
it keeps in step with its tiers holds what a full sync gives."""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass

import numpy as np
import pytest

from solace.config import RetrievalWeights
from solace.memory.longterm import LongTermTier
from solace.memory.neighbours import Singles, neighbour_events, seed_events
from solace.memory.record import MemoryRecord
from solace.memory.retrieval import recall
from solace.memory.testing import retriever_over
from solace.memory.working import WorkingTier

DIM = 8


@dataclass
class Memory:
    agent: str
    working: WorkingTier
    longterm: LongTermTier


def _unit(i: int) -> np.ndarray:
    v = np.zeros(DIM, dtype=np.float32)
    v[i] = 1.0
    return v


def _record(rid: int, entries: tuple[int, ...], text: str, embedding: np.ndarray,
            rung: int = 2) -> MemoryRecord:
    return MemoryRecord(record_id=rid, agent="Main", rung=rung, text=text, tokens=5,
                        source_tokens=5, entry_ids=entries, embedding=embedding,
                        event_ts=float(entries[-1]), emotional_weight=0.0)


def test_the_first_reach_held_events_after_each_seed_are_its_neighbours() -> None:
    held = {3, 5, 6, 9, 20, 21}
    assert neighbour_events([2], held, set(), reach=2) == [3, 5]
    assert neighbour_events([5], held, set(), reach=2) == [6, 9]
    assert neighbour_events([5], held, {6}, reach=2) == [9]  # a candidate already
    assert neighbour_events([9], held, set(), reach=2, span=10) == []  # 20 is 11 on
    assert neighbour_events([2, 5, 2], held, set(), reach=1) == [3, 6]  # each once


def test_seeds_are_the_best_scored_single_event_candidates_ties_by_entry_id() -> None:
    entries = np.array([7, -1, 4, 9, 4])
    scores = np.array([0.5, 9.0, 0.8, 0.8, 0.1])
    assert seed_events(entries, scores, 2) == [4, 9]  # the summary (-1) is no seed
    assert seed_events(entries, scores, 10) == [4, 9, 7]  # event 4 once
    assert seed_events(np.array([-1]), np.array([1.0]), 3) == []


def test_a_candidate_saying_what_a_better_seed_said_is_no_seed() -> None:
    entries = np.array([1, 2, 3, 4])
    scores = np.array([0.9, 0.8, 0.7, 0.6])
    asked = "which city did you move to after the wedding last spring?"
    texts = [f"Ana: {asked}", f"Jon: {asked}",
             "Jon: which town did you grow up in?", "Gina: Lisbon, the light is lovely"]
    assert seed_events(entries, scores, 2) == [1, 2]
    assert seed_events(entries, scores, 2, texts.__getitem__) == [1, 3]
    assert seed_events(entries, scores, 9, texts.__getitem__) == [1, 3, 4]


def test_singles_follow_record_changes_as_a_reset_would() -> None:
    rng = random.Random(3)
    live: dict[int, MemoryRecord] = {}
    singles = Singles()
    for step in range(300):
        rid = rng.randrange(40)
        before = live.get(rid)
        entries = (rng.randrange(20),) if rng.random() < 0.6 else (1, 2, 3)
        after = None if rng.random() < 0.3 else _record(rid, entries, "x", _unit(0))
        if after is None:
            live.pop(rid, None)
        else:
            live[rid] = after
        singles.change(before, after)
        fresh = Singles()
        fresh.reset(live.values())
        for event in range(20):
            assert sorted(singles.record_ids(event)) == sorted(fresh.record_ids(event)), step
        assert len(singles) == len(fresh)


def crowded() -> tuple[Memory, str, np.ndarray]:
    """A question (event 10) and its reply (11) in long-term, and ten near-copies of the
    question said elsewhere, each closer to the query than the reply in every way."""
    memory = Memory("Main", WorkingTier(10**6, dim=DIM), LongTermTier(dim=DIM))
    query = "which city did you move to"
    records = [_record(1, (10,), "Jon: which city did you move to?", _unit(0)),
               _record(2, (11,), "Gina: Lisbon, the light is lovely", _unit(1))]
    for n in range(10):
        near = _unit(0) * 0.99 + _unit(2) * 0.14
        records.append(_record(100 + n, (100 + 5 * n,),
                               f"Ana: which city did you move to? (take {n})",
                               near / np.linalg.norm(near)))
    memory.longterm.add(records)
    return memory, query, _unit(0)


@pytest.mark.parametrize("seeds", [0, 4])
async def test_a_reply_crowded_out_of_every_pool_is_offered_after_its_question(
    seeds: int,
) -> None:
    memory, query, vector = crowded()
    retriever = retriever_over(memory, candidates=2)
    retriever.neighbour_seeds = seeds
    gathered = await retriever.gather(query, vector, include_private=True)
    texts = [c.text for c in gathered.candidates]
    assert ("Gina: Lisbon, the light is lovely" in texts) == bool(seeds)
    assert len(texts) == len({c.record.record_id for c in gathered.candidates})  # once each
    if seeds:
        hits = await recall(retriever, query, 20, vector=vector, weights=RetrievalWeights(),
                            half_life_hours=72.0, now=200.0, between=lambda a, b: 0)
        reply = next(h for h in hits if "Lisbon" in h.text)
        assert reply.parts.context > 0  # lifted by the question said just before it


def copies_and_a_lesser_question() -> tuple[Memory, str, np.ndarray]:
    """Five near-copies of one question, each with its reply after it, all closer to
    the query than a second question (event 10), whose reply (11) no pool holds."""
    memory = Memory("Main", WorkingTier(10**6, dim=DIM), LongTermTier(dim=DIM))
    away = -_unit(0)
    records = [_record(1, (10,), "Jon: which town did you grow up in?",
                       _unit(0) * 0.9 + _unit(3) * np.float32(0.19 ** 0.5)),
               _record(2, (11,), "Gina: Porto, by the river", away)]
    for n, (asker, teller) in enumerate(zip("Ana Bea Cy Dot Eve".split(),
                                            "Fay Gus Hal Ida Kit".split(), strict=True)):
        records += [_record(100 + 2 * n, (100 + 5 * n,), f"{asker}: which city did you move "
                            f"to after the wedding last spring? (take {n})", _unit(0)),
                    _record(101 + 2 * n, (101 + 5 * n,), f"{teller}: Lisbon (take {n})", away)]
    memory.longterm.add(records)
    return memory, "which city did you move to", _unit(0)


@pytest.mark.parametrize("seeds", [1, 2])
async def test_near_copies_of_one_turn_take_one_seed(seeds: int) -> None:
    memory, query, vector = copies_and_a_lesser_question()
    retriever = retriever_over(memory, candidates=6)
    retriever.neighbour_seeds = seeds
    gathered = await retriever.gather(query, vector, include_private=True)
    texts = [c.text for c in gathered.candidates]
    assert "Jon: which town did you grow up in?" in texts  # in a pool by its similarity
    assert ("Gina: Porto, by the river" in texts) == (seeds == 2)  # the second seed's reply


async def test_a_neighbour_a_working_record_stands_for_is_not_offered_twice() -> None:
    memory, query, vector = crowded()
    reply = memory.longterm.remove(2)
    memory.working.add(reply)
    retriever = retriever_over(memory, candidates=2)
    gathered = await retriever.gather(query, vector, include_private=True)
    assert [c.record.record_id for c in gathered.candidates].count(2) == 1


async def test_a_private_neighbour_is_offered_only_to_its_own_agent() -> None:
    memory, query, vector = crowded()
    memory.longterm.add([dataclasses.replace(memory.longterm.remove(2), private=True)])
    retriever = retriever_over(memory, candidates=2)
    own = await retriever.gather(query, vector, include_private=True)
    peer = await retriever.gather(query, vector, include_private=False)
    assert any("Lisbon" in c.text for c in own.candidates)
    assert not any("Lisbon" in c.text for c in peer.candidates)
