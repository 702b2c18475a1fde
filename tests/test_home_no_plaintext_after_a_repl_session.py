"""Nothing the user typed is left in plaintext under the home after a REPL session:
not in the log file (0600, events by count and id), nor anywhere else."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # starts Python processes

CONFIG = """
[models]
embedder = "hashing"
llm_backend = "none"

[substrate]
fsync = "always"
"""
MARKER = "Zq7marker-Reykjavik"
SECRET = "sk-proj-abcdefghijklmnopqrstuvwx1234"


def run_session(tmp_path: Path, home: Path, lines: list[str]) -> None:
    config = tmp_path / "solace.toml"
    config.write_text(CONFIG)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "SOLACE_SUBSTRATE_KEY": ""}
    done = subprocess.run(
        [sys.executable, "-m", "solace.cli.main", "--config", str(config), "run",
         "--home", str(home), "--exit-on-eof"],
        input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=240, env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]


def test_a_repl_session_leaves_no_typed_text_in_plaintext_under_the_home(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    typed = [f"My password is hunter2 and my key is {SECRET}; remember {MARKER}.",
             f"What do you remember about {MARKER}?", "/newtopic", "/quit"]
    run_session(tmp_path, home, typed)
    run_session(tmp_path, home, [f"/recall {MARKER}", "/quit"])  # a restart reads it back
    found = []
    for path in home.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            found += [f"{path.relative_to(home)}: {needle!r}"
                      for needle in (MARKER.encode(), b"hunter2", SECRET.encode())
                      if needle in data]
    assert found == []
    log = home / "solace.log"
    assert log.is_file() and stat.S_IMODE(log.stat().st_mode) == 0o600
