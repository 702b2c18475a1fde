"""Facts benchmark scoring: a value counts only when the rendered block says it in whole
words, and an update sequence's outcome follows from which values the block carries."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

from facts_bench import current_values  # noqa: E402
from facts_bench_data import (  # noqa: E402
    SUBJECTS,
    Subject,
    check_phrasings,
    restatement_stream,
    templated_sequences,
)
from facts_bench_scoring import (  # noqa: E402
    contains_value,
    outcome,
    percentile,
    rates,
    salient_kept,
)

BLOCK = ("Remembered facts (memory u1):\n"
         "- Ana prefers the colour blue (as of 2024-01-08)\n"
         "- Ana's phone number is 555-0199 (as of 2024-01-08)\n"
         "- Ana lives in New York (as of 2023-11-14)")


def test_a_value_counts_only_as_whole_words_casefolded() -> None:
    assert contains_value(BLOCK, ["BLUE"])
    assert contains_value(BLOCK, ["555-0199"])
    assert contains_value(BLOCK, ["new york"])
    assert not contains_value(BLOCK, ["red"])  # inside "prefers" only
    assert not contains_value(BLOCK, ["555-01"])  # a prefix of a number is not the number
    assert not contains_value(BLOCK, ["York City"])
    assert not contains_value(BLOCK, [""])
    assert not contains_value("", ["blue"])


def test_any_alternative_key_counts() -> None:
    assert contains_value(BLOCK, ["green", "blue"])
    assert not contains_value(BLOCK, ["green", "red"])


@pytest.mark.parametrize(("new", "old", "expected"), [
    (["blue"], ["green"], "newest_only"),
    (["blue"], ["555-0199"], "both"),
    (["green"], ["blue"], "only_old"),
    (["green"], ["red"], "neither"),
])
def test_outcome_follows_which_values_the_block_carries(new: list[str], old: list[str],
                                                        expected: str) -> None:
    assert outcome(BLOCK, new, old) == expected


def test_an_empty_block_is_neither() -> None:
    assert outcome("", ["blue"], ["green"]) == "neither"


def test_rates_count_newest_and_stale_from_the_four_outcomes() -> None:
    r = rates(["newest_only", "newest_only", "both", "only_old"])
    assert r["n"] == 4
    assert r["newest"] == 75.0  # newest_only + both
    assert r["stale_present"] == 50.0  # both + only_old
    assert (r["newest_only"], r["both"], r["only_old"], r["neither"]) == (50.0, 25.0, 25.0, 0.0)
    assert rates([])["newest"] == 0.0
    with pytest.raises(ValueError, match="maybe"):
        rates(["maybe"])


def test_salient_kept_finds_lost_names_numbers_and_dates() -> None:
    before = ["Ana moved to Berlin on 3 May 2024", "Ana has 3 cats"]
    kept, total, lost = salient_kept(before, ["Ana moved to Berlin on 3 May 2024; has 3 cats"])
    assert (kept, total, lost) == (total, total, [])
    assert total >= 3  # Ana, Berlin, the date, 3
    kept, total, lost = salient_kept(before, ["Ana moved to Berlin"])
    assert kept < total and lost


def test_percentile_of_nothing_is_zero() -> None:
    assert percentile([], 95) == 0.0
    assert percentile([1.0, 2.0, 3.0], 50) == 2.0


def test_every_phrasing_names_its_value() -> None:
    check_phrasings()
    with pytest.raises(ValueError, match="lacks"):
        check_phrasings([Subject("x", "?", ("a", "b"), ("{n} moved",), ("{v}",), ("{v}",))])


def test_templated_sequences_are_deterministic_and_change_the_value() -> None:
    seqs = templated_sequences(10, 7)
    assert len(seqs) == 10 * len(SUBJECTS) >= 100
    assert seqs == templated_sequences(10, 7)
    for s in seqs:
        assert s.old_value != s.new_value
        assert contains_value(s.new_remember, [s.new_value])
        assert contains_value(s.old_remember, [s.old_value])
        assert not contains_value(s.new_remember, [s.old_value])


def test_the_stream_is_mostly_restatements_of_sixty_facts() -> None:
    stream = restatement_stream(600, 1)
    kinds = [x["kind"] for x in stream]
    assert len(stream) == 600
    assert kinds.count("new") == 60
    assert stream[-1]["distinct"] == 60
    assert kinds.count("restate") > 500


def test_current_values_flags_missing_and_stale_values() -> None:
    stream = [{"key": "a", "text": "Ana lives in Oslo", "value": "Oslo"},
              {"key": "a", "text": "Ana lives in Rome", "value": "Rome"},
              {"key": "b", "text": "Bo is a chef", "value": "chef"}]
    both = current_values(stream, ["Ana lives in Oslo", "Ana lives in Rome"])
    assert both == {"facts": 2, "current_value_missing": 1, "stale_value_live": 1}
    ok = current_values(stream, ["Ana lives in Rome", "Bo is a chef"])
    assert ok == {"facts": 2, "current_value_missing": 0, "stale_value_live": 0}
