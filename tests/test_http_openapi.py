"""The OpenAPI 3.1 document lists every route, is made from the very schemas that
validate requests, and schemathesis, fuzzing every operation from it with the admin
token, never gets a 5xx."""

from __future__ import annotations

import sys
from pathlib import Path

import trio
from http_support import running
from starlette.routing import Route

from solace.surfaces.http import ENDPOINTS, build_app
from solace.surfaces.http.routes import path_schema


async def test_document_is_openapi_31_with_every_route(tmp_path: Path) -> None:
    async with running(tmp_path) as (_, client):
        r = await client.get("/openapi.json", headers={"Authorization": ""})  # public
        assert r.status_code == 200
        doc = r.json()
    assert doc["openapi"] == "3.1.0" and doc["info"]["title"] == "Solace"
    assert doc["components"]["securitySchemes"]["bearer"] == {"type": "http",
                                                              "scheme": "bearer"}
    documented = {(m.upper(), p) for p, ops in doc["paths"].items() for m in ops}
    app = build_app(None, None)  # type: ignore[arg-type]  # routes only; never called
    served = {(m, r.path) for r in app.routes if isinstance(r, Route)
              for m in (r.methods or ()) if m != "HEAD"}
    assert documented == served == {(ep.method, ep.path) for ep in ENDPOINTS}
    required = {("POST", "/chat"), ("POST", "/observe"), ("GET", "/recall"),
                ("POST", "/recall"), ("GET", "/topics"), ("POST", "/topics/{topic_id}/curate"),
                ("GET", "/facts"), ("GET", "/facts/{key}"), ("PUT", "/facts/{key}"),
                ("DELETE", "/facts/{key}"), ("GET", "/topics/{topic_id}/notes"),
                ("POST", "/topics/{topic_id}/notes"), ("GET", "/inspect"), ("GET", "/stats"),
                ("POST", "/sessions/{session_id}/evaluate"), ("GET", "/healthz"),
                ("GET", "/metrics"), ("POST", "/tokens"), ("GET", "/openapi.json")}
    assert required <= documented
    for ep in ENDPOINTS:
        op = doc["paths"][ep.path][ep.method.lower()]
        assert op["operationId"] == ep.name and str(ep.ok) in op["responses"]
        if ep.body is not None:  # the validating schema itself, not a copy that may drift
            assert op["requestBody"]["content"]["application/json"]["schema"] == ep.body
            assert "400" in op["responses"] and "413" in op["responses"]
        for param in op.get("parameters", []):
            source = ep.query if param["in"] == "query" else path_schema(ep)
            assert source is not None
            assert param["schema"] == source["properties"][param["name"]]
        assert ("401" in op["responses"]) == (ep.access != "public")
    chat = doc["paths"]["/chat"]["post"]
    assert "select fact memory" in chat["description"]
    assert "503 facts_disabled" in chat["description"]
    memory = chat["requestBody"]["content"]["application/json"]["schema"]["properties"]
    assert memory["memory"]["pattern"] == "^[A-Za-z0-9_-]{1,128}$"


async def test_schemathesis_finds_no_server_error(tmp_path: Path) -> None:
    st = Path(sys.executable).parent / "st"
    async with running(tmp_path / "home") as (serving, _):
        result = await trio.run_process(
            [str(st), "run", f"{serving.url}/openapi.json",
             "-H", f"Authorization: Bearer {serving.admin_token}",
             "--checks", "not_a_server_error", "--max-examples", "20",
             "--phases", "examples,coverage,fuzzing", "--seed", "20261203",
             "--workers", "1", "--request-timeout", "30", "--no-color",
             "--generation-database", "none"],
            capture_stdout=True, capture_stderr=True, check=False, cwd=tmp_path)
    out = result.stdout.decode() + result.stderr.decode()
    assert result.returncode == 0, out[-4000:]
    n = len(ENDPOINTS) - 1  # schemathesis leaves out the document's own /openapi.json
    assert f"{n}/{n}" in out and " passed" in out
