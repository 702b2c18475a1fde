"""The deterministic merger: restatements collapse, every name/number/date survives."""

from __future__ import annotations

import numpy as np
import pytest

from solace.facts.compactor import check_compaction
from solace.facts.merge import clauses, lost_salient, merge_deterministic
from solace.models.embedder import HashingEmbedder, MiniLMEmbedder
from solace.models.entities import salient
from solace.models.tokenizer import WordPieceTokenizer

EMBED = HashingEmbedder()

# Ten facts, each said three or four ways (interleaved as a long-lived store holds them).
RESTATEMENTS = (
    ("Alice lives in Paris.", "The user, Alice, lives in Paris", "Alice's home is in Paris",
     "Alice mentioned that she lives in Paris."),
    ("Bob has two dogs named Rex and Fido.", "Bob owns 2 dogs, Rex and Fido",
     "The user said Bob has two dogs, Rex and Fido."),
    ("The contract renews in March 2027.", "The contract renews Mar 2027",
     "The user mentioned the contract renews in March 2027."),
    ("Carol's birthday is on 4 July.", "Carol was born on 4 July", "Carol's birthday is July 4."),
    ("Prefers invoices summarised in French.", "The user prefers invoices summarised in French",
     "prefers that invoices are summarised in French"),
    ("Eve works at Acme as a nurse since 2019.", "Eve has worked at Acme since 2019 as a nurse",
     "Eve's job: nurse at Acme since 2019."),
    ("usually free before 11am", "is usually free before 11am on weekdays",
     "mentioned they're usually free before 11am"),
    ("The user's daughter Mia is 7 years old.", "Mia, the user's daughter, is 7.",
     "Mia is seven years old."),
    ("Frank will visit Tokyo in October 2026.", "Frank plans to visit Tokyo in October 2026",
     "Frank plans to visit Tokyo in October 2026, with Grace."),
    ("Dave is allergic to peanuts.", "Dave has a peanut allergy.", "Dave is allergic to peanuts"),
)  # fmt: skip


def corpus() -> list[str]:
    width = max(len(group) for group in RESTATEMENTS)
    return [g[i] for i in range(width) for g in RESTATEMENTS if i < len(g)]


def merge(inputs: list[str], threshold: float = 0.9) -> list[str]:
    return merge_deterministic(inputs, EMBED.embed(inputs), threshold=threshold)


def test_exact_and_near_exact_restatements_collapse_to_one() -> None:
    inputs = ["Alice lives in Paris.", "Alice lives in Paris", "alice lives in paris!"]
    assert merge(inputs) == ["Alice lives in Paris"]


def test_restatements_in_other_words_collapse_to_the_shortest() -> None:
    inputs = [
        "The user, Alice, lives in Paris",
        "Alice's home is in Paris",
        "Alice lives in Paris.",
    ]
    assert merge(inputs) == ["Alice lives in Paris"]


def test_a_clause_contained_in_another_is_dropped_for_the_fuller_one() -> None:
    inputs = ["Eve works at Acme.", "Eve works at Acme as a nurse since 2019."]
    assert merge(inputs) == ["Eve works at Acme as a nurse since 2019"]


def test_negations_relations_and_order_are_not_restatements() -> None:
    inputs = [
        "Dave eats meat.",
        "Dave does not eat meat.",
        "Dave doesn\u2019t eat meat",
        "prefers tea over coffee",
        "prefers coffee over tea",
        "Gina worked at Acme",
        "Gina worked at Acme until 2020",
    ]
    merged = merge(inputs, threshold=1.0)
    joined = "\n".join(merged)
    assert "Dave does not eat meat" not in joined  # the shorter negation is kept
    for clause in (
        "Dave eats meat",
        "Dave doesn\u2019t eat meat",
        "Gina worked at Acme until 2020",
    ):
        assert clause in joined
    assert "tea over coffee" in joined and "coffee over tea" in joined


def test_singletons_pass_unchanged() -> None:
    inputs = ["Alice lives in Paris.", "The contract renews in March 2027.", "Hank plays chess."]
    assert merge(inputs) == inputs


def test_a_cluster_keeps_every_distinct_clause_and_states_its_subject_once() -> None:
    inputs = ["Alice lives in Paris; Alice works at Acme.", "Alice lives in Paris, and she paints."]
    assert merge(inputs) == ["Alice lives in Paris; works at Acme; she paints"]


def test_clauses_split_at_sentences_semicolons_and_comma_and_dropping_lead_ins() -> None:
    assert clauses("Likes jazz; plays piano, and sings. Mentioned they're free on Fridays.") == [
        "Likes jazz", "plays piano", "sings", "free on Fridays",
    ]  # fmt: skip


