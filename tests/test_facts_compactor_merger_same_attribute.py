"""The merger drops a clause only when a kept clause says the same thing: the same
single-valued attribute of the same subject, with every word and item of the dropped
one; different relations, negations and extra details survive."""

from __future__ import annotations

from solace.facts.merge import lost_salient, merge_deterministic
from solace.facts.subjects import attribute_phrasing, attributes
from solace.models.embedder import HashingEmbedder

EMBED = HashingEmbedder()


def merge(inputs: list[str]) -> list[str]:
    return merge_deterministic(inputs, EMBED.embed(inputs), threshold=0.0)  # one cluster


def test_the_same_attribute_restated_in_other_words_keeps_one_clause() -> None:
    for inputs in (
        ["Rosa's employer is Fiat", "Rosa joined Fiat", "Rosa works at Fiat"],
        ["Rosa has moved to Quito", "Rosa lives in Quito"],
        ["Rosa can be reached at 555-0101", "Rosa's mobile number is 555-0101"],
        ["Rosa is in a relationship with Theo", "Rosa's partner is Theo"],
    ):
        merged = merge(inputs)
        assert len(merged) == 1 and ";" not in merged[0], (inputs, merged)
        assert lost_salient(inputs, merged) == ()


def test_a_deadline_restated_by_its_possessor_keeps_one_clause() -> None:
    inputs = [
        "The deadline for Rosa's audit memo is 3 May 2028",
        "Rosa must submit the audit memo by 3 May 2028",
        "Rosa's audit memo is due on 3 May 2028",
    ]
    merged = merge(inputs)
    assert len(merged) == 1 and ";" not in merged[0], merged
    assert lost_salient(inputs, merged) == ()


def test_a_favourite_stated_three_ways_is_one_attribute() -> None:
    assert attributes("Rosa likes teal best of all colours") == {"favourite:colour"}
    assert attributes("Rosa loves pho more than any other dish") == {"favourite:food"}
    assert attributes("Rosa's go-to meal is pho") == {"favourite:food"}
    merged = merge(["Rosa loves pho more than any other dish", "Rosa's go-to meal is pho"])
    assert len(merged) == 1 and ";" not in merged[0], merged


def test_the_attribute_phrasing_never_hides_the_value() -> None:
    for text, value in (
        ("Rosa joined Fiat", "Fiat"),
        ("Rosa can be reached at 555-0101", "555-0101"),
        ("Rosa likes teal best of all colours", "teal"),
        ("Rosa must submit the audit memo by 3 May 2028", "3 May 2028"),
    ):
        assert value in attribute_phrasing(text), text


def test_a_different_relation_survives_beside_the_same_object() -> None:
    merged = "\n".join(merge(["Alice works in Paris", "Alice lives in Paris"]))
    assert "works in Paris" in merged and "lives in Paris" in merged


def test_a_different_value_of_the_attribute_survives() -> None:
    merged = "\n".join(merge(["Rosa joined Fiat", "Rosa's employer is Ferrari"]))
    assert "Fiat" in merged and "Ferrari" in merged


def test_a_negation_survives_beside_its_affirmation() -> None:
    merged = "\n".join(merge(["Rosa no longer lives in Quito", "Rosa has moved to Quito"]))
    assert "no longer lives in Quito" in merged and "moved to Quito" in merged


def test_an_extra_detail_no_kept_clause_states_survives() -> None:
    merged = "\n".join(merge(["Rosa has moved to Quito with her sister", "Rosa lives in Quito"]))
    assert "with her sister" in merged
    merged = "\n".join(merge(["Rosa joined Fiat in 2021", "Rosa's employer is Fiat"]))
    assert "2021" in merged


def test_two_subjects_never_restate_each_other() -> None:
    merged = "\n".join(merge(["Rosa lives in Quito", "Theo has moved to Quito"]))
    assert "Rosa" in merged and "Theo" in merged and merged.count("Quito") == 2


def test_the_most_precise_clause_is_kept() -> None:
    merged = merge(["Rosa lives in Quito", "Rosa moved to Quito in March 2026"])
    assert merged == ["Rosa moved to Quito in March 2026"]


def test_an_elided_clause_keeps_the_subject_of_the_clause_before_it() -> None:
    merged = "\n".join(merge(["Rosa plays chess; joined Fiat", "Theo's employer is Fiat"]))
    assert "Rosa" in merged and "joined Fiat" in merged and "Theo" in merged


def test_a_thing_of_a_named_owner_is_about_the_owner() -> None:
    from solace.facts.subjects import subject

    assert subject("The deadline for Rosa's audit memo is 3 May 2028") == "rosa"
    assert subject("The office is in Porto") == ""
    merged = "\n".join(merge(["The deadline for Rosa's audit memo is 3 May 2028",
                              "Theo's audit memo is due on 3 May 2028"]))
    assert "Rosa" in merged and "Theo" in merged
