"""A large event's rung-0 text splits into chunks of bounded size covering every sentence."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from solace.memory.chunks import (
    CHUNK_TOKENS,
    SPLIT_ABOVE_TOKENS,
    chunk_limit,
    chunk_record_id,
    is_chunk_id,
    record_events,
    split_rung0,
)
from solace.memory.ladder.sentences import format_raw, sentence_spans, split_sentences
from solace.memory.rebuild import EXTRA_ID_BASE
from solace.memory.record import MemoryRecord
from solace.models.tokenizer import WordPieceTokenizer
from substrate import Event

TOKENIZER = WordPieceTokenizer()
WORDS = ("harbour lantern Reykjavik 1987 violin pottery seven boats quietly measured "
         "the a of Dr. Mr. St. e.g. painted").split()


def paste(seed: int, chars: int) -> str:
    """Paragraphs of random sentences, about ``chars`` characters."""
    rng = random.Random(seed)
    paragraphs, size = [], 0
    while size < chars:
        sentences = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 25))) + "."
                     for _ in range(rng.randint(1, 6))]
        paragraph = " ".join(sentences)
        paragraphs.append(paragraph)
        size += len(paragraph) + 2
    return "\n\n".join(paragraphs)


def normalised(text: str) -> str:
    return " ".join(text.split())


def test_a_short_event_is_never_split() -> None:
    assert split_rung0("Ana", "I moved to Lisbon. " * 10, TOKENIZER) is None
    assert split_rung0("Ana", "x" * (SPLIT_ABOVE_TOKENS - 5), TOKENIZER) is None


def test_a_huge_text_splits_into_bounded_chunks_covering_every_sentence_in_order() -> None:
    content = paste(1, 60_000)
    chunks = split_rung0("Caroline", content, TOKENIZER)
    assert chunks is not None and len(chunks) > 10
    limit = chunk_limit("Caroline", TOKENIZER)
    assert limit == CHUNK_TOKENS
    spans = [c.span for c in chunks]
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:], strict=False))
    assert normalised(" ".join(content[s:e] for s, e in spans)) == normalised(content)
    for chunk in chunks:
        assert chunk.text == format_raw("Caroline", content[chunk.span[0]:chunk.span[1]])
        assert chunk.tokens == TOKENIZER.count(chunk.text) <= limit
    # cut at sentence boundaries: every sentence lies inside one chunk
    for start, end in sentence_spans(content):
        assert any(s <= start and end <= e for s, e in spans)


def test_a_sentence_or_word_longer_than_a_chunk_is_cut_and_still_bounded() -> None:
    content = ("word " * 2000) + "\n\n" + "y" * 3000 + " end."
    chunks = split_rung0("Ana", content, TOKENIZER)
    assert chunks is not None
    assert all(c.tokens == TOKENIZER.count(c.text) <= chunk_limit("Ana", TOKENIZER)
               for c in chunks)
    assert normalised("".join(content[s:e] for s, e in (c.span for c in chunks))) \
        .replace(" ", "") == content.replace(" ", "").replace("\n", "")


@settings(max_examples=30, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab .!?\n\"'")), max_size=300))
def test_sentence_spans_are_where_split_sentences_finds_its_sentences(text: str) -> None:
    spans = sentence_spans(text)
    assert [normalised(text[s:e]) for s, e in spans] == split_sentences(text)
    assert all(text[s:e] == text[s:e].strip() and e > s for s, e in spans)


def test_chunk_ids_never_meet_entry_ids_or_the_fade_counter() -> None:
    assert chunk_record_id(77, 0) == 77
    ids = {chunk_record_id(e, i) for e in (1, 2, (1 << 40) - 1) for i in (1, 2, 1000)}
    assert len(ids) == 9
    assert all(is_chunk_id(i) and i > EXTRA_ID_BASE and i < (1 << 63) for i in ids)
    assert not is_chunk_id(EXTRA_ID_BASE + 10**6)


def test_a_chunk_rehydrates_from_its_part_of_the_event_only() -> None:
    event = Event(5, 0.0, "Ana", "message", "First part. Second part.", {})
    chunk = MemoryRecord(record_id=5, agent="Main", rung=3, text="", tokens=0, source_tokens=3,
                         entry_ids=(5,), span=(12, 24))
    whole = MemoryRecord(record_id=5, agent="Main", rung=3, text="", tokens=0, source_tokens=6,
                         entry_ids=(5,))
    (part,) = record_events(chunk, [event])
    assert (part.content, part.entry_id, part.agent) == ("Second part.", 5, "Ana")
    assert record_events(whole, [event]) == [event]


def test_a_record_written_before_spans_reads_back_as_a_whole_event_record() -> None:
    from solace.memory.record_codec import (
        record_from_attrs,
        record_from_row,
        record_to_attrs,
        record_to_row,
    )

    chunk = MemoryRecord(record_id=9, agent="Main", rung=1, text="Ana: part", tokens=3,
                         source_tokens=3, entry_ids=(9,), span=(4, 40))
    attrs = record_to_attrs(chunk)
    assert record_from_attrs("Main", chunk.text, attrs).span == (4, 40)
    del attrs["span"]  # a fade event written before chunks existed
    assert record_from_attrs("Main", chunk.text, attrs).span == ()
    row = record_to_row(chunk, with_embedding=False)
    assert record_from_row(row).span == (4, 40)
    old_row = row[:-2] + row[-1:]  # a snapshot row written before chunks existed
    assert record_from_row(old_row).span == ()
