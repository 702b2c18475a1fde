"""Two reorderings of a recall's ranked hits, read from the events the hits stand for.

Scores rank hits by what they say; two things a score cannot see change the order
after it, and nothing is added or dropped:

* **Said then, first.** A query that names a day or a month ("What dish did Nate make
  on 9 November 2022?", "... in May 2022?") puts the hits said on that day (or in that
  month) first, in their order, then the rest (:func:`said_then_first`; the periods
  are :func:`solace.actors.routing.named_periods`). A hit standing for several events
  was said then when its span of events reaches into the period.
* **The reply behind its question.** A query resembles the question it asks about, so
  a conversation's own question ("What kind of counselling do you want to pursue?")
  ranks high, while the turn that answered it shares fewer of the query's words and
  ranks far below. When both are among the hits, the reply is moved up to just behind
  the question (:func:`follow_replies`). The reply to a turn is the next turn anybody
  keeps a record of, when someone else said it
  (:func:`solace.actors.routing.replies`), looked for among the :data:`REPLY_REACH`
  events after the question (a live chat logs a draft, and the conversation layer its
  copy of the reply, between a user's line and Mouth's speech). Only hits standing for
  one event take part, and only the first hit of an event moves.

Both were chosen on the LoCoMo tuning split (conversations 0-4,
``benchmarks/locomo_recall.py``) from Main's top 100 hits per question; evidence /
answer recall at 500 and 1,000 tokens:

- before: evidence 69.2 / 77.0, answers 67.7 / 75.8;
- the reply behind its question: 71.8 / 79.0, 69.2 / 76.9; the next turn behind every
  hit, not only a question: 69.9 / 78.0, 68.4 / 76.1; the reply's score raised to its
  question's instead of a move: 71.6 / 78.3, 68.4 / 76.0; a reply that was not among
  the hits fetched too: 71.4 / 78.6, 69.4 / 76.6;
- then said-then first, days or else months: 73.8 / 80.4, 70.2 / 77.3; days only:
  73.2 / 79.9, 69.9 / 77.2; a bonus of 0.1-0.4 to the score instead of the partition:
  the same or less; counting a hit whose text names the period as said then: the same.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from itertools import pairwise
from typing import Any

from solace.actors.routing import named_periods, replies
from solace.clock import utc_day
from solace.memory.record import Hit

__all__ = ["REPLY_REACH", "follow_replies", "near_pairs", "reorder", "reply_pairs",
           "said_then_first", "spans", "wanted_events"]

#: How many events after a question its reply may come (a draft, a mood override and
#: the conversation layer's copy may come between a user's line and the speech).
REPLY_REACH = 4

ReadEvents = Callable[[Sequence[int]], Awaitable[list[Any]]]


async def reorder(hits: Sequence[Hit], query: str, now: float, read: ReadEvents, *,
                  said_then: bool = True, reply: bool = True) -> list[Hit]:
    """``hits`` said-then first (``said_then``), then each reply behind its question
    (``reply``). ``read`` gives the events of entry ids, in order: what both rules need
    is read in one call (:func:`wanted_events`)."""
    periods = named_periods(query, now) if said_then else ()
    pairs = near_pairs(hits) if reply else {}
    wanted = wanted_events(hits, periods, pairs)
    if not wanted:
        return list(hits)
    events = dict(zip(wanted, await read(wanted), strict=True))
    out = list(hits)
    if periods:
        out = said_then_first(out, spans(out, events), periods)
    if pairs:
        out = follow_replies(out, reply_pairs(pairs, events))
    return out


def near_pairs(hits: Sequence[Hit], reach: int = REPLY_REACH) -> dict[int, int]:
    """Each event a hit stands for alone -> the next such event, when it comes within
    ``reach`` events: the pairs that may be a question and its reply."""
    singles = sorted({e for e in (h.event for h in hits) if e is not None})
    return {e: later for e, later in pairwise(singles) if later - e <= reach}


def wanted_events(hits: Sequence[Hit], periods: Sequence[str],
                  pairs: Mapping[int, int]) -> list[int]:
    """The entry ids the two rules read, sorted: each hit's first and last event when
    the query names a period, and each near pair's events with those between them."""
    ends = {e for h in hits if h.entry_ids for e in (h.entry_ids[0], h.entry_ids[-1])} \
        if periods else set()
    between = {e for q, r in pairs.items() for e in range(q, r + 1)}
    return sorted(ends | between)


def spans(hits: Sequence[Hit], events: Mapping[int, Any]
          ) -> dict[tuple[int, int], tuple[str, str]]:
    """Each hit's first and last entry ids -> the days (``YYYY-MM-DD``, UTC) they were
    said on (``events``: entry id -> event, holding those two of each hit)."""
    return {(h.entry_ids[0], h.entry_ids[-1]): (utc_day(events[h.entry_ids[0]].ts),
                                                utc_day(events[h.entry_ids[-1]].ts))
            for h in hits if h.entry_ids}


def said_then_first(hits: Sequence[Hit], span_of: Mapping[tuple[int, int], tuple[str, str]],
                    periods: Sequence[str]) -> list[Hit]:
    """The hits whose span of days (``span_of``, by first and last entry id) reaches
    into one of ``periods`` (``YYYY-MM-DD`` or ``YYYY-MM``), in their order, then the
    others, in theirs (pure)."""
    def then(hit: Hit) -> bool:
        ids = hit.entry_ids
        first, last = span_of.get((ids[0], ids[-1]), ("", "")) if ids else ("", "")
        return any(first[:len(p)] <= p <= last[:len(p)] for p in periods)

    marks = [then(h) for h in hits]
    return [h for h, m in zip(hits, marks, strict=True) if m] + \
        [h for h, m in zip(hits, marks, strict=True) if not m]


def follow_replies(hits: Sequence[Hit], reply_of: Mapping[int, int]) -> list[Hit]:
    """``hits`` with the first hit of each question's reply moved to just behind the
    question's first hit, when it ranked below it (pure; nothing added or dropped).

    Args:
        hits: ranked hits, best first.
        reply_of: a question event's entry id -> the entry id of its reply.
    """
    if not reply_of:
        return list(hits)
    first: dict[int, int] = {}
    for i, hit in enumerate(hits):
        if hit.event is not None:
            first.setdefault(hit.event, i)
    out: list[Hit] = []
    placed: set[int] = set()
    for i, hit in enumerate(hits):
        if i in placed:
            continue
        placed.add(i)
        out.append(hit)
        event = hit.event
        if event is None or first[event] != i or event not in reply_of:
            continue
        j = first.get(reply_of[event])
        if j is not None and j not in placed:
            placed.add(j)
            out.append(hits[j])
    return out


def reply_pairs(pairs: Mapping[int, int], events: Mapping[int, Any]) -> dict[int, int]:
    """The near pairs (:func:`near_pairs`) whose later event replies to the earlier
    (:func:`solace.actors.routing.replies`); ``events`` holds each pair's events and
    those between them."""
    return {q: r for q, r in pairs.items()
            if replies(events[q], [events[e] for e in range(q + 1, r + 1)])}
