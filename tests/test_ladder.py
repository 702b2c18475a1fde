"""The ladder moves records one rung at a time, merges episodes, and loses nothing."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pytest

from solace.config import MemoryConfig
from solace.memory.ladder import Demotion, Ladder, format_raw, mean_embedding, rehydrate_text
from solace.memory.record import MemoryRecord
from solace.models import HashingEmbedder, MiniLMEmbedder, WordPieceTokenizer

SESSION_START = datetime(2023, 5, 8, 13, 56, tzinfo=UTC).timestamp()

# LoCoMo conversation 1, session 1 (8 May 2023), the first 18 turns, verbatim.
SESSION_1 = [
    ("Caroline", "Hey Mel! Good to see you! How have you been?"),
    ("Melanie", "Hey Caroline! Good to see you! I'm swamped with the kids & work. What's up "
     "with you? Anything new?"),
    ("Caroline", "I went to a LGBTQ support group yesterday and it was so powerful."),
    ("Melanie", "Wow, that's cool, Caroline! What happened that was so awesome? Did you hear "
     "any inspiring stories?"),
    ("Caroline", "The transgender stories were so inspiring! I was so happy and thankful for "
     "all the support."),
    ("Melanie", "Wow, love that painting! So cool you found such a helpful group. What's it "
     "done for you?"),
    ("Caroline", "The support group has made me feel accepted and given me courage to embrace "
     "myself."),
    ("Melanie", "That's really cool. You've got guts. What now?"),
    ("Caroline", "Gonna continue my edu and check out career options, which is pretty "
     "exciting!"),
    ("Melanie", "Wow, Caroline! What kinda jobs are you thinkin' of? Anything that stands out?"),
    ("Caroline", "I'm keen on counseling or working in mental health - I'd love to support "
     "those with similar issues."),
    ("Melanie", "You'd be a great counselor! Your empathy and understanding will really help "
     "the people you work with. By the way, take a look at this."),
    ("Caroline", "Thanks, Melanie! That's really sweet. Is this your own painting?"),
    ("Melanie", "Yeah, I painted that lake sunrise last year! It's special to me."),
    ("Caroline", "Wow, Melanie! The colors really blend nicely. Painting looks like a great "
     "outlet for expressing yourself."),
    ("Melanie", "Thanks, Caroline! Painting's a fun way to express my feelings and get "
     "creative. It's a great way to relax after a long day."),
    ("Caroline", "Totally agree, Mel. Relaxing and expressing ourselves is key. Well, I'm off "
     "to go do some research."),
    ("Melanie", "Yep, Caroline. Taking care of ourselves is vital. I'm off to go swimming with "
     "the kids. Talk to you soon!"),
]
# LoCoMo conversation 1, session 2 (25 May 2023), the first 6 turns, verbatim.
SESSION_2 = [
    ("Melanie", "Hey Caroline, since we last chatted, I've had a lot of things happening to me. "
     "I ran a charity race for mental health last Saturday \u2013 it was really rewarding. "
     "Really made me think about taking care of our minds."),
    ("Caroline", "That charity race sounds great, Mel! Making a difference & raising awareness "
     "for mental health is super rewarding - I'm really proud of you for taking part!"),
    ("Melanie", "Thanks, Caroline! The event was really thought-provoking. I'm starting to "
     "realize that self-care is really important. It's a journey for me, but when I look after "
     "myself, I'm able to better look after my family."),
    ("Caroline", "I totally agree, Melanie. Taking care of ourselves is so important - even if "
     "it's not always easy. Great that you're prioritizing self-care."),
    ("Melanie", "Yeah, it's tough. So I'm carving out some me-time each day - running, reading, "
     "or playing my violin - which refreshes me and helps me stay present for my fam!"),
    ("Caroline", "That's great, Mel! Taking time for yourself is so important. You're doing an "
     "awesome job looking after yourself and your family!"),
]
SESSION_2_START = datetime(2023, 5, 25, 13, 14, tzinfo=UTC).timestamp()


class CountingEmbedder:
    """HashingEmbedder that counts its calls."""

    def __init__(self) -> None:
        self.inner = HashingEmbedder()
        self.name, self.dim = self.inner.name, self.inner.dim
        self.calls: list[int] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(len(texts))
        return self.inner.embed(texts)


@pytest.fixture(scope="module")
def tokenizer() -> WordPieceTokenizer:
    return WordPieceTokenizer()


def turn_records(
    tokenizer: WordPieceTokenizer,
    turns: Sequence[tuple[str, str]] = SESSION_1,
    *,
    start: float = SESSION_START,
    first_id: int = 1,
    **fields: Any,
) -> list[MemoryRecord]:
    records = []
    for i, (speaker, content) in enumerate(turns):
        text = format_raw(speaker, content)
        tokens = tokenizer.count(text)
        records.append(
            MemoryRecord(
                record_id=first_id + i, agent="Main", rung=0, text=text, tokens=tokens,
                source_tokens=tokens, entry_ids=(100 + first_id + i,), speakers=(speaker,),
                first_event_ts=start + 30 * i, event_ts=start + 30 * i,
                created=start + 30 * i, last_referenced=start + 30 * i, **fields,
            )
        )  # fmt: skip
    return records


def with_embeddings(records: Sequence[MemoryRecord], embedder: Any) -> list[MemoryRecord]:
    """The records as ingest leaves them: each with the embedding of its text."""
    vectors = embedder.embed([r.text for r in records])
    return [dataclasses.replace(r, embedding=v) for r, v in zip(records, vectors, strict=True)]


def ladder(tokenizer: WordPieceTokenizer, **config: Any) -> Ladder:
    return Ladder(tokenizer=tokenizer, embedder=HashingEmbedder(), config=MemoryConfig(**config))


def only(demotions: list[Demotion]) -> MemoryRecord:
    assert len(demotions) == 1
    return demotions[0].record


def test_rung_sizes_fall_in_range_on_a_real_episode(tokenizer: WordPieceTokenizer) -> None:
    lad = ladder(tokenizer)
    records = turn_records(tokenizer)
    source = sum(r.source_tokens for r in records)
    rung1 = only(lad.demote(records, now=SESSION_START))
    rung2 = only(lad.demote([rung1], now=SESSION_START))
    rung3 = only(lad.demote([rung2], now=SESSION_START))
    assert [r.rung for r in (rung1, rung2, rung3)] == [1, 2, 3]
    assert all(r.source_tokens == source for r in (rung1, rung2, rung3))
    assert 0.15 <= rung1.tokens / source <= 0.45
    assert 0.05 <= rung2.tokens / source <= 0.2
    assert rung3.tokens / source <= 0.05
    for record in (rung1, rung2, rung3):
        assert record.tokens == tokenizer.count(record.text)
    assert "#caroline" in rung3.text.split() and "#may-2023" in rung3.text.split()


def test_yesterday_and_i_are_resolved_at_rung_1(tokenizer: WordPieceTokenizer) -> None:
    rung1 = only(ladder(tokenizer).demote(turn_records(tokenizer), now=SESSION_START))
    assert "Caroline went to a LGBTQ support group on 7 May 2023" in rung1.text
    assert "Melanie painted that lake sunrise in 2022" in rung1.text
    assert "yesterday" not in rung1.text and "last year" not in rung1.text
    rung2 = only(ladder(tokenizer).demote([rung1], now=SESSION_START))
    assert "7 May 2023" in rung2.text and "Caroline" in rung2.text


def test_demote_moves_every_record_exactly_one_rung(tokenizer: WordPieceTokenizer) -> None:
    a, b, c = turn_records(tokenizer, SESSION_1[2:5])
    inputs = [a, dataclasses.replace(b, rung=1), dataclasses.replace(c, rung=2)]
    demotions = ladder(tokenizer).demote(inputs, now=SESSION_START)
    by_source = {d.sources: d.record.rung for d in demotions}
    assert by_source == {(a.record_id,): 1, (b.record_id,): 2, (c.record_id,): 3}


def test_demote_refuses_rung_3_and_repeated_records(tokenizer: WordPieceTokenizer) -> None:
    assert ladder(tokenizer).demote([], now=0.0) == []
    (record,) = turn_records(tokenizer, SESSION_1[:1])
    with pytest.raises(ValueError, match="rung 3"):
        ladder(tokenizer).demote([dataclasses.replace(record, rung=3)], now=0.0)
    with pytest.raises(ValueError, match="appears twice"):
        ladder(tokenizer).demote([record, record], now=0.0)


def test_merge_keeps_every_entry_id_and_combines_bookkeeping(
    tokenizer: WordPieceTokenizer,
) -> None:
    records = turn_records(tokenizer)
    records[3] = dataclasses.replace(records[3], references=2, emotional_weight=0.7, tags=("art",))
    records[5] = dataclasses.replace(records[5], references=1, tags=("group", "art"))
    merged = only(ladder(tokenizer).demote(records, now=SESSION_START))
    assert merged.entry_ids == tuple(sorted(e for r in records for e in r.entry_ids))
    assert merged.record_id == min(r.record_id for r in records)
    assert merged.speakers == ("Caroline", "Melanie")
    assert merged.references == 3 and merged.emotional_weight == 0.7
    assert merged.tags == ("art", "group")
    assert merged.first_event_ts == records[0].first_event_ts
    assert merged.event_ts == records[-1].event_ts
    assert merged.source_tokens == sum(r.source_tokens for r in records)
    assert merged.embedding is not None and merged.embedding.shape == (384,)


def test_demote_does_not_mutate_its_inputs(tokenizer: WordPieceTokenizer) -> None:
    records = turn_records(tokenizer)
    before = [dataclasses.astuple(dataclasses.replace(r, embedding=None)) for r in records]
    demotions = ladder(tokenizer).demote(records, now=SESSION_START)
    after = [dataclasses.astuple(dataclasses.replace(r, embedding=None)) for r in records]
    assert before == after
    assert all(d.record is not r for d in demotions for r in records)


def test_every_input_appears_in_exactly_one_output(tokenizer: WordPieceTokenizer) -> None:
    # two sessions, the second two weeks later: two episodes, nothing lost or doubled
    first = turn_records(tokenizer, SESSION_1[:8])
    second = turn_records(tokenizer, SESSION_1[8:], start=SESSION_START + 14 * 86400, first_id=9)
    demotions = ladder(tokenizer).demote(second + first, now=SESSION_START)
    assert len(demotions) == 2
    sources = [s for d in demotions for s in d.sources]
    assert sorted(sources) == list(range(1, 19))
    entries = [e for d in demotions for e in d.record.entry_ids]
    assert sorted(entries) == sorted(e for r in first + second for e in r.entry_ids)
    assert demotions[0].record.first_event_ts < demotions[1].record.first_event_ts


def test_one_embed_call_per_demote_and_rung_3_always_has_an_embedding(
    tokenizer: WordPieceTokenizer,
) -> None:
    embedder = CountingEmbedder()
    lad = Ladder(tokenizer=tokenizer, embedder=embedder, config=MemoryConfig())
    early = turn_records(tokenizer, SESSION_1[:6])
    late = turn_records(tokenizer, SESSION_1[6:], start=SESSION_START + 86400, first_id=7)
    rung1 = [d.record for d in lad.demote(early + late, now=0.0)]
    assert embedder.calls == [2]  # both merged records, one call
    single = dataclasses.replace(early[0], record_id=99, rung=2, embedding=None)
    with_vector = dataclasses.replace(rung1[0], record_id=98, rung=2)
    out = lad.demote([single, with_vector], now=0.0)
    assert embedder.calls == [2, 1]  # only the one that had no embedding
    assert all(d.record.rung == 3 and d.record.embedding is not None for d in out)
    kept = next(d.record for d in out if d.sources == (98,))
    assert kept.embedding is rung1[0].embedding


def test_a_merge_is_embedded_as_the_token_weighted_mean_of_its_parts_without_a_model_call(
    tokenizer: WordPieceTokenizer,
) -> None:
    embedder = CountingEmbedder()
    lad = Ladder(tokenizer=tokenizer, embedder=embedder, config=MemoryConfig())
    records = with_embeddings(turn_records(tokenizer, SESSION_1[:6]), embedder.inner)
    demotions = lad.demote(records, now=0.0)
    assert embedder.calls == []
    merges = [d for d in demotions if len(d.sources) > 1]
    assert merges
    by_id = {r.record_id: r for r in records}
    for demotion in merges:
        parts = [by_id[s] for s in demotion.sources]
        weights = np.array([r.source_tokens for r in parts], dtype=np.float32)
        expected = (weights[:, None] * np.stack([r.embedding for r in parts])).sum(axis=0)
        expected /= np.linalg.norm(expected)
        assert demotion.embedding == "mean" and demotion.record.embedding is not None
        np.testing.assert_allclose(demotion.record.embedding, expected, atol=1e-6)
    singles = [d for d in demotions if len(d.sources) == 1]
    assert all(d.embedding == "kept" and d.record.embedding is by_id[d.sources[0]].embedding
               for d in singles)
    vectors = [r.embedding for r in records if r.embedding is not None]
    weights = np.ones(len(vectors), dtype=np.float32)
    np.testing.assert_allclose(mean_embedding(vectors[::-1], weights),
                               mean_embedding(vectors, weights), atol=1e-6)


def test_a_record_reaching_rung_2_is_embedded_from_its_summary(
    tokenizer: WordPieceTokenizer,
) -> None:
    embedder = CountingEmbedder()
    lad = Ladder(tokenizer=tokenizer, embedder=embedder, config=MemoryConfig())
    records = with_embeddings(turn_records(tokenizer, SESSION_1[:6]), embedder.inner)
    rung1 = [d.record for d in lad.demote(records, now=0.0)]
    rung2 = lad.demote(rung1, now=0.0)
    assert embedder.calls == [len(rung2)]  # one call for all of them
    for demotion in rung2:
        assert demotion.embedding == "text" and demotion.record.embedding is not None
        np.testing.assert_allclose(demotion.record.embedding,
                                   embedder.inner.embed([demotion.record.text])[0], atol=1e-6)


def test_a_lone_short_turn_still_shrinks_by_rung_2(tokenizer: WordPieceTokenizer) -> None:
    lad = ladder(tokenizer)
    (record,) = turn_records(tokenizer, SESSION_1[10:11])  # two clauses, 25 tokens
    rung1 = only(lad.demote([record], now=0.0))
    rung2 = only(lad.demote([rung1], now=0.0))
    assert rung1.tokens <= record.tokens
    assert rung2.tokens < rung1.tokens
    assert "Caroline" in rung2.text


def test_stats_count_demotions_merges_and_salient_survival(
    tokenizer: WordPieceTokenizer,
) -> None:
    lad = ladder(tokenizer)
    rung1 = only(lad.demote(turn_records(tokenizer), now=0.0))
    lad.demote([rung1], now=0.0)
    assert lad.stats.demotions == {1: 1, 2: 1, 3: 0}
    assert lad.stats.merges == 1
    assert lad.stats.salient_in > 0
    assert lad.stats.salient_survival >= 0.8
    assert lad.stats.llm_calls == 0


class FakeEvent:
    def __init__(self, ts: float, agent: str, content: str, speaker: str | None) -> None:
        self.entry_id = int(ts)
        self.ts = ts
        self.agent = agent
        self.kind = "message"
        self.content = content
        self.attrs = {"speaker": speaker} if speaker else {}


def test_rehydrate_text_rebuilds_rungs_0_to_2_from_events(tokenizer: WordPieceTokenizer) -> None:
    events = [
        FakeEvent(SESSION_START + i, "Main", content, speaker)
        for i, (speaker, content) in enumerate(SESSION_1)
    ]
    raw = rehydrate_text(events, 0, tokenizer=tokenizer)
    assert raw.splitlines()[2] == f"Caroline: {SESSION_1[2][1]}"
    records = turn_records(tokenizer)
    for i, record in enumerate(records):
        records[i] = dataclasses.replace(record, first_event_ts=SESSION_START + i,
                                         event_ts=SESSION_START + i)  # fmt: skip
    lad = ladder(tokenizer)
    rung1 = only(lad.demote(records, now=0.0))
    rung2 = only(lad.demote([rung1], now=0.0))
    assert rehydrate_text(events, 1, tokenizer=tokenizer) == rung1.text
    assert rehydrate_text(events, 2, tokenizer=tokenizer) == rung2.text
    unattributed = [FakeEvent(SESSION_START, "Mood", "I feel calm today.", None)]
    assert rehydrate_text(unattributed, 0, tokenizer=tokenizer) == "Mood: I feel calm today."
    assert "Mood feels calm on 8 May 2023" in rehydrate_text(unattributed, 1, tokenizer=tokenizer)
    with pytest.raises(ValueError, match="rungs 0, 1 or 2"):
        rehydrate_text(events, 3, tokenizer=tokenizer)


@pytest.mark.slow
@pytest.mark.parametrize("ingested", [False, True], ids=["embedded-from-text", "mean-of-turns"])
def test_rung_3_signatures_from_minilm_retrieve_their_own_episode(
    tokenizer: WordPieceTokenizer, ingested: bool
) -> None:
    lad = Ladder(tokenizer=tokenizer, embedder=MiniLMEmbedder(), config=MemoryConfig())
    records = turn_records(tokenizer) + turn_records(
        tokenizer, SESSION_2, start=SESSION_2_START, first_id=50
    )
    if ingested:
        records = with_embeddings(records, MiniLMEmbedder())
    for rung in (1, 2, 3):
        records = [d.record for d in lad.demote(records, now=SESSION_2_START)]
        assert [r.rung for r in records] == [rung, rung]
    support, race = records
    assert "7 May 2023" not in race.text and "#may-2023" in support.text
    queries = MiniLMEmbedder().embed(
        ["When did Caroline go to the LGBTQ support group?", "Melanie ran a charity race"]
    )
    assert support.embedding is not None and race.embedding is not None
    assert float(queries[0] @ support.embedding) > float(queries[0] @ race.embedding)
    assert float(queries[1] @ race.embedding) > float(queries[1] @ support.embedding)
