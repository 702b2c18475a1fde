"""A recall's hits reordered from their events: a query naming a day or a month puts
what was said then first; a recalled turn that asked something brings its reply up
behind it (the next turn anybody keeps a record of, said by someone else). Nothing
else moves, nothing is lost; only a hit saying again what an earlier one said is left
out."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import trio
from runtime_support import START

from solace import ReplayClock, open_runtime
from solace.actors.routing import named_periods, replies
from solace.config import Config, ModelsConfig, RuntimeConfig, SubstrateConfig
from solace.memory.record import Hit, ScoreParts
from solace.recall_order import (
    follow_replies,
    near_pairs,
    reorder,
    reply_pairs,
    said_then_first,
    spans,
    wanted_events,
)


@dataclass(frozen=True)
class Event:
    entry_id: int
    agent: str
    content: str
    kind: str = "message"
    ts: float = 0.0
    attrs: dict[str, str] = field(default_factory=dict)


def hit(text: str, *entry_ids: int) -> Hit:
    return Hit(record_id=entry_ids[0], agent="Main", tier="working", rung=0, text=text,
               tokens=len(text.split()), entry_ids=entry_ids, score=1.0,
               parts=ScoreParts(1.0, 0.0, 0.0, 0.0, 0.0))


def texts(hits: Sequence[Hit]) -> list[str]:
    return [h.text for h in hits]


def test_the_reply_moves_behind_its_question_and_nothing_else_moves() -> None:
    hits = [hit("q", 5), hit("a", 1), hit("b", 2), hit("reply", 6), hit("c", 3)]
    moved = follow_replies(hits, {5: 6})
    assert texts(moved) == ["q", "reply", "a", "b", "c"]
    assert follow_replies(hits, {}) == hits


def test_a_reply_already_above_its_question_stays_and_only_first_hits_move() -> None:
    hits = [hit("reply", 6), hit("q", 5), hit("x", 1)]
    assert follow_replies(hits, {5: 6}) == hits
    # The question's second hit (Time's copy, say) brings nothing; a summary never moves.
    hits = [hit("summary", 5, 6), hit("q", 5), hit("q again", 5), hit("reply", 6)]
    assert texts(follow_replies(hits, {5: 6})) == ["summary", "q", "reply", "q again"]


def test_a_turn_that_asks_is_replied_to_by_the_next_turn_of_someone_else() -> None:
    asked = Event(1, "Melanie", "What did you research?")
    answer = Event(2, "Caroline", "Adoption agencies.")
    assert replies(asked, [answer])
    assert not replies(Event(1, "Melanie", "I researched it."), [answer])  # no question
    assert not replies(asked, [Event(2, "Melanie", "Or was it art?")])  # the same speaker
    draft = Event(2, "Main", "thinking", kind="draft")
    logged = Event(3, "Main", "Agencies!", attrs={"role": "assistant"})  # nobody keeps it
    speech = Event(4, "Mouth", "Adoption agencies.", kind="speech")
    assert replies(Event(1, "user", "What did I research?"), [draft, logged, speech])
    other = Event(2, "Caroline", "Hold on.")
    assert not replies(asked, [other, Event(3, "Caroline", "Agencies.")])  # not the next


def test_pairs_are_read_only_between_hits_near_enough() -> None:
    events = {1: Event(1, "Melanie", "What did you research?"),
              2: Event(2, "Caroline", "Adoption agencies."),
              9: Event(9, "Melanie", "Why?"),
              20: Event(20, "Caroline", "Because.")}
    read: list[list[int]] = []

    async def get_many(ids: Sequence[int]) -> list[Event]:
        read.append(list(ids))
        return [events[e] for e in ids]

    hits = [hit("q", 1), hit("q2", 9), hit("far", 20), hit("a", 2), hit("summary", 1, 2)]
    pairs = near_pairs(hits)
    assert reply_pairs(pairs, events) == {1: 2}
    trio.run(reorder, hits, "What did Caroline research?", START.timestamp(), get_many)
    assert read == [[1, 2]]  # 9 and 20 are too far apart to be a question and its reply
    assert wanted_events(hits, (), pairs) == [1, 2]


def test_a_query_names_its_days_or_else_its_months_never_a_year_alone() -> None:
    now = START.timestamp()  # 8 May 2023
    assert named_periods("What dish did Nate make on 9 November, 2022?", now) == ("2022-11-09",)
    assert named_periods("What did Joanna bake in May 2022?", now) == ("2022-05",)
    assert named_periods("What did I do yesterday?", now) == ("2023-05-07",)
    assert named_periods("What happened in 2022?", now) == ()
    assert named_periods("What did Nate cook?", now) == ()


def test_hits_said_in_the_named_period_come_first_in_their_order() -> None:
    hits = [hit("a", 1), hit("episode", 2, 3, 4), hit("b", 5), hit("c", 6)]
    span_of = {(1, 1): ("2022-11-08", "2022-11-08"), (2, 4): ("2022-11-01", "2022-11-09"),
               (5, 5): ("2022-11-09", "2022-11-09"), (6, 6): ("2022-12-09", "2022-12-09")}
    assert texts(said_then_first(hits, span_of, ("2022-11-09",))) == ["episode", "b", "a", "c"]
    assert texts(said_then_first(hits, span_of, ("2022-12",))) == ["c", "a", "episode", "b"]
    assert said_then_first(hits, span_of, ("2021-01",)) == hits


def test_a_hits_span_is_read_from_its_first_and_last_events() -> None:
    day = 86400.0
    events = {e: Event(e, "x", "t", ts=START.timestamp() + e * day) for e in range(1, 9)}
    read: list[list[int]] = []

    async def get_many(ids: Sequence[int]) -> list[Event]:
        read.append(list(ids))
        return [events[e] for e in ids]

    hits = [hit("one", 2), hit("episode", 2, 3, 4, 5, 6)]  # both begin at event 2
    assert spans(hits, events) == {(2, 2): ("2023-05-10", "2023-05-10"),
                                   (2, 6): ("2023-05-10", "2023-05-14")}
    trio.run(reorder, hits, "What happened on 10 May 2023?", START.timestamp(), get_many)
    assert read == [[2, 6]]  # the two rules' events, read in one call


def config(follow: bool = True, said_then: bool = True, distinct: bool = True) -> Config:
    return Config(models=ModelsConfig(embedder="hashing", llm_backend="none"),
                  substrate=SubstrateConfig(fsync="never"),
                  runtime=dataclasses.replace(RuntimeConfig(), follow_replies=follow,
                                              said_then_first=said_then,
                                              distinct_hits=distinct))


async def recalled(home: Path, cfg: Config, lines: Sequence[tuple[str, str]], step: timedelta,
                   query: str, k: int) -> list[str]:
    """Main observes ``lines`` ``step`` apart from START, settles, and recalls ``query``."""
    async with open_runtime(home, cfg, clock=ReplayClock(START)) as rt:
        for i, (speaker, text) in enumerate(lines):
            await rt.agent("Main").observe(text, speaker=speaker, at=START + i * step)
        await rt.settle()
        return texts(await rt.agent("Main").recall(query, k=k))


LINES = [
    ("Melanie", "What kind of counseling and mental health work do you want to pursue?"),
    ("Caroline", "I'm thinking of working with trans people and supporting them."),
    ("Melanie", "Counseling is such good work. Mental health matters."),
    ("Caroline", "Mental health counseling helped me a lot."),
    ("Melanie", "My kids and I went camping at the lake last weekend."),
]


async def test_recall_puts_the_reply_behind_the_question_unless_switched_off(
    tmp_path: Path,
) -> None:
    query = "What kind of counseling and mental health work does Caroline want?"
    for follow in (True, False):
        order = await recalled(tmp_path / str(follow), config(follow), LINES,
                               timedelta(minutes=1), query, 5)
        first = next(i for i, t in enumerate(order) if "want to pursue" in t)
        reply = next(i for i, t in enumerate(order) if "trans people" in t)
        assert (reply == first + 1) is follow


async def test_recall_puts_what_was_said_on_the_named_day_first_unless_switched_off(
    tmp_path: Path,
) -> None:
    query = "What did Caroline paint on 10 May 2023?"
    lines = [("Caroline", "Caroline painted a lake at sunrise, Caroline's best paint yet."),
             ("Melanie", "We went camping."),
             ("Caroline", "A small bird, in oils.")]
    for said_then in (True, False):  # said on 8, 9 and 10 May
        order = await recalled(tmp_path / str(said_then), config(said_then=said_then),
                               lines, timedelta(days=1), query, 3)
        assert ("bird" in order[0]) is said_then


async def test_recall_says_each_thing_once_unless_switched_off(tmp_path: Path) -> None:
    lines = [("Caroline", "I researched adoption agencies for my family."),
             ("Melanie", "Researched adoption agencies for my family!"),
             ("Melanie", "We went camping at the lake.")]
    for distinct in (True, False):
        said = await recalled(tmp_path / str(distinct), config(distinct=distinct), lines,
                              timedelta(minutes=1), "adoption agencies", 3)
        assert sum("adoption agencies" in t for t in said) == (1 if distinct else 2)
        assert any("camping" in t for t in said)


async def test_a_restatement_left_out_gives_its_place_to_the_next_distinct_hit(
    tmp_path: Path,
) -> None:
    # The three restatements rank first: left out after the k=3 hits were chosen, they
    # would leave one hit; left out while choosing, the next distinct hits take over.
    lines = [("Caroline", "I researched adoption agencies for my family."),
             ("Melanie", "Researched adoption agencies for my family!"),
             ("Jon", "I researched adoption agencies, for my family."),
             ("Melanie", "We went camping at the lake."),
             ("Jon", "I baked bread on Sunday.")]
    said = await recalled(tmp_path, config(), lines, timedelta(minutes=1),
                          "adoption agencies for my family", 3)
    assert len(said) == 3
    assert sum("adoption agencies" in t for t in said) == 1
