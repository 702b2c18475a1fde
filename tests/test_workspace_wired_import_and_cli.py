"""The workspace through the CLI and the import path (issue 10): ``solace import`` of a
JSONL file leaves one daily log per day whose lines teach a fact, at the lines' dates,
distilled (never the transcript), with MEMORY.md synthesised on the replay clock's
schedule; ``solace workspace show|synthesize|reload|export DIR`` work on that home, and
refuse bad input in one line without a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from solace.surfaces.cli.main import main

CONFIG = '[models]\nembedder = "hashing"\nllm_backend = "none"\n[substrate]\nfsync = "never"\n'

LINES = [  # (ISO time, speaker, text); three days with facts, a gap on the 10th
    ("2023-05-08T13:56:00Z", "Ana", "I adopted a greyhound called Pixel."),
    ("2023-05-08T13:57:00Z", "Ben", "Congrats! That is lovely news."),
    ("2023-05-09T09:10:00Z", "Ana", "I work as a nurse at the city hospital."),
    ("2023-05-09T09:11:00Z", "Ben", "Sounds busy, take care."),
    ("2023-05-11T18:30:00Z", "Ana", "I moved to Porto last month."),
    ("2023-05-11T18:31:00Z", "Ben", "Wow, enjoy the river views."),
]


def _run(capsys: pytest.CaptureFixture[str], tmp_path: Path, *args: str) -> tuple[int, str, str]:
    config = tmp_path / "solace.toml"
    config.write_text(CONFIG)
    code = main([*args, "--home", str(tmp_path / "home"), "--config", str(config)])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def imported(tmp_path: Path, capsys: pytest.CaptureFixture[str],
             monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    data = tmp_path / "chat.jsonl"
    data.write_text("".join(json.dumps({"at": at, "speaker": s, "text": t}) + "\n"
                            for at, s, t in LINES))
    code, out, err = _run(capsys, tmp_path, "import", "jsonl", str(data))
    assert code == 0, err
    return tmp_path / "home" / "workspace"


def test_solace_import_leaves_one_daily_log_per_day_with_events_distilled(
        imported: Path) -> None:
    daily = sorted(p.name for p in (imported / "memory").glob("*.md"))
    assert daily == ["2023-05-08.md", "2023-05-09.md", "2023-05-11.md"]
    assert "Pixel" in (imported / "memory" / "2023-05-08.md").read_text()
    assert "nurse" in (imported / "memory" / "2023-05-09.md").read_text()
    assert "Porto" in (imported / "memory" / "2023-05-11.md").read_text()
    assert "## 2023-05-08 13:5" in (imported / "memory" / "2023-05-08.md").read_text()
    every = "".join(p.read_text() for p in imported.rglob("*.md"))
    for _, _, text in LINES:
        assert text not in every  # distilled: never a transcript line
    memory = (imported / "MEMORY.md").read_text()  # synthesised on the replay schedule
    assert "Pixel" in memory and "Porto" in memory
    now = (imported / "NOW.md").read_text()
    assert "2023-05-11" in now or "11 May 2023" in now or "May 11" in now, now


def test_solace_workspace_show_synthesize_reload_and_export(
        imported: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, tmp_path, "workspace", "show")
    assert code == 0 and "SOUL.md" in out and "memory/2023-05-09.md" in out and "bytes" in out
    code, out, _ = _run(capsys, tmp_path, "workspace", "show", "memory/2023-05-09.md")
    assert code == 0 and "nurse" in out
    code, out, _ = _run(capsys, tmp_path, "workspace", "synthesize")
    assert code == 0 and out.startswith("MEMORY.md: ") and "roll-up" in out
    assert list((imported / "memory" / "weekly").glob("2023-W19.md"))
    user = imported / "USER.md"
    user.write_text(user.read_text() + "\n- Prefers short answers.\n")
    code, out, _ = _run(capsys, tmp_path, "workspace", "reload")
    assert code == 0 and "USER.md: +1" in out, out
    code, out, _ = _run(capsys, tmp_path, "workspace", "reload")
    assert code == 0 and "no new edits" in out
    target = tmp_path / "exported"
    code, out, _ = _run(capsys, tmp_path, "workspace", "export", str(target))
    assert code == 0 and "exported" in out
    ours = sorted(str(p.relative_to(imported)) for p in imported.rglob("*.md"))
    theirs = sorted(str(p.relative_to(target)) for p in target.rglob("*.md"))
    assert theirs == ours and "MEMORY.md" in theirs and "memory/2023-05-11.md" in theirs
    assert "Prefers short answers." in (target / "USER.md").read_text()


def test_solace_workspace_refuses_bad_input_in_one_line(
        imported: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, tmp_path, "workspace", "show", "../solace.toml")
    assert code == 1 and "outside the workspace" in err and "Traceback" not in err
    code, _, err = _run(capsys, tmp_path, "workspace", "show", "NOPE.md")
    assert code == 1 and "no workspace file 'NOPE.md'" in err and len(err.splitlines()) == 1
    (tmp_path / "afile").write_text("x")
    code, _, err = _run(capsys, tmp_path, "workspace", "export", str(tmp_path / "afile"))
    assert code == 1 and "is a file" in err and "Traceback" not in err
    config = tmp_path / "solace.toml"
    code = main(["workspace", "show", "--home", str(tmp_path / "nowhere"), "--config",
                 str(config)])
    err = capsys.readouterr().err
    assert code == 1 and "no Solace home" in err



def test_solace_memory_delete_takes_the_fact_out_of_every_workspace_file(
        imported: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, tmp_path, "memory", "facts", "user", "--json")
    assert code == 0, err
    (pixel,) = [f for f in json.loads(out) if "Pixel" in f["text"]]
    held = [p for p in imported.rglob("*.md") if "Pixel" in p.read_text()]
    assert imported / "MEMORY.md" in held and imported / "memory" / "2023-05-08.md" in held
    code, _, err = _run(capsys, tmp_path, "memory", "delete", "user", pixel["id"])
    assert code == 0, err
    home = tmp_path / "home"
    assert [p for p in home.rglob("*") if p.is_file() and b"Pixel" in p.read_bytes()] == []
    assert "Porto" in (imported / "MEMORY.md").read_text()  # the rest stays
