"""`solace mcp` over stdio, end to end with the `mcp` client library: the six tools
are listed with descriptions, remember then recall brings the text back with its
citation, notes answers through seed 000's tool, and a bad memory id is refused naming
the rule."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

pytestmark = pytest.mark.slow  # starts a Python process

CONFIG = '[models]\nembedder = "hashing"\nllm_backend = "none"\n'
TOOLS = {"remember", "recall", "recall_conversation", "notes", "important_info",
         "manage_topic_memory"}


def _params(tmp_path: Path, *extra: str) -> StdioServerParameters:
    config = tmp_path / "solace.toml"
    config.write_text(CONFIG)
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "solace.surfaces.cli.main", "--config", str(config), "mcp",
              "--home", str(tmp_path / "home"), *extra],
        env={**os.environ, "HF_HUB_OFFLINE": "1", "SOLACE_SUBSTRATE_KEY": ""},
        cwd=str(Path(__file__).resolve().parents[1]))


def _body(result: Any) -> dict[str, Any]:
    (content,) = result.content
    body: dict[str, Any] = json.loads(content.text)
    return body


async def test_stdio_lists_the_tools_and_remembers_then_recalls(tmp_path: Path) -> None:
    errlog = (tmp_path / "stderr.txt").open("w")
    try:
        async with (stdio_client(_params(tmp_path, "--memory", "alice_1"), errlog=errlog)
                    as (read, write), ClientSession(read, write) as session):
            await session.initialize()
            tools = {t.name: t for t in (await session.list_tools()).tools}
            assert set(tools) == TOOLS
            assert all(len(t.description or "") > 40 for t in tools.values())
            assert tools["remember"].input_schema["required"] == ["text"]

            stored = await session.call_tool(
                "remember", {"text": "The spare key is under the blue flowerpot"})
            assert not stored.is_error
            assert _body(stored)["class"] == "ADD"
            assert _body(stored)["memory_id"] == "alice_1"

            found = await session.call_tool("recall", {"query": "spare key", "k": 3})
            assert not found.is_error
            assert _body(found)["memory_id"] == "alice_1"
            (top, *_) = _body(found)["facts"]
            assert top["text"] == "The spare key is under the blue flowerpot"
            assert "blue flowerpot" in _body(found)["text"]
            other = await session.call_tool("recall", {"query": "spare key",
                                                       "memory_id": "bob_2"})
            assert not other.is_error and _body(other)["facts"] == []
            conv = await session.call_tool("recall_conversation", {"query": "spare key"})
            assert not conv.is_error and isinstance(_body(conv)["hits"], list)

            noted = await session.call_tool("notes", {"operation": "$set",
                                                      "content": "key: blue flowerpot"})
            assert not noted.is_error, _body(noted)
            read_back = await session.call_tool("notes", {"operation": "read"})
            assert "blue flowerpot" in json.dumps(_body(read_back))
            bad = await session.call_tool("notes", {"operation": "shred"})
            assert bad.is_error and _body(bad)["ok"] is False

            refused = await session.call_tool("recall", {"query": "   "})
            assert refused.is_error and "query" in _body(refused)["error"]
    finally:
        errlog.close()
    assert "Traceback" not in (tmp_path / "stderr.txt").read_text()
    log = (tmp_path / "home" / "solace.log").read_text()
    assert "serving MCP on stdio" in log and "alice_1" in log


def test_stdio_refuses_a_bad_memory_id_naming_the_rule(tmp_path: Path) -> None:
    params = _params(tmp_path, "--memory", "bob smith")
    proc = subprocess.run([params.command, *params.args], env=params.env, cwd=params.cwd,
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2 and proc.stdout == ""
    assert "'bob smith'" in proc.stderr and "letters, digits, '-' or '_'" in proc.stderr


async def test_stdio_relays_to_the_process_serving_the_home(tmp_path: Path) -> None:
    params = _params(tmp_path, "--memory", "carol_3")
    serve = subprocess.Popen(
        [params.command, *params.args[:4], "serve", "--home", str(tmp_path / "home"),
         "--port", "0"], env=params.env, cwd=params.cwd, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)
    errlog = (tmp_path / "stderr.txt").open("w")
    try:
        assert serve.stdout is not None and "serving on" in serve.stdout.readline()
        async with (stdio_client(params, errlog=errlog) as (read, write),
                    ClientSession(read, write) as session):
            await session.initialize()
            assert {t.name for t in (await session.list_tools()).tools} == TOOLS
            stored = await session.call_tool("remember", {"text": "Carol's locker is 42"})
            assert not stored.is_error and _body(stored)["memory_id"] == "carol_3"
        info = json.loads((tmp_path / "home" / "serve.json").read_text())
        facts = httpx.post(f"{info['url']}/memory/carol_3/recall", json={"query": "locker"},
                           headers={"Authorization": f"Bearer {info['admin_token']}"},
                           timeout=30).json()["facts"]
        assert [f["text"] for f in facts] == ["Carol's locker is 42"]  # in the served home
    finally:
        errlog.close()
        serve.send_signal(signal.SIGTERM)
        serve.communicate(timeout=60)
    assert serve.returncode == 0
    assert "Traceback" not in (tmp_path / "stderr.txt").read_text()
    assert "relayed to" in (tmp_path / "home" / "solace.log").read_text()
