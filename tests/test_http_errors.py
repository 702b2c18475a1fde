"""Every refusal is a JSON body {"error", "detail"} naming the problem: 400 naming the
field, 413 past the size limit, 404/405 for unknown routes, and a 500 that carries no
traceback."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from http_support import running

from solace.app import Solace


def _error(r: object) -> dict[str, str]:
    body = r.json()  # type: ignore[attr-defined]
    assert set(body) == {"error", "detail"}, body
    assert r.headers["content-type"] == "application/json"  # type: ignore[attr-defined]
    return body  # type: ignore[no-any-return]


async def test_validation_errors_are_400_naming_the_field(tmp_path: Path) -> None:
    async with running(tmp_path) as (_, client):
        cases = [
            ("POST", "/chat", {}, "$.message: required property is missing"),
            ("POST", "/chat", {"message": "hi", "colour": 1}, "$.colour: property is not allowed"),
            ("POST", "/chat", {"message": 5}, "$.message: expected string"),
            ("POST", "/observe", {"text": "x", "speaker": "u", "emotional_weight": 2},
             "$.emotional_weight: value 2 is above maximum 1"),
            ("POST", "/recall", {"query": "x", "k": 0}, "$.k: value 0 is below minimum 1"),
            ("POST", "/recall", {"query": "x", "agent": "Bob"}, "$.agent: string 'Bob'"),
            ("POST", "/tokens", {"memory_ids": []}, "$.memory_ids: item count 0"),
            ("POST", "/sessions/s1/evaluate", {"trigger": "soon"}, "$.trigger: string 'soon'"),
        ]
        for method, path, body, named in cases:
            r = await client.request(method, path, json=body)
            assert r.status_code == 400, (path, body, r.text)
            assert named in _error(r)["detail"], (named, r.text)
        r = await client.get("/recall", params={"query": "x", "k": "many"})
        assert r.status_code == 400 and "query.k: expected integer" in _error(r)["detail"]
        r = await client.post("/chat", content=b"{not json", headers={"content-type":
                                                                      "application/json"})
        assert r.status_code == 400 and _error(r)["error"] == "invalid_json"


async def test_memory_ids_outside_the_rule_are_refused_naming_id_and_rule(
        tmp_path: Path) -> None:
    async with running(tmp_path) as (_, client):
        for bad in ("cust 1", "cust/2", "", "x" * 129, "émile"):
            for body in ({"message": "hi", "memory": bad},
                         {"message": "hi", "memory_store": bad}):
                r = await client.post("/chat", json=body)
                assert r.status_code == 400, bad
                detail = _error(r)["detail"]
                assert repr(bad)[:40].rstrip("'") in detail and "letters, digits" in detail
        r = await client.post("/tokens", json={"memory_ids": ["ok", "not ok"]})
        assert r.status_code == 400 and "$.memory_ids[1]" in _error(r)["detail"]
        ok = await client.post("/chat", json={"message": "hi", "memory": "A_z-9" * 25})
        assert ok.status_code == 200


async def test_text_the_substrate_cannot_store_is_400_and_chat_still_answers(
        tmp_path: Path) -> None:
    async with running(tmp_path) as (_, client):
        r = await client.post("/chat", json={"message": "M\x7f\u00e4q\x13"})
        assert r.status_code == 400 and "$.message: holds U+0013 at index 4" in _error(r)["detail"]
        r = await client.post("/observe", json={"text": "a\x00b", "speaker": "user"})
        assert r.status_code == 400 and "U+0000" in _error(r)["detail"]
        r = await client.post("/chat", json={"message": " \n\t "})
        assert r.status_code == 400 and "non-whitespace" in _error(r)["detail"]
        r = await client.get("/facts/a%07b")
        assert r.status_code == 400 and "path.key: holds U+0007" in _error(r)["detail"]
        r = await client.post("/chat", json={"message": "still there?"})
        assert r.status_code == 200 and r.json()["text"]


async def test_bodies_over_the_limit_are_413_json(tmp_path: Path) -> None:
    async with running(tmp_path, max_body_bytes=1 << 20) as (_, client):
        big = b'{"message": "' + b"x" * (1 << 20) + b'"}'
        r = await client.post("/chat", content=big)
        assert r.status_code == 413 and "limit" in _error(r)["detail"]

        async def chunked() -> AsyncIterator[bytes]:  # no Content-Length: counted as read
            yield b'{"message": "'
            for _ in range(20):
                yield b"y" * 65536
            yield b'"}'

        r = await client.post("/chat", content=chunked())
        assert r.status_code == 413 and _error(r)["error"] == "payload_too_large"
        assert (await client.get("/healthz")).status_code == 200


async def test_unknown_routes_and_methods_are_json(tmp_path: Path) -> None:
    async with running(tmp_path) as (_, client):
        r = await client.get("/no/such/thing")
        assert r.status_code == 404 and "/no/such/thing" in _error(r)["detail"]
        r = await client.delete("/stats")
        assert r.status_code == 405 and _error(r)["error"] == "method_not_allowed"
        r = await client.get("/facts/nobody")
        assert r.status_code == 404 and "'nobody'" in _error(r)["detail"]
        r = await client.post("/topics/t404/curate", json={"action": "promote"})
        assert r.status_code == 404 and "'t404'" in _error(r)["detail"]


async def test_an_unexpected_error_is_500_json_without_traceback(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    def boom(self: Solace) -> None:
        raise RuntimeError("internal secret /srv/solace/state.py line 42")

    monkeypatch.setattr(Solace, "stats", boom)
    async with running(tmp_path) as (_, client):
        r = await client.get("/stats")
        assert r.status_code == 500
        body = _error(r)
        assert body["error"] == "internal_error"
        assert "secret" not in r.text and "Traceback" not in r.text
        assert (await client.get("/healthz")).status_code == 200
    assert any("internal secret" in (rec.exc_text or "") or rec.exc_info
               for rec in caplog.records if rec.name == "solace.http")
