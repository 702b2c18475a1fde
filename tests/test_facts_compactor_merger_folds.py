"""The merger states restatements of one fact once: a favourite or a recurring weekday
read as the words they mean, one value told with two verbs folded into one clause,
and a compaction that only drops restatements supersedes them. Never two subjects,
two values, or a negated and an affirmed verb in one folded clause."""

from __future__ import annotations

from pathlib import Path

from solace.facts.fold import fold_shared_frames
from solace.facts.merge import lost_salient, merge_deterministic
from solace.facts.model import FactStatus
from solace.facts.restatement import restatement_key
from solace.models.embedder import HashingEmbedder
from tests.facts_fixtures import ManualClock, config_with, fact_memory

EMBED = HashingEmbedder()


def merge(inputs: list[str]) -> list[str]:
    return merge_deterministic(inputs, EMBED.embed(inputs), threshold=0.0)  # one cluster


def test_a_restatement_folds_into_the_clause_it_repeats() -> None:
    inputs = ["Elif owns a VW Golf", "Elif drives a VW Golf"]
    assert merge(inputs) == ["Elif owns and drives a VW Golf"]
    three = ["Elif owns a VW Golf", "Elif drives a VW Golf", "Elif washes a VW Golf"]
    assert merge(three) == ["Elif owns, drives and washes a VW Golf"]
    assert lost_salient(three, merge(three)) == ()


def test_facts_about_two_subjects_are_never_fused() -> None:
    inputs = ["Dr Smith drives a VW Golf", "Dr Jones drives a VW Golf"]
    merged = "\n".join(merge(inputs))
    assert "Dr Smith drives a VW Golf" in merged and "Dr Jones drives a VW Golf" in merged
    # one subject each, folded only by who they are about
    two = [("Ana owns a VW Golf", "ana"), ("Ana drives a VW Golf", "theo")]
    assert fold_shared_frames(two) == two


def test_two_values_are_never_folded_into_one_clause() -> None:
    merged = "\n".join(merge(["Rosa is 30 years old", "Rosa is 31 years old"]))
    assert "30 years old" in merged and "31 years old" in merged
    assert " and " not in merged


def test_a_negated_verb_is_never_folded_with_an_affirmed_one() -> None:
    merged = "\n".join(merge(["Rosa does not own a VW Golf", "Rosa drives a VW Golf"]))
    assert "does not own a VW Golf" in merged and "drives a VW Golf" in merged


def test_relations_that_differ_in_their_preposition_stay_two_clauses() -> None:
    merged = "\n".join(merge(["Alice works in Paris", "Alice lives in Paris"]))
    assert "works in Paris" in merged and "lives in Paris" in merged


def test_a_favourite_phrasing_is_keyed_as_the_favourite_it_states() -> None:
    assert restatement_key("Rosa likes teal best of all colours")[0] == \
        restatement_key("Rosa prefers the colour teal")[0] == \
        restatement_key("Rosa's favourite colour is teal")[0]
    assert merge(["Rosa likes teal best of all colours", "Rosa prefers the colour teal"]) == [
        "Rosa prefers the colour teal"]


def test_a_favourite_phrasing_keeps_its_value_and_kind_and_drops_only_its_wording() -> None:
    key = restatement_key("Rosa loves pho more than any other dish")[0]
    assert key == restatement_key("Rosa's favourite food is pho")[0]
    assert {"pho", "food", "rosa"} <= key and "more" not in key and "than" not in key
    # a clause stating another attribute beside the favourite keeps every word
    both = restatement_key("Rosa's favourite food is pho and she lives in Quito")[0]
    assert {"pho", "quito", "liv"} <= both


def test_a_recurring_weekday_restates_each_week() -> None:
    assert restatement_key("Farah meets the team every Friday")[0] == \
        restatement_key("Farah's team meets on Friday each week")[0]
    merged = merge(["Farah's team meets on Friday each week", "Farah meets the team every Friday"])
    assert merged == ["Farah meets the team every Friday"]
    # a weekday that does not recur is not a weekly one
    assert "week" not in "".join(restatement_key("Farah met the team on Friday")[0])


