"""OnnxMiniLMEmbedder: the torch model's vectors, in order, from a graph built once.

The graphs are exported once per module into a temporary cache directory; the torch
vectors come from :class:`MiniLMEmbedder` on the same texts.
"""

from __future__ import annotations

import logging
import random
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from solace.config import ModelsConfig, load_config
from solace.models import onnx_embedder
from solace.models.embedder import Embedder, MiniLMEmbedder
from solace.models.factory import build_embedder
from solace.models.llm import EmbedderLoadError
from solace.models.onnx_embedder import OnnxMiniLMEmbedder, forward_passes
from solace.models.tokenizer import default_model_dir

pytestmark = pytest.mark.slow

_WORDS = (
    "I went to the support group yesterday and my sister said she adopted a puppy "
    "named Oscar; we painted a sunrise at the lake in May 2023, then Caroline moved "
    "to Sweden for a counseling job. Melanie runs 5k races, reads Becoming Nicole, "
    "plays violin and hates traffic on Friday; the café serves crème brûlée!"
).split()


def _texts(n: int = 300) -> list[str]:
    """``n`` deterministic texts of 1 to ~120 words, plus edge cases."""
    rng = random.Random(7)
    texts = [" ".join(rng.choices(_WORDS, k=rng.randint(1, 120))) for _ in range(n)]
    return texts + ["", "ok", "x " * 600, "😀 emoji and ünïcödé", "   "]


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("onnx-cache")


@pytest.fixture(scope="module")
def fp32(cache: Path) -> OnnxMiniLMEmbedder:
    embedder = OnnxMiniLMEmbedder(variant="fp32", batch_size=16, cache_dir=cache)
    embedder.embed(["warm up"])
    return embedder


@pytest.fixture(scope="module")
def int8(cache: Path) -> OnnxMiniLMEmbedder:
    embedder = OnnxMiniLMEmbedder(variant="int8", batch_size=16, cache_dir=cache)
    embedder.embed(["warm up"])
    return embedder


@pytest.fixture(scope="module")
def torch_vectors() -> np.ndarray:
    return MiniLMEmbedder(batch_size=32).embed(_texts())


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.asarray((a * b).sum(axis=1))


def test_fp32_matches_the_torch_vectors(
    fp32: OnnxMiniLMEmbedder, torch_vectors: np.ndarray
) -> None:
    vectors = fp32.embed(_texts())
    assert vectors.dtype == np.float32 and vectors.shape == torch_vectors.shape
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert _cosines(vectors, torch_vectors).min() >= 0.9999


def test_int8_stays_close_to_the_torch_vectors(
    int8: OnnxMiniLMEmbedder, torch_vectors: np.ndarray
) -> None:
    # measured on these texts: mean 0.991, min 0.968 (500 LoCoMo turns: 0.992, 0.968)
    vectors = int8.embed(_texts())
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    cosines = _cosines(vectors, torch_vectors)
    assert cosines.mean() >= 0.985
    assert cosines.min() >= 0.95


def test_int8_ranks_a_paraphrase_above_an_unrelated_sentence(int8: OnnxMiniLMEmbedder) -> None:
    anchor, paraphrase, unrelated = int8.embed([
        "I went to a LGBTQ support group yesterday",
        "Yesterday I attended a support meeting for LGBTQ people",
        "The quarterly tax report is due on Friday",
    ])
    assert float(anchor @ paraphrase) > float(anchor @ unrelated) + 0.3


def test_order_is_kept_whatever_the_lengths(fp32: OnnxMiniLMEmbedder) -> None:
    texts = _texts(40)
    alone = np.stack([fp32.embed([t])[0] for t in texts])
    together = fp32.embed(texts)  # 45 texts, batches of 16, sorted by length inside
    assert _cosines(alone, together).min() >= 0.99999
    perm = list(range(len(texts)))
    random.Random(3).shuffle(perm)
    shuffled = fp32.embed([texts[i] for i in perm])
    np.testing.assert_allclose(shuffled, together[perm], atol=1e-5)


def test_a_forward_pass_holds_at_most_its_texts_and_padded_tokens() -> None:
    lengths = np.array([3, 3, 4, 5, 9, 9, 9, 40, 200])
    got = forward_passes(lengths, 3, 20)
    assert [(p.start, p.stop) for p in got] == [(0, 3), (3, 5), (5, 7), (7, 8), (8, 9)]
    for p in got:  # every text once, in order; within both limits unless alone
        rows = lengths[p]
        assert len(rows) <= 3 and (len(rows) * rows.max() <= 20 or len(rows) == 1)
    assert forward_passes(np.array([7]), 64, 512) == [slice(0, 1)]


def test_small_forward_passes_give_the_vectors_of_large_ones(fp32: OnnxMiniLMEmbedder) -> None:
    texts = _texts(40)
    small = OnnxMiniLMEmbedder(variant="fp32", batch_tokens=24, cache_dir=fp32.cache_dir)
    assert _cosines(small.embed(texts), fp32.embed(texts)).min() >= 0.99999


