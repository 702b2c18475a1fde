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

Leaving restatements out must not leave the caller short: a recall skips them while
it chooses its ``k`` hits (:func:`solace.memory.retrieval.recall` with ``distinct``,
through :class:`Statements`), so the next distinct candidate takes each one's place. In
a big home most of a query's best candidates restate each other (the same turn said
again in copies): leaving them out of the 100 chosen hits afterwards kept a median of
47 (a tenth kept 7 or fewer) in a home of 1M events. LoCoMo tuning split (conversations
0-4), answer recall at 500 / 1,000 tokens, Main asked for 100 hits in that home
(``benchmarks/scale_bench.py --originals-kept``): 70.1 / 74.7 before, 71.8 / 77.6
after; in each conversation's own home 72.7 / 78.6 both, every question's answer
recall unchanged. On the test split (5-9): 68.3 / 74.4 before, 68.5 / 75.6 after in
the big home; the small homes unchanged. Also tried: choosing 4k hits, reordering
them all (said-then and replies: :mod:`solace.recall_order`) and then keeping the first
k distinct: 71.8 / 77.8 in the big home, but 72.2 / 78.9 in the small ones, where hits
said on a named day or replies from far down the list took better hits' places.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

from solace.memory.ladder.sentences import unlabelled
from solace.memory.lexical import content_words
from solace.memory.record import Hit

__all__ = ["PATTERN", "SAME_SHARE", "Statements", "distinct", "interleave"]

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


class Statements:
    """What the hits kept so far said, to leave out a hit saying it again: one whose
    content words and a kept hit's each hold at least ``share`` of the other's
    (unstemmed, stop words and speaker labels left out). A text with no content words
    is always new.

    A kept hit holding that share (``needed`` words) of a text's words holds them among
    the text's words some kept hit holds (``held``), and so one of any ``len(held) -
    needed + 1`` of those: only the kept hits holding the rarest such words are
    compared (prefix filtering), and none when too few of its words are held at all.
    """

    __slots__ = ("_holders", "_said", "share")

    def __init__(self, share: float = SAME_SHARE) -> None:
        self.share = share
        self._said: list[frozenset[str]] = []
        self._holders: dict[str, list[int]] = {}  # word -> the kept hits holding it

    def keep(self, text: str) -> bool:
        """Whether ``text`` says something no kept hit said; if so, it is kept."""
        words = _said(text)
        share, holders, said = self.share, self._holders, self._said
        needed = math.ceil(share * len(words))
        held = [w for w in words if w in holders]  # a kept hit holds no other word
        if words and len(held) >= needed:
            held.sort(key=lambda w: len(holders[w]))
            near = {i for w in held[: len(held) - needed + 1] for i in holders[w]}
            if any(len(words & said[i]) >= share * max(len(words), len(said[i]))
                   for i in near):
                return False
        for word in words:
            holders.setdefault(word, []).append(len(said))
        said.append(words)
        return True


def distinct(hits: Sequence[Hit], share: float = SAME_SHARE, *, limit: int | None = None
             ) -> list[Hit]:
    """``hits`` in order, less each one that says what an earlier kept hit said
    (:class:`Statements`), and at most ``limit`` of them (the first kept)."""
    statements = Statements(share)
    kept: list[Hit] = []
    for hit in hits:
        if limit is not None and len(kept) >= limit:
            break
        if statements.keep(hit.text):
            kept.append(hit)
    return kept


@lru_cache(maxsize=1 << 13)
def _said(text: str) -> frozenset[str]:
    """The content words of ``text`` without its speaker labels (remembered: recall
    returns the same records' texts again and again)."""
    return frozenset(content_words(unlabelled(text)))
