"""Issue 13 item 10: with the real backends, only ``include_in_memory`` defaults to false.

A missing flag, ``"true"`` or any other non-boolean from the llama-cpp backend or an
OpenAI-compatible server (a stub on 127.0.0.1) keeps the model's title and summary
(mode ``llm``) and never promotes; a strict ``true`` still does. The schema's soft
value (``x-lenient``) is what lets the flag through while a grammar still sees its type.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from solace.conversation import Summariser
from solace.conversation.model import ThreadItem
from solace.conversation.summarise import SUMMARY_SCHEMA
from solace.models import Guard, WordPieceTokenizer
from solace.models.llama_cpp import LlamaCppLLM
from solace.models.openai_compat import OpenAICompatibleLLM
from solace.models.schema import SchemaError, validate

TOK = WordPieceTokenizer()
TITLE = "Database choice"
SUMMARY = "Chose Postgres over MySQL (JSON support)."
LINES = ["Which database should we use for the app?", "Postgres or MySQL would both work.",
         "We chose Postgres over MySQL because of JSON support.", "Good, Postgres it is.",
         "Also set up nightly backups.", "Nightly backups scheduled."]
#: The flag as a model might send it (raw JSON text), and whether it promotes.
FLAGS = [
    ("", False),  # missing
    (', "include_in_memory": "true"', False),
    (', "include_in_memory": 1', False),
    (', "include_in_memory": null', False),
    (', "include_in_memory": "yes"', False),
    (', "include_in_memory": false', False),
    (', "include_in_memory": true', True),
]


def _items() -> list[ThreadItem]:
    return [
        ThreadItem(i + 1, 0.0, "message", "user" if i % 2 == 0 else "assistant", text, "t1")
        for i, text in enumerate(LINES)
    ]


def _reply(flag: str) -> str:
    return f'{{"title": "{TITLE}", "summary": "{SUMMARY}"{flag}}}'


class FakeLlama:
    """Stands in for llama_cpp.Llama: one canned content per call."""

    def __init__(self, content: str) -> None:
        self.content = content
        self.grammars: list[Any] = []

    def create_chat_completion(self, **kwargs: Any) -> dict[str, Any]:
        self.grammars.append(kwargs.get("grammar"))
        return {"choices": [{"message": {"role": "assistant", "content": self.content}}],
                "usage": {"prompt_tokens": 11, "completion_tokens": 5}}


@pytest.fixture
def stub_server() -> Iterator[tuple[str, list[str], list[dict[str, Any]]]]:
    """An OpenAI-compatible chat endpoint on 127.0.0.1 answering ``contents[0]``."""
    contents: list[str] = []
    requests: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            requests.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            body = json.dumps({
                "choices": [{"message": {"role": "assistant", "content": contents[0]}}],
                "usage": {"prompt_tokens": 7, "completion_tokens": 3},
            }).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1/", contents, requests
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


@pytest.mark.parametrize(("flag", "promotes"), FLAGS)
def test_llama_cpp_backend_defaults_only_the_flag_to_false(flag: str, promotes: bool) -> None:
    fake = FakeLlama(_reply(flag))
    summariser = Summariser(LlamaCppLLM(llama=fake), Guard(tokenizer=TOK), TOK, mode="llm")
    result = summariser.summarise(_items())
    assert (result.mode, result.title, result.summary) == ("llm", TITLE, SUMMARY), result.failure
    assert result.include_in_memory is promotes
    grammar = fake.grammars[0]._grammar  # the grammar still forces a boolean flag
    assert "include-in-memory-kv ::= " in grammar and "space boolean" in grammar


@pytest.mark.parametrize(("flag", "promotes"), FLAGS)
def test_openai_compatible_backend_defaults_only_the_flag_to_false(
    stub_server: tuple[str, list[str], list[dict[str, Any]]], flag: str, promotes: bool
) -> None:
    url, contents, requests = stub_server
    contents.append(_reply(flag))
    llm = OpenAICompatibleLLM(url, "stub", timeout_s=5)
    result = Summariser(llm, Guard(tokenizer=TOK), TOK, mode="llm").summarise(_items())
    assert (result.mode, result.title, result.summary) == ("llm", TITLE, SUMMARY), result.failure
    assert result.include_in_memory is promotes
    sent = requests[0]["response_format"]["json_schema"]["schema"]
    assert sent["properties"]["include_in_memory"]["type"] == "boolean"
    assert llm.stats.failures == 0


@pytest.mark.parametrize("bad", ['{"summary": "x", "include_in_memory": true}',
                                 '{"title": "", "summary": "x", "include_in_memory": true}',
                                 '{"title": 3, "summary": "x"}'])
def test_a_bad_title_or_summary_still_fails_the_call(bad: str) -> None:
    summariser = Summariser(LlamaCppLLM(llama=FakeLlama(bad)), Guard(tokenizer=TOK), TOK,
                            mode="llm")
    result = summariser.summarise(_items())
    assert result.mode == "fallback" and result.include_in_memory is False
    assert "schema" in result.failure


def test_soft_value_accepts_any_value_or_absence_and_nothing_else_softens() -> None:
    for obj in ({"title": "t", "summary": "s"}, {"title": "t", "summary": "s",
                                                 "include_in_memory": [True]}):
        validate(obj, SUMMARY_SCHEMA)
    with pytest.raises(SchemaError, match=r"\$\.title"):
        validate({"summary": "s"}, SUMMARY_SCHEMA)
    with pytest.raises(ValueError, match="x-lenient must be a boolean, got 'yes'"):
        validate(True, {"type": "boolean", "x-lenient": "yes"})
    with pytest.raises(SchemaError, match="expected boolean"):
        validate("true", {"type": "boolean", "x-lenient": False})