def test_empty_input_gives_an_empty_float32_array(int8: OnnxMiniLMEmbedder) -> None:
    out = int8.embed([])
    assert out.shape == (0, 384) and out.dtype == np.float32
    empty = int8.embed([""])
    assert empty.shape == (1, 384) and abs(float(np.linalg.norm(empty)) - 1.0) < 1e-5


def test_satisfies_the_protocol_and_names_its_variant(
    fp32: OnnxMiniLMEmbedder, int8: OnnxMiniLMEmbedder
) -> None:
    assert isinstance(fp32, Embedder) and isinstance(int8, Embedder)
    assert fp32.dim == int8.dim == 384
    assert fp32.name == "all-MiniLM-L6-v2:onnx-fp32"
    assert int8.name == "all-MiniLM-L6-v2:onnx-int8"
    assert fp32.graph_file != int8.graph_file
    assert fp32.graph_file.parent == int8.graph_file.parent


def test_a_cached_graph_is_reused_without_exporting(
    int8: OnnxMiniLMEmbedder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copy2(int8.graph_file, tmp_path / int8.graph_file.name)
    before = (tmp_path / int8.graph_file.name).stat()

    def no_export(*args: object) -> None:
        raise AssertionError(f"exported again: {args}")

    monkeypatch.setattr(onnx_embedder, "build_graph", no_export)
    again = OnnxMiniLMEmbedder(variant="int8", cache_dir=tmp_path)
    assert again.graph_file == tmp_path / int8.graph_file.name
    texts = ["what did Caroline research?", "a puppy named Oscar"]
    np.testing.assert_allclose(again.embed(texts), int8.embed(texts), atol=1e-6)
    after = again.graph_file.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert [p.name for p in tmp_path.iterdir()] == [int8.graph_file.name]  # no temp left


def test_a_corrupt_cache_file_is_rebuilt_with_a_log_line(
    fp32: OnnxMiniLMEmbedder, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    target = tmp_path / fp32.graph_file.name
    target.write_bytes(b"\x08\x07 not a protobuf " * 100)
    rebuilt = OnnxMiniLMEmbedder(variant="fp32", cache_dir=tmp_path)
    with caplog.at_level(logging.WARNING, logger="solace.models.onnx_embedder"):
        vectors = rebuilt.embed(["a puppy named Oscar"])
    np.testing.assert_allclose(vectors, fp32.embed(["a puppy named Oscar"]), atol=1e-6)
    assert any(str(target) in r.getMessage() and "rebuilding" in r.getMessage()
               for r in caplog.records)
    assert target.stat().st_size > 1_000_000
    assert [p.name for p in tmp_path.iterdir()] == [target.name]


def test_a_bad_variant_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="'fp16'"):
        OnnxMiniLMEmbedder(variant="fp16")
    with pytest.raises(ValueError, match="batch_size.*0"):
        OnnxMiniLMEmbedder(batch_size=0)
    with pytest.raises(ValueError, match="batch_tokens.*-5"):
        OnnxMiniLMEmbedder(batch_tokens=-5)
    with pytest.raises(ValueError, match="threads.*-1"):
        OnnxMiniLMEmbedder(threads=-1)


def test_missing_onnxruntime_is_a_load_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    with pytest.raises(EmbedderLoadError, match="onnxruntime is not installed"):
        OnnxMiniLMEmbedder(cache_dir=tmp_path).embed(["hi"])


def test_a_failed_export_is_a_load_error_naming_the_model(tmp_path: Path) -> None:
    model = tmp_path / "broken-model"
    model.mkdir()
    shutil.copy(default_model_dir() / "tokenizer.json", model / "tokenizer.json")
    (model / "config.json").write_text('{"model_type": "bert"}')
    (model / "model.safetensors").write_bytes(b"not safetensors")
    embedder = OnnxMiniLMEmbedder(model, variant="fp32", cache_dir=tmp_path / "cache")
    with pytest.raises(EmbedderLoadError, match=f"cannot export {model}"):
        embedder.embed(["hi"])
    assert list((tmp_path / "cache").iterdir()) == []  # no half-written file left


def test_config_and_factory_build_it(tmp_path: Path) -> None:
    toml = tmp_path / "solace.toml"
    toml.write_text(f'[models]\nembedder = "minilm-int8"\nembed_cache_dir = "{tmp_path}"\n')
    built = build_embedder(load_config(toml).models)
    assert isinstance(built, OnnxMiniLMEmbedder)
    assert built.variant == "int8" and built.cache_dir == tmp_path and built.threads == 1
    fp = build_embedder(ModelsConfig(embedder="minilm-onnx", embed_batch_size=8,
                                     embed_batch_tokens=100))
    assert isinstance(fp, OnnxMiniLMEmbedder) and fp.variant == "fp32" and fp.batch_size == 8
    assert fp.batch_tokens == 100
    toml.write_text('[models]\nembedder = "minilm-fp16"\n')
    with pytest.raises(ValueError, match="minilm-fp16"):
        load_config(toml)
