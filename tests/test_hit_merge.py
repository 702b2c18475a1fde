"""A consulted memory's hits are interleaved two to one with the asker's, nothing twice."""

from __future__ import annotations

from solace.memory.hit_merge import distinct, interleave
from solace.memory.record import Hit, ScoreParts


def hit(text: str, *entry_ids: int, owner: str | None = None) -> Hit:
    return Hit(record_id=entry_ids[0], agent="Main", tier="working", rung=0, text=text,
               tokens=len(text.split()), entry_ids=entry_ids, score=1.0,
               parts=ScoreParts(1.0, 0.0, 0.0, 0.0, 0.0), owner=owner)


def texts(hits: list[Hit]) -> list[str]:
    return [h.text for h in hits]


def test_two_consulted_hits_then_one_of_the_askers_until_one_list_runs_out() -> None:
    theirs = [hit(f"t{i}", 100 + i, owner="Time") for i in range(3)]
    own = [hit(f"o{i}", i) for i in range(4)]
    assert texts(interleave(theirs, own, 10)) == ["t0", "t1", "o0", "t2", "o1", "o2", "o3"]
    assert texts(interleave(theirs, own, 4)) == ["t0", "t1", "o0", "t2"]
    assert texts(interleave([], own, 2)) == ["o0", "o1"]


def test_the_same_text_is_injected_once() -> None:
    theirs = [hit("Caroline: we met on 3 May", 7, owner="Time")]
    own = [hit("Caroline: we met on 3 May", 7), hit("other", 8)]
    assert texts(interleave(theirs, own, 10)) == ["Caroline: we met on 3 May", "other"]


def test_a_summary_of_covered_events_is_skipped_but_a_turn_after_a_summary_is_kept() -> None:
    theirs = [hit("turn one", 1, owner="Time"), hit("turn two", 2, owner="Time"),
              hit("summary of four and five", 4, 5, owner="Time")]
    own = [hit("summary of one and two", 1, 2), hit("turn four", 4)]
    assert texts(interleave(theirs, own, 10)) == [
        "turn one", "turn two", "summary of four and five", "turn four"]


def test_a_hit_saying_what_an_earlier_one_said_is_left_out() -> None:
    hits = [hit("Caroline: I researched adoption agencies for my family last week", 1),
            hit("Alice: I researched adoption agencies for my family last week!", 2),
            hit("Caroline: I ran 5 km today", 3), hit("Caroline: I ran 10 km today", 4),
            hit("Yeah!", 5), hit("Yeah!", 6)]
    # The same words by another speaker are one statement; a different number is not;
    # a hit with no content words is always kept.
    assert [h.entry_ids[0] for h in distinct(hits)] == [1, 3, 4, 5, 6]


def test_a_turn_inside_a_longer_summary_is_kept() -> None:
    summary = hit("Caroline researched adoption agencies; Melanie painted a lake; "
                  "they planned a camping trip with the kids in July", 1, 2, 3)
    turn = hit("Caroline: I researched adoption agencies", 2)
    assert distinct([summary, turn]) == [summary, turn]  # each must hold most of the other
    assert distinct([turn, hit("Melanie: I researched adoption agencies!", 9)]) == [turn]


def test_distinct_keeps_at_most_limit_hits_the_first_distinct_ones() -> None:
    hits = [hit("Caroline: I researched adoption agencies", 1),
            hit("Alice: I researched adoption agencies", 2),
            hit("Caroline: I ran 5 km today", 3), hit("Melanie: we went camping", 4)]
    assert [h.entry_ids[0] for h in distinct(hits, limit=2)] == [1, 3]
    assert [h.entry_ids[0] for h in distinct(hits, limit=10)] == [1, 3, 4]
