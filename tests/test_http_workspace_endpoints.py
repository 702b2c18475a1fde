"""The markdown workspace over HTTP (``/workspace...``): its files, one file's text, NOW.md,
a reload of the human's edits, a synthesis and an export without secret-looking lines,
every refusal a JSON body naming the path, and 503 with the workspace off."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from http_support import running, small_config

from solace.config.schema import WorkspaceConfig


async def test_the_workspace_files_a_file_and_now_md_are_read_over_http(tmp_path: Path) -> None:
    async with running(tmp_path) as (_, client):
        await client.post("/observe", json={"text": "We planted tomatoes today",
                                            "speaker": "user"})
        now = await client.post("/workspace/now")
        assert now.status_code == 200 and "NOW" in now.json()["text"].upper()
        listed = (await client.get("/workspace")).json()
        paths = {f["path"]: f["bytes"] for f in listed["files"]}
        assert "NOW.md" in paths and paths["NOW.md"] > 0
        assert Path(listed["root"]).is_dir()
        one = await client.get("/workspace/file", params={"path": "NOW"})  # .md optional
        assert one.status_code == 200 and one.json()["text"] == now.json()["text"]


async def test_a_path_outside_or_missing_is_refused_by_name(tmp_path: Path) -> None:
    async with running(tmp_path) as (_, client):
        outside = await client.get("/workspace/file", params={"path": "../serve.json"})
        assert outside.status_code == 400
        assert "outside the workspace" in outside.json()["detail"]
        missing = await client.get("/workspace/file", params={"path": "nope.md"})
        assert missing.status_code == 404 and "'nope.md'" in missing.json()["detail"]
        bare = await client.get("/workspace/file")
        assert bare.status_code == 400 and "path" in bare.json()["detail"]


async def test_reload_records_an_edit_and_export_leaves_secrets_out(tmp_path: Path) -> None:
    async with running(tmp_path) as (_, client):
        root = Path((await client.get("/workspace")).json()["root"])
        user = root / "USER.md"
        user.write_text(user.read_text() + "\n- Prefers green tea\n"
                        "- api_key = sk-live-1234567890abcdef1234567890abcdef\n")
        reloaded = await client.post("/workspace/reload")
        assert reloaded.status_code == 200 and "edit" in reloaded.json()["message"]
        exported = {f["path"]: f["text"]
                    for f in (await client.get("/workspace/export")).json()["files"]}
        assert "Prefers green tea" in exported["USER.md"]
        assert all("sk-live" not in text for text in exported.values())
        synthesis = await client.post("/workspace/synthesize")
        assert synthesis.status_code == 200
        assert set(synthesis.json()) == {"read", "added", "noop", "updated", "conflicts",
                                         "clashes", "rollups"}


async def test_every_workspace_endpoint_answers_503_with_the_workspace_off(
        tmp_path: Path) -> None:
    config = dataclasses.replace(small_config(), workspace=WorkspaceConfig(enabled=False))
    async with running(tmp_path, config=config) as (_, client):
        for method, path in (("GET", "/workspace"), ("GET", "/workspace/file?path=NOW"),
                             ("POST", "/workspace/reload"), ("POST", "/workspace/now"),
                             ("POST", "/workspace/synthesize"), ("GET", "/workspace/export")):
            r = await client.request(method, path)
            assert r.status_code == 503, (path, r.text)
            assert r.json()["error"] == "workspace_disabled"
