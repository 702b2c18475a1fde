"""The LLM protocol every backend implements, its errors and its counters.

Memory must never depend on a model being present or well behaved (see DESIGN.md,
"Models"), so the contract is narrow: text in, text or one schema-valid JSON object
out, and a small flat set of errors that callers catch as :class:`ModelError`. Backends
are synchronous; the runtime calls them off the event loop.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypedDict, runtime_checkable

from solace.models.schema import SchemaError, validate

__all__ = [
    "ChatMessage",
    "EmbedderLoadError",
    "LLM",
    "LLMOutputError",
    "LLMStats",
    "LLMUnavailableError",
    "ModelError",
    "NoLLM",
    "Role",
    "parse_json_output",
]

Role = Literal["system", "user", "assistant"]


class ChatMessage(TypedDict):
    """One chat turn, in the shape every chat API accepts as-is."""

    role: Role
    content: str


class ModelError(Exception):
    """Base of every error raised by ``solace.models``; catch this to survive any model."""


class LLMUnavailableError(ModelError):
    """Raised by an LLM backend that cannot answer: not configured, not loadable, down."""


class LLMOutputError(ModelError):
    """Raised when a model answered but its output is unparsable or fails the schema."""


class EmbedderLoadError(ModelError):
    """Raised by an embedder or tokenizer whose model files cannot be found or loaded."""


@dataclass
class LLMStats:
    """Mutable per-backend counters, updated after every call (thread-safe).

    Attributes:
        calls: calls made, failed ones included.
        failures: calls that raised (unavailable backend or bad output).
        prompt_tokens: prompt tokens reported by the backend.
        generated_tokens: completion tokens reported by the backend.
        seconds: wall time spent inside the backend.
    """

    calls: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    generated_tokens: int = 0
    seconds: float = 0.0
    _lock: threading.Lock = field(
        default_factory=threading.Lock, init=False, repr=False, compare=False
    )

    def record(
        self,
        *,
        prompt_tokens: int = 0,
        generated_tokens: int = 0,
        seconds: float = 0.0,
        failed: bool = False,
    ) -> None:
        """Add one call's numbers atomically."""
        with self._lock:
            self.calls += 1
            self.failures += int(failed)
            self.prompt_tokens += prompt_tokens
            self.generated_tokens += generated_tokens
            self.seconds += seconds

    def mark_failed(self) -> None:
        """Count an already-recorded call as failed (its output was rejected)."""
        with self._lock:
            self.failures += 1

    @property
    def tokens_per_second(self) -> float:
        """Generated tokens per second of backend time (0.0 before any call)."""
        return self.generated_tokens / self.seconds if self.seconds > 0 else 0.0


@runtime_checkable
class LLM(Protocol):
    """A chat model. Implementations: LlamaCppLLM, OpenAICompatibleLLM, NoLLM."""

    name: str
    stats: LLMStats

    def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
    ) -> str:
        """Return the assistant's reply to ``messages``.

        Raises:
            LLMUnavailableError: the backend cannot answer.
        """
        ...

    def complete_json(
        self,
        messages: Sequence[ChatMessage],
        schema: Mapping[str, Any],
        *,
        max_tokens: int = 512,
    ) -> dict[str, Any]:
        """Return one JSON object that validates against ``schema`` (greedy decoding).

        Raises:
            LLMUnavailableError: the backend cannot answer.
            LLMOutputError: the reply is not JSON, not an object, or fails the schema.
        """
        ...


def _reject_constant(name: str) -> float:
    raise ValueError(f"non-finite number {name} is not JSON")


def parse_json_output(text: str, schema: Mapping[str, Any], *, source: str) -> dict[str, Any]:
    """Parse a model's reply as one JSON object and validate it against ``schema``.

    Args:
        text: the raw reply.
        schema: the JSON schema (supported subset, see :mod:`solace.models.schema`).
        source: backend name, for the error message.

    Returns:
        The parsed object; it validates against ``schema``.

    Raises:
        LLMOutputError: not JSON (NaN/Infinity included), not an object, or fails the
            schema; the message names the failing JSON path.
    """
    try:
        # strict=False: grammar-constrained models emit raw newlines inside strings.
        obj = json.loads(text, parse_constant=_reject_constant, strict=False)
    except ValueError as exc:
        raise LLMOutputError(
            f"{source}: output is not JSON ({exc}); output starts {text[:80]!r}"
        ) from exc
    if not isinstance(obj, dict):
        raise LLMOutputError(f"{source}: output is JSON {type(obj).__name__}, not an object")
    try:
        validate(obj, schema)
    except SchemaError as exc:
        raise LLMOutputError(f"{source}: output fails the schema at {exc.path}: {exc}") from exc
    return obj


def _check_finite(value: float, what: str) -> None:
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{what} must be a finite number >= 0, got {value!r}")


def check_call_args(max_tokens: int, temperature: float = 0.0) -> None:
    """Raise ValueError for a non-positive ``max_tokens`` or a bad ``temperature``."""
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise ValueError(f"max_tokens must be a positive int, got {max_tokens!r}")
    _check_finite(temperature, "temperature")


class NoLLM:
    """The backend used when none is configured: every call raises.

    Memory works without an LLM (compression is deterministic by default), so callers
    treat :class:`LLMUnavailableError` as "use the fallback", never as a crash.
    """

    name = "none"
    MESSAGE = "no LLM backend configured (models.llm_backend = 'none')"

    def __init__(self) -> None:
        self.stats = LLMStats()

    def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
    ) -> str:
        """Always raise.

        Raises:
            LLMUnavailableError: always.
        """
        self.stats.record(failed=True)
        raise LLMUnavailableError(self.MESSAGE)

    def complete_json(
        self,
        messages: Sequence[ChatMessage],
        schema: Mapping[str, Any],
        *,
        max_tokens: int = 512,
    ) -> dict[str, Any]:
        """Always raise.

        Raises:
            LLMUnavailableError: always.
        """
        self.stats.record(failed=True)
        raise LLMUnavailableError(self.MESSAGE)
