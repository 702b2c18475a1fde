"""Replayed history counts as lived (issue 10): ``solace import`` leaves a daily log for
every day that has imported events, each with a ``Conversation`` digest (a deterministic
extractive summary of the day's lines, at the day's last line's time; a line that taught
a fact is left to that fact) even when no fact was learned that day; a digest never holds
a secret; a re-import adds no second digest; and the digests are a projection: a rebuilt
workspace renders the same files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from solace.config import Config
from solace.home import Home
from solace.runtime import extra_kinds
from solace.surfaces.cli.main import main
from solace.workspace.events import digest_of
from substrate import KeySource, open_substrate

CONFIG = '[models]\nembedder = "hashing"\nllm_backend = "none"\n[substrate]\nfsync = "never"\n'

LINES = [  # (ISO time, speaker, text); the 9th teaches no fact
    ("2023-05-08T13:56:00Z", "Ana", "I adopted a greyhound called Pixel."),
    ("2023-05-08T13:57:00Z", "Ben", "Congrats! That is lovely news."),
    ("2023-05-09T09:10:00Z", "Ben", "The storm over Lisbon last night was wild."),
    ("2023-05-09T09:12:00Z", "Ana", "Pixel hid under the table until 3 am."),
    ("2023-05-11T18:30:00Z", "Ana", "I moved to Porto last month."),
    ("2023-05-11T18:31:00Z", "Ben", "Wow, enjoy the river views."),
]
SECRET = "sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"


def _write(path: Path, lines: list[tuple[str, str, str]]) -> Path:
    path.write_text("".join(json.dumps({"at": at, "speaker": s, "text": t}) + "\n"
                            for at, s, t in lines))
    return path


def _run(tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: str) -> str:
    config = tmp_path / "solace.toml"
    config.write_text(CONFIG)
    code = main([*args, "--home", str(tmp_path / "home"), "--config", str(config)])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def _logs(tmp_path: Path) -> dict[str, str]:
    daily = tmp_path / "home" / "workspace" / "memory"
    return {p.name: p.read_text() for p in sorted(daily.glob("*.md"))}


def _digests(tmp_path: Path) -> list[tuple[str, str]]:
    """(day, coverage) of every digest event in the home's substrate."""
    where = Home((tmp_path / "home").resolve(), Config())
    keys = KeySource(key_file=where.key_file, env_var=None, create=False)
    with open_substrate(where.substrate_dir, key_source=keys, read_only=True, fsync="never",
                        extra_kinds=extra_kinds(Config())) as sub:
        found = [digest_of(e.kind, e.content, e.attrs) for e in sub.scan(kind="workspace")]
    return [(d.day.isoformat(), d.coverage) for d in found if d is not None]


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


def test_every_imported_day_with_events_gets_a_daily_log(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _run(tmp_path, capsys, "import", "jsonl", str(_write(tmp_path / "c.jsonl", LINES)))
    logs = _logs(tmp_path)
    assert sorted(logs) == ["2023-05-08.md", "2023-05-09.md", "2023-05-11.md"]
    assert "## 2023-05-08 13:57 - Conversation" in logs["2023-05-08.md"]
    assert "## 2023-05-09 09:12 - Conversation" in logs["2023-05-09.md"]
    assert "## 2023-05-11 18:31 - Conversation" in logs["2023-05-11.md"]
    no_fact_day = logs["2023-05-09.md"]
    assert "Lisbon" in no_fact_day and "- Ben: " in no_fact_day, no_fact_day
    assert no_fact_day.count("## ") == 1  # no fact was learned: the digest alone
    assert "Pixel" in logs["2023-05-08.md"] and "Porto" in logs["2023-05-11.md"]
    # A line that taught a fact is in the log as that fact (which a deletion takes out
    # of every file), never in the digest.
    assert "- Ana adopted a greyhound called Pixel" in logs["2023-05-08.md"]
    assert "- Ana: I adopted" not in logs["2023-05-08.md"]
    assert "- Ben: Wow, enjoy the river views" in logs["2023-05-11.md"]
    every = "".join(logs.values())
    for _, _, text in LINES:
        assert text not in every  # distilled: never a transcript line


def test_an_imported_digest_never_holds_a_secret(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = [*LINES[:2],
             ("2023-05-08T14:00:00Z", "Ana", f"My api key is {SECRET}, keep it safe."),
             ("2023-05-08T14:01:00Z", "Ben", "The password is hunter2xyz!")]
    _run(tmp_path, capsys, "import", "jsonl", str(_write(tmp_path / "c.jsonl", lines)))
    log = _logs(tmp_path)["2023-05-08.md"]
    assert "## 2023-05-08 14:01 - Conversation" in log  # the day's last line's time
    assert "greyhound" in log
    assert SECRET not in log and "hunter2" not in log and "api key" not in log
    where = tmp_path / "home"
    assert not any(SECRET in p.read_text() for p in where.rglob("*.md"))


def test_a_reimport_adds_no_second_digest(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = _write(tmp_path / "c.jsonl", LINES)
    _run(tmp_path, capsys, "import", "jsonl", str(data))
    first, logs = _digests(tmp_path), _logs(tmp_path)
    assert sorted(d for d, _ in first) == ["2023-05-08", "2023-05-09", "2023-05-11"]
    _run(tmp_path, capsys, "import", "jsonl", str(data))
    assert _digests(tmp_path) == first and _logs(tmp_path) == logs
    more = [*LINES, ("2023-05-09T20:00:00Z", "Ana", "Pixel finally slept at Marta's house.")]
    _run(tmp_path, capsys, "import", "jsonl", str(_write(tmp_path / "d.jsonl", more)))
    after = _digests(tmp_path)
    assert len(after) == 4 and after[-1][0] == "2023-05-09"  # the 9th gained a line
    log = _logs(tmp_path)["2023-05-09.md"]
    assert log.count("- Conversation") == 1 and "## 2023-05-09 20:00 - Conversation" in log
    assert _logs(tmp_path)["2023-05-08.md"] == logs["2023-05-08.md"]


def test_a_rebuilt_workspace_renders_the_same_digests(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = _write(tmp_path / "c.jsonl", LINES)
    _run(tmp_path, capsys, "import", "jsonl", str(data))
    logs, digests = _logs(tmp_path), _digests(tmp_path)
    home = tmp_path / "home"
    shutil.rmtree(home / "workspace" / "memory")
    (home / "memory" / "workspace" / "state.sealed").unlink()
    # Opening the home (here by a re-import, which writes nothing) replays the
    # substrate into a fresh workspace, which renders every daily log.
    _run(tmp_path, capsys, "import", "jsonl", str(data))
    assert _digests(tmp_path) == digests
    assert _logs(tmp_path) == logs
