"""Imports are idempotent and resumable: each event is keyed by its source, a re-import
skips what the home holds and says how many, and Ctrl-C exits 130 saying how many events
were kept; running the command again imports exactly the rest."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from solace.config import Config
from solace.home import Home
from solace.importing import IMPORT_KEY, ImportFormatError, load_jsonl
from solace.locomo import import_key, load_locomo, session_items
from solace.runtime import extra_kinds
from substrate import KeySource, open_substrate

CONFIG = '[models]\nembedder = "hashing"\nllm_backend = "none"\n'
# Resuming is about the substrate's import keys; distilling 30,000 lines into facts and
# daily logs (tested in tests/test_workspace_wired_import_and_cli.py) would only slow it.
RAW_CONFIG = CONFIG + "[facts]\nenabled = false\n[workspace]\nenabled = false\n"
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "SOLACE_SUBSTRATE_KEY": ""}

LOCOMO = [{
    "sample_id": "conv-x",
    "conversation": {
        "speaker_a": "Ana", "speaker_b": "Ben",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a greyhound yesterday!"},
            {"speaker": "Ben", "dia_id": "D1:2", "text": "Congrats! What is its name?"},
        ],
        "session_2_date_time": "10:00 am on 20 May, 2023",
        "session_2": [{"speaker": "Ana", "dia_id": "D2:1", "text": "Pixel loves the beach."}],
    },
    "qa": [],
}]


def solace(tmp_path: Path, *args: str | Path,
           config_text: str = CONFIG) -> subprocess.CompletedProcess[str]:
    config = tmp_path / "solace.toml"
    config.write_text(config_text)
    return subprocess.run(
        [sys.executable, "-m", "solace", "--config", str(config), *map(str, args)],
        capture_output=True, text=True, timeout=300, env=ENV, check=False,
    )


def imported(home: Path) -> Counter[str]:
    """How many events of each import key the home's substrate holds."""
    where = Home(home.resolve(), Config())
    keys = KeySource(key_file=where.key_file, env_var=None, create=False)
    with open_substrate(where.substrate_dir, key_source=keys, read_only=True, fsync="never",
                        extra_kinds=extra_kinds(Config())) as sub:
        return Counter(e.attrs[IMPORT_KEY] for e in sub.scan(kind="message")
                       if IMPORT_KEY in e.attrs)


def jsonl_lines(n: int) -> str:
    return "".join(
        json.dumps({"speaker": "Ana" if i % 2 else "Ben", "at": 1_683_554_160 + 30 * i,
                    "text": f"Walk {i}: we took dog number {i} to the park by the river."}) + "\n"
        for i in range(n)
    )


# ------------------------------------------------------------------- keys, in-process


def test_jsonl_keys_depend_on_content_not_position(tmp_path: Path) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    lines = jsonl_lines(3).splitlines(keepends=True)
    a.write_text("".join(lines))
    b.write_text("\n" + lines[2] + lines[0] + lines[1])  # moved, with a blank line
    assert {i.key for i in load_jsonl(a)} == {i.key for i in load_jsonl(b)}
    same = tmp_path / "same.jsonl"
    same.write_text(lines[0] * 2)
    keys = [i.key for i in load_jsonl(same)]
    assert len(set(keys)) == 2 and keys[0].endswith(":0") and keys[1].endswith(":1")


def test_jsonl_ids_key_lines_and_a_reused_id_is_refused_by_line(tmp_path: Path) -> None:
    path = tmp_path / "ids.jsonl"
    path.write_text('{"id": "m1", "speaker": "A", "text": "hi", "at": "2024-01-01T00:00"}\n'
                    '{"id": 7, "speaker": "B", "text": "yo", "at": 1704067260}\n')
    items = load_jsonl(path)
    assert [i.key for i in items] == ["jsonl:id:m1", "jsonl:id:7"]
    assert items[0].at == 1_704_067_200.0  # naive ISO time is UTC
    path.write_text('{"id": "m1", "speaker": "A", "text": "hi", "at": 0}\n'
                    '{"id": "m1", "speaker": "A", "text": "again", "at": 0}\n')
    with pytest.raises(ImportFormatError, match=r"line 2: \"id\" 'm1' already used on line 1"):
        load_jsonl(path)


def test_locomo_turns_are_keyed_by_conversation_and_dia_id(tmp_path: Path) -> None:
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(LOCOMO))
    (conv,) = load_locomo(path)
    batches = session_items(conv)
    assert [[i.key for i in b] for b in batches] == [
        ["locomo:conv-x:D1:1", "locomo:conv-x:D1:2"], ["locomo:conv-x:D2:1"]]
    assert import_key("conv-x", "D2:1") == batches[1][0].key
    assert dict(batches[0][1].attrs) == {"dia_id": "D1:2"}


# ---------------------------------------------------------------- through the command


