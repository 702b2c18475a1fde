"""The Mood advisor's scorer: valence and arousal of a text, deterministically.

Mood attaches an emotional weight and tags to the records the other actors create,
and those tags are what long-term records keep. The score must be the same every
time the same event is read — a restart rebuilds records from the substrate and
must give them the same weights — so it is a small lexicon with negation,
intensifiers and punctuation, not a model. It is a heuristic: it knows the common
words people use about how they feel in chat, and nothing else.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Affect", "score_affect"]

# word -> (valence in [-1, 1], arousal in [0, 1], emotion tag)
_LEXICON: dict[str, tuple[float, float, str]] = {}


def _add(tag: str, valence: float, arousal: float, words: str) -> None:
    for word in words.split():
        _LEXICON[word] = (valence, arousal, tag)


_add("joy", 0.8, 0.6, "happy happier happiest glad joy joyful delighted thrilled excited "
     "exciting awesome amazing wonderful fantastic great fun yay hooray love loved lovely "
     "celebrate celebrated celebrating blessed ecstatic stoked")
_add("pride", 0.7, 0.5, "proud accomplished achievement achieved succeeded success nailed won "
     "win winning promoted graduated")
_add("gratitude", 0.7, 0.3, "grateful thankful thanks appreciate appreciated")
_add("calm", 0.4, 0.1, "calm peaceful relaxed relaxing serene content comfortable cozy rest")
_add("hope", 0.5, 0.4, "hope hopeful hoping optimistic inspired inspiring")
_add("affection", 0.7, 0.4, "adore cherish hug hugs sweet kind caring care supportive support")
_add("sadness", -0.7, 0.3, "sad sadder unhappy depressed miserable lonely alone cry cried "
     "crying tears grief grieving heartbroken lost loss miss missed missing hurt")
_add("fear", -0.6, 0.8, "afraid scared fear terrified anxious anxiety worried worry worrying "
     "nervous panic panicked frightened dread scary")
_add("anger", -0.7, 0.9, "angry mad furious annoyed irritated irritation frustrated "
     "frustrating rage hate hated outraged livid")
_add("stress", -0.5, 0.7, "stressed stress stressful overwhelmed swamped exhausted tired "
     "burnout struggling struggle difficult hard tough")
_add("shame", -0.6, 0.5, "ashamed embarrassed guilty regret regretted sorry")
_add("shock", -0.2, 0.9, "shocked shocking surprised stunned unbelievable wow")
_add("pain", -0.7, 0.7, "pain painful sick ill injured injury accident hospital died death "
     "dead funeral")

_NEGATIONS = frozenset("not no never don't didn't isn't wasn't can't couldn't won't n't".split())
_INTENSIFIERS = {"so": 1.3, "very": 1.3, "really": 1.25, "super": 1.4, "extremely": 1.5,
                 "totally": 1.3, "incredibly": 1.5, "absolutely": 1.4, "such": 1.2}
_WORD_RE = re.compile(r"[a-z]+(?:'[a-z]+)?")


@dataclass(frozen=True, slots=True)
class Affect:
    """Mood's reading of one text.

    Attributes:
        valence: -1 (very negative) .. 1 (very positive); 0 when nothing was felt.
        arousal: 0 (calm) .. 1 (intense).
        weight: the emotional weight records get, 0..1 (strong feeling either way).
        tags: sorted emotion tags ("joy", "fear", ...) plus "positive"/"negative"
            and "intense" when they apply.
    """

    valence: float
    arousal: float
    weight: float
    tags: tuple[str, ...]


def score_affect(text: str) -> Affect:
    """Score ``text``; a pure function of the text (same input, same output).

    Negation ("not happy") flips and halves a word's valence; an intensifier before
    it scales it; exclamation marks and capitals raise arousal.
    """
    lowered = text.casefold().replace("\u2019", "'")
    words = _WORD_RE.findall(lowered)
    valences: list[float] = []
    arousals: list[float] = []
    tags: set[str] = set()
    for i, word in enumerate(words):
        entry = _LEXICON.get(word)
        if entry is None:
            continue
        valence, arousal, tag = entry
        window = words[max(0, i - 3) : i]
        if any(w in _NEGATIONS or w.endswith("n't") for w in window):
            valence, arousal = -0.5 * valence, 0.5 * arousal
        else:
            tags.add(tag)
        scale = max((_INTENSIFIERS.get(w, 1.0) for w in window), default=1.0)
        valences.append(max(-1.0, min(1.0, valence * scale)))
        arousals.append(min(1.0, arousal * scale))
    if not valences:
        return Affect(0.0, 0.0, 0.0, ())
    # The strongest words dominate; many mild words add up, but sublinearly.
    valence = sum(valences) / (len(valences) ** 0.5 + 0.5)
    valence = max(-1.0, min(1.0, valence))
    arousal = max(arousals)
    bangs = min(text.count("!"), 3)
    arousal = min(1.0, arousal + 0.1 * bangs)
    weight = round(min(1.0, 0.6 * abs(valence) + 0.4 * arousal), 3)
    if valence >= 0.25:
        tags.add("positive")
    elif valence <= -0.25:
        tags.add("negative")
    if arousal >= 0.7:
        tags.add("intense")
    return Affect(round(valence, 3), round(arousal, 3), weight, tuple(sorted(tags)))
