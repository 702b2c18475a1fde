"""The compactor's safety check (seed 004): each refusal reason, and acceptance."""

from __future__ import annotations

import json

import pytest

from solace.facts.compactor import REFUSAL_REASONS, check_compaction
from solace.facts.model import Compaction

INPUTS = (
    "Alice lives in Paris.",
    "The user, Alice, lives in Paris",
    "The contract renews in March 2027.",
    "Bob has two dogs named Rex and Fido.",
)


def words(text: str) -> int:
    return len(text.split())


def check(proposal: object, inputs: tuple[str, ...] = INPUTS) -> Compaction:
    return check_compaction(inputs, proposal, count_tokens=words)


def test_refusal_reasons_are_the_four_of_the_issue() -> None:
    assert REFUSAL_REASONS == ("unparsable", "empty", "not_smaller", "lost_salient")


@pytest.mark.parametrize(
    "proposal",
    [
        '{"facts": ["Alice lives in Paris", ',  # truncated JSON text
        "Alice lives in Paris",  # prose, not JSON
        '"just a string"',
        {"facts": "Alice lives in Paris"},
        {"facts": ["Alice lives in Paris", 3]},
        {"summary": ["Alice lives in Paris"]},
        {"facts": ["Alice lives in Paris"], "notes": "extra"},
        None,
        42,
    ],
)
def test_a_proposal_that_is_not_a_list_of_fact_strings_is_refused_as_unparsable(
    proposal: object,
) -> None:
    verdict = check(proposal)
    assert not verdict.accepted
    assert verdict.reason == "unparsable"
    assert verdict.outputs == ()


@pytest.mark.parametrize("proposal", [{"facts": []}, '{"facts": []}', [], {"facts": ["", "  "]}])
def test_a_proposal_without_facts_is_refused_as_empty(proposal: object) -> None:
    verdict = check(proposal)
    assert (verdict.accepted, verdict.reason) == (False, "empty")


def test_a_proposal_as_long_as_its_inputs_is_refused_as_not_smaller() -> None:
    verdict = check({"facts": list(INPUTS)})
    assert (verdict.accepted, verdict.reason) == (False, "not_smaller")
    assert verdict.tokens_before == verdict.tokens_after == words("\n".join(INPUTS))


def test_a_proposal_longer_than_its_inputs_is_refused_as_not_smaller() -> None:
    longer = [*INPUTS[:3], "Bob has two dogs named Rex and Fido, both of them good dogs."]
    verdict = check(longer)
    assert verdict.reason == "not_smaller"
    assert verdict.tokens_after > verdict.tokens_before


def test_a_proposal_that_drops_a_date_is_refused_as_lost_salient() -> None:
    verdict = check(
        {
            "facts": [
                "Alice lives in Paris.",
                "The contract renews.",
                "Bob has 2 dogs, Rex and Fido.",
            ]
        }
    )
    assert (verdict.accepted, verdict.reason) == (False, "lost_salient")
    assert verdict.lost == ("date:2027-03",)


def test_a_proposal_that_drops_a_number_is_refused_as_lost_salient() -> None:
    verdict = check(
        [
            "Alice lives in Paris.",
            "The contract renews in March 2027.",
            "Bob has dogs, Rex and Fido.",
        ]
    )
    assert verdict.reason == "lost_salient"
    assert verdict.lost == ("number:2",)


def test_a_proposal_that_drops_a_name_is_refused_as_lost_salient() -> None:
    verdict = check(
        json.dumps(
            {
                "facts": [
                    "Alice lives in Paris.",
                    "The contract renews in March 2027.",
                    "Bob has two dogs named Rex.",
                ]
            }
        )
    )
    assert verdict.reason == "lost_salient"
    assert verdict.lost == ("name:fido",)


def test_an_item_kept_by_any_output_counts_as_kept() -> None:
    inputs = ("Alice lives in Paris.", "Alice moved there in 2019.")
    verdict = check_compaction(inputs, ["Alice lives in Paris since 2019."], count_tokens=words)
    assert verdict.accepted


def test_a_good_proposal_is_accepted_with_its_outputs_and_sizes() -> None:
    proposal = {
        "facts": [
            " Alice lives in Paris. ",
            "The contract renews in Mar 2027.",
            "Bob has 2 dogs: Rex and Fido.",
        ]
    }
    verdict = check(proposal)
    assert verdict.accepted, verdict
    assert verdict.reason == ""
    assert verdict.outputs == (
        "Alice lives in Paris.",
        "The contract renews in Mar 2027.",
        "Bob has 2 dogs: Rex and Fido.",
    )
    assert verdict.lost == ()
    assert (verdict.tokens_before, verdict.tokens_after) == (24, 17)


def test_canonical_forms_agree_march_2027_with_mar_2027_and_two_with_2() -> None:
    verdict = check_compaction(
        ["The contract renews in March 2027 and covers two sites.", "It is signed by Carol."],
        ["Carol signed; contract renews Mar 2027, covers 2 sites."],
        count_tokens=words,
    )
    assert verdict.accepted, verdict


def test_a_less_precise_date_does_not_keep_a_precise_one() -> None:
    verdict = check_compaction(
        ["Carol's birthday is on 4 July 2023.", "Carol likes cake."],
        ["Carol, born July 2023, likes cake."],
        count_tokens=words,
    )
    assert verdict.reason == "lost_salient"
    assert verdict.lost == ("date:2023-07-04",)


def test_detail_never_quotes_fact_text() -> None:
    for proposal in ({"facts": ["The contract renews."]}, {"facts": list(INPUTS)}, "Alice {"):
        verdict = check(proposal)
        assert "Alice" not in verdict.detail and "contract" not in verdict.detail, verdict.detail


def test_an_input_kept_verbatim_keeps_its_own_items() -> None:
    # "5K" reads as the name "k" glued to a digit: still kept by the same text.
    inputs = (
        "Maria ran a 5K charity run for a shelter.",
        "Maria ran a 5K charity run for a shelter",
    )
    verdict = check_compaction(inputs, [inputs[0]], count_tokens=words)
    assert verdict.accepted, verdict


def test_a_date_is_not_made_up_across_two_outputs() -> None:
    verdict = check_compaction(
        ["The contract renews in March 2027."],
        ["renews March", "2027 contract"],
        count_tokens=words,
    )
    assert verdict.reason == "lost_salient"
    assert verdict.lost == ("date:2027-03",)