def test_merger_keeps_every_name_number_and_date_on_a_mixed_set() -> None:
    inputs = [
        *corpus(),
        "Ivan paid $1,250 for the course on 2024-05-03.",
        "Ivan's course costs 1250 dollars",
        "Judy ran 3.5 km last week and 10% faster than in 2022.",
        "Judy is running the Berlin marathon on 29 September.",
        "Ken has three kids: Lea, Max and Noor.",
        "Ken's kids are Lea, Max and Noor, aged 4, 6 and 9.",
    ]
    merged = merge(inputs, threshold=0.5)
    assert lost_salient(inputs, merged) == ()
    text = "\n".join(merged)
    out = salient(text)
    for item in ("1250", "3.5", "10%", "4", "6", "9", "2", "7", "11", "3"):
        assert item in out.numbers, item
    for date in ("2024-05-03", "2022", "--09-29", "--07-04", "2027-03", "2026-10", "2019"):
        assert date in out.dates, date
    for name in (
        "alice",
        "paris",
        "rex",
        "fido",
        "carol",
        "acme",
        "mia",
        "tokyo",
        "grace",
        "berlin",
        "lea",
        "max",
        "noor",
        "ivan",
        "judy",
        "ken",
        "dave",
        "frank",
    ):
        assert name in text.casefold(), name
    assert check_compaction(inputs, merged, count_tokens=WordPieceTokenizer().count).accepted


def test_merger_compacts_a_restatement_corpus_at_least_twice() -> None:
    inputs = corpus()
    merged = merge(inputs)
    count = WordPieceTokenizer().count
    verdict = check_compaction(inputs, merged, count_tokens=count)
    assert verdict.accepted, verdict
    ratio = verdict.tokens_before / verdict.tokens_after
    print(
        f"restatement corpus: {len(inputs)} facts, {verdict.tokens_before} tokens -> "
        f"{len(merged)} facts, {verdict.tokens_after} tokens ({ratio:.2f}x)"
    )
    assert ratio >= 2.0
    assert len(merged) <= len(RESTATEMENTS) + 1  # Dave's "peanut allergy" is no key match


def test_the_seeds_morning_11am_lunch_example_becomes_one_entry() -> None:
    inputs = [
        "prefers to be contacted in the morning",
        "mentioned they're usually free before 11am",
        "asked not to be messaged during lunch",
    ]
    vectors = MiniLMEmbedder().embed(inputs)  # cosines 0.32, 0.51, 0.22: one cluster at 0.3
    merged = merge_deterministic(inputs, vectors, threshold=0.3)
    assert len(merged) == 1
    assert "11am" in merged[0] and "lunch" in merged[0] and "morning" in merged[0]
    verdict = check_compaction(inputs, merged, count_tokens=WordPieceTokenizer().count)
    assert verdict.accepted, verdict


def test_same_input_gives_the_same_output() -> None:
    inputs = corpus()
    first = merge(inputs, threshold=0.5)
    assert merge(list(inputs), threshold=0.5) == first
    assert merge_deterministic(inputs, HashingEmbedder().embed(inputs), threshold=0.5) == first


@pytest.mark.parametrize(
    ("vectors", "threshold", "error"),
    [
        (np.zeros((2, 8), dtype=np.float32), 0.5, ValueError),
        (np.zeros((3, 8), dtype=np.float32), 1.5, ValueError),
        (np.full((3, 8), np.nan, dtype=np.float32), 0.5, ValueError),
        (np.zeros((3, 8), dtype=np.float32), "0.5", TypeError),
    ],
)
def test_bad_vectors_or_threshold_are_refused_naming_the_value(
    vectors: np.ndarray, threshold: object, error: type[Exception]
) -> None:
    with pytest.raises(error):
        merge_deterministic(["a", "b", "c"], vectors, threshold=threshold)  # type: ignore[arg-type]


def test_merger_never_loses_a_salient_item_on_random_subsets_and_thresholds() -> None:
    import random

    pool = [
        *corpus(),
        "Ivan paid $1,250 for the course on 2024-05-03.",
        "Judy ran 3.5 km last week and 10% faster than in 2022.",
        "Maria ran a 5K charity run for a homeless shelter.",
        "Dr Smith is the dentist; Dr Jones is the GP.",
        "Dr Jones is the GP",
        "Ken has three kids: Lea, Max and Noor.",
        "Ken's kids are Lea, Max and Noor, aged 4, 6 and 9.",
    ]
    rng = random.Random(4)
    for _ in range(60):
        inputs = rng.sample(pool, rng.randint(2, len(pool)))
        threshold = rng.choice([0.0, 0.2, 0.5, 0.9, 1.0])
        merged = merge(inputs, threshold=threshold)
        assert lost_salient(inputs, merged) == (), (inputs, threshold)
        assert merge(inputs, threshold=threshold) == merged


def test_clusters_grow_by_centroid_so_a_chain_of_similar_facts_does_not_merge_all() -> None:
    inputs = ["Hank plays chess.", "Ivy paints murals.", "Jon sails boats."]
    angles = np.radians([0.0, 40.0, 80.0])  # neighbours 0.77 similar, the ends 0.17
    vectors = np.stack([np.cos(angles), np.sin(angles)], axis=1).astype(np.float32)
    merged = merge_deterministic(inputs, vectors, threshold=0.7)
    assert merged == ["Hank plays chess; Ivy paints murals", "Jon sails boats."]
