"""The JSON endpoints the web console reads, over a real server (in process): the memory
prefix shows a deprecated topic as its title; an agent's move is refused with the
guard's message once the user decided, and allowed before; an event reads back exactly
as appended (404 an unknown id, 400 a malformed one); verify reports a flipped byte on
disk; the console's pages need no token, carry a same-origin CSP, and are the only
files served."""

from __future__ import annotations

import re
from pathlib import Path

from http_support import running

from solace.conversation.curation import DEPRECATED_MANUAL_MESSAGE
from substrate.segments import segment_name

_REMOTE = re.compile(r"""(src|href)=["']?(https?:)?//|url\(\s*["']?(https?:)?//|"""
                     r"""(fetch|import)\s*\(?\s*["'`](https?:)?//""")
RAW = "Line one,\n  two spaces kept.\r\nA tab\there."


async def test_the_memory_prefix_and_the_agent_move_follow_the_guard(tmp_path: Path) -> None:
    async with running(tmp_path) as (_, client):
        assert (await client.get("/context/memory")).json()["text"] == ""
        await client.post("/chat", json={"message": "Let us plan the garden"})
        (topic,) = (await client.get("/topics")).json()["topics"]
        tid, title = topic["topic_id"], topic["title"]

        r = await client.post(f"/topics/{tid}/agent-curate", json={"action": "deprecate"})
        assert r.status_code == 200 and r.json()["ok"] is True
        assert r.json()["topic"]["state"] == "deprecated"  # no user decision yet: allowed
        assert r.json()["topic"]["deprecated_manually_set"] is False
        assert (await client.get("/context/memory")).json()["text"] == f"- [DEPRECATED] {title}"

        r = await client.post(f"/topics/{tid}/curate", json={"action": "undeprecate"})
        assert r.json()["deprecated_manually_set"] is True  # the user decided: not deprecated
        r = await client.post(f"/topics/{tid}/agent-curate", json={"action": "deprecate"})
        assert r.json() == {**r.json(), "ok": False, "message": DEPRECATED_MANUAL_MESSAGE}
        assert r.json()["topic"]["state"] != "deprecated"
        prefix = (await client.get("/context/memory")).json()
        assert "[DEPRECATED]" not in prefix["text"]

        r = await client.post(f"/topics/{tid}/agent-curate", json={"action": "undeprecate"})
        assert r.status_code == 400 and "$.action" in r.json()["detail"]
        r = await client.post("/topics/nosuch/agent-curate", json={"action": "promote"})
        assert r.status_code == 404 and "'nosuch'" in r.json()["detail"]


async def test_an_event_reads_back_exactly_as_appended(tmp_path: Path) -> None:
    async with running(tmp_path) as (_, client):
        entry = (await client.post("/observe", json={
            "text": RAW, "speaker": "Caroline", "at": 1683554160, "attrs": {"dia_id": "D1:3"},
        })).json()["entry_id"]
        event = (await client.get(f"/events/{entry}")).json()
        assert event["text"] == RAW and event["speaker"] == "Caroline"
        assert event["date"] == "2023-05-08T13:56:00+00:00" and event["kind"] == "message"
        assert event["attrs"]["dia_id"] == "D1:3"
        r = await client.get("/events/999999")
        assert r.status_code == 404 and "999999" in r.json()["detail"]
        for bad in ("0", "-1", "x1", "1.5"):
            r = await client.get(f"/events/{bad}")
            assert r.status_code == 400 and "positive integer" in r.json()["detail"], bad


async def test_verify_reports_a_flipped_byte(tmp_path: Path) -> None:
    async with running(tmp_path) as (_, client):
        await client.post("/observe", json={"text": "the spare key is under the mat",
                                            "speaker": "user"})
        ok = (await client.get("/substrate/verify")).json()
        assert ok["ok"] is True and ok["error"] == "" and ok["frames"] == ok["last_id"] >= 1
        segment = tmp_path / "substrate" / segment_name(1)
        data = bytearray(segment.read_bytes())
        data[len(data) // 2] ^= 0xFF
        segment.write_bytes(bytes(data))
        bad = (await client.get("/substrate/verify")).json()
        assert bad["ok"] is False and bad["error"] and segment.name in bad["detail"]


async def test_the_console_pages_need_no_token_and_are_the_only_files(tmp_path: Path) -> None:
    async with running(tmp_path) as (_, client):
        anonymous = {"Authorization": ""}
        page = await client.get("/", headers=anonymous)
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        csp = page.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "default-src 'none'" in csp
        assert page.headers["referrer-policy"] == "no-referrer"
        assert '<script src="/console/console.js"' in page.text and not _REMOTE.search(page.text)
        for path, media in (("/console/console.js", "text/javascript"),
                            ("/console/console.css", "text/css")):
            r = await client.get(path, headers=anonymous)
            assert r.status_code == 200 and r.headers["content-type"].startswith(media)
            assert not _REMOTE.search(r.text), path  # no CDN, nothing fetched elsewhere
        for path in ("/console/", "/console/index.html", "/console/../app.py", "/index.html"):
            r = await client.get(path, headers=anonymous)
            assert r.status_code == 404 and r.json()["error"] == "not_found", path
        assert (await client.get("/topics", headers=anonymous)).status_code == 401
