"""The MCP tools remember and recall are fact memory under a memory id: what one id
remembers it recalls (the rendered block and the scored facts), another id never sees it,
a connection may name only the ids it reaches, and fact memory switched off is a tool
error naming why, not a crash."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from facts_fixtures import ManualClock, fact_memory
from facts_surface_support import DisabledApp, FactApp

from solace.facts import FactsDisabledError
from solace.models.schema import SchemaError
from solace.surfaces.mcp.tools import (
    DEFAULT_MEMORY_ID,
    RECALL,
    REMEMBER,
    McpSurfaceError,
    ToolCaller,
)


async def test_remember_then_recall_under_one_memory_id_and_isolation(tmp_path: Path) -> None:
    clock = ManualClock()
    async with fact_memory(tmp_path / "home", clock=clock) as fm:
        caller = ToolCaller(FactApp(fm, clock))  # type: ignore[arg-type]
        ok, stored = await caller.call(
            "remember", {"text": "Alice keeps the spare key under the blue flowerpot",
                         "importance": 0.9}, "alice")
        assert ok and stored["class"] == "ADD" and stored["memory_id"] == "alice"
        assert stored["fact"]["importance"] == 0.9
        ok, again = await caller.call(
            "remember", {"text": "Alice keeps the spare key under the blue flowerpot"},
            "alice")
        assert again["class"] == "NOOP" and again["fact"]["id"] == stored["fact"]["id"]
        await caller.call("remember", {"text": "Bob keeps his bike in the garage"}, "bob")

        ok, found = await caller.call("recall", {"query": "where is the spare key"}, "alice")
        assert ok and found["memory_id"] == "alice"
        assert [f["text"] for f in found["facts"]] == [
            "Alice keeps the spare key under the blue flowerpot"]
        assert "blue flowerpot" in found["text"] and found["tokens"] > 0
        assert found["facts"][0]["score"] > 0

        ok, nothing = await caller.call("recall", {"query": "where is the spare key"}, "bob")
        assert ok and nothing["memory_id"] == "bob"
        assert all("flowerpot" not in f["text"] for f in nothing["facts"])
        assert "flowerpot" not in nothing["text"]
        ok, bike = await caller.call("recall", {"query": "bike garage"}, "bob")
        assert [f["text"] for f in bike["facts"]] == ["Bob keeps his bike in the garage"]

        # Naming an id: any on a connection that reaches all, refused beyond its reach.
        ok, named = await caller.call("recall", {"query": "bike", "memory_id": "bob"}, "alice")
        assert ok and named["memory_id"] == "bob" and named["facts"]
        with pytest.raises(McpSurfaceError, match="'bob' is outside"):
            await caller.call("recall", {"query": "bike", "memory_id": "bob"}, "alice",
                              reach=lambda m: m == "alice")
        with pytest.raises(SchemaError, match="memory_id"):
            await caller.call("remember", {"text": "x", "memory_id": "no way"}, "alice")
        with pytest.raises(SchemaError, match="importance"):
            await caller.call("remember", {"text": "x", "importance": 1.5}, "alice")
        assert fm.memory_ids() == ["alice", "bob"]


async def test_switched_off_fact_memory_is_a_tool_error() -> None:
    caller = ToolCaller(DisabledApp())  # type: ignore[arg-type]
    with pytest.raises(FactsDisabledError, match="enabled = false"):
        await caller.call("remember", {"text": "x"}, DEFAULT_MEMORY_ID)


def test_the_tool_descriptions_say_memory_ids_isolate() -> None:
    for spec in (REMEMBER, RECALL):
        assert "memory id" in spec.description and "Until" not in spec.description
        assert set(spec.parameters["properties"]) >= {"memory_id", "store"}
    assert "never see each other's facts" in REMEMBER.description
    assert DEFAULT_MEMORY_ID == "user"


async def _session_calls(app: object, calls: list[tuple[str, dict[str, object]]],
                         memory_id: str) -> list[tuple[bool, dict[str, object]]]:
    """Run ``calls`` through a real MCP client session against :func:`build_server`."""
    import trio
    from mcp.client.session import ClientSession
    from mcp.shared.memory import create_client_server_memory_streams

    from solace.surfaces.mcp.server import build_server

    server = build_server(app, lambda ctx: memory_id)  # type: ignore[arg-type]
    out = []
    async with create_client_server_memory_streams() as (client, served), \
            trio.open_nursery() as nursery:
        nursery.start_soon(server.run, served[0], served[1],
                           server.create_initialization_options())
        async with ClientSession(client[0], client[1]) as session:
            await session.initialize()
            for name, args in calls:
                result = await session.call_tool(name, args)
                (content,) = result.content
                out.append((not result.is_error, json.loads(content.text)))
        nursery.cancel_scope.cancel()
    return out


async def test_over_an_mcp_session_the_tools_act_for_the_connection_id(
        tmp_path: Path) -> None:
    clock = ManualClock()
    async with fact_memory(tmp_path / "home", clock=clock) as fm:
        app = FactApp(fm, clock)
        (stored, found) = await _session_calls(app, [
            ("remember", {"text": "Carol's invoices go to billing@carol.example"}),
            ("recall", {"query": "where do invoices go"})], "carol")
        assert stored[0] and stored[1]["memory_id"] == "carol"
        assert found[0] and "billing@carol.example" in str(found[1]["text"])
        ((ok, other),) = await _session_calls(
            app, [("recall", {"query": "where do invoices go"})], "dave")
        assert ok and other["facts"] == [] and other["text"] == ""
    ((ok, off),) = await _session_calls(DisabledApp(), [("remember", {"text": "x"})], "carol")
    assert not ok and "enabled = false" in str(off["error"])
