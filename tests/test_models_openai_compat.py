from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from solace.models.llm import LLM, ChatMessage, LLMOutputError, LLMUnavailableError
from solace.models.openai_compat import OpenAICompatibleLLM

SCHEMA = {
    "type": "object",
    "properties": {"title": {"type": "string"}, "keep": {"type": "boolean"}},
    "required": ["title", "keep"],
}
MESSAGES: list[ChatMessage] = [{"role": "user", "content": "title this"}]


class Canned:
    """What the fake server answers next, and what it received."""

    def __init__(self) -> None:
        self.status = 200
        self.body: bytes = b""
        self.requests: list[tuple[str, dict[str, str], dict[str, Any]]] = []

    def reply(self, content: str, status: int = 200) -> None:
        self.status = status
        self.body = json.dumps(
            {
                "choices": [{"message": {"role": "assistant", "content": content}}],
                "usage": {"prompt_tokens": 7, "completion_tokens": 3},
            }
        ).encode()


@pytest.fixture
def server() -> Iterator[tuple[str, Canned]]:
    canned = Canned()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers["Content-Length"])
            payload = json.loads(self.rfile.read(length))
            canned.requests.append((self.path, dict(self.headers), payload))
            self.send_response(canned.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(canned.body)))
            self.end_headers()
            self.wfile.write(canned.body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1/", canned
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def test_success_path(server: tuple[str, Canned], monkeypatch: pytest.MonkeyPatch) -> None:
    url, canned = server
    monkeypatch.setenv("SOLACE_TEST_KEY", "sk-test")
    llm = OpenAICompatibleLLM(url, "tiny", api_key_env="SOLACE_TEST_KEY", timeout_s=5)
    assert isinstance(llm, LLM)
    canned.reply('{"title": "Camping", "keep": true}')
    assert llm.complete_json(MESSAGES, SCHEMA, max_tokens=32) == {"title": "Camping", "keep": True}
    path, headers, payload = canned.requests[0]
    assert path == "/v1/chat/completions"
    assert headers["Authorization"] == "Bearer sk-test"
    assert payload["model"] == "tiny" and payload["max_tokens"] == 32
    assert payload["messages"] == MESSAGES
    assert payload["response_format"]["type"] == "json_schema"
    assert payload["response_format"]["json_schema"]["schema"] == SCHEMA
    canned.reply("plain text")
    assert llm.complete(MESSAGES) == "plain text"
    assert "response_format" not in canned.requests[1][2]
    assert (llm.stats.calls, llm.stats.failures) == (2, 0)
    assert (llm.stats.prompt_tokens, llm.stats.generated_tokens) == (14, 6)


def test_no_key_no_authorization_header(
    server: tuple[str, Canned], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, canned = server
    monkeypatch.delenv("SOLACE_TEST_KEY", raising=False)
    canned.reply("ok")
    OpenAICompatibleLLM(url, "tiny", api_key_env="SOLACE_TEST_KEY").complete(MESSAGES)
    assert "Authorization" not in canned.requests[0][1]


def test_non_json_content_is_output_error(server: tuple[str, Canned]) -> None:
    url, canned = server
    llm = OpenAICompatibleLLM(url, "tiny")
    canned.reply("Sure! The title is Camping.")
    with pytest.raises(LLMOutputError, match="not JSON"):
        llm.complete_json(MESSAGES, SCHEMA)
    canned.reply('{"title": "Camping", "keep": "yes"}')
    with pytest.raises(LLMOutputError, match=r"\$\.keep"):
        llm.complete_json(MESSAGES, SCHEMA)
    assert (llm.stats.calls, llm.stats.failures) == (2, 2)


def test_non_json_body_is_output_error(server: tuple[str, Canned]) -> None:
    url, canned = server
    canned.body = b"<html>gateway</html>"
    with pytest.raises(LLMOutputError, match="not a chat completion"):
        OpenAICompatibleLLM(url, "tiny").complete(MESSAGES)


def test_http_error_is_unavailable(server: tuple[str, Canned]) -> None:
    url, canned = server
    canned.reply("overloaded", status=503)
    with pytest.raises(LLMUnavailableError, match="HTTP 503"):
        OpenAICompatibleLLM(url, "tiny").complete(MESSAGES)


def test_connection_refused_is_unavailable() -> None:
    with socket.socket() as sock:  # reserve a free port, then close it: nobody listens
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    llm = OpenAICompatibleLLM(f"http://127.0.0.1:{port}/v1", "tiny", timeout_s=2)
    with pytest.raises(LLMUnavailableError, match="cannot reach"):
        llm.complete(MESSAGES)
    assert llm.stats.failures == 1


@pytest.mark.parametrize(
    ("base_url", "model", "timeout_s"),
    [
        ("file:///etc/passwd", "m", 1),
        ("127.0.0.1:8000", "m", 1),
        ("http://h", "", 1),
        ("http://h", "m", 0),
    ],
)
def test_rejects_bad_arguments(base_url: str, model: str, timeout_s: float) -> None:
    with pytest.raises(ValueError):
        OpenAICompatibleLLM(base_url, model, timeout_s=timeout_s)
