"""The rung-0 text convention and the splitting of record text into turns and sentences.

A rung-0 record names its speaker in its text (``"Caroline: I went ..."``), so a
record read on its own says who spoke. The compressors work on sentences, and the
abstractive rung works on clauses, so splitting lives here, in one place, as plain
regular expressions: chat text has few abbreviations and no nested quotes worth a
parser.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "LABEL_RE", "Turn", "format_raw", "sentence_spans", "split_clauses", "split_sentences",
    "split_turns", "unlabelled",
]

#: A line's speaker label as :func:`format_raw` writes it (``"Caroline: "``): up to 40
#: characters without a colon or a line break, a colon, whitespace. Group 1: the name.
LABEL_RE = re.compile(r"^([^:\n]{1,40}):\s+")


def format_raw(speaker: str, content: str) -> str:
    """The rung-0 text of one event: ``"Speaker: content"``.

    Args:
        speaker: who spoke (a name, an agent); empty means unattributed.
        content: the verbatim content; kept as is, newlines included.

    Returns:
        ``f"{speaker}: {content}"``, or ``content`` alone when ``speaker`` is empty.
    """
    speaker = speaker.strip()
    return f"{speaker}: {content}" if speaker else content


def unlabelled(text: str) -> str:
    """``text`` with each line's speaker label (:data:`LABEL_RE`) removed."""
    return "\n".join(LABEL_RE.sub("", line, count=1) for line in text.split("\n"))


@dataclass(frozen=True, slots=True)
class Turn:
    """One utterance to compress: who said it, to whom, when, and what.

    Attributes:
        speaker: the speaker's name, or ``""`` when unknown (no pronoun resolution).
        content: the utterance without its ``Speaker:`` label.
        ts: epoch seconds (UTC) the utterance was made; 0 means unknown (relative
            dates are then left as written).
        addressee: who "you" means, or ``""`` when unknown ("you" is left as is).
    """

    speaker: str
    content: str
    ts: float = 0.0
    addressee: str = ""


def split_turns(text: str, speakers: Sequence[str]) -> list[tuple[str, str]]:
    """Split rung-0 text into ``(speaker, content)`` pairs.

    A line that starts with ``"<speaker>: "`` for one of ``speakers`` opens a turn;
    any other line continues the previous turn (or opens an unattributed one). Only
    known speakers are recognised, so a line like ``"Note: ..."`` is not misread as
    a label.

    Returns:
        The turns in text order; speaker ``""`` where no label was found.
    """
    labels = sorted({s for s in speakers if s}, key=len, reverse=True)
    turns: list[tuple[str, str]] = []
    for line in text.splitlines():
        label = next((s for s in labels if line.startswith(f"{s}:")), None)
        if label is not None:
            turns.append((label, line[len(label) + 1 :].strip()))
        elif turns and line.strip():
            speaker, content = turns[-1]
            turns[-1] = (speaker, f"{content} {line.strip()}".strip())
        elif line.strip():
            turns.append(("", line.strip()))
    return turns


# A sentence ends at . ! ? (possibly repeated, possibly followed by closing quotes or
# an emoji) when whitespace follows; a few abbreviations never end one.
_ABBREVIATIONS = frozenset(("mr.", "mrs.", "ms.", "dr.", "st.", "vs.", "e.g.", "i.e.", "jr."))
_BOUNDARY_RE = re.compile(r"(?<=[.!?])[\"'\u201d\u2019)]*\s+|(?<=[.!?][^\w\s])\s+|\n+")


def split_sentences(text: str) -> list[str]:
    """Split ``text`` into sentences, each stripped and non-empty.

    Guarantees: joining the result with spaces gives ``text`` with whitespace
    normalised; no sentence is empty.
    """
    return [" ".join(text[start:end].split()) for start, end in sentence_spans(text)]


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Where :func:`split_sentences`'s sentences lie in ``text``: ``(start, end)`` offsets.

    Guarantees: the spans are ascending and disjoint, each ``text[start:end]`` is
    non-empty with no leading or trailing whitespace, and
    ``" ".join(text[s:e].split())`` is the matching sentence of :func:`split_sentences`.
    Everything between two spans is whitespace (a boundary).
    """
    spans: list[tuple[int, int]] = []
    start = 0
    for match in _BOUNDARY_RE.finditer(text):
        candidate = text[start : match.start()]
        stripped = candidate.strip()
        if not stripped or stripped.rsplit(None, 1)[-1].casefold() in _ABBREVIATIONS:
            continue
        spans.append(_stripped_span(candidate, start))
        start = match.end()
    if text[start:].strip():
        spans.append(_stripped_span(text[start:], start))
    return spans


def _stripped_span(piece: str, offset: int) -> tuple[int, int]:
    lead = len(piece) - len(piece.lstrip())
    return offset + lead, offset + len(piece.rstrip())


# Clause boundaries: punctuation that separates, and the coordinating or
# subordinating words that usually start a new proposition.
_CLAUSE_RE = re.compile(
    r"\s*[,;:]\s+|\s+[-\u2013\u2014]+\s+|\s*\u2014\s*|\s+(?=(?:and|but|so|because|since|"
    r"which|while|though|although|cause|plus)\s)",
    re.IGNORECASE,
)


def split_clauses(sentence: str) -> list[str]:
    """Split one sentence into clauses at , ; : dashes and conjunctions.

    The conjunction stays at the start of the clause it opens (the caller decides
    whether to drop it). Empty pieces are dropped.
    """
    return [p.strip() for p in _CLAUSE_RE.split(sentence) if p and p.strip()]
