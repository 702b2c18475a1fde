"""The /memory endpoints over real fact memory (in-process ASGI client): each endpoint's
answer shape, bearer-token auth as every other endpoint (a scoped token reaches only its
own ids' remember and recall), a bad memory id refused naming the rule, an unknown fact
404, a bad import refused with nothing written, and 503 facts_disabled when memory is off."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
from facts_fixtures import ManualClock, fact_memory
from facts_surface_support import DisabledApp, FactApp
from http_support import bearer

from solace.config import Config
from solace.facts import MEMORY_ID_RULE
from solace.surfaces.http.app import build_app
from solace.surfaces.http.routes import ENDPOINTS
from solace.surfaces.http.tokens import TokenStore

ADMIN = "admin-token-for-tests"


@asynccontextmanager
async def serving(tmp_path: Path, app: Any = None) -> AsyncIterator[
        tuple[httpx.AsyncClient, TokenStore]]:
    tokens = TokenStore(tmp_path / "tokens.json", ADMIN)

    async def client(target: Any) -> AsyncIterator[httpx.AsyncClient]:
        transport = httpx.ASGITransport(app=build_app(target, tokens))
        async with httpx.AsyncClient(transport=transport, base_url="http://solace",
                                     headers=bearer(ADMIN)) as c:
            yield c

    if app is not None:
        async for c in client(app):
            yield c, tokens
        return
    config = Config(stores={"default": Config().stores["default"],
                            "crm": Config().stores["default"]})
    clock = ManualClock()
    async with fact_memory(tmp_path / "home", config, clock) as fm:
        async for c in client(FactApp(fm, clock)):
            yield c, tokens


async def test_each_memory_endpoint_answers_its_shape(tmp_path: Path) -> None:
    async with serving(tmp_path) as (client, _):
        r = await client.post("/memory/acme/remember",
                              json={"text": "Acme wants invoices in French", "importance": 0.7})
        assert r.status_code == 200, r.text
        written = r.json()
        assert written["class"] == "ADD" and written["reason"]
        assert written["fact"]["text"] == "Acme wants invoices in French"
        assert written["fact"]["importance"] == 0.7 and written["fact"]["memory_id"] == "acme"
        again = (await client.post("/memory/acme/remember",
                                   json={"text": "Acme wants invoices in French"})).json()
        assert again["class"] == "NOOP" and again["fact"]["mentions"] == 2
        await client.post("/memory/acme/remember",
                          json={"text": "Acme renews in March 2027", "store": "crm"})
        await client.post("/memory/globex/remember", json={"text": "Globex pays by card"})

        r = await client.post("/memory/acme/recall", json={"query": "invoices French", "k": 1})
        recalled = r.json()
        assert set(recalled) == {"memory_id", "store", "text", "tokens", "facts"}
        (top,) = recalled["facts"]
        assert top["text"] == "Acme wants invoices in French" and top["score"] > 0
        assert "invoices in French" in recalled["text"] and recalled["tokens"] > 0
        r = await client.post("/memory/acme/recall", json={"query": "renews", "store": "crm"})
        assert [f["store"] for f in r.json()["facts"]] == ["crm"]

        assert (await client.get("/memory")).json() == {"ids": ["acme", "globex"]}
        assert (await client.get("/memory", params={"store": "crm"})).json() == {
            "ids": ["acme"]}
        facts = (await client.get("/memory/acme/facts")).json()["facts"]
        assert len(facts) == 2 and all({"id", "text", "status"} <= set(f) for f in facts)
        french = next(f for f in facts if "French" in f["text"])
        exported = (await client.get("/memory/acme/export")).json()["facts"]
        assert {f["id"] for f in exported} == {f["id"] for f in facts}

        r = await client.post("/memory/acme/consolidate")
        assert r.status_code == 200
        for verdict in r.json()["compactions"]:
            assert set(verdict) == {"accepted", "reason", "detail", "tokens_before",
                                    "tokens_after"}

        r = await client.delete(f"/memory/acme/facts/{french['id']}")
        assert r.json() == {"deleted": french["id"]}
        history = (await client.get("/memory/acme/facts", params={"all": "true"})).json()
        assert french["id"] not in {f["id"] for f in history["facts"]}
        r = await client.delete(f"/memory/acme/facts/{french['id']}")
        assert r.status_code == 404 and french["id"] in r.json()["detail"]
        assert (await client.delete("/memory/globex")).json() == {"forgotten": 1}
        assert (await client.get("/memory")).json() == {"ids": ["acme"]}

        r = await client.post("/memory/import", json={"store": "crm", "rows": [
            {"memory_id": "c1", "text": "Prefers email", "importance": 0.4, "at": 1.7e9},
            {"memory_id": "c2", "text": "Account manager is Dana"},
            {"memory_id": "c1", "text": "Prefers email"}]})
        assert r.status_code == 200, r.text
        results = r.json()["results"]
        assert [(x["memory_id"], x["class"]) for x in results] == [
            ("c1", "ADD"), ("c2", "ADD"), ("c1", "NOOP")]
        assert results[0]["fact_id"] == results[2]["fact_id"] and results[0]["reason"]


async def test_bad_values_are_400_naming_them_and_nothing_is_written(tmp_path: Path) -> None:
    async with serving(tmp_path) as (client, _):
        r = await client.post("/memory/bad%20id/remember", json={"text": "x"})
        assert r.status_code == 400 and MEMORY_ID_RULE in r.json()["detail"]
        assert "'bad id'" in r.json()["detail"]
        r = await client.post("/memory/acme/remember", json={"text": "x", "store": "nosuch"})
        assert r.status_code == 400 and "'nosuch'" in r.json()["detail"]
        r = await client.post("/memory/acme/remember", json={"text": "x", "importance": 3})
        assert r.status_code == 400 and "$.importance" in r.json()["detail"]
        r = await client.post("/memory/import", json={"store": "crm", "rows": [
            {"memory_id": "c1", "text": "fine"}, {"memory_id": "c 2", "text": "bad id"}]})
        assert r.status_code == 400 and "$.rows[1].memory_id" in r.json()["detail"]
        r = await client.post("/memory/import", json={"store": "nosuch", "rows": [
            {"memory_id": "c1", "text": "fine"}]})
        assert r.status_code == 400 and "'nosuch'" in r.json()["detail"]
        assert (await client.get("/memory")).json() == {"ids": []}


async def test_memory_endpoints_need_the_token_and_its_scope(tmp_path: Path) -> None:
    async with serving(tmp_path) as (client, tokens):
        token, content = tokens.issue(["acme"])
        tokens.save(content)
        scoped = bearer(token)
        r = await client.post("/memory/acme/remember", json={"text": "Acme pays in euros"},
                              headers={"Authorization": ""})
        assert r.status_code == 401 and r.json()["error"] == "unauthorized"
        r = await client.post("/memory/acme/remember", json={"text": "Acme pays in euros"},
                              headers=scoped)
        assert r.status_code == 200
        r = await client.post("/memory/acme/recall", json={"query": "euros"}, headers=scoped)
        assert r.status_code == 200 and r.json()["facts"]
        r = await client.post("/memory/globex/recall", json={"query": "euros"}, headers=scoped)
        assert r.status_code == 403 and "'globex'" in r.json()["detail"]
        for method, path in (("GET", "/memory"), ("GET", "/memory/acme/facts"),
                             ("GET", "/memory/acme/export"), ("DELETE", "/memory/acme"),
                             ("POST", "/memory/acme/consolidate")):
            r = await client.request(method, path, headers=scoped)
            assert r.status_code == 403 and "needs the admin token" in r.json()["detail"]


async def test_memory_endpoints_answer_503_when_fact_memory_is_off(tmp_path: Path) -> None:
    async with serving(tmp_path, DisabledApp()) as (client, _):
        for method, path, body in (
                ("POST", "/memory/acme/remember", {"text": "x"}),
                ("POST", "/memory/acme/recall", {"query": "x"}),
                ("GET", "/memory", None), ("GET", "/memory/acme/facts", None),
                ("DELETE", "/memory/acme/facts/f1", None), ("DELETE", "/memory/acme", None),
                ("POST", "/memory/acme/consolidate", None),
                ("GET", "/memory/acme/export", None),
                ("POST", "/memory/import", {"store": "default",
                                            "rows": [{"memory_id": "a", "text": "x"}]})):
            r = await client.request(method, path, json=body)
            assert r.status_code == 503, path
            assert r.json()["error"] == "facts_disabled" and "enabled = false" in r.json()["detail"]


def test_the_openapi_document_lists_the_memory_endpoints() -> None:
    memory = {(e.method, e.path) for e in ENDPOINTS if e.path.startswith("/memory")}
    assert memory == {
        ("GET", "/memory"), ("POST", "/memory/import"),
        ("POST", "/memory/{memory_id}/remember"), ("POST", "/memory/{memory_id}/recall"),
        ("GET", "/memory/{memory_id}/facts"), ("DELETE", "/memory/{memory_id}/facts/{fact_id}"),
        ("DELETE", "/memory/{memory_id}"), ("POST", "/memory/{memory_id}/consolidate"),
        ("GET", "/memory/{memory_id}/export")}
