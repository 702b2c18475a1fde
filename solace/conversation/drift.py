"""Drift detection: has the conversation moved on to a new subject, and where?

Embedding-based and model-free beyond the embedder: for each candidate split inside
the bounded scan-back window (a user message, with at least ``min_segment`` messages
on both sides) compare the centroid of the messages before it (at most ``context`` of
them) with the centroid of the messages after it. Centroids weight each message by
its length in words, capped at :data:`WEIGHT_CAP` ("Thanks!" and "Wow, cool!" embed
near every subject and say little about which one is current). The split with the
lowest cosine similarity wins; below ``threshold`` it is drift, and the messages from
the split on belong to a new topic. Because candidates never reach further back than
``scan_back`` messages, a fork relocates at most ``scan_back`` messages.

Defaults (``ConversationConfig``) were chosen on LoCoMo segments spliced across
conversations (``benchmarks/conversation_bench.py``): ``scan_back`` is the drift
interval plus ``min_segment``, so a change just before one check is still in reach at
the next.

Pure numpy over unit vectors; the caller embeds (off the event loop).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["WEIGHT_CAP", "DriftResult", "DriftSettings", "detect_drift", "message_weights"]

#: A message weighs its word count in a centroid, at most this much.
WEIGHT_CAP = 25


@dataclass(frozen=True, slots=True)
class DriftSettings:
    """The knobs of :func:`detect_drift` (from ``ConversationConfig``)."""

    scan_back: int = 14
    context: int = 6
    min_segment: int = 4
    threshold: float = 0.5

    def __post_init__(self) -> None:
        for name in ("scan_back", "context", "min_segment"):
            value = getattr(self, name)
            if value < 1:
                raise ValueError(f"drift {name} must be >= 1, got {value!r}")


@dataclass(frozen=True, slots=True)
class DriftResult:
    """The outcome of one drift check over a topic's messages.

    Attributes:
        drifted: True if the best split is below the threshold.
        split: index (into the messages checked) where the new subject starts, for
            the best candidate; None when there was no candidate.
        similarity: centroid cosine similarity at ``split`` (1.0 without candidates).
        candidates: how many splits were compared.
    """

    drifted: bool
    split: int | None
    similarity: float
    candidates: int


def _unit(v: np.ndarray) -> np.ndarray:
    norm = float(np.linalg.norm(v))
    return v / norm if norm > 0 else v


def message_weights(texts: Sequence[str]) -> np.ndarray:
    """Centroid weights: words per message, between 1 and :data:`WEIGHT_CAP`."""
    return np.array([min(max(len(t.split()), 1), WEIGHT_CAP) for t in texts], dtype=np.float64)


def _centroid(vectors: np.ndarray, weights: np.ndarray) -> np.ndarray:
    return _unit((vectors * weights[:, None]).sum(axis=0))


def detect_drift(
    vectors: np.ndarray,
    roles: Sequence[str],
    settings: DriftSettings,
    weights: np.ndarray | None = None,
) -> DriftResult:
    """Find the most likely subject change among a topic's last messages.

    Args:
        vectors: ``(n, dim)`` unit embeddings of the topic's messages, in order.
        roles: the role of each message (splits only at ``"user"`` messages: the
            user changes the subject, the reply belongs with the question).
        settings: window, context, minimum segment and threshold.
        weights: per-message centroid weights (see :func:`message_weights`); None
            weighs every message equally.

    Returns:
        The best split and whether it is drift. Deterministic for given inputs.

    Raises:
        ValueError: ``vectors`` and ``roles`` differ in length.
    """
    n = len(roles)
    if vectors.shape[0] != n:
        raise ValueError(f"{vectors.shape[0]} vectors for {n} messages")
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64)
    if w.shape != (n,):
        raise ValueError(f"{w.shape[0]} weights for {n} messages")
    lo = max(settings.min_segment, n - settings.scan_back)
    hi = n - settings.min_segment
    best: tuple[float, int] | None = None
    count = 0
    for split in range(lo, hi + 1):
        if roles[split] != "user":
            continue
        start = max(0, split - settings.context)
        before = _centroid(vectors[start:split], w[start:split])
        sim = float(before @ _centroid(vectors[split:], w[split:]))
        count += 1
        if best is None or sim < best[0]:
            best = (sim, split)
    if best is None:
        return DriftResult(False, None, 1.0, 0)
    return DriftResult(best[0] < settings.threshold, best[1], best[0], count)
