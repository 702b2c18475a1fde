"""LoCoMo benchmark scoring: an evidence turn is credited only for what a fitted hit carries."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

from locomo_scoring import (  # noqa: E402
    Injected,
    Tally,
    answer_recall,
    credited_turns,
    event_id_recall,
    evidence_recall,
    score_question,
    within_tokens,
    word_set,
)

TURNS = {
    "D1:1": "Caroline: I went to the LGBTQ support group yesterday",  # support group lgbtq ...
    "D1:2": "Melanie: That sounds lovely, how did the painting go?",
    "D1:3": "Caroline: Yeah!",  # no content words but the name
}
WORDS = {dia: word_set(text) for dia, text in TURNS.items()}


def hit(dia_ids: set[str], text: str, n_events: int | None = None, tokens: int = 10) -> Injected:
    return Injected(frozenset(dia_ids), len(dia_ids) if n_events is None else n_events,
                    text, tokens)


def test_a_hit_standing_for_one_turn_alone_credits_it_whatever_its_text() -> None:
    summary = hit({"D1:1"}, "Caroline: support.")  # compressed far below half its words
    assert credited_turns(summary, WORDS) == {"D1:1"}
    assert evidence_recall([summary], frozenset({"D1:1"}), WORDS) == 1.0


def test_a_hit_for_several_turns_credits_a_turn_only_with_half_its_content_words() -> None:
    # D1:1's content words: caroline went lgbtq support group yesterday (6).
    assert WORDS["D1:1"] == {"caroline", "went", "lgbtq", "support", "group", "yesterday"}
    half = hit({"D1:1", "D1:2"}, "Caroline went to a support group.")  # 4 of 6
    short = hit({"D1:1", "D1:2"}, "Caroline and Melanie talked about support.")  # 2 of 6
    assert credited_turns(half, WORDS) == {"D1:1"}  # D1:2 has 0 of its words here
    assert credited_turns(short, WORDS) == set()
    assert evidence_recall([short], frozenset({"D1:1", "D1:2"}), WORDS) == 0.0
    assert evidence_recall([half], frozenset({"D1:1", "D1:2"}), WORDS) == 0.5


def test_exactly_half_the_content_words_is_enough() -> None:
    three = hit({"D1:1", "D1:2"}, "lgbtq group yesterday")
    assert credited_turns(three, WORDS) == {"D1:1"}


def test_a_hit_for_one_turn_plus_another_event_is_not_alone() -> None:
    # One LoCoMo turn and one event that is no turn (n_events 2): the word rule applies.
    mixed = hit({"D1:2"}, "Melanie asked something.", n_events=2)
    assert credited_turns(mixed, WORDS) == set()


def test_per_event_id_credit_counts_any_hit_standing_for_the_turn() -> None:
    short = hit({"D1:1", "D1:2"}, "Caroline and Melanie talked.")
    assert event_id_recall([short], frozenset({"D1:1", "D1:2"})) == 1.0
    assert evidence_recall([short], frozenset({"D1:1", "D1:2"}), WORDS) == 0.0


def test_only_fitted_hits_count_and_the_first_that_does_not_fit_ends_them() -> None:
    a, b, c = (hit({d}, TURNS[d], tokens=t) for d, t in (("D1:1", 200), ("D1:2", 400),
                                                       ("D1:3", 50)))
    assert within_tokens([a, b, c], 250) == [a]  # c would fit, but comes after b
    assert within_tokens([a, b, c], 650) == [a, b, c]
    assert within_tokens([b], 399) == []


def test_answer_recall_is_the_share_of_answer_content_words_in_the_text() -> None:
    words = word_set("the LGBTQ support group on 7 May 2023")
    assert words == {"lgbtq", "support", "group", "7", "may", "2023"}
    text = hit({"D1:1"}, "Caroline went to an LGBTQ support group on 7 May.")
    assert answer_recall([text], words) == pytest.approx(5 / 6)


def test_empty_evidence_or_answer_is_refused_not_scored() -> None:
    with pytest.raises(ValueError, match="no evidence"):
        evidence_recall([], frozenset(), WORDS)
    with pytest.raises(ValueError, match="no content words"):
        answer_recall([], frozenset())


def test_score_question_adds_every_budget_for_headline_id_and_answer() -> None:
    class Q:
        answer = "support group"
        evidence = frozenset({"D1:1"})
        category = 4

    tally = Tally()
    ranked = [hit({"D1:1", "D1:2"}, "Melanie talked.", tokens=300),
              hit({"D1:1"}, "Caroline: support group.", tokens=300)]
    score_question(tally, Q(), ranked, WORDS)
    assert tally.mean((4,), "id@250") == 0.0
    assert tally.mean((4,), "id@500") == 100.0
    assert tally.mean((4,), "ev@500") == 0.0  # the fitted hit carries none of D1:1's words
    assert tally.mean((4,), "ev@1000") == 100.0  # the second stands for D1:1 alone
    assert tally.mean((4,), "ans@1000") == 100.0
    assert tally.n((4,), "ev@2000") == 1
    assert tally.mean((4,), "tok@10") == 600.0  # a count, not a share
