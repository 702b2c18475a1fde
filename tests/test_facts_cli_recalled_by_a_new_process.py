"""Seed 004's end-to-end check from the command line: a fact remembered by `solace memory
remember` in one process is recalled by `solace memory recall` in a brand-new process
that shares no history (the default config: MiniLM, offline)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _solace(home: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "solace.surfaces.cli.main", "memory", *argv, "--home", str(home)],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "SOLACE_SUBSTRATE_KEY": ""})


def test_a_remembered_fact_is_recalled_by_a_new_process(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    for text in ("Maya's daughter starts school in Lisbon in September 2027",
                 "Maya is allergic to peanuts"):
        done = _solace(home, "remember", "maya", text)
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("ADD ")
    done = _solace(home, "recall", "maya", "which city will her daughter go to school in",
                   "--json")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["facts"][0]["text"].startswith("Maya's daughter starts school in Lisbon")
    assert "Lisbon" in answer["text"]
    other = _solace(home, "recall", "someone-else", "daughter school")
    assert other.returncode == 0 and other.stdout.strip() == "(nothing recalled)"
