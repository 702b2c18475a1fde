"""Rung 3's tag line: advisor tags first, then topic, people and month, within a budget."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from solace.memory.ladder import tag_line
from solace.memory.ladder.tags import normalise_tag
from solace.models import WordPieceTokenizer

MAY_8 = datetime(2023, 5, 8, 13, 56, tzinfo=UTC).timestamp()
RUNG2 = (
    "Caroline went to LGBTQ support group 7 May 2023; continue Caroline's edu, check out "
    "career options; Melanie painted lake sunrise 2022"
)


@pytest.fixture(scope="module")
def tokenizer() -> WordPieceTokenizer:
    return WordPieceTokenizer()


def test_normalise_tag() -> None:
    assert normalise_tag("LGBTQ support group") == "#lgbtq-support-group"
    assert normalise_tag("#Art") == "#art"
    assert normalise_tag("!!") == ""


def test_tag_line_orders_advisor_topic_people_date(tokenizer: WordPieceTokenizer) -> None:
    line = tag_line(RUNG2, speakers=("Caroline", "Melanie"), tags=("Pride",),
                    first_event_ts=MAY_8, budget_tokens=40, tokenizer=tokenizer)  # fmt: skip
    tags = line.split()
    assert tags[:5] == ["#pride", "#lgbtq", "#caroline", "#melanie", "#may-2023"]
    assert len(tags) == len(set(tags))
    assert tokenizer.count(line) <= 40


def test_tag_line_respects_the_budget_but_keeps_advisor_tags(
    tokenizer: WordPieceTokenizer,
) -> None:
    line = tag_line(RUNG2, speakers=("Caroline",), tags=("mood-low", "family"),
                    first_event_ts=MAY_8, budget_tokens=3, tokenizer=tokenizer)  # fmt: skip
    assert line == "#mood-low #family"
    bare = tag_line(RUNG2, speakers=("Caroline", "Melanie"), tags=(), first_event_ts=0.0,
                    budget_tokens=1, tokenizer=tokenizer)  # fmt: skip
    assert bare == "#lgbtq"  # the first tag is always kept
