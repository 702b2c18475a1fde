"""`/mcp` on `solace serve`, end to end with the `mcp` client library over streamable
HTTP: with the admin token the six tools are listed and recall answers with citations;
a scoped token acts for its own memory id and is refused another; no token is a 401."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
from http_support import bearer, running
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from solace.conversation.curation import KEEP_MANUAL_MESSAGE

TOOLS = {"remember", "recall", "recall_conversation", "notes", "important_info",
         "manage_topic_memory"}


def _body(result: Any) -> dict[str, Any]:
    (content,) = result.content
    body: dict[str, Any] = json.loads(content.text)
    return body


async def _call(url: str, token: str, name: str, args: dict[str, Any]) -> Any:
    async with (create_mcp_http_client(headers=bearer(token)) as http,
                streamable_http_client(url, http_client=http) as (read, write),
                ClientSession(read, write) as session):
        await session.initialize()
        return await session.call_tool(name, args)


async def test_mcp_over_http_lists_the_tools_and_recalls(tmp_path: Path) -> None:
    async with running(tmp_path) as (serving, client):
        r = await client.post("/observe", json={
            "text": "Caroline adopted a ginger cat called Biscuit", "speaker": "Caroline"})
        entry_id = r.json()["entry_id"]
        async with (create_mcp_http_client(headers=bearer(serving.admin_token)) as http,
                    streamable_http_client(f"{serving.url}/mcp", http_client=http)
                    as (read, write), ClientSession(read, write) as session):
            await session.initialize()
            tools = {t.name: t for t in (await session.list_tools()).tools}
            assert set(tools) == TOOLS and all(t.description for t in tools.values())
            found = await session.call_tool("recall_conversation",
                                            {"query": "ginger cat", "k": 3})
            assert not found.is_error, _body(found)
            (top, *_) = _body(found)["hits"]
            assert "Biscuit" in top["text"] and entry_id in top["entry_ids"]
            assert top["speakers"] == ["Caroline"]
            stored = await session.call_tool("remember", {"text": "Biscuit likes tuna"})
            assert _body(stored)["memory_id"] == "user"  # the scope's user, as solace run


async def test_mcp_over_http_needs_the_bearer_token_and_its_scope(tmp_path: Path) -> None:
    async with running(tmp_path) as (serving, client):
        url = f"{serving.url}/mcp"
        async with httpx.AsyncClient(timeout=30) as anonymous:
            r = await anonymous.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
            assert r.status_code == 401 and r.json()["error"] == "unauthorized"
            r = await anonymous.post(url, headers=bearer("not-a-token"), json={})
            assert r.status_code == 401 and "unknown bearer token" in r.json()["detail"]
        token = (await client.post("/tokens", json={"memory_ids": ["alice"]})).json()["token"]

        stored = await _call(url, token, "remember", {"text": "Alice parks on level 3"})
        assert _body(stored)["memory_id"] == "alice"
        stored = await _call(f"{url}?memory=alice", token, "remember", {"text": "level 3"})
        assert _body(stored)["memory_id"] == "alice"
        found = await _call(url, token, "recall", {"query": "where does Alice park"})
        assert "level 3" in _body(found)["text"]
        refused = await _call(url, token, "recall", {"query": "park", "memory_id": "bob"})
        assert refused.is_error and "'bob' is outside" in _body(refused)["error"]
        async with httpx.AsyncClient(timeout=30, headers=bearer(token)) as scoped:
            r = await scoped.post(f"{url}?memory=bob", json={})
            assert r.status_code == 403 and "'bob'" in r.json()["detail"]
            r = await scoped.post(url, headers={"X-Solace-Memory": "no spaces"}, json={})
            assert r.status_code == 400 and "'no spaces'" in r.json()["detail"]


async def test_mcp_tools_carry_seed_000s_guard_messages(tmp_path: Path) -> None:
    async with running(tmp_path) as (serving, client):
        url = f"{serving.url}/mcp"
        await client.post("/chat", json={"message": "Let us plan the garden"})
        (topic,) = (await client.get("/topics")).json()["topics"]
        r = await client.post(f"/topics/{topic['topic_id']}/curate", json={"action": "demote"})
        assert r.json()["keep_in_memory_manually_set"] is True
        moved = await _call(url, serving.admin_token, "manage_topic_memory",
                            {"action": "promote", "topic_id": topic["topic_id"]})
        assert moved.is_error
        assert _body(moved)["error"] == KEEP_MANUAL_MESSAGE
        fact = await _call(url, serving.admin_token, "important_info",
                           {"operation": "$set", "key": "pet", "value": "Biscuit"})
        assert not fact.is_error
        assert {"key": "pet", "value": "Biscuit"} in (await client.get("/facts")).json()["facts"]

        token = (await client.post("/tokens", json={"memory_ids": ["a", "b"]})).json()["token"]
        async with httpx.AsyncClient(timeout=30, headers=bearer(token)) as scoped:
            r = await scoped.post(url, json={})
            assert r.status_code == 403 and "name one with ?memory=ID" in r.json()["detail"]
