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
from substrate.cli import cmd_dump, cmd_recover, cmd_stats, cmd_verify, main, register
from substrate.crypto import format_ring
from substrate.frame import MAGIC, check_frame

KEY = bytes(range(32))
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("SOLACE_SUBSTRATE_KEY", raising=False)
    (tmp_path / "substrate.key").write_text(format_ring(KeyRing.single(KEY)))
    (tmp_path / "substrate.key").chmod(0o600)
    with open_substrate(tmp_path) as sub:
        sub.append("Main", "message", "line one\nline two\r\n", attrs={"dia_id": "D1:3"}, ts=1.0)
        sub.append("Mood", "reflection", "calm & <steady>", ts=2.0)
        sub.append("Main", "cue", "c", ts=3.0)
    return tmp_path


def _last_frame(seg: Path) -> int:
    buf, pos, last = seg.read_bytes(), len(MAGIC), len(MAGIC)
    while pos < len(buf):
        size = check_frame(buf, pos, len(buf))
        assert isinstance(size, int)
        last, pos = pos, pos + size
    return last


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


def _snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every file and directory under ``root``: contents (files) and mode."""
    return {
        str(p.relative_to(root)): (p.read_bytes() if p.is_file() else b"", p.stat().st_mode)
        for p in sorted(root.rglob("*"))
    }


def test_commands_never_create_a_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("SOLACE_SUBSTRATE_KEY", raising=False)
    assert cmd_stats(tmp_path) == 1
    assert "no segments here" in capsys.readouterr().err
    assert cmd_verify(tmp_path / "nope", None) == 1
    assert cmd_dump(tmp_path / "nope" / "deeper") == 1
    assert _snapshot(tmp_path) == {}  # no key file, no directory, nothing
    (tmp_path / "seg-000001.sol").write_bytes(MAGIC)  # a log, but its key is gone
    for command in (cmd_verify, cmd_stats, cmd_dump):
        assert command(tmp_path) == 1  # type: ignore[operator]
        assert "MissingKeyError" in capsys.readouterr().err
    assert _snapshot(tmp_path).keys() == {"seg-000001.sol"}


def test_verify_pointed_at_a_home_suggests_its_substrate_dir(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    solace_home = home.parent / "solace-home"
    solace_home.mkdir()
    home.rename(solace_home / "substrate")
    assert cmd_verify(solace_home, KeySource()) == 1
    err = capsys.readouterr().err
    assert f"{solace_home}: no segments here; did you mean {solace_home / 'substrate'}?" in err
    assert "MissingKeyError" not in err and "Create the key file" not in err
    assert not (solace_home / "substrate.key").exists()


def test_verify_changes_no_file(home: Path) -> None:
    seg = home / "seg-000001.sol"
    with open(seg, "ab") as f:
        f.write(b"\x00" * 50)  # a torn tail, as a crash leaves it
    before = _snapshot(home)
    out = io.StringIO()
    assert cmd_verify(home, KeySource(), out=out) == 0
    assert cmd_stats(home, out=out) == 0
    assert cmd_dump(home, out=out) == 0
    assert _snapshot(home) == before  # same files, same bytes, same modes
    assert "50 bytes" in out.getvalue() and "left in place" in out.getvalue()
    assert "ok: 3 events" in out.getvalue()


def test_verify_refuses_a_log_shorter_than_its_anchor_naming_the_flag(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seg = home / "seg-000001.sol"
    last = _last_frame(seg)
    os.truncate(seg, last)
    before = _snapshot(home)
    assert cmd_verify(home, KeySource(), out=io.StringIO()) == 1
    err = capsys.readouterr().err
    assert "AnchorMismatchError" in err and "entry 3 is missing" in err
    assert f"recover {home} --accept-loss" in err
    assert _snapshot(home) == before
    assert main(["recover", str(home)]) == 1  # recover without the flag refuses too
    assert _snapshot(home) == before
    assert main(["recover", str(home), "--accept-loss"]) == 0
    assert "accepted loss" in capsys.readouterr().out
    out = io.StringIO()
    assert cmd_verify(home, KeySource(), out=out) == 0
    assert "ok: 2 events" in out.getvalue() and "anchored at entry 2" in out.getvalue()


def test_recover_cuts_a_torn_tail_and_saves_it(home: Path) -> None:
    seg = home / "seg-000001.sol"
    with open(seg, "ab") as f:
        f.write(b"torn")
    out = io.StringIO()
    assert cmd_recover(home, KeySource(), out=out) == 0
    assert "cut a torn tail of 4 bytes" in out.getvalue()
    (saved,) = home.glob("*.torn-*")
    assert saved.read_bytes() == b"torn"


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
