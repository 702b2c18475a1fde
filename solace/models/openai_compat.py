"""Any OpenAI-compatible chat endpoint (Ollama, vLLM, llama.cpp server, hosted APIs).

Plain ``urllib`` so the backend adds no dependency; one request per call, no retries
(the caller decides whether to fall back, and memory never waits on a model). JSON
output is requested with ``response_format: json_schema`` and always validated
locally, because servers differ in how strictly they honour it. The API key is read
from the environment at call time, never stored or logged.
"""

from __future__ import annotations

import http.client
import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping, Sequence
from typing import Any

from solace.models.llm import (
    ChatMessage,
    LLMOutputError,
    LLMStats,
    LLMUnavailableError,
    check_call_args,
    parse_json_output,
)

__all__ = ["OpenAICompatibleLLM"]


class OpenAICompatibleLLM:
    """A chat model behind ``POST {base_url}/chat/completions``.

    Args:
        base_url: API root, e.g. ``http://127.0.0.1:11434/v1``; http or https only.
        model: the model name sent in each request.
        api_key_env: environment variable holding the bearer token; when it is unset
            or empty no ``Authorization`` header is sent (local servers need none).
        timeout_s: socket timeout for one request, in seconds.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key_env: str = "OPENAI_API_KEY",
        timeout_s: float = 60,
    ) -> None:
        parsed = urllib.parse.urlsplit(base_url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise ValueError(f"base_url must be an http(s) URL, got {base_url!r}")
        if not model:
            raise ValueError("model must be a non-empty model name")
        if not timeout_s > 0:
            raise ValueError(f"timeout_s must be > 0, got {timeout_s!r}")
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.api_key_env = api_key_env
        self.timeout_s = float(timeout_s)
        self.name = f"openai-compatible:{model}"
        self.stats = LLMStats()

    def _post(self, payload: dict[str, Any]) -> str:
        """Send one request; return the first choice's content; record stats."""
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        key = os.environ.get(self.api_key_env, "")
        if key:
            headers["Authorization"] = f"Bearer {key}"
        request = urllib.request.Request(
            self.url, data=json.dumps(payload).encode(), headers=headers, method="POST"
        )
        started = time.perf_counter()
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                body = response.read()
        except urllib.error.HTTPError as exc:
            detail = exc.read(300).decode("utf-8", "replace")
            exc.close()
            self.stats.record(seconds=time.perf_counter() - started, failed=True)
            raise LLMUnavailableError(
                f"{self.name}: HTTP {exc.code} from {self.url}: {detail}"
            ) from exc
        except (urllib.error.URLError, http.client.HTTPException, OSError) as exc:
            self.stats.record(seconds=time.perf_counter() - started, failed=True)
            raise LLMUnavailableError(f"{self.name}: cannot reach {self.url}: {exc}") from exc
        seconds = time.perf_counter() - started
        try:
            data = json.loads(body)
            content = data["choices"][0]["message"]["content"]
            usage = data.get("usage") or {}
            prompt_tokens = int(usage.get("prompt_tokens") or 0)
            generated_tokens = int(usage.get("completion_tokens") or 0)
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
            self.stats.record(seconds=seconds, failed=True)
            raise LLMOutputError(
                f"{self.name}: response is not a chat completion ({exc!r}): {body[:120]!r}"
            ) from exc
        self.stats.record(
            prompt_tokens=prompt_tokens, generated_tokens=generated_tokens, seconds=seconds
        )
        return content if isinstance(content, str) else ""

    def _payload(self, messages: Sequence[ChatMessage], **extra: Any) -> dict[str, Any]:
        return {
            "model": self.model,
            "messages": [{"role": m["role"], "content": m["content"]} for m in messages],
            "stream": False,
            **extra,
        }

    def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
    ) -> str:
        """Return the endpoint's reply.

        Raises:
            LLMUnavailableError: connection failure, timeout, or an HTTP error status.
            LLMOutputError: the response body is not a chat completion.
        """
        check_call_args(max_tokens, temperature)
        return self._post(self._payload(messages, max_tokens=max_tokens, temperature=temperature))

    def complete_json(
        self,
        messages: Sequence[ChatMessage],
        schema: Mapping[str, Any],
        *,
        max_tokens: int = 512,
    ) -> dict[str, Any]:
        """Return one object valid against ``schema`` (requested via json_schema).

        Raises:
            LLMUnavailableError: connection failure, timeout, or an HTTP error status.
            LLMOutputError: the reply is not JSON, not an object, or fails the schema.
        """
        check_call_args(max_tokens)
        response_format = {
            "type": "json_schema",
            "json_schema": {"name": "output", "schema": dict(schema)},
        }
        text = self._post(
            self._payload(
                messages, max_tokens=max_tokens, temperature=0.0, response_format=response_format
            )
        )
        try:
            return parse_json_output(text, schema, source=self.name)
        except LLMOutputError:
            self.stats.mark_failed()
            raise
