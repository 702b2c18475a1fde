"""``POST /import``: keyed lines into a served home, each line once however often sent,
every refusal naming the batch, the item and the problem before anything is written."""

from __future__ import annotations

from pathlib import Path

from http_support import running

LINES = [[{"key": "t:1", "speaker": "Ana", "text": "I adopted a greyhound called Pip",
           "at": 1683554160},
          {"key": "t:2", "speaker": "Ben", "text": "Pip is a lovely name", "at": 1683554220}],
         [{"key": "t:3", "speaker": "Ana", "text": "We walk by the canal every morning",
           "at": 1683640560, "attrs": {"dia_id": "D2:1"}}]]


async def test_an_import_writes_each_keyed_line_once(tmp_path: Path) -> None:
    async with running(tmp_path) as (_, client):
        first = await client.post("/import", json={"batches": LINES})
        assert first.status_code == 200 and first.json() == {"written": 3, "skipped": 0}
        again = await client.post("/import", json={"batches": LINES})
        assert again.json() == {"written": 0, "skipped": 3}
        hits = (await client.get("/recall", params={"query": "greyhound Pip"})).json()["hits"]
        assert any("greyhound" in h["text"] for h in hits)


async def test_a_bad_item_is_refused_by_batch_and_index_and_nothing_is_written(
        tmp_path: Path) -> None:
    async with running(tmp_path) as (_, client):
        before = (await client.get("/stats")).json()["events"]
        keyed = [[LINES[0][0], {**LINES[0][1], "attrs": {"import_key": "mine"}}]]
        r = await client.post("/import", json={"batches": keyed})
        assert r.status_code == 400 and "batch 0 item 1" in r.json()["detail"]
        no_date = [[{k: v for k, v in LINES[0][0].items() if k != "at"}]]
        r = await client.post("/import", json={"batches": no_date})
        assert r.status_code == 400 and "[0][0].at" in r.json()["detail"]
        assert (await client.get("/stats")).json()["events"] == before
