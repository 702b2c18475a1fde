"""The compaction benchmark's truth: each corpus id's texts are exactly its distinct
facts' phrasings, and each fact's later value is another value of its subject."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

from facts_bench_data import compaction_corpus, compaction_facts  # noqa: E402


def test_the_corpus_texts_are_the_distinct_facts_phrasings_and_nothing_else() -> None:
    for seed in (1, 2):
        corpus, truth = compaction_corpus(5, seed), compaction_facts(5, seed)
        assert list(corpus) == list(truth)
        for mid, texts in corpus.items():
            phrasings = [p for fact in truth[mid] for p in fact.phrasings]
            assert sorted(texts) == sorted(phrasings)
            assert len(truth[mid]) == 6
            for fact in truth[mid]:
                assert all(fact.value in p for p in fact.phrasings)
                assert fact.later_value != fact.value and fact.later_value in fact.later
