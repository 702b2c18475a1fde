"""Merge the hits of a consulted agent's memory with the asker's own, and leave out a
hit that says again what an earlier one said (pure).

A recall may consult another agent beside the asker's own memory (the Time agent,
for a question asking when: :func:`solace.actors.routing.consulted`). The two ranked
lists are scored with different weights over different records, so their scores do
not compare; they are interleaved instead, in a fixed pattern: :data:`PATTERN` takes
two consulted hits, then one of the asker's. The pattern was chosen on the LoCoMo
tuning split (conversations 0-4; ``benchmarks/locomo_recall.py``), temporal questions,
against one-to-one and three-to-one:

- one to one: evidence 85.4 / 88.8 and answers 80.9 / 82.9 at 500 / 1,000 tokens;
- two to one: 86.1 / 91.3 and 81.6 / 84.3;
- three to one: 86.1 / 90.7 and 81.2 / 84.6;
- the asker alone (Main): 82.9 / 87.8 and 74.7 / 79.6.

Nothing is injected twice: a hit whose text an earlier one carried is skipped, and so
is a hit standing for several events that earlier hits all stand for. A hit standing
for one event is kept after a summary of it (the detail a summary may have dropped),
as :func:`solace.memory.retrieval.select` keeps it.

Nor is the same statement injected twice in other words (:func:`distinct`): a hit whose
content words and an earlier hit's each hold at least :data:`SAME_SHARE` of the
other's (speaker labels aside, so a statement restated by another speaker, or copied
with one date changed, counts once) is left out. Chosen on the LoCoMo tuning split
(conversations 0-4), answer recall at 500 / 1,000 tokens: in a home of only the
conversation 70.2 / 77.3 with or without it (evidence recall moved by at most 0.1);
in a home of 182k events (``benchmarks/scale_bench.py``: the conversations repeated
with speakers renamed and dates shifted) 66.2 / 72.1 without, 70.0 / 76.3 with it
(from the hits of each question, replayed offline; the benchmark run gave 69.9 / 76.3);
at a share of 0.9, 68.3 / 74.4; at 0.7, 70.2 / 76.5, within 0.2 of 0.8, which was kept
as the stricter rule; numbers left out of the words, 0.9: 70.2 / 76.5, but then "I ran
5 km" and "I ran 10 km" would be one statement.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

from solace.memory.ladder.sentences import unlabelled
from solace.memory.lexical import content_words
from solace.memory.record import Hit

__all__ = ["PATTERN", "SAME_SHARE", "distinct", "interleave"]

PATTERN: tuple[bool, ...] = (True, True, False)  # True: the consulted memory's next hit
#: Two hits say the same when each holds at least this share of the other's content words.
SAME_SHARE = 0.8


def interleave(consulted: Sequence[Hit], own: Sequence[Hit], k: int) -> list[Hit]:
    """At most ``k`` hits, taken from ``consulted`` and ``own`` (each best first) in
    :data:`PATTERN`, without repeats; when one list runs out the other continues."""
    sources = (consulted, own)
    taken = [0, 0]
    out: list[Hit] = []
    texts: set[str] = set()
    covered: set[int] = set()
    turn = 0
    while len(out) < k and (taken[0] < len(sources[0]) or taken[1] < len(sources[1])):
        side = 0 if PATTERN[turn % len(PATTERN)] else 1
        turn += 1
        if taken[side] >= len(sources[side]):
            side = 1 - side
        hit = sources[side][taken[side]]
        taken[side] += 1
        if hit.text in texts or (hit.event is None and covered.issuperset(hit.entry_ids)):
            continue
        texts.add(hit.text)
        covered.update(hit.entry_ids)
        out.append(hit)
    return out


def distinct(hits: Sequence[Hit], share: float = SAME_SHARE) -> list[Hit]:
    """``hits`` in order, less each one that says what an earlier kept hit said: the two
    hold at least ``share`` of each other's content words (unstemmed, stop words and
    speaker labels left out). A hit with no content words is always kept.

    A kept hit holding that share (``needed`` words) of a hit's words holds them among
    the hit's words some kept hit holds (``held``), and so one of any ``len(held) -
    needed + 1`` of those: only the kept hits holding the rarest such words are
    compared (prefix filtering), and none when too few of its words are held at all."""
    kept: list[Hit] = []
    said: list[frozenset[str]] = []
    holders: dict[str, list[int]] = {}  # word -> the kept hits holding it
    for hit in hits:
        words = _said(hit.text)
        needed = math.ceil(share * len(words))
        held = [w for w in words if w in holders]  # a kept hit holds no other word
        if words and len(held) >= needed:
            held.sort(key=lambda w: len(holders[w]))
            near = {i for w in held[: len(held) - needed + 1] for i in holders[w]}
            if any(len(words & said[i]) >= share * max(len(words), len(said[i]))
                   for i in near):
                continue
        for word in words:
            holders.setdefault(word, []).append(len(kept))
        kept.append(hit)
        said.append(words)
    return kept


@lru_cache(maxsize=1 << 13)
def _said(text: str) -> frozenset[str]:
    """The content words of ``text`` without its speaker labels (remembered: recall
    returns the same records' texts again and again)."""
    return frozenset(content_words(unlabelled(text)))
