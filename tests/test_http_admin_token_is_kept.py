"""The admin token is made on a home's first serve and kept (HOME/serve-admin-token,
0600), so a client configured with it keeps working across restarts; --new-admin-token
replaces it and the old one is refused; a file that is not a token is refused naming
it; one readable by others is narrowed to 0600."""

from __future__ import annotations

import stat
from pathlib import Path

import httpx
import pytest
from http_support import bearer, running

from solace.surfaces.http.tokens import ADMIN_TOKEN_FILE, TokenFileError, admin_token


async def test_the_admin_token_survives_a_restart_and_a_new_one_retires_it(
        tmp_path: Path) -> None:
    async with running(tmp_path) as (first, client):
        assert (await client.get("/stats")).status_code == 200
    path = tmp_path / ADMIN_TOKEN_FILE
    assert path.read_text().strip() == first.admin_token
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    async with running(tmp_path) as (second, client):
        assert second.admin_token == first.admin_token
        assert (await client.get("/stats")).status_code == 200
    async with running(tmp_path, new_admin_token=True) as (third, client):
        assert third.admin_token != first.admin_token
        assert (await client.get("/stats")).status_code == 200
        async with httpx.AsyncClient(base_url=third.url, timeout=30,
                                     headers=bearer(first.admin_token)) as old:
            refused = await old.get("/stats")
        assert refused.status_code == 401 and refused.json()["error"] == "unauthorized"
    assert path.read_text().strip() == third.admin_token


def test_a_file_that_is_not_a_token_is_refused_naming_it(tmp_path: Path) -> None:
    path = tmp_path / ADMIN_TOKEN_FILE
    path.write_text("hunter2\n")
    with pytest.raises(TokenFileError, match="serve-admin-token: not a Solace admin token"):
        admin_token(tmp_path)
    assert path.read_text() == "hunter2\n"  # left for the operator to look at
    path.write_bytes(b"\xff\xfe" * 30)
    with pytest.raises(TokenFileError, match="not a Solace admin token"):
        admin_token(tmp_path)
    assert admin_token(tmp_path, rotate=True) == path.read_text().strip()


def test_a_token_file_readable_by_others_is_narrowed_to_0600(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    token = admin_token(tmp_path)
    path = tmp_path / ADMIN_TOKEN_FILE
    path.chmod(0o644)
    assert admin_token(tmp_path) == token
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert "narrowed to 0600" in caplog.text
