"""Rung 1 -> 2 keeps who, how many and when: names, numbers and dates survive."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from solace.memory.ladder import condense, extract_key_points, salient_survival
from solace.memory.ladder.abstractive import telegraphic
from solace.memory.ladder.sentences import Turn
from solace.models import WordPieceTokenizer

LOCOMO = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo10.json"


@pytest.fixture(scope="module")
def tokenizer() -> WordPieceTokenizer:
    return WordPieceTokenizer()


def test_telegraphic_keeps_names_numbers_negations_and_date_phrases() -> None:
    clause = "Melanie really didn't run a race the Saturday before 25 May 2023 with her 2 kids"
    assert telegraphic(clause) == (
        "Melanie didn't run race the Saturday before 25 May 2023 with her 2 kids"
    )
    assert telegraphic("Caroline went there on 7 May 2023") == "Caroline went 7 May 2023"
    assert telegraphic("we love The Witcher so much") == "we love The Witcher"
    assert telegraphic("Wow, that's so cool!! \U0001f31f") == "cool"


def test_condense_covers_every_salient_item_before_the_budget(
    tokenizer: WordPieceTokenizer,
) -> None:
    text = (
        "Caroline went to a LGBTQ support group on 7 May 2023 and it was so powerful.\n"
        "Melanie: My 3 kids and I went camping in June 2023, it was really fun.\n"
        "Caroline has known these friends for 4 years, since Caroline moved from Sweden."
    )
    out = condense(text, budget_tokens=1, tokenizer=tokenizer, speakers=("Caroline", "Melanie"))
    total, kept = salient_survival(text, out)
    assert kept == total > 0
    assert tokenizer.count(out) < tokenizer.count(text) * 0.75  # dense text: little to drop
    assert out.index("LGBTQ") < out.index("camping") < out.index("Sweden")  # text order


def test_condense_labels_a_line_that_does_not_name_its_owner(
    tokenizer: WordPieceTokenizer,
) -> None:
    text = "Melanie: The charity race on 20 May 2023 was rewarding."
    assert condense(text, 50, tokenizer, ("Caroline", "Melanie")).startswith("Melanie: ")


def _sessions(limit: int) -> list[list[Turn]]:
    if not LOCOMO.is_file():
        pytest.skip(f"LoCoMo data not found at {LOCOMO}")
    data = json.loads(LOCOMO.read_text())
    sessions = []
    for sample in data[:limit]:
        conv = sample["conversation"]
        a, b = conv["speaker_a"], conv["speaker_b"]
        index = 1
        while f"session_{index}" in conv:
            when = datetime.strptime(conv[f"session_{index}_date_time"], "%I:%M %p on %d %B, %Y")
            ts = when.replace(tzinfo=UTC).timestamp()
            sessions.append([
                Turn(t["speaker"], t["text"], ts, b if t["speaker"] == a else a)
                for t in conv[f"session_{index}"]
            ])  # fmt: skip
            index += 1
    return sessions


def test_salient_survival_across_rung_1_to_2_on_real_conversations_is_at_least_0_9(
    tokenizer: WordPieceTokenizer,
) -> None:
    total = kept = 0
    ratios = []
    for turns in _sessions(limit=2):
        source = sum(tokenizer.count_many([f"{t.speaker}: {t.content}" for t in turns]))
        rung1 = extract_key_points(turns, round(0.3 * source), tokenizer)
        rung2 = condense(rung1, round(0.1 * source), tokenizer, sorted({t.speaker for t in turns}))
        n, k = salient_survival(rung1, rung2)
        total, kept = total + n, kept + k
        ratios.append((tokenizer.count(rung1) / source, tokenizer.count(rung2) / source))
    assert len(ratios) == 38  # sessions of the first two conversations
    assert kept / total >= 0.9
    assert all(0.15 <= r1 <= 0.45 and 0.05 <= r2 <= 0.2 for r1, r2 in ratios)
