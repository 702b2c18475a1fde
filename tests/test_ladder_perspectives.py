"""Each agent compresses the same events from its own perspective (seed 002): rung 1
of a ``whole`` agent keeps what the episode is about, of an ``affect`` agent what was
felt, of a ``time`` agent when things happened; the rungs below follow from it."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from solace.memory.ladder import extract_key_points, rehydrate_text
from solace.memory.ladder.extractive import key_point_candidates, perspective_share
from solace.memory.ladder.sentences import Turn
from solace.models import WordPieceTokenizer
from substrate import Event

SAID = datetime(2023, 5, 8, 14, 0, tzinfo=UTC).timestamp()
FELT = "I was so scared and heartbroken when the vet called."
DATED = "The vet moved the appointment to next Friday, 12 May 2023."
PLAIN = "The vet clinic is on Oak Street near the old library and the big park."
EPISODE = [
    Turn("Caroline", f"{PLAIN} {FELT} {DATED} We adopted Luna from the shelter in town.",
         SAID, "Melanie"),
    Turn("Melanie", "Oh no, I hope Luna is fine. The shelter in town has great vets.",
         SAID + 60, "Caroline"),
]


@pytest.fixture(scope="module")
def tokenizer() -> WordPieceTokenizer:
    return WordPieceTokenizer()


def _kept(perspective: str, tokenizer: WordPieceTokenizer, budget: int = 30) -> str:
    return extract_key_points(EPISODE, budget, tokenizer, perspective)  # type: ignore[arg-type]


def test_an_affect_agent_keeps_what_was_felt_where_a_whole_agent_does_not(
    tokenizer: WordPieceTokenizer,
) -> None:
    whole, affect = _kept("whole", tokenizer), _kept("affect", tokenizer)
    assert "scared and heartbroken" in affect
    assert "scared and heartbroken" not in whole
    assert whole != affect


def test_a_time_agent_keeps_when_things_happened(tokenizer: WordPieceTokenizer) -> None:
    time = _kept("time", tokenizer)
    assert "12 May 2023" in time
    assert "Oak Street" not in time


def test_a_sentence_outside_the_perspective_is_weighed_down_not_dropped() -> None:
    assert perspective_share("whole", FELT, dated=False) == 1.0
    assert perspective_share("time", PLAIN, dated=False) == pytest.approx(0.05)
    assert perspective_share("time", DATED, dated=True) == 1.0
    assert perspective_share("affect", PLAIN, dated=False) == pytest.approx(0.05)
    assert 0.05 < perspective_share("affect", FELT, dated=False) <= 1.0


def test_every_perspective_keeps_whole_sentences_of_the_episode_in_text_order(
    tokenizer: WordPieceTokenizer,
) -> None:
    for perspective in ("whole", "affect", "time"):
        lines = [c.line for c in key_point_candidates(EPISODE, tokenizer, perspective)]
        kept = _kept(perspective, tokenizer).splitlines()
        assert kept and all(line in lines for line in kept)
        assert kept == sorted(kept, key=lines.index)


def test_rehydrating_a_record_uses_its_agents_perspective(
    tokenizer: WordPieceTokenizer,
) -> None:
    events = [Event(i + 1, t.ts, t.speaker, "message", t.content, {})
              for i, t in enumerate(EPISODE)]
    whole = rehydrate_text(events, 1, tokenizer=tokenizer)
    affect = rehydrate_text(events, 1, tokenizer=tokenizer, perspective="affect")
    assert affect == extract_key_points(
        [Turn(t.speaker, t.content, t.ts, t.addressee) for t in EPISODE],
        max(1, round(0.3 * tokenizer.count("\n".join(
            f"{t.speaker}: {t.content}" for t in EPISODE)))), tokenizer, "affect")
    assert "heartbroken" in affect and "heartbroken" not in whole
