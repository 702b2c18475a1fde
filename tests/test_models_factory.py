from __future__ import annotations

from dataclasses import dataclass, replace

import pytest

from solace.config import ModelsConfig
from solace.models.embedder import HashingEmbedder, MiniLMEmbedder
from solace.models.factory import ModelsConfigLike, build_embedder, build_llm, build_tokenizer
from solace.models.llama_cpp import LlamaCppLLM
from solace.models.llm import NoLLM
from solace.models.onnx_embedder import OnnxMiniLMEmbedder
from solace.models.openai_compat import OpenAICompatibleLLM
from solace.models.tokenizer import WordPieceTokenizer


@dataclass(frozen=True)
class Cfg:
    """Duck-typed stand-in with the same fields as solace.config.ModelsConfig."""

    embedder: str = "minilm"
    embedder_path: str | None = None
    embed_batch_size: int = 64
    embed_batch_tokens: int = 512
    embed_threads: int = 1
    llm_backend: str = "none"
    llm_model_path: str | None = None
    llm_base_url: str | None = None
    llm_model: str | None = None
    llm_api_key_env: str = "OPENAI_API_KEY"
    llm_n_ctx: int = 2048
    llm_threads: int | None = None
    embed_cache_dir: str | None = None


def test_builds_without_loading_anything() -> None:
    embedder = build_embedder(Cfg(embed_batch_size=16))
    assert isinstance(embedder, MiniLMEmbedder) and embedder.batch_size == 16
    assert embedder._model is None
    assert isinstance(build_embedder(Cfg(embedder="hashing")), HashingEmbedder)
    assert isinstance(build_tokenizer(Cfg()), WordPieceTokenizer)
    assert isinstance(build_llm(Cfg()), NoLLM)


def test_builds_llama_cpp_lazily() -> None:
    llm = build_llm(Cfg(llm_backend="llama-cpp", llm_n_ctx=1024, llm_threads=2))
    assert isinstance(llm, LlamaCppLLM)
    assert (llm.n_ctx, llm.n_threads, llm.load_seconds) == (1024, 2, None)


def test_builds_openai_compatible() -> None:
    cfg = Cfg(
        llm_backend="openai-compatible",
        llm_base_url="http://127.0.0.1:11434/v1",
        llm_model="llama3.2",
        llm_api_key_env="MY_KEY",
    )
    llm = build_llm(cfg)
    assert isinstance(llm, OpenAICompatibleLLM)
    assert (llm.url, llm.model, llm.api_key_env) == (
        "http://127.0.0.1:11434/v1/chat/completions",
        "llama3.2",
        "MY_KEY",
    )
    with pytest.raises(ValueError, match="llm_base_url"):
        build_llm(replace(cfg, llm_base_url=None))


def test_unknown_names_are_refused() -> None:
    with pytest.raises(ValueError, match="'bert'"):
        build_embedder(Cfg(embedder="bert"))
    with pytest.raises(ValueError, match="'ollama'"):
        build_llm(Cfg(llm_backend="ollama"))


def test_real_models_config_fits() -> None:
    cfg: ModelsConfigLike = ModelsConfig(llm_backend="none")
    default = build_embedder(cfg)  # MiniLM int8 through ONNX Runtime, built lazily
    assert isinstance(default, OnnxMiniLMEmbedder) and default.variant == "int8"
    assert isinstance(build_embedder(ModelsConfig(embedder="minilm")), MiniLMEmbedder)
    assert isinstance(build_llm(cfg), NoLLM)
    assert isinstance(build_llm(ModelsConfig(llm_backend="llama-cpp")), LlamaCppLLM)
