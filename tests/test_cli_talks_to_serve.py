"""While a process serves a home, the CLI commands for that home talk to it over HTTP
(HOME/serve.json gives the url and the admin token) and print what the local path
prints (topics show and notes replace included); once it stops, the same commands open
the home themselves. A stale serve.json (its pid gone) does not hide the lock error.
`solace run --serve` keeps the REPL and serves HTTP from one process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

pytestmark = pytest.mark.slow  # each test starts Python processes

CONFIG = '[models]\nembedder = "hashing"\nllm_backend = "none"\n'
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "SOLACE_SUBSTRATE_KEY": ""}


def _config(tmp_path: Path) -> Path:
    config = tmp_path / "solace.toml"
    config.write_text(CONFIG)
    return config


def start(tmp_path: Path, home: Path, *command: str,
          stdin: int | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "solace.surfaces.cli.main", "--config", str(_config(tmp_path)),
         *command, "--home", str(home)],
        stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)


def solace(tmp_path: Path, home: Path, *command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "solace.surfaces.cli.main", "--config", str(_config(tmp_path)),
         *command, "--home", str(home)],
        capture_output=True, text=True, env=ENV, timeout=120)


def wait_for_line(proc: subprocess.Popen[str], needle: str) -> str:
    assert proc.stdout is not None
    for _ in range(20):
        line = proc.stdout.readline()
        if needle in line or not line:
            break
    if needle not in line:
        proc.kill()
        raise AssertionError(f"no {needle!r} line; stderr: {proc.communicate()[1][-3000:]}")
    return line


def test_commands_talk_to_a_serving_process_then_work_locally_once_it_stops(
        tmp_path: Path) -> None:
    home = tmp_path / "home"
    proc = start(tmp_path, home, "serve", "--port", "0")
    try:
        wait_for_line(proc, "Solace is serving on")
        info = json.loads((home / "serve.json").read_text())
        r = httpx.post(f"{info['url']}/observe", timeout=30,
                       headers={"Authorization": f"Bearer {info['admin_token']}"},
                       json={"text": "the spare key is under the mat", "speaker": "user"})
        assert r.status_code == 201
        headers = {"Authorization": f"Bearer {info['admin_token']}"}
        r = httpx.post(f"{info['url']}/chat", timeout=60, headers=headers,
                       json={"message": "Let us plan the garden beds."})
        assert r.status_code == 200, r.text
        topic = httpx.get(f"{info['url']}/topics", headers=headers,
                          timeout=30).json()["topics"][-1]["topic_id"]

        remote = {}
        for cmd in (("facts", "set", "editor", "helix"), ("facts", "get", "editor"),
                    ("facts", "get"), ("topics", "list"), ("recall", "spare key", "-k", "3"),
                    ("notes", "add", topic, "buy compost"),
                    ("notes", "replace", topic, "buy seeds instead"),
                    ("notes", "show", topic), ("topics", "show", topic)):
            done = solace(tmp_path, home, *cmd)
            assert done.returncode == 0, (cmd, done.stderr)
            remote[cmd] = done.stdout
        assert remote[("facts", "set", "editor", "helix")] == "editor = helix\n"
        assert remote[("facts", "get", "editor")] == "helix\n"
        assert remote[("facts", "get")] == "editor: helix\n"
        assert "spare key is under the mat" in remote[("recall", "spare key", "-k", "3")]
        shown = remote[("notes", "show", topic)]
        assert shown == "buy seeds instead\n"  # replaced, not appended to
        detail = remote[("topics", "show", topic)]
        assert detail.startswith(f"topic {topic} ")
        assert "user: Let us plan the garden beds." in detail
        assert shown in detail  # the notes, then the thread
        missing = solace(tmp_path, home, "facts", "get", "nope")
        assert missing.returncode == 1
        assert missing.stderr.startswith("solace facts get: no durable fact 'nope'")
        assert len(missing.stderr.splitlines()) == 1
        scoped = solace(tmp_path, home, "facts", "get", "--user", "bob")
        assert scoped.returncode == 1 and "default scope only" in scoped.stderr
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err[-3000:]
    assert not (home / "serve.json").exists()

    for cmd in (("facts", "get", "editor"), ("facts", "get"), ("topics", "list"),
                ("notes", "show", topic), ("topics", "show", topic)):
        done = solace(tmp_path, home, *cmd)
        assert done.returncode == 0, (cmd, done.stderr)
        assert done.stdout == remote[cmd], cmd  # one formatting path, local and remote
    local = solace(tmp_path, home, "recall", "spare key", "-k", "3")
    assert local.returncode == 0 and "spare key is under the mat" in local.stdout


def test_workspace_commands_ask_the_serving_process(tmp_path: Path) -> None:
    home = tmp_path / "home"
    proc = start(tmp_path, home, "serve", "--port", "0")
    try:
        wait_for_line(proc, "Solace is serving on")
        user = home / "workspace" / "USER.md"
        user.write_text(user.read_text() + "\n- Grows tomatoes on the balcony\n")
        out = {}
        for cmd in (("workspace", "reload"), ("workspace", "synthesize"),
                    ("workspace", "export", str(tmp_path / "out"))):
            done = solace(tmp_path, home, *cmd)
            assert done.returncode == 0, (cmd, done.stderr)
            out[cmd[1]] = done.stdout
        assert "USER.md: +1" in out["reload"] and "session context" in out["reload"]
        assert out["synthesize"].startswith("MEMORY.md: ")
        assert out["export"].startswith("exported ")
        assert "Grows tomatoes" in (tmp_path / "out" / "USER.md").read_text()
        inside = solace(tmp_path, home, "workspace", "export", str(home / "workspace" / "x"))
        assert inside.returncode == 1 and "inside the workspace" in inside.stderr
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err[-3000:]


def test_an_import_goes_to_the_serving_process_and_never_twice(tmp_path: Path) -> None:
    home = tmp_path / "home"
    lines = tmp_path / "chat.jsonl"
    lines.write_text('{"speaker": "Ana", "text": "I adopted a greyhound", "at": 1683554160}\n'
                     '{"speaker": "Ben", "text": "What is its name?", "at": 1683554220}\n')
    proc = start(tmp_path, home, "serve", "--port", "0")
    try:
        wait_for_line(proc, "Solace is serving on")
        first = solace(tmp_path, home, "import", "jsonl", str(lines))
        assert first.returncode == 0, first.stderr
        assert "imported 2 new events" in first.stdout and "(0 already there" in first.stdout
        assert "serving the home" in first.stdout
        again = solace(tmp_path, home, "import", "jsonl", str(lines))
        assert "imported 0 new events" in again.stdout and "(2 already there" in again.stdout
        found = solace(tmp_path, home, "recall", "greyhound", "-k", "3")
        assert "greyhound" in found.stdout
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err[-3000:]


def test_a_stale_serve_file_keeps_the_lock_error(tmp_path: Path) -> None:
    home = tmp_path / "home"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    proc = start(tmp_path, home, "run", stdin=subprocess.PIPE)
    try:
        wait_for_line(proc, "Solace is listening")
        (home / "serve.json").write_text(json.dumps({
            "host": "127.0.0.1", "port": 9, "url": "http://127.0.0.1:9",
            "pid": int(dead.stdout), "admin_token": "x"}))
        done = solace(tmp_path, home, "facts", "get")
        assert done.returncode == 1
        assert done.stderr.startswith("solace facts get: another process holds this home")
        assert len(done.stderr.strip().splitlines()) == 1
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err[-3000:]


def test_run_serve_keeps_the_repl_and_answers_http(tmp_path: Path) -> None:
    home = tmp_path / "home"
    proc = start(tmp_path, home, "run", "--serve", "--port", "0", "--exit-on-eof",
                 stdin=subprocess.PIPE)
    assert proc.stdin is not None
    try:
        line = wait_for_line(proc, "Solace is serving on")
        info = json.loads((home / "serve.json").read_text())
        assert info["pid"] == proc.pid and info["url"] in line
        assert httpx.get(f"{info['url']}/healthz", timeout=30).json() == {"status": "ok"}
        done = solace(tmp_path, home, "facts", "set", "pet", "cat")
        assert done.returncode == 0 and done.stdout == "pet = cat\n", done.stderr
        listing = solace(tmp_path, home, "topics", "list")
        assert listing.returncode == 0, listing.stderr
        tid = listing.stdout.split()[1]  # "* t1 ...": the REPL's session's active topic
        assert listing.stdout.startswith(f"* {tid}")
        added = solace(tmp_path, home, "notes", "add", tid, "first idea")
        assert added.returncode == 0 and "first idea" in added.stdout, added.stderr
        shown = solace(tmp_path, home, "notes", "show", tid)
        assert shown.returncode == 0 and shown.stdout == added.stdout, shown.stderr
        kept = solace(tmp_path, home, "topics", "promote", tid)
        assert kept.returncode == 0 and kept.stdout == f"{tid}: promoted\n", kept.stderr
        show = solace(tmp_path, home, "topics", "show", tid)
        assert show.returncode == 0, show.stderr
        assert show.stdout.startswith(f"topic {tid} ") and "state: promoted" in show.stdout
        assert "notes:\nfirst idea\nthread:" in show.stdout
        proc.stdin.write("/facts\n")
        proc.stdin.flush()
        wait_for_line(proc, "pet: cat")  # the REPL sees what the HTTP side wrote
    finally:
        out, err = proc.communicate(timeout=60)  # closes stdin: the REPL's end of input
    assert proc.returncode == 0, err[-3000:]
    assert "Traceback" not in err
    assert not (home / "serve.json").exists()
