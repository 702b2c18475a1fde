"""`solace serve` as a process: it prints where it listens, writes HOME/serve.json 0600,
answers HTTP, and SIGTERM or SIGINT stop it cleanly (exit 0, serve.json removed,
snapshots written, the home free again)."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

pytestmark = pytest.mark.slow  # each test starts a Python process

CONFIG = '[models]\nembedder = "hashing"\nllm_backend = "none"\n'


def start(tmp_path: Path, home: Path, *extra: str) -> subprocess.Popen[str]:
    config = tmp_path / "solace.toml"
    config.write_text(CONFIG)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "SOLACE_SUBSTRATE_KEY": ""}
    return subprocess.Popen(
        [sys.executable, "-m", "solace.surfaces.cli.main", "--config", str(config), "serve",
         "--home", str(home), *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_serve_answers_then_stops_cleanly_on_a_signal(tmp_path: Path, signum: int) -> None:
    home = tmp_path / "home"
    proc = start(tmp_path, home, "--port", "0")
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "Solace is serving on http://127.0.0.1:" in line, line + proc.stderr.read()
        served = home / "serve.json"
        assert stat.S_IMODE(served.stat().st_mode) == 0o600
        info = json.loads(served.read_text())
        assert line.split()[4] == info["url"] and info["pid"] == proc.pid
        headers = {"Authorization": f"Bearer {info['admin_token']}"}
        r = httpx.post(f"{info['url']}/observe", headers=headers, timeout=30,
                       json={"text": "the spare key is under the mat", "speaker": "user"})
        assert r.status_code == 201
        hits = httpx.get(f"{info['url']}/recall", params={"query": "spare key"},
                         headers=headers, timeout=30).json()["hits"]
        assert "spare key" in hits[0]["text"]
    finally:
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err[-3000:]
    assert "Traceback" not in err
    assert not served.exists()
    assert any((home / "memory" / "Main").iterdir())


def test_a_port_out_of_range_is_a_usage_error(tmp_path: Path) -> None:
    proc = start(tmp_path, tmp_path / "home", "--port", "70000")
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 2 and "--port must be within 0..65535, got 70000" in err
    assert not (tmp_path / "home").exists()
