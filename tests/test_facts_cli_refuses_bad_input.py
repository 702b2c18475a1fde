"""`solace memory` refuses bad input in one line on stderr naming the value, with no
traceback and nothing written: an invalid memory id (naming the rule), an unknown store,
an importance out of range, and an import file with one bad line (the whole file is
checked before anything is written)."""

from __future__ import annotations

from pathlib import Path

import pytest
from facts_fixtures import home_bytes
from facts_surface_support import cli_config

from solace.facts import MEMORY_ID_RULE
from solace.surfaces.cli.main import main


def _run(tmp_path: Path, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(["memory", *argv, "--home", str(tmp_path / "home"),
                 "--config", cli_config(tmp_path)])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, err.strip()


@pytest.fixture
def seeded(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, bytes]:
    (tmp_path / "home").mkdir()
    assert _run(tmp_path, capsys, "remember", "acme", "Acme pays in euros")[0] == 0
    return home_bytes(tmp_path / "home")


def test_an_invalid_memory_id_is_refused_naming_the_rule(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], seeded: dict[str, bytes]) -> None:
    for argv in (("remember", "bad id", "x"), ("recall", "a/b", "q"), ("facts", "é"),
                 ("forget", "x" * 129), ("import", "f.jsonl", "--store", "crm", "--id", "no!")):
        code, err = _run(tmp_path, capsys, *argv)
        assert code == 2, argv
        assert err.count("\n") == 0 and MEMORY_ID_RULE in err and "is not valid" in err
    assert home_bytes(tmp_path / "home") == seeded


def test_an_unknown_store_or_bad_importance_or_k_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], seeded: dict[str, bytes]) -> None:
    code, err = _run(tmp_path, capsys, "remember", "acme", "x", "--store", "nosuch")
    assert code == 2 and "unknown store 'nosuch'" in err and "crm, default" in err
    code, err = _run(tmp_path, capsys, "ids", "--store", "nosuch")
    assert code == 2 and "'nosuch'" in err
    code, err = _run(tmp_path, capsys, "remember", "acme", "x", "--importance", "1.5")
    assert code == 2 and "--importance must be in [0, 1], got 1.5" in err
    code, err = _run(tmp_path, capsys, "recall", "acme", "x", "-k", "0")
    assert code == 2 and "-k must be at least 1, got 0" in err
    code, err = _run(tmp_path, capsys, "delete", "acme", "f-none")
    assert code == 1 and "'f-none'" in err and "'acme'" in err
    assert home_bytes(tmp_path / "home") == seeded


@pytest.mark.parametrize(("name", "content", "named"), [
    ("a.jsonl", '{"memory_id": "c1", "text": "ok"}\n{"memory_id": "c1", "text": "ok2"\n',
     "line 2: not a JSON object"),
    ("b.jsonl", '{"memory_id": "c1", "text": "ok"}\n{"memory_id": "c1"}\n',
     "line 2: field 'text' is missing"),
    ("c.jsonl", '{"memory_id": "c1", "text": "ok"}\n{"memory_id": "c 1", "text": "x"}\n',
     "line 2: field 'memory_id' 'c 1' is not a valid memory id"),
    ("d.jsonl", '{"memory_id": "c1", "text": "ok", "importance": 2}\n',
     "line 1: field 'importance' must be a number in [0, 1], got 2"),
    ("e.jsonl", '{"text": "no id"}\n', "line 1: field 'memory_id' is missing"),
    ("f.jsonl", '{"memory_id": "c1", "text": "ok", "colour": "red"}\n',
     "line 1: field 'colour' is not one of"),
    ("g.jsonl", '{"memory_id": "c1", "text": "ok", "at": "last tuesday"}\n',
     "line 1: field 'at' must be epoch seconds or an ISO 8601 date, got 'last tuesday'"),
    ("h.csv", "memory_id,text,importance\nc1,fine,0.5\nc1,bad,high\n",
     "line 3: field 'importance' must be a number in [0, 1], got 'high'"),
    ("i.csv", "memory_id,body\nc1,x\n", "line 1: the CSV header ['memory_id', 'body'] has no"),
    ("j.csv", "memory_id,text\nc1,x,extra\n", "line 2: more cells than the header's 2"),
    ("k.jsonl", "\n\n", "no rows to import"),
])
def test_a_bad_import_line_is_refused_with_nothing_written(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], seeded: dict[str, bytes],
        name: str, content: str, named: str) -> None:
    path = tmp_path / name
    path.write_text(content)
    code, err = _run(tmp_path, capsys, "import", str(path), "--store", "crm")
    assert code == 1 and err.count("\n") == 0
    assert f"{path}" in err and named in err, err
    assert home_bytes(tmp_path / "home") == seeded
    code, err = _run(tmp_path, capsys, "import", str(tmp_path / "missing.jsonl"),
                     "--store", "crm")
    assert code == 1 and "missing.jsonl" in err


def test_import_into_an_unknown_store_writes_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], seeded: dict[str, bytes]) -> None:
    path = tmp_path / "ok.jsonl"
    path.write_text('{"memory_id": "c1", "text": "fine"}\n')
    code, err = _run(tmp_path, capsys, "import", str(path), "--store", "support")
    assert code == 2 and "unknown store 'support'" in err
    assert home_bytes(tmp_path / "home") == seeded


def test_fact_memory_switched_off_is_one_line(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "home").mkdir()
    config = tmp_path / "off.toml"
    config.write_text(Path(cli_config(tmp_path)).read_text() + "[facts]\nenabled = false\n")
    code = main(["memory", "remember", "acme", "x", "--home", str(tmp_path / "home"),
                 "--config", str(config)])
    err = capsys.readouterr().err.strip()
    assert code == 1 and "switched off" in err and "Traceback" not in err
