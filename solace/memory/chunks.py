"""Large single events: split at ingest into records of bounded size, one event cited.

A chat turn is a few dozen tokens; a paste can be megabytes. One record holding a
5 MB paste costs its whole text on every query that scores it, cannot be embedded
(the model sees its first 256 tokens) and cannot fit any working budget. So an event
whose rung-0 text has more than :data:`SPLIT_ABOVE_TOKENS` tokens becomes several
rung-0 records — *chunks* — cut at sentence boundaries (paragraph breaks preferred),
each at most :func:`chunk_limit` tokens (:data:`CHUNK_TOKENS` for any ordinary
speaker name), together covering every sentence of the event in order.

Every chunk stands for the one event: its ``entry_ids`` is that event's entry id, so a
hit on a chunk cites the event. Its ``span`` is where its part lies in the event's
content, so rehydrating it (a rung-3 chunk injected, a cue brought back, warm-up)
reads the event and rebuilds the form of that part only (:func:`record_events`).
Chunks never merge into episodes; each fades on its own through the ladder, like any
record, under the agent's working budget.

Ids: the first chunk's record id is the event's entry id (as for any rung-0 record);
chunk ``i >= 1`` has :func:`chunk_record_id`, in a range of its own above both entry
ids and the ids the fade hands out, so live ingest and a rebuild from the substrate
make the same records with the same ids.

Pure: no I/O, no clock; the tokenizer is passed in.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from solace.memory.ladder.sentences import format_raw, sentence_spans
from solace.memory.record import MemoryRecord
from solace.models.tokenizer import Tokenizer

__all__ = [
    "CHUNK_ID_BASE",
    "CHUNK_TOKENS",
    "MAX_CHUNKS",
    "RECENT_SPLITS",
    "SPLIT_ABOVE_TOKENS",
    "Chunk",
    "EventSlice",
    "RecentSplits",
    "chunk_limit",
    "chunk_record_id",
    "is_chunk_id",
    "record_events",
    "slice_event",
    "split_rung0",
]

#: An event whose rung-0 text has more tokens than this is split into chunks.
SPLIT_ABOVE_TOKENS = 512
#: The most tokens a chunk's text has (speaker label included): MiniLM's window, so a
#: chunk's embedding sees all of it.
CHUNK_TOKENS = 256
#: The fewest content tokens a chunk may carry, whatever the length of the label.
MIN_CONTENT_TOKENS = 32
#: Chunk record ids: ``CHUNK_ID_BASE + entry_id * MAX_CHUNKS + index`` (index >= 1).
#: Entry ids are below ``1 << 40``, so these stay below ``1 << 62``.
CHUNK_ID_BASE = 1 << 61
MAX_CHUNKS = 1 << 20

_WORD_RE = re.compile(r"\S+")


@dataclass(frozen=True, slots=True)
class Chunk:
    """One chunk of an event: ``text`` is ``format_raw(speaker, content[start:end])``."""

    span: tuple[int, int]
    text: str
    tokens: int


@dataclass(frozen=True, slots=True)
class EventSlice:
    """An event with only part of its content: what rehydration reads for a chunk."""

    entry_id: int
    ts: float
    agent: str
    kind: str
    content: str
    attrs: Mapping[str, Any] | None


def chunk_record_id(entry_id: int, index: int) -> int:
    """The record id of chunk ``index`` of event ``entry_id`` (the entry id for index 0).

    Raises:
        ValueError: ``index`` is outside ``[0, MAX_CHUNKS)``.
    """
    if not 0 <= index < MAX_CHUNKS:
        raise ValueError(f"chunk index must be within [0, {MAX_CHUNKS}), got {index!r}")
    return int(entry_id) if index == 0 else CHUNK_ID_BASE + int(entry_id) * MAX_CHUNKS + index


def is_chunk_id(record_id: int) -> bool:
    """Whether ``record_id`` is one :func:`chunk_record_id` hands out for index >= 1."""
    return record_id >= CHUNK_ID_BASE


def chunk_limit(speaker: str, tokenizer: Tokenizer, chunk_tokens: int = CHUNK_TOKENS) -> int:
    """The most tokens a chunk of ``speaker``'s event has: ``chunk_tokens``, unless the
    speaker label alone leaves fewer than :data:`MIN_CONTENT_TOKENS` for content."""
    label = tokenizer.count(format_raw(speaker, ""))
    return label + max(chunk_tokens - label, MIN_CONTENT_TOKENS)


def split_rung0(speaker: str, content: str, tokenizer: Tokenizer, *,
                split_above: int = SPLIT_ABOVE_TOKENS,
                chunk_tokens: int = CHUNK_TOKENS) -> list[Chunk] | None:
    """The chunks of an event's rung-0 text ``format_raw(speaker, content)``, or None if
    it stays one record.

    The text is split when it has more than ``split_above`` tokens, counted as the
    label's tokens plus its sentences' (a text of at most ``split_above`` characters is
    never split, uncounted). Counting by sentences, in one batch, is what keeps a
    megabyte paste to seconds (the tokenizer encodes one huge string far slower), and
    for a tokenizer that splits at whitespace, as WordPiece does, it is the exact count.

    Args:
        speaker: the name in the rung-0 text.
        content: the event's content.
        tokenizer: the runtime's token counter.

    Returns:
        None, or the chunks in content order: spans ascending and disjoint, each
        chunk's ``tokens`` at most :func:`chunk_limit`, every sentence of ``content`` in
        exactly one chunk (a sentence longer than a chunk is cut between words, a word
        longer than a chunk between characters). A chunk's ``tokens`` is the sum of its
        label's and its pieces' counts — the exact count of its text for a tokenizer
        that splits at whitespace; a chunk holding a piece cut inside a word is
        counted whole. Deterministic: live ingest and a rebuild split alike.

    Raises:
        ValueError: the content would need more than :data:`MAX_CHUNKS` chunks.
    """
    if len(format_raw(speaker, content)) <= split_above:
        return None  # a token covers at least one character
    label = tokenizer.count(format_raw(speaker, ""))
    spans = sentence_spans(content)
    counts = tokenizer.count_many([content[s:e] for s, e in spans])
    if label + sum(counts) <= split_above:
        return None
    limit = label + max(chunk_tokens - label, MIN_CONTENT_TOKENS)
    pieces = _pieces(content, spans, counts, limit - label, tokenizer)
    chunks = _counted(speaker, content, _pack(content, pieces, limit - label), label, limit,
                      tokenizer)
    if len(chunks) > MAX_CHUNKS:
        raise ValueError(f"an event of {len(content)} characters needs {len(chunks)} chunks, "
                         f"more than {MAX_CHUNKS}")
    return chunks


#: A piece of content: start, end, tokens, and whether it was cut inside a word.
_Piece = tuple[int, int, int, bool]


def _pieces(content: str, spans: Sequence[tuple[int, int]], counts: Sequence[int],
            budget: int, tokenizer: Tokenizer) -> list[_Piece]:
    """Sentences, those over ``budget`` cut into words and words over it into characters."""
    out: list[_Piece] = []
    for (start, end), n in zip(spans, counts, strict=True):
        if n <= budget:
            out.append((start, end, n, False))
            continue
        words = [(start + m.start(), start + m.end())
                 for m in _WORD_RE.finditer(content[start:end])]
        word_counts = tokenizer.count_many([content[s:e] for s, e in words])
        for (ws, we), wn in zip(words, word_counts, strict=True):
            if wn <= budget:
                out.append((ws, we, wn, False))
                continue
            for cs in range(ws, we, budget):  # a token covers at least one character
                ce = min(cs + budget, we)
                out.append((cs, ce, tokenizer.count(content[cs:ce]), True))
    return out


def _pack(content: str, pieces: Sequence[_Piece], budget: int
          ) -> list[tuple[int, int, int, bool]]:
    """Greedy packing of pieces into ``(start, end, tokens, cut)`` spans of at most
    ``budget`` tokens by the pieces' counts; a paragraph break ends a span already half
    full."""
    spans: list[tuple[int, int, int, bool]] = []
    start = end = -1
    used = 0
    cut = False
    for ps, pe, n, piece_cut in pieces:
        if start >= 0:
            paragraph = "\n\n" in content[end:ps]
            if used + n > budget or (paragraph and used * 2 >= budget):
                spans.append((start, end, used, cut))
                start = -1
        if start < 0:
            start, used, cut = ps, 0, False
        end = pe
        used += n
        cut = cut or piece_cut
    if start >= 0:
        spans.append((start, end, used, cut))
    return spans


def _counted(speaker: str, content: str, spans: Sequence[tuple[int, int, int, bool]],
             label: int, limit: int, tokenizer: Tokenizer) -> list[Chunk]:
    """The chunks; one holding a piece cut inside a word is counted whole, and halved
    until it fits if that count is over ``limit``."""
    out = [Chunk((s, e), format_raw(speaker, content[s:e]), label + n)
           for s, e, n, cut in spans if not cut]
    todo = [(s, e) for s, e, _, cut in spans if cut]
    while todo:
        texts = [format_raw(speaker, content[s:e]) for s, e in todo]
        over: list[tuple[int, int]] = []
        for (s, e), text, n in zip(todo, texts, tokenizer.count_many(texts), strict=True):
            if n <= limit or e - s <= 1:
                out.append(Chunk((s, e), text, n))
            else:
                over.extend(_halves(content, s, e))
        todo = over
    out.sort(key=lambda c: c.span)
    return out


def _halves(content: str, start: int, end: int) -> list[tuple[int, int]]:
    middle = (start + end) // 2
    cut = content.rfind(" ", start + 1, middle + 1)
    if cut <= start:
        cut = middle
    left = (start, start + len(content[start:cut].rstrip()))
    rest = content[cut:end]
    right = (cut + len(rest) - len(rest.lstrip()), end)
    return [span for span in (left, right) if span[1] > span[0]]


class RecentSplits:
    """The chunks (and their vectors) of the last few large events, shared by agents.

    Two or three agents perceive one paste, each ingesting it in turn; splitting and
    embedding it once is enough. Callers key by embedder, tokenizer, speaker and
    content, so a hit is exactly what the miss would compute. Holds at most
    ``capacity`` events (oldest out). Thread-safe.
    """

    def __init__(self, capacity: int = 2) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be >= 1, got {capacity!r}")
        self.capacity = capacity
        self._items: OrderedDict[Hashable, tuple[list[Chunk], Any]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> tuple[list[Chunk], Any] | None:
        """``(chunks, vectors)`` put under ``key`` (vectors None if none were), or None."""
        with self._lock:
            return self._items.get(key)

    def put(self, key: Hashable, chunks: list[Chunk], vectors: Any = None) -> None:
        """Remember ``chunks`` and their ``vectors`` (row-aligned, or None) under ``key``."""
        with self._lock:
            self._items[key] = (chunks, vectors)
            self._items.move_to_end(key)
            while len(self._items) > self.capacity:
                self._items.popitem(last=False)


#: Large events split (and embedded) lately in this process: the next agent perceiving
#: or replaying one reuses them.
RECENT_SPLITS = RecentSplits()


def slice_event(event: Any, span: Sequence[int]) -> EventSlice:
    """``event`` with its content cut to ``span`` (entry id, time, author, attrs kept)."""
    start, end = int(span[0]), int(span[1])
    content = event.content if isinstance(event.content, str) else str(event.content)
    return EventSlice(int(event.entry_id), float(event.ts), str(event.agent), str(event.kind),
                      content[start:end], event.attrs)


def record_events(record: MemoryRecord, events: Sequence[Any]) -> list[Any]:
    """The events ``record`` stands for, as rehydration should read them: for a chunk,
    its one event cut to its span; for any other record, ``events`` unchanged."""
    if record.span and len(events) == 1:
        return [slice_event(events[0], record.span)]
    return list(events)
