"""Bearer tokens: 401 without a known token, 403 out of scope, scoped tokens bound to
memory ids and stored hashed in a 0600 file that outlives the server."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from http_support import bearer, running

from solace.surfaces.http.tokens import SERVE_FILE, TOKENS_FILE


async def test_missing_or_unknown_token_is_401_json(tmp_path: Path) -> None:
    async with running(tmp_path) as (_, client):
        for headers in ({"Authorization": ""}, bearer("not-a-token"),
                        {"Authorization": "Basic dXNlcjpwYXNz"}):
            r = await client.get("/stats", headers=headers)
            assert r.status_code == 401, headers
            assert r.headers["content-type"] == "application/json"
            assert r.headers["www-authenticate"] == "Bearer"
            assert set(r.json()) == {"error", "detail"} and r.json()["error"] == "unauthorized"
        assert "missing bearer token" in (await client.get(
            "/stats", headers={"Authorization": ""})).json()["detail"]
        assert (await client.get("/healthz", headers={"Authorization": ""})).status_code == 200


async def test_token_for_one_memory_cannot_reach_another(tmp_path: Path) -> None:
    async with running(tmp_path) as (_, client):
        r = await client.post("/tokens", json={"memory_ids": ["cust-1"]})
        assert r.status_code == 201 and r.json()["memory_ids"] == ["cust-1"]
        cust1 = bearer(r.json()["token"])

        ok = await client.post("/chat", headers=cust1,
                               json={"message": "hello", "memory": "cust-1"})
        assert ok.status_code == 200 and ok.json()["memory"] == "cust-1"

        other = await client.post("/chat", headers=cust1,
                                  json={"message": "hello", "memory": "cust-2"})
        assert other.status_code == 403
        assert other.json()["error"] == "forbidden" and "'cust-2'" in other.json()["detail"]

        unnamed = await client.post("/chat", headers=cust1, json={"message": "hello"})
        assert unnamed.status_code == 403 and "cust-1" in unnamed.json()["detail"]

        for method, path in (("GET", "/stats"), ("GET", "/recall?query=x"), ("GET", "/facts"),
                             ("GET", "/metrics"), ("POST", "/tokens")):
            r = await client.request(method, path, headers=cust1,
                                     json={"memory_ids": ["cust-2"]} if method == "POST" else None)
            assert r.status_code == 403, path
            assert "needs the admin token" in r.json()["detail"]


async def test_scoped_tokens_are_stored_hashed_0600_and_outlive_the_server(
        tmp_path: Path) -> None:
    async with running(tmp_path) as (serving, client):
        token = (await client.post("/tokens", json={"memory_ids": ["a", "b"]})).json()["token"]
        served = serving.serve_file
        assert stat.S_IMODE(served.stat().st_mode) == 0o600
        info = json.loads(served.read_text())
        assert info["port"] == serving.port and info["admin_token"] == serving.admin_token
    assert not (tmp_path / SERVE_FILE).exists()  # removed on a clean exit
    stored = tmp_path / TOKENS_FILE
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    assert token not in stored.read_text() and serving.admin_token not in stored.read_text()

    async with running(tmp_path, new_admin_token=True) as (again, client):
        assert again.admin_token != serving.admin_token  # replaced on request
        r = await client.post("/chat", headers=bearer(token), json={"message": "hi",
                                                                    "memory": "b"})
        assert r.status_code == 200  # the scoped token outlives the admin token's change
        stale = await client.get("/stats", headers=bearer(serving.admin_token))
        assert stale.status_code == 401
