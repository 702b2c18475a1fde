"""`solace run` driven end to end as a subprocess, plus `solace recall` and `import`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # each test starts Python processes

CONFIG = """
[models]
embedder = "hashing"
llm_backend = "none"

[substrate]
fsync = "always"
"""


def solace(tmp_path: Path, *args: str, stdin: str = "", timeout: float = 120) -> tuple[str, str]:
    config = tmp_path / "solace.toml"
    config.write_text(CONFIG)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "SOLACE_SUBSTRATE_KEY": ""}
    done = subprocess.run(
        [sys.executable, "-m", "solace.surfaces.cli.main", "--config", str(config), *args],
        input=stdin, capture_output=True, text=True, timeout=timeout, env=env, check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout, done.stderr


def start(tmp_path: Path, home: Path, *extra: str, stdin: int | None = subprocess.PIPE
          ) -> subprocess.Popen[str]:
    config = tmp_path / "solace.toml"
    config.write_text(CONFIG)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "SOLACE_SUBSTRATE_KEY": ""}
    return subprocess.Popen(
        [sys.executable, "-m", "solace.surfaces.cli.main", "--config", str(config), "run",
         "--home", str(home), *extra],
        stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )


def read_until(stream, needle: str, deadline: float) -> str:  # type: ignore[no-untyped-def]
    seen = []
    while time.monotonic() < deadline:
        line = stream.readline()
        if not line:
            break
        seen.append(line)
        if needle in line:
            return "".join(seen)
    raise AssertionError(f"{needle!r} never appeared in:\n{''.join(seen)[-2000:]}")


def test_repl_speaks_and_recall_finds_the_message_after_restart(tmp_path: Path) -> None:
    home = tmp_path / "home"
    out, _ = solace(tmp_path, "run", "--home", str(home), "--exit-on-eof",
                    stdin="My cat is named Biscuit.\n/hyperfocus on\n/inspect Supervisor\n/quit\n")
    assert "Solace: I can't reach my language model right now" in out  # Main's fallback
    assert "hyperfocus on" in out and "budget_tokens: 24000" in out
    out, _ = solace(tmp_path, "run", "--home", str(home), "--exit-on-eof",
                    stdin="/recall Biscuit\n")
    assert any(" user " in line and line.endswith("My cat is named Biscuit.")
               for line in out.splitlines())


def test_unattended_run_logs_status_and_exits_cleanly_on_sigterm(tmp_path: Path) -> None:
    home = tmp_path / "home"
    proc = start(tmp_path, home, "--verbose", stdin=subprocess.DEVNULL)
    try:
        assert proc.stderr is not None
        read_until(proc.stderr, "running unattended", time.monotonic() + 90)
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert "SIGTERM received" in err
    assert any((home / "memory" / "Main").iterdir())  # snapshotted on the way out


def test_a_crash_loses_nothing_acknowledged(tmp_path: Path) -> None:
    home = tmp_path / "home"
    proc = start(tmp_path, home)
    try:
        assert proc.stdin is not None and proc.stdout is not None
        read_until(proc.stdout, "listening", time.monotonic() + 90)
        proc.stdin.write("Remember the code word Zanzibar.\n")
        proc.stdin.flush()
        read_until(proc.stdout, "Solace:", time.monotonic() + 60)
    finally:
        proc.kill()  # SIGKILL: no snapshot, no flush beyond what was acknowledged
        proc.communicate(timeout=30)
    out, _ = solace(tmp_path, "recall", "Zanzibar", "--home", str(home), "-k", "3")
    assert "user: Remember the code word Zanzibar." in out


def test_import_locomo_replays_a_conversation_at_its_dates_and_recall_finds_it(
    tmp_path: Path,
) -> None:
    data = [{
        "sample_id": "conv-x",
        "conversation": {
            "speaker_a": "Ana", "speaker_b": "Ben",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a greyhound yesterday!"},
                {"speaker": "Ben", "dia_id": "D1:2", "text": "Congrats! What is its name?"},
            ],
            "session_2_date_time": "10:00 am on 20 May, 2023",
            "session_2": [
                {"speaker": "Ana", "dia_id": "D2:1", "text": "Pixel loves the beach."},
            ],
        },
        "qa": [],
    }]
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(data))
    home = tmp_path / "home"
    out, _ = solace(tmp_path, "import", "locomo", str(path), "--conversation", "conv-x",
                    "--home", str(home))
    assert "conv-x: 3 turns in 2 sessions" in out
    out, _ = solace(tmp_path, "recall", "greyhound", "--home", str(home), "-k", "2")
    assert "greyhound" in out
