"""BM25 lexical index: names and numbers are found, updates are incremental."""

from __future__ import annotations

import pytest

from solace.memory.bm25 import LexicalIndex
from solace.memory.lexical import content_words, stem, terms


def test_stem_maps_inflections_to_one_key() -> None:
    assert {stem(w) for w in ("hike", "hikes", "hiked", "hiking")} == {stem("hike")}
    assert {stem(w) for w in ("paint", "painted", "painting", "paints")} == {"paint"}
    assert stem("class") == stem("classes") == "class"
    assert stem("2023") == "2023"


def test_content_words_drop_stop_words_and_punctuation() -> None:
    assert content_words("When did Caroline go to the LGBTQ support group?") == [
        "caroline", "go", "lgbtq", "support", "group",
    ]
    assert content_words("Caroline’s dog") == ["caroline", "dog"]  # curly apostrophe
    assert terms("") == []


def test_bm25_finds_the_document_with_the_rare_name_and_number() -> None:
    index = LexicalIndex()
    index.add(1, "Melanie: I went camping with the kids last weekend.")
    index.add(2, "Caroline: I moved from Sweden 4 years ago.")
    index.add(3, "Melanie: The kids loved the camping trip and the marshmallows.")
    scores = index.scores("How many years ago did Caroline move from Sweden?")
    assert max(scores, key=scores.__getitem__) == 2
    assert 1 not in scores and 3 not in scores  # no shared term, no score


def test_bm25_scores_lie_below_the_query_ceiling() -> None:
    index = LexicalIndex()
    for i, text in enumerate(["pottery class pottery", "pottery", "a class on pottery"]):
        index.add(i, text)
    ceiling = index.ceiling("pottery class")
    assert ceiling > 0
    assert all(0 < s < ceiling for s in index.scores("pottery class").values())
    assert index.ceiling("unknown words") == 0.0


def test_replace_and_remove_update_postings() -> None:
    index = LexicalIndex()
    index.add(7, "Caroline adopted a puppy")
    index.add(7, "Caroline painted a sunrise")  # replaces
    assert 7 not in index.scores("puppy")
    assert 7 in index.scores("sunrise")
    index.remove(7)
    assert len(index) == 0 and index.scores("sunrise") == {}
    index.remove(7)  # no-op


def test_sync_makes_the_index_hold_exactly_the_given_documents() -> None:
    index = LexicalIndex()
    index.sync({1: "alpha beta", 2: "beta gamma"})
    index.sync({2: "gamma delta", 3: "alpha"})
    assert sorted(index.ids()) == [2, 3]
    assert set(index.scores("alpha")) == {3}
    assert index.text(2) == "gamma delta"


def test_bad_parameters_are_refused() -> None:
    with pytest.raises(ValueError, match="k1"):
        LexicalIndex(k1=-1)


def test_an_index_rebuilt_from_its_state_scores_exactly_as_the_original() -> None:
    index = LexicalIndex(k1=1.5, b=0.6)
    index.sync({1: "Caroline went hiking in May", 2: "Melanie paints sunsets",
                3: "hiking hiking with Caroline", 4: "the and of"})  # 4: only stop words
    index.remove(2)
    index.add(5, "a pottery class on 7 May")
    copy = LexicalIndex.from_state(index.state())
    assert sorted(copy.ids()) == sorted(index.ids()) and copy.text(5) == index.text(5)
    for query in ("Caroline hiking", "May pottery", "sunsets", "the"):
        assert copy.scores(query) == index.scores(query)
        assert copy.ceiling(query) == index.ceiling(query)
    copy.add(6, "Caroline in May")  # still incremental after the rebuild
    index.add(6, "Caroline in May")
    assert copy.scores("Caroline May") == index.scores("Caroline May")


def test_a_state_whose_arrays_do_not_fit_is_refused() -> None:
    import dataclasses

    import numpy as np

    index = LexicalIndex()
    index.sync({1: "alpha beta", 2: "beta gamma"})
    state = index.state()
    bad = [dataclasses.replace(state, docs=state.docs + 5),
           dataclasses.replace(state, texts=state.texts[:1]),
           dataclasses.replace(state, indptr=state.indptr[:-1]),
           dataclasses.replace(state, ids=np.array([1, 1], dtype=np.int64))]
    for damaged in bad:
        with pytest.raises(ValueError, match="lexical state"):
            LexicalIndex.from_state(damaged)


def _state_as_sets(index: LexicalIndex) -> tuple[dict[int, str], dict[str, dict[int, int]]]:
    state = index.state()
    state.check()
    ids = state.ids.tolist()
    postings = {
        term: {ids[d]: tf for d, tf in zip(state.docs[state.indptr[t]:state.indptr[t + 1]].tolist(),
                                           state.tfs[state.indptr[t]:state.indptr[t + 1]].tolist(),
                                           strict=True)}
        for t, term in enumerate(state.terms)}
    return dict(zip(ids, state.texts, strict=True)), postings


@pytest.mark.parametrize("seed", range(5))
def test_a_loaded_index_stays_equal_to_the_original_through_random_changes(seed: int) -> None:
    """Postings loaded packed become dicts only when a document holding them changes;
    through adds, replacements and removals (freed slots reused), reloads and scoring,
    the loaded index scores and saves exactly as the one that never left memory."""
    import random

    rng = random.Random(seed)
    words = ["Caroline", "Melanie", "hiking", "pottery", "May", "sunsets", "dog", "7",
             "park", "river", "paints", "class", "Jon", "bakery", "2023"]

    def text() -> str:
        return " ".join(rng.choice(words) for _ in range(rng.randint(1, 6)))

    original = LexicalIndex()
    original.sync({d: text() for d in range(40)})
    loaded = LexicalIndex.from_state(original.state())
    for step in range(300):
        op, doc = rng.random(), rng.randrange(60)
        if op < 0.45:
            t = text()
            original.add(doc, t)
            loaded.add(doc, t)
        elif op < 0.8:
            original.remove(doc)
            loaded.remove(doc)
        elif op < 0.9:
            loaded = LexicalIndex.from_state(loaded.state())  # a restart mid-way
        query = " ".join(rng.sample(words, 2))
        assert loaded.scores(query) == pytest.approx(original.scores(query), rel=1e-12), step
        assert loaded.ceiling(query) == pytest.approx(original.ceiling(query), rel=1e-12)
    assert _state_as_sets(loaded) == _state_as_sets(original)


def test_a_posting_view_kept_past_its_query_does_not_stop_the_index_changing() -> None:
    index = LexicalIndex()
    index.add(1, "Caroline painted a sunrise")
    index.add(2, "Caroline went hiking")
    kept = index._postings["carolin"].arrays()  # noqa: SLF001 -- a view left alive
    index.add(3, "Caroline adopted a dog")
    index.remove(1)
    fresh = LexicalIndex()
    fresh.add(2, "Caroline went hiking")
    fresh.add(3, "Caroline adopted a dog")
    assert index.scores("Caroline dog") == fresh.scores("Caroline dog")
    assert len(kept[0]) == 2  # the old view still reads what it saw
