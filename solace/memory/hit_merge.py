"""Merge the hits of a consulted agent's memory with the asker's own (pure).

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
"""

from __future__ import annotations

from collections.abc import Sequence

from solace.memory.record import Hit

__all__ = ["PATTERN", "interleave"]

PATTERN: tuple[bool, ...] = (True, True, False)  # True: the consulted memory's next hit


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
        if hit.text in texts or (len(set(hit.entry_ids)) > 1 and covered.issuperset(hit.entry_ids)):
            continue
        texts.add(hit.text)
        covered.update(hit.entry_ids)
        out.append(hit)
    return out