async def test_a_compaction_that_only_drops_restatements_supersedes_them(
        tmp_path: Path) -> None:
    clock = ManualClock()
    texts = ["Omar is allergic to peanuts", "The user, Omar, is allergic to peanuts",
             "Omar meets the team every Tuesday",
             "Omar's team meets on Tuesday each week"]
    async with fact_memory(tmp_path, config_with(deduplication_threshold=0.99), clock) as fm:
        for text in texts:
            await fm.remember("omar", text)
            clock.t += 60
        assert len(fm.facts("omar")) == 4
        (verdict,) = await fm.consolidate("omar")
        assert verdict.accepted, verdict
        assert all(t in texts for t in verdict.outputs)  # nothing new: drops only
        live = [f.text for f in fm.facts("omar")]
        assert sorted(live) == sorted(verdict.outputs) and len(live) == 2
        history = fm.facts("omar", include_history=True)
        assert sum(f.status is FactStatus.SUPERSEDED for f in history) == 2
    async with fact_memory(tmp_path, clock=clock) as fm:  # rebuilt from the events alike
        assert sorted(f.text for f in fm.facts("omar")) == sorted(live)


def test_a_naming_clause_becomes_an_apposition_to_the_clause_with_its_value() -> None:
    inputs = ["Ana always orders oat latte", "Ana's favourite drink is oat latte"]
    assert merge(inputs) == ["Ana always orders oat latte, Ana's favourite drink"]
    inputs = ["Dmitri's car is a Mazda CX-5", "Dmitri owns a Mazda CX-5"]
    assert merge(inputs) == ["Dmitri owns a Mazda CX-5, Dmitri's car"]
    assert lost_salient(inputs, merge(inputs)) == ()


def test_a_naming_clause_of_another_subject_or_negated_is_never_apposed() -> None:
    merged = "\n".join(merge(["Theo's car is a VW Golf", "Ana owns a VW Golf"]))
    assert "Theo's car is a VW Golf" in merged and "Ana owns a VW Golf" in merged
    merged = "\n".join(merge(["Ana's car is not a VW Golf", "Ana owns a VW Golf"]))
    assert "Ana's car is not a VW Golf" in merged and "Ana owns a VW Golf" in merged
    merged = "\n".join(merge(["Ana's car is a VW Golf", "Ana's bike is a VW Golf"]))
    assert "car is a VW Golf" in merged and "bike is a VW Golf" in merged


def test_two_single_valued_attributes_are_never_fused_into_one_entry() -> None:
    import numpy as np

    same = np.ones((2, 4), dtype=np.float32) / 2.0  # cosine 1.0: similarity would join them
    inputs = ["Marek's partner is Ines", "Marek joined Nestle"]  # partner, employer
    assert merge_deterministic(inputs, same, threshold=0.7) == inputs
    inputs = ["Ana always orders oat latte", "Ana's favourite drink is oat latte"]
    assert merge_deterministic(inputs, same, threshold=0.7) == [
        "Ana always orders oat latte, Ana's favourite drink"]  # one attribute: joined


def test_only_the_subject_is_elided_never_its_verb() -> None:
    inputs = ["Caroline attended an LGBTQ support group", "Caroline attended an art fair"]
    same = EMBED.embed(["x", "x"])  # one cluster
    merged = merge_deterministic(inputs, same, threshold=0.5)
    assert merged == ["Caroline attended an LGBTQ support group; attended an art fair"]


def test_a_fold_joins_verbs_never_whole_clauses() -> None:
    inputs = ["Caroline is researching agencies to provide a home to kids in need",
              "Caroline sees adoption as a way to give love to kids in need"]
    merged = "\n".join(merge(inputs))
    assert "provide a home to kids in need" in merged and "give love to kids in need" in merged