@pytest.mark.slow
def test_a_locomo_reimport_skips_every_turn_and_says_so(tmp_path: Path) -> None:
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(LOCOMO))
    home = tmp_path / "home"
    first = solace(tmp_path, "import", "locomo", path, "--home", home)
    assert first.returncode == 0, first.stderr
    assert "conv-x: 3 turns in 2 sessions" in first.stdout
    assert "imported 3 new events" in first.stdout and "(0 already there" in first.stdout
    again = solace(tmp_path, "import", "locomo", path, "--home", home, "--conversation", "conv-x")
    assert again.returncode == 0, again.stderr
    assert "imported 0 new events" in again.stdout and "(3 already there, skipped)" in again.stdout
    counts = imported(home)
    assert counts == Counter({"locomo:conv-x:D1:1": 1, "locomo:conv-x:D1:2": 1,
                              "locomo:conv-x:D2:1": 1})


@pytest.mark.slow
def test_a_jsonl_file_that_grew_imports_only_its_new_lines(tmp_path: Path) -> None:
    path, home = tmp_path / "talk.jsonl", tmp_path / "home"
    path.write_text(jsonl_lines(5))
    assert solace(tmp_path, "import", "jsonl", path, "--home", home).returncode == 0
    path.write_text(jsonl_lines(7))
    grown = solace(tmp_path, "import", "jsonl", path, "--home", home)
    assert grown.returncode == 0, grown.stderr
    assert "imported 2 new events" in grown.stdout and "(5 already there, skipped)" in grown.stdout
    counts = imported(home)
    assert len(counts) == 7 and set(counts.values()) == {1}
    recall = solace(tmp_path, "recall", "dog number 6", "--home", home, "-k", "1")
    assert recall.returncode == 0 and "Walk 6:" in recall.stdout, recall.stderr


def _interruptible() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # Python then raises KeyboardInterrupt


def _segment_bytes(home: Path) -> int:
    return sum(p.stat().st_size for p in (home / "substrate").glob("seg-*"))


@pytest.mark.slow
def test_ctrl_c_during_an_import_exits_130_and_a_rerun_resumes_without_duplicates(
    tmp_path: Path,
) -> None:
    total = 30_000
    path, home = tmp_path / "big.jsonl", tmp_path / "home"
    path.write_text(jsonl_lines(total))
    config = tmp_path / "solace.toml"
    config.write_text(RAW_CONFIG)
    proc = subprocess.Popen(
        [sys.executable, "-m", "solace", "--config", str(config), "import", "jsonl", str(path),
         "--home", str(home)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV,
        # Ctrl-C as a terminal delivers it: a suite started in the background by a
        # non-interactive shell runs with SIGINT ignored, which a child would inherit
        # (and rightly keep: a background job is not interrupted by the terminal).
        preexec_fn=_interruptible,
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if (home / "substrate").is_dir() and _segment_bytes(home) > 64_000:
                break  # a few batches are in
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert "Traceback" not in err, err
    assert proc.returncode == 130, err
    (line,) = err.strip().splitlines()
    assert line.startswith("solace import jsonl: interrupted: ")
    assert "run the same command again" in line
    kept = int(line.split("interrupted: ")[1].split()[0])
    assert f"{kept} of the {total} events" in line
    counts = imported(home)
    assert sum(counts.values()) == kept and 0 < kept < total

    rerun = solace(tmp_path, "import", "jsonl", path, "--home", home, config_text=RAW_CONFIG)
    assert rerun.returncode == 0, rerun.stderr
    assert f"imported {total - kept} new events" in rerun.stdout
    assert f"({kept} already there, skipped)" in rerun.stdout
    counts = imported(home)
    assert len(counts) == total and set(counts.values()) == {1}  # every line once


@pytest.mark.slow
def test_a_terminal_sees_a_progress_bar_with_rate_and_eta(tmp_path: Path) -> None:
    import fcntl
    import pty
    import struct
    import termios

    path, home = tmp_path / "talk.jsonl", tmp_path / "home"
    path.write_text(jsonl_lines(300))
    config = tmp_path / "solace.toml"
    config.write_text(CONFIG)
    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 120, 0, 0))
    proc = subprocess.Popen(
        [sys.executable, "-m", "solace", "--config", str(config), "import", "jsonl", str(path),
         "--home", str(home)],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=terminal, env=ENV,
    )
    os.close(terminal)
    seen = b""
    while True:
        try:
            chunk = os.read(controller, 4096)
        except OSError:  # the terminal closed with the process
            break
        if not chunk:
            break
        seen += chunk
    os.close(controller)
    assert proc.wait(timeout=120) == 0
    screen = seen.decode("utf-8", "replace")
    assert "Traceback" not in screen
    assert "import: 100%" in screen and "300/300" in screen
    assert "event/s]" in screen and "<00:00" in screen  # rate and ETA


def test_a_locomo_turn_observe_would_refuse_stops_the_import_before_it_starts(
    tmp_path: Path,
) -> None:
    data = json.loads(json.dumps(LOCOMO))
    data[0]["conversation"]["session_2"][0]["text"] = "   "
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(data))
    (conv,) = load_locomo(path)
    with pytest.raises(ImportFormatError, match=r"conversation conv-x turn D2:1: text"):
        session_items(conv)
