"""Turns said next to each other: a candidate's context score.

A turn that answers a question rarely repeats the question's words ("How long has
Caroline had her friends?" → "I've known these friends for 4 years"), but it is said
next to turns that do. So each candidate standing for one event closes a share
(``RetrievalWeights.context``) of the gap between its score and the best score among
the candidates standing for the events said within :data:`REACH` turns of it, in the
asking agent's own memory. Only a better neighbour lifts a turn, and never past
itself: a run of similar turns said together does not rise above a better turn said
alone (sharing a neighbour's score instead did, for exact-text queries among many
near-copies).

"Within ``REACH`` turns" counts the events the agent holds: two events are adjacent
when fewer than ``REACH`` of its held events lie strictly between them, whatever
else the substrate logged in between (fade bookkeeping, another agent's records).
Entry ids further apart than :data:`SPAN` are never adjacent, so one count never
reads more than ``SPAN`` slots.

``REACH`` = 2 and the default weight 0.5 were chosen on LoCoMo's tuning split
(conversations 0-4; ``benchmarks/locomo_recall.py``'s docstring has the table).

Pure: numpy over the candidates' columns, no I/O.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["REACH", "SPAN", "context_scores"]

#: Two events are adjacent when fewer than this many held events lie between them.
REACH = 2
#: Events whose entry ids differ by more than this are never adjacent.
SPAN = 64


def context_scores(
    entries: np.ndarray, totals: np.ndarray, between: Callable[[int, int], int],
    weight: float, *, reach: int = REACH, span: int = SPAN,
) -> np.ndarray:
    """Each candidate's context part: ``weight`` times how far the best of ``totals``
    among the candidates adjacent to it lies above its own (0 if none does).

    Args:
        entries: per candidate, the one event it stands for, or -1 (a summary of
            several events: it neither gives nor takes context).
        totals: per candidate, its score before context.
        between: how many held events lie strictly between two entry ids (``a < b``);
            it never decreases as ``b`` grows.
        weight: the share of the gap a candidate closes (``RetrievalWeights.context``).
        reach, span: see :data:`REACH` and :data:`SPAN`.

    Two candidates standing for the same event (one agent's working record and its
    unit) are not each other's context.
    """
    entries = np.asarray(entries, dtype=np.int64)
    totals = np.asarray(totals, dtype=np.float64)
    out = np.zeros(len(entries), dtype=np.float64)
    single = np.flatnonzero(entries >= 0)
    if len(single) < 2 or weight <= 0.0:
        return out
    order = single[np.argsort(entries[single], kind="stable")]
    ids = entries[order].tolist()
    scores = totals[order].tolist()
    best = list(scores)  # a candidate with no better neighbour closes no gap
    for a, first in enumerate(ids):
        for b in range(a + 1, len(ids)):
            gap = ids[b] - first
            if gap > span:
                break
            if gap == 0:
                continue
            if between(first, ids[b]) >= reach:
                break
            best[a] = max(best[a], scores[b])
            best[b] = max(best[b], scores[a])
    out[order] = weight * (np.asarray(best) - totals[order])
    return out
