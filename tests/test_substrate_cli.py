"""CLI helpers: verify, dump and stats, as functions, via argparse, and as python -m."""

from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from lxml import etree

from substrate import KeyRing, KeySource, open_substrate
from substrate.cli import cmd_dump, cmd_stats, cmd_verify, main, register
from substrate.crypto import format_ring

KEY = bytes(range(32))
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("SOLACE_SUBSTRATE_KEY", raising=False)
    (tmp_path / "substrate.key").write_text(format_ring(KeyRing.single(KEY)))
    with open_substrate(tmp_path) as sub:
        sub.append("Main", "message", "line one\nline two\r\n", attrs={"dia_id": "D1:3"}, ts=1.0)
        sub.append("Mood", "reflection", "calm & <steady>", ts=2.0)
        sub.append("Main", "cue", "c", ts=3.0)
    return tmp_path


def test_verify_prints_a_summary_and_returns_zero(home: Path) -> None:
    out = io.StringIO()
    assert cmd_verify(home, KeySource(), out=out) == 0
    assert out.getvalue().startswith("ok: 3 events in 1 segments")


def test_verify_fails_with_one_on_damage(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    seg = home / "seg-000001.sol"
    buf = bytearray(seg.read_bytes())
    buf[20] ^= 1
    seg.write_bytes(bytes(buf))
    assert cmd_verify(home, KeySource(), out=io.StringIO()) == 1
    assert "CorruptFrameError" in capsys.readouterr().err


def test_dump_writes_one_event_per_line_inside_an_events_root(home: Path) -> None:
    out = io.StringIO()
    assert cmd_dump(home, agent=None, kind=None, since=None, out=out) == 0
    lines = out.getvalue().splitlines()
    assert lines[0] == "<events>" and lines[-1] == "</events>" and len(lines) == 5
    root = etree.fromstring(out.getvalue().encode())
    assert [e.get("id") for e in root] == ["1", "2", "3"]
    assert root[0][0].text == "line one\nline two\r\n" and root[1][0].text == "calm & <steady>"
    out = io.StringIO()
    assert cmd_dump(home, agent="Main", kind=None, since=1, out=out) == 0
    assert [e.get("id") for e in etree.fromstring(out.getvalue().encode())] == ["3"]


def test_stats_prints_counts(home: Path) -> None:
    out = io.StringIO()
    assert cmd_stats(home, out=out) == 0
    text = out.getvalue()
    assert "events: 3" in text and "agent Main: 2" in text and "kind cue: 1" in text


def test_commands_never_create_a_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("SOLACE_SUBSTRATE_KEY", raising=False)
    assert cmd_stats(tmp_path) == 1
    assert "MissingKeyError" in capsys.readouterr().err
    assert not (tmp_path / "substrate.key").exists()
    assert cmd_verify(tmp_path / "nope", None) == 1


def test_register_adds_substrate_commands_to_another_cli(home: Path) -> None:
    parser = argparse.ArgumentParser(prog="solace")
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["substrate", "dump", str(home), "--kind", "cue"])
    assert args.func(args) == 0
    assert main(["verify", str(home)]) == 0


def test_python_dash_m_substrate_runs_without_solace(home: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("SOLACE_SUBSTRATE_KEY", None)
    done = subprocess.run(
        [sys.executable, "-m", "substrate", "verify", str(home)],
        capture_output=True, text=True, env=env, check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ok: 3 events")


def test_the_substrate_package_imports_nothing_from_solace() -> None:
    code = (
        "import sys, substrate, substrate.aio, substrate.cli; "
        "bad = sorted(m for m in sys.modules if m == 'solace' or m.startswith('solace.')); "
        "assert not bad, bad"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, check=False)
    assert done.returncode == 0, done.stderr
