"""POST /chat carries "memory" and "memory_store" to the app: a turn under a memory id
with a bad store is refused naming it, a good one is answered; with fact memory switched
off the /memory endpoints answer 503 facts_disabled and /chat still answers."""

from __future__ import annotations

import dataclasses
from functools import partial
from pathlib import Path

import httpx
import trio
from http_support import bearer, running, small_config

from solace.config.schema import FactsConfig
from solace.surfaces.http import Serving, serve


async def test_chat_passes_the_memory_id_and_store(tmp_path: Path) -> None:
    async with running(tmp_path) as (_, client):
        r = await client.post("/memory/acme/remember",
                              json={"text": "Acme wants invoices in French"})
        assert r.status_code == 200
        r = await client.post("/chat", json={"message": "How should I send the invoice?",
                                             "memory": "acme", "memory_store": "default"})
        assert r.status_code == 200, r.text
        assert r.json()["memory"] == "acme" and r.json()["memory_store"] == "default"
        r = await client.post("/chat", json={"message": "hello", "memory": "acme",
                                             "memory_store": "nosuch"})
        assert r.status_code == 400 and "'nosuch'" in r.json()["detail"]


async def test_with_fact_memory_off_memory_is_503_and_chat_proceeds(tmp_path: Path) -> None:
    config = dataclasses.replace(small_config(), facts=FactsConfig(enabled=False))
    async with trio.open_nursery() as nursery:
        serving: Serving = await nursery.start(
            partial(serve, tmp_path, config, host="127.0.0.1", port=0))
        async with httpx.AsyncClient(base_url=serving.url, timeout=60,
                                     headers=bearer(serving.admin_token)) as client:
            r = await client.post("/memory/acme/remember", json={"text": "x"})
            assert r.status_code == 503 and r.json()["error"] == "facts_disabled"
            assert (await client.get("/memory")).status_code == 503
            r = await client.post("/chat", json={"message": "hello", "memory": "acme"})
            assert r.status_code == 200 and r.json()["memory"] == "acme"
        serving.stop()
