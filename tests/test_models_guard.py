from __future__ import annotations

import pytest

from solace.models.guard import REASONS, Guard, GuardPolicy, Verdict
from solace.models.tokenizer import WordPieceTokenizer

SOURCE = "Caroline: I went to a LGBTQ support group yesterday and it was really powerful for me"


@pytest.fixture
def guard() -> Guard:
    return Guard(GuardPolicy(), WordPieceTokenizer())


def test_accepts_a_faithful_shorter_rewrite(guard: Guard) -> None:
    verdict = guard.check(SOURCE, "Caroline went to an LGBTQ support group yesterday.")
    assert verdict == Verdict(True, (), 1.0, ())
    assert guard.counts["accepted"] == 1
    assert guard.counts["rejected"] == 0


def test_rejects_the_measured_smollm2_failure(guard: Guard) -> None:
    source = "I went to a LGBTQ support group yesterday"
    output = (
        "your support group and the impact it had on her life, but as a text-based AI "
        "assistant, I don't have personal experiences"
    )
    verdict = guard.check(source, output)
    assert not verdict.ok
    assert verdict.reasons == ("not_shorter", "lost_salient", "invented")
    assert verdict.kept_share == 0.0
    assert verdict.invented == ("name:ai",)
    assert guard.counts == {
        "accepted": 0,
        "rejected": 1,
        "empty": 0,
        "not_shorter": 1,
        "lost_salient": 1,
        "invented": 1,
        "schema": 0,
    }


def test_rejects_longer_or_equal_output(guard: Guard) -> None:
    verdict = guard.check("Bob went home", "Bob went home")
    assert verdict.reasons == ("not_shorter",)
    lenient = Guard(GuardPolicy(max_ratio=1.5), guard.tokenizer)
    assert lenient.check("Bob went home", "Bob went home").ok


def test_rejects_lost_names(guard: Guard) -> None:
    source = "Melanie and Caroline met Jon at the Art Museum in Boston after work"
    verdict = guard.check(source, "Melanie met someone at a museum after work")
    assert verdict.reasons == ("lost_salient",)
    assert verdict.kept_share == pytest.approx(1 / 5)


def test_keep_share_threshold_is_inclusive(guard: Guard) -> None:
    source = "Anna, Ben, Carl, Dora and Emil went hiking together on a sunny afternoon"
    assert guard.check(source, "Anna, Ben, Carl and Dora went hiking").ok  # 4/5 = 0.8


@pytest.mark.parametrize(
    ("output", "invented"),
    [
        ("Caroline went to a support group in Paris yesterday.", ("name:paris",)),
        ("Caroline went to 3 LGBTQ support groups yesterday.", ("number:3",)),
        ("Caroline went to an LGBTQ support group on Monday.", ("date:monday",)),
        ("Caroline went to an LGBTQ support group in July 2023.", ("date:2023-07",)),
    ],
)
def test_rejects_invented_items(guard: Guard, output: str, invented: tuple[str, ...]) -> None:
    verdict = guard.check(SOURCE, output)
    assert not verdict.ok
    assert "invented" in verdict.reasons
    assert verdict.invented == invented


def test_allow_new_names_tolerates_names_only() -> None:
    guard = Guard(GuardPolicy(allow_new_names=1), WordPieceTokenizer())
    assert guard.check(SOURCE, "Caroline went to an LGBTQ group in Paris yesterday.").ok
    verdict = guard.check(SOURCE, "Caroline went to 2 LGBTQ groups yesterday.")
    assert verdict.reasons == ("invented",)


def test_number_words_and_digits_are_the_same_number(guard: Guard) -> None:
    source = "Melanie: We went camping in July 2023 with my two kids and the dog, it was fun"
    assert guard.check(source, "Melanie went camping in July 2023 with her 2 kids.").ok
    assert guard.check(source.replace("two", "2"), "Melanie camped in July 2023 with two kids").ok


def test_dates_compared_normalised(guard: Guard) -> None:
    source = "Jon said the gallery opening is on 2024-03-15 and everyone from work is invited"
    assert guard.check(source, "Jon: gallery opening on March 15, 2024").ok
    assert guard.check(source, "Jon: gallery opening in March 2024").reasons == ("lost_salient",)


def test_source_without_salient_items_passes_on_length(guard: Guard) -> None:
    verdict = guard.check("we talked about nothing much for a long while", "small talk")
    assert verdict == Verdict(True, (), 1.0, ())


@pytest.mark.parametrize("output", ["", "   \n"])
def test_rejects_empty(guard: Guard, output: str) -> None:
    assert guard.check(SOURCE, output).reasons == ("empty",)
    assert guard.counts["empty"] == 1


SCHEMA = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "maxLength": 40},
        "points": {"type": "array", "items": {"type": "string"}},
        "include_in_memory": {"type": "boolean"},
    },
    "required": ["title", "points", "include_in_memory"],
    "additionalProperties": False,
}


def test_check_json_validates_then_judges_text_fields(guard: Guard) -> None:
    good = {
        "title": "Caroline",
        "points": ["LGBTQ support group", "yesterday"],
        "include_in_memory": True,
    }
    assert guard.check_json(SOURCE, good, SCHEMA, ("title", "points")).ok
    bad = {**good, "include_in_memory": "true"}
    assert guard.check_json(SOURCE, bad, SCHEMA, ("title", "points")).reasons == ("schema",)
    invented = {**good, "points": ["support group in Paris", "yesterday"]}
    assert guard.check_json(SOURCE, invented, SCHEMA, ("title", "points")).reasons == (
        "lost_salient",
        "invented",
    )
    assert guard.counts["accepted"] == 1
    assert guard.counts["rejected"] == 2
    assert guard.counts["schema"] == 1


def test_check_json_rejects_non_text_field(guard: Guard) -> None:
    obj = {"title": "x", "points": [], "include_in_memory": True}
    with pytest.raises(TypeError, match="include_in_memory"):
        guard.check_json(SOURCE, obj, SCHEMA, ("include_in_memory",))


def test_counts_cover_every_reason(guard: Guard) -> None:
    assert set(guard.counts) == {"accepted", "rejected", *REASONS}


@pytest.mark.parametrize(
    "kwargs", [{"keep_share": 1.5}, {"max_ratio": 0.0}, {"allow_new_names": -1}]
)
def test_policy_rejects_bad_values(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError, match=next(iter(kwargs))):
        GuardPolicy(**kwargs)  # type: ignore[arg-type]
