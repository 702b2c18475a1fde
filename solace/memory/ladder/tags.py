"""Rung 3: a semantic signature — the embedding plus a line of tags (~0.01x).

The embedding does the retrieving; the tags are what a person (or the lexical
index) can read: the tags advisors attached while the record was in working
memory, what it was about, who was there and when — ``"#lgbtq-support-group
#caroline #melanie #may-2023"``. Raw text stays one substrate read away.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime

from solace.memory.lexical import STOP_WORDS
from solace.models.entities import salient
from solace.models.tokenizer import Tokenizer

__all__ = ["normalise_tag", "tag_line"]

# Verbs and vague words that make poor topic tags even though they are not stop words.
_NOT_TOPICS = STOP_WORDS | frozenset(
    """went go going got get made make took take had has have did done said say says
    thinking think thought feel felt feeling looks look looking love loved loves like
    likes liked want wants wanted need needs great good nice cool awesome amazing fun
    happy glad excited sounds sound seems seem time times way thing things lot lots
    really pretty super new also day days week weeks weekend month months year years
    before after night morning evening afternoon ago kind sure much many something
    anything everything someone people help helps helped helping gonna wanna gotta""".split()
)
_WORD_RE = re.compile(r"[A-Za-z][\w'+\-]*|\d+")
_MONTHS = frozenset(
    "january february march april may june july august september october november december"
    .split()
)


def normalise_tag(tag: str) -> str:
    """``"LGBTQ support group"`` -> ``"#lgbtq-support-group"``; ``""`` if nothing is left."""
    words = re.findall(r"[\w+]+", tag.casefold().replace("'s", ""))
    return "#" + "-".join(words) if words else ""


def _topics(text: str, speakers: Sequence[str]) -> list[str]:
    """Candidate topic phrases of ``text``, best first: names, then content runs."""
    people = {s.casefold() for s in speakers}
    names = Counter(n for n in salient(text).names if n not in people and n not in _MONTHS)
    runs: Counter[str] = Counter()
    for piece in re.split(r"[;,.!?:\n]", text):
        run: list[str] = []
        for word in [*_WORD_RE.findall(piece), ""]:
            folded = word.casefold().removesuffix("'s")
            if word and not word.isdigit() and folded not in _NOT_TOPICS and folded not in people:
                run.append(folded)
                continue
            if run:
                runs[" ".join(run[-3:])] += 1  # the head noun ends an English phrase
            run = []
    ranked_names = sorted(names, key=lambda n: (-names[n], -len(n), n))
    ranked_runs = sorted(
        (r for r in runs if r not in names),
        key=lambda r: (-runs[r] * (1 + r.count(" ")), r),
    )
    return ranked_names + ranked_runs


def tag_line(
    text: str,
    *,
    speakers: Sequence[str],
    tags: Sequence[str],
    first_event_ts: float,
    budget_tokens: int,
    tokenizer: Tokenizer,
) -> str:
    """The rung-3 text of a record: space-separated ``#tags`` within ``budget_tokens``.

    Args:
        text: the record's rung-2 text (topics are drawn from it).
        speakers: the record's speakers, tagged by name.
        tags: tags attached by advisors; they come first and are never dropped
            for a derived tag.
        first_event_ts: when the record's first event happened (``<= 0``: unknown,
            no date tag).
        budget_tokens: the size limit; the first tag is always kept.
        tokenizer: the runtime's token counter.

    Returns:
        Distinct tags, advisor tags first, then one topic, the speakers, the date,
        then more topics while the budget lasts. Deterministic.
    """
    advisor = [normalise_tag(t) for t in tags]
    topics = [normalise_tag(t) for t in _topics(text, speakers)]
    people = [normalise_tag(s) for s in speakers]
    date = []
    if first_event_ts > 0:
        # month precision: "#may-2023" is 5 tokens, a full ISO day 7; the exact time
        # is in the record's metadata anyway
        day = datetime.fromtimestamp(first_event_ts, tz=UTC)
        date = [f"#{day:%B}-{day.year}".casefold()]
    ordered = [*advisor, *topics[:1], *people, *date, *topics[1:]]
    candidates = [t for t in dict.fromkeys(ordered) if t and t != "#"]
    if not candidates:
        return ""
    counts = tokenizer.count_many(candidates)
    kept: list[str] = []
    used = 0
    for tag, count in zip(candidates, counts, strict=True):
        if not kept or used + count <= budget_tokens or tag in advisor:
            kept.append(tag)
            used += count
    return " ".join(kept)
