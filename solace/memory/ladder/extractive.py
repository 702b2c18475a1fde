"""Rung 1: extractive key points — the salient sentences, intact (~0.3x).

No model: sentences are ranked by lexical centrality (TF-IDF cosine to the
episode's centroid: what the episode keeps talking about) raised by the salient
items they carry (names, numbers, dates: what questions ask about) and lowered for
questions and pleasantries, then picked best-value-first into a token budget and
written back in their original order. Each kept sentence is made readable on its
own: relative dates resolved against the moment it was said, "I"/"you" replaced by
the people they mean, and a ``Speaker:`` label kept only when the sentence does not
already name its speaker.

Each agent keeps its own perspective on the same events (seed 002): rung 1 of a
``"whole"`` agent (Supervisor, Main, Mouth) keeps what the episode is about; of an
``"affect"`` agent (Mood) what was felt, a sentence's score scaled by its emotional
weight (:func:`~solace.models.affect.score_affect`); of a ``"time"`` agent (Time) when
things happened, a sentence without a date worth a twentieth of one with. Rungs 2 and 3
are made from rung 1, so the perspective carries down the ladder.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from solace.config import Perspective
from solace.memory.ladder.dates import resolve_relative_dates
from solace.memory.ladder.pronouns import resolve_pronouns
from solace.memory.ladder.sentences import Turn, split_sentences
from solace.memory.lexical import content_words, stem
from solace.models.affect import score_affect
from solace.models.entities import salient
from solace.models.remembered import remembered
from solace.models.tokenizer import Tokenizer

__all__ = [
    "KeyPoint",
    "centrality",
    "extract_key_points",
    "key_point_candidates",
    "perspective_share",
    "resolve_sentence",
]


# A sentence outside an agent's perspective keeps this share of its score (an affect
# agent's sentence scales from it up to 1 with its emotional weight): kept only when
# the budget has room after the sentences the agent is about.
_OUTSIDE = 0.05


def perspective_share(perspective: Perspective, raw: str, dated: bool) -> float:
    """How much a sentence (``raw``, as said; ``dated``: it names a date or time once
    resolved) counts to an agent with ``perspective``: 1 for ``"whole"``."""
    if perspective == "affect":
        return _OUTSIDE + (1.0 - _OUTSIDE) * score_affect(raw).weight
    if perspective == "time":
        return 1.0 if dated else _OUTSIDE
    return 1.0


@dataclass(frozen=True, slots=True)
class KeyPoint:
    """One candidate sentence of rung 1.

    Attributes:
        line: the sentence as rung 1 writes it (resolved, labelled if needed).
        order: its position among all sentences of the episode (text order).
        tokens: token count of ``line``.
        score: its value (centrality x salience x form); higher is kept first.
    """

    line: str
    order: int
    tokens: int
    score: float


def resolve_sentence(sentence: str, turn: Turn) -> str:
    """One sentence of ``turn`` as a compressed form writes it.

    Relative dates become dates (against ``turn.ts``), "I"/"you" become
    ``turn.speaker``/``turn.addressee``, and the sentence gets a ``Speaker:`` label
    unless the rewrite already put the speaker's name in it.
    """
    return _resolved(sentence, turn.ts, turn.speaker, turn.addressee)


# Every agent compressing an episode resolves the same sentences (perspectives differ
# only in how the resolved sentences are scored).
@remembered(1 << 13)
def _resolved(sentence: str, ts: float, speaker: str, addressee: str) -> str:
    text = resolve_relative_dates(sentence, ts)
    text, named = resolve_pronouns(text, speaker, addressee)
    text = " ".join(text.split())
    if speaker and not named:
        return f"{speaker}: {text}"
    return text


def centrality(
    texts: Sequence[str], exclude: set[str] | frozenset[str] = frozenset()
) -> list[float]:
    """TF-IDF cosine of each text to the centroid of all of them (0..1).

    What a group of sentences keeps talking about scores high; a digression or a
    pleasantry scores low. Words in ``exclude`` (casefolded; e.g. the speakers'
    names, which every resolved sentence repeats) are ignored.
    """
    bags = [Counter(stem(w) for w in content_words(t) if w not in exclude) for t in texts]
    df: Counter[str] = Counter()
    for bag in bags:
        df.update(bag.keys())
    n = len(bags)
    vectors = [{t: c * math.log(1.0 + n / df[t]) for t, c in bag.items()} for bag in bags]
    centroid: Counter[str] = Counter()
    for vector in vectors:
        centroid.update(vector)
    centroid_norm = math.sqrt(sum(v * v for v in centroid.values())) or 1.0
    scores = []
    for vector in vectors:
        norm = math.sqrt(sum(v * v for v in vector.values()))
        dot = sum(v * centroid[t] for t, v in vector.items())
        scores.append(dot / (norm * centroid_norm) if norm else 0.0)
    return scores


_PLEASANTRIES = frozenset(
    """hey hi hello thanks thank wow cool awesome great glad nice congrats
    congratulations amazing sweet lol haha bye""".split()
)


def key_point_candidates(turns: Sequence[Turn], tokenizer: Tokenizer,
                         perspective: Perspective = "whole") -> list[KeyPoint]:
    """Every sentence of ``turns``, resolved and scored (not yet selected) as an agent
    with ``perspective`` values it.

    Scores depend only on the episode's own text, so the same turns always give
    the same candidates.
    """
    people = {t.speaker.casefold() for t in turns if t.speaker}
    people |= {t.addressee.casefold() for t in turns if t.addressee}
    lines: list[str] = []
    raws: list[str] = []
    seen: set[str] = set()
    for turn in turns:
        for sentence in split_sentences(turn.content):
            line = resolve_sentence(sentence, turn)
            key = line.casefold()
            if key in seen:
                continue  # the same sentence twice ("Thanks!") is kept at most once
            seen.add(key)
            lines.append(line)
            raws.append(sentence)
    if not lines:
        return []
    counts = tokenizer.count_many(lines)

    central = centrality(lines, exclude=people)
    candidates = []
    for i, (line, raw, tokens) in enumerate(zip(lines, raws, counts, strict=True)):
        items = salient(line)
        names = {name for name in items.names if name not in people}
        salience = len(names) + len(items.numbers) + 1.5 * len(items.dates)
        words = content_words(raw)
        form = 1.0
        if raw.rstrip().endswith("?"):
            form *= 0.35  # a question rarely states a fact
        if len(words) < 4:
            form *= 0.4
        if words and sum(w in _PLEASANTRIES for w in words) / len(words) > 0.3:
            form *= 0.5
        form *= perspective_share(perspective, raw, bool(items.dates))
        score = (0.3 + central[i]) * (1.0 + 0.4 * salience) * form * min(len(words), 12) / 12
        candidates.append(KeyPoint(line, i, tokens, score))
    return candidates


# A sentence worth less than this share of the best one is not a key point, even if
# the budget has room for it ("Totally agree, Mel.").
_MIN_SHARE_OF_BEST = 0.15


def extract_key_points(turns: Sequence[Turn], budget_tokens: int, tokenizer: Tokenizer,
                       perspective: Perspective = "whole") -> str:
    """The rung-1 form of ``turns``: their best sentences within ``budget_tokens``, as
    an agent with ``perspective`` values them.

    Args:
        turns: the utterances of one record or one episode, in time order.
        budget_tokens: the most tokens the result may have, except that the single
            best sentence is always kept (a one-sentence turn is kept whole).
            Sentences worth far less than the best are left out even if they fit.
        tokenizer: the runtime's token counter.

    Returns:
        Kept sentences, one per line, in their original order; ``""`` only if the
        turns hold no text. Deterministic.
    """
    candidates = key_point_candidates(turns, tokenizer, perspective)
    if not candidates:
        return ""
    ranked = sorted(candidates, key=lambda c: (-c.score / math.sqrt(max(c.tokens, 1)), c.order))
    kept = [ranked[0]]
    used = ranked[0].tokens
    floor = _MIN_SHARE_OF_BEST * max(c.score for c in candidates)
    for candidate in ranked[1:]:
        # line breaks are not tokens: the lines' counts add up exactly
        if candidate.score >= floor and used + candidate.tokens <= budget_tokens:
            kept.append(candidate)
            used += candidate.tokens
    return "\n".join(c.line for c in sorted(kept, key=lambda c: c.order))
