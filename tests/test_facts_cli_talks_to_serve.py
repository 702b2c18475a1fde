"""While `solace serve` holds a home, `solace memory ...` asks it over HTTP (the /memory
endpoints) and prints what the local path prints for the same memory; once the server
stops, the same commands open the home themselves and see what was written remotely."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # each command starts a Python process

CONFIG = ('[models]\nembedder = "hashing"\nllm_backend = "none"\n'
          '[stores.crm]\nextraction_mode = "none"\n')
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "SOLACE_SUBSTRATE_KEY": ""}


def _argv(tmp_path: Path, home: Path, *command: str) -> list[str]:
    config = tmp_path / "solace.toml"
    config.write_text(CONFIG)
    return [sys.executable, "-m", "solace.surfaces.cli.main", "--config", str(config), *command,
            "--home", str(home)]


def memory(tmp_path: Path, home: Path, *command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(_argv(tmp_path, home, "memory", *command), capture_output=True,
                          text=True, env=ENV, timeout=120)


def test_memory_commands_talk_to_a_serving_process_then_work_locally(
        tmp_path: Path) -> None:
    home = tmp_path / "home"
    rows = tmp_path / "rows.csv"
    rows.write_text("memory_id,text\nc1,Prefers email over phone\nc2,Pays by card\n")
    proc = subprocess.Popen(_argv(tmp_path, home, "serve", "--port", "0"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    remote: dict[tuple[str, ...], str] = {}
    try:
        assert proc.stdout is not None
        for _ in range(20):
            if "Solace is serving on" in proc.stdout.readline():
                break
        assert (home / "serve.json").exists()
        done = memory(tmp_path, home, "remember", "acme", "Acme wants invoices in French",
                      "--importance", "0.8")
        assert done.returncode == 0 and done.stdout.startswith("ADD "), done.stderr
        done = memory(tmp_path, home, "import", str(rows), "--store", "crm")
        assert done.stdout == "imported 2 rows into store crm: ADD 2\n", done.stderr
        for cmd in (("ids",), ("ids", "--store", "crm"), ("facts", "acme"),
                    ("facts", "acme", "--all", "--json"), ("export", "c1"),
                    ("recall", "acme", "invoices French", "--json")):
            done = memory(tmp_path, home, *cmd)
            assert done.returncode == 0, (cmd, done.stderr)
            remote[cmd] = done.stdout
        assert remote[("ids",)] == "acme\nc1\nc2\n" and remote[("ids", "--store", "crm")] \
            == "c1\nc2\n"
        recalled = json.loads(remote[("recall", "acme", "invoices French", "--json")])
        assert recalled["facts"][0]["text"] == "Acme wants invoices in French"
        fact_id = json.loads(remote[("facts", "acme", "--all", "--json")])[0]["id"]
        missing = memory(tmp_path, home, "delete", "acme", "f-nope")
        assert missing.returncode == 1 and len(missing.stderr.splitlines()) == 1
        assert "'f-nope'" in missing.stderr and "Traceback" not in missing.stderr
        assert memory(tmp_path, home, "forget", "c2").stdout == "forgot 1 facts of c2\n"
        assert memory(tmp_path, home, "consolidate", "acme").returncode == 0
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err[-3000:]

    for cmd, before in remote.items():
        if cmd[0] == "ids":
            before = before.replace("c2\n", "")  # forgotten remotely
        done = memory(tmp_path, home, *cmd)
        assert done.returncode == 0, (cmd, done.stderr)
        assert done.stdout == before, cmd  # one formatting path, local and remote
    assert memory(tmp_path, home, "delete", "acme", fact_id).stdout == f"deleted {fact_id}\n"
