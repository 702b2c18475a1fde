"""The application API end to end over HTTP: observe then recall (with citations), chat,
topics, curation, facts, notes, evaluate, inspect and stats; /metrics in the Prometheus
text format; ``solace serve`` holds the home and stops cleanly."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from http_support import running, small_config

from solace import open_runtime
from solace.surfaces.http.server import HTTP_SERVERS
from solace.surfaces.http.tokens import SERVE_FILE


@pytest.mark.parametrize("http_server", HTTP_SERVERS)
async def test_observe_recall_and_chat_round_trip(tmp_path: Path, http_server: str) -> None:
    async with running(tmp_path, http_server=http_server) as (_, client):
        r = await client.post("/observe", json={
            "text": "I adopted a ginger cat called Biscuit", "speaker": "Caroline",
            "at": 1683554160, "attrs": {"dia_id": "D1:3"}})
        assert r.status_code == 201
        entry_id = r.json()["entry_id"]
        got = await client.get("/recall", params={"query": "ginger cat", "k": 3})
        posted = await client.post("/recall", json={"query": "ginger cat", "k": 3})
        for r in (got, posted):
            assert r.status_code == 200
            (top, *_) = r.json()["hits"]
            assert "Biscuit" in top["text"] and entry_id in top["entry_ids"]
            assert top["speakers"] == ["Caroline"] and top["dia_ids"] == ["D1:3"]
            assert top["date"].startswith("2023-05-08")
        chat = await client.post("/chat", json={"message": "What is my cat called?"})
        assert chat.status_code == 200 and isinstance(chat.json()["text"], str)
        assert chat.json()["entry_id"] > entry_id
        stats = (await client.get("/stats")).json()
        assert stats["events"] >= chat.json()["entry_id"]
        inspect = (await client.get("/inspect", params={"agent": "Main"})).json()
        assert list(inspect) == ["Main"] and inspect["Main"]["working_records"] >= 1


async def test_topics_curation_facts_notes_and_evaluate(tmp_path: Path) -> None:
    async with running(tmp_path) as (_, client):
        await client.post("/chat", json={"message": "Let us plan the garden"})
        (topic,) = (await client.get("/topics")).json()["topics"]
        tid, sid = topic["topic_id"], topic["session_id"]
        r = await client.post(f"/topics/{tid}/curate", json={"action": "promote"})
        assert r.status_code == 200 and r.json()["state"] == "promoted"
        assert r.json()["keep_in_memory_manually_set"] is True
        r = await client.post(f"/topics/{tid}/notes", json={"text": "tomatoes by the wall"})
        assert r.status_code == 200 and "tomatoes" in r.json()["notes"]
        assert "tomatoes" in (await client.get(f"/topics/{tid}/notes")).json()["notes"]

        r = await client.put("/facts/pet", json={"value": "Biscuit"})
        assert r.json() == {"key": "pet", "value": "Biscuit"}
        assert (await client.get("/facts/pet")).json()["value"] == "Biscuit"
        assert {"key": "pet", "value": "Biscuit"} in (await client.get("/facts")).json()["facts"]
        assert (await client.delete("/facts/pet")).json() == {"deleted": "pet"}
        assert (await client.get("/facts/pet")).status_code == 404
        assert (await client.delete("/facts/pet")).status_code == 404

        r = await client.post(f"/sessions/{sid}/evaluate", json={"trigger": "navigation"})
        assert r.status_code == 202 and r.json()["accepted"] is True
        r = await client.post("/sessions/nosuch/evaluate", json={"trigger": "manual"})
        assert r.status_code == 404 and "'nosuch'" in r.json()["detail"]


_SAMPLE = re.compile(r'^[a-z_]+(\{[a-z_]+="[^"]*"(,[a-z_]+="[^"]*")*\})? -?[0-9.e+-]+$')


async def test_metrics_are_prometheus_text(tmp_path: Path) -> None:
    async with running(tmp_path) as (_, client):
        await client.post("/observe", json={"text": "hello", "speaker": "user"})
        for _ in range(3):
            await client.get("/recall", params={"query": "hello"})
        r = await client.get("/metrics")
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/plain; version=0.0.4")
        typed: dict[str, str] = {}
        samples: dict[str, float] = {}
        for line in r.text.splitlines():
            if line.startswith("# TYPE "):
                _, _, name, kind = line.split()
                typed[name] = kind
            elif not line.startswith("# HELP "):
                assert _SAMPLE.match(line), line
                name, value = line.rsplit(" ", 1)
                samples[name] = float(value)
        assert typed["solace_recall_latency_seconds"] == "histogram"
        assert typed["solace_events"] == "gauge"
        assert typed["solace_llm_calls_total"] == "counter"
        assert samples["solace_recall_latency_seconds_count"] == 3
        assert samples['solace_recall_latency_seconds_bucket{le="+Inf"}'] == 3
        assert samples["solace_events"] >= 1
        assert samples['solace_records{agent="Main",tier="working",rung="0"}'] >= 1
        assert 'solace_guard_verdicts_total{verdict="accepted"}' in samples
        assert samples['solace_http_requests_total{method="GET",route="/recall",status="200"}'] == 3


async def test_serve_holds_the_home_and_stops_cleanly(tmp_path: Path) -> None:
    async with running(tmp_path) as (serving, client):
        await client.post("/observe", json={"text": "remember the milk", "speaker": "user"})
        assert (tmp_path / SERVE_FILE).exists()
        with pytest.raises(Exception, match="already open"):
            async with open_runtime(tmp_path, small_config()):
                pass
    assert not (tmp_path / SERVE_FILE).exists()
    assert any((tmp_path / "memory" / "Main").iterdir())  # snapshots written on the way out
    async with open_runtime(tmp_path, small_config()) as rt:  # released, and nothing lost
        assert "remember the milk" in rt.event(1).content
