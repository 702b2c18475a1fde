"""`solace memory ...`: every form of the command line, end to end through the parser,
on a home's fact memory (each command opens the home itself, as a later process would);
`--json` prints one JSON document of the documented shape."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from facts_surface_support import cli_config

from solace.surfaces.cli.main import main


def _cli(tmp_path: Path, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(["memory", *argv, "--home", str(tmp_path / "home"),
                 "--config", cli_config(tmp_path)])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out if code == 0 else err


def test_every_memory_form_round_trips(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "home").mkdir()
    code, out = _cli(tmp_path, capsys, "remember", "acme", "Acme wants invoices in French",
                     "--importance", "0.8")
    assert code == 0 and out.startswith("ADD f") and "Acme wants invoices in French" in out
    code, out = _cli(tmp_path, capsys, "remember", "acme", "Acme's contract renews in "
                     "March 2027", "--store", "crm")
    assert code == 0 and out.startswith("ADD ")
    _cli(tmp_path, capsys, "remember", "globex", "Globex pays by bank transfer")

    code, out = _cli(tmp_path, capsys, "recall", "acme", "invoices French")
    assert code == 0 and "Acme wants invoices in French" in out and "Globex" not in out
    code, out = _cli(tmp_path, capsys, "recall", "acme", "invoices French", "--json", "-k", "1")
    answer = json.loads(out)
    assert set(answer) == {"memory_id", "store", "text", "tokens", "facts"}
    assert answer["memory_id"] == "acme" and answer["store"] == "default"
    (top,) = answer["facts"]
    assert top["text"] == "Acme wants invoices in French" and top["score"] > 0
    assert "Acme wants invoices in French" in answer["text"] and answer["tokens"] > 0
    code, out = _cli(tmp_path, capsys, "recall", "acme", "contract renews", "--store", "crm",
                     "--json")
    assert [f["store"] for f in json.loads(out)["facts"]] == ["crm"]

    assert _cli(tmp_path, capsys, "ids") == (0, "acme\nglobex\n")
    assert _cli(tmp_path, capsys, "ids", "--store", "crm") == (0, "acme\n")

    code, out = _cli(tmp_path, capsys, "facts", "acme", "--json")
    facts = json.loads(out)
    assert isinstance(facts, list) and len(facts) == 2
    assert all({"id", "text", "status", "importance", "mentions"} <= set(f) for f in facts)
    french = next(f for f in facts if "French" in f["text"])
    assert french["status"] == "live" and french["importance"] == 0.8
    code, out = _cli(tmp_path, capsys, "facts", "acme")
    (line,) = [ln for ln in out.splitlines() if "French" in ln]
    assert line.split()[:4] == [french["id"], "live", "0.80", "x1"]

    code, out = _cli(tmp_path, capsys, "export", "acme")
    exported = [json.loads(ln) for ln in out.splitlines()]
    assert code == 0 and {f["id"] for f in exported} == {f["id"] for f in facts}

    code, out = _cli(tmp_path, capsys, "consolidate", "acme")
    assert code == 0 and out.strip()  # a verdict line (accepted or refused with its reason)

    assert _cli(tmp_path, capsys, "delete", "acme", french["id"]) == (
        0, f"deleted {french['id']}\n")
    code, out = _cli(tmp_path, capsys, "facts", "acme", "--all", "--json")
    assert french["id"] not in {f["id"] for f in json.loads(out)}
    assert _cli(tmp_path, capsys, "forget", "globex") == (0, "forgot 1 facts of globex\n")
    assert _cli(tmp_path, capsys, "ids") == (0, "acme\n")


def test_import_jsonl_and_csv_into_a_store(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "home").mkdir()
    jsonl = tmp_path / "crm.jsonl"
    jsonl.write_text(
        '{"memory_id": "cust-1", "text": "Prefers email over phone", "importance": 0.6}\n'
        '\n'
        '{"memory_id": "cust-2", "text": "Account manager is Dana", "at": "2025-03-01"}\n'
        '{"memory_id": "cust-1", "text": "Prefers email over phone"}\n')
    code, out = _cli(tmp_path, capsys, "import", str(jsonl), "--store", "crm")
    assert code == 0 and out == "imported 3 rows into store crm: ADD 2, NOOP 1\n"
    csv_file = tmp_path / "crm.csv"
    csv_file.write_text("text,importance\nRenewal due in May 2026,0.9\n"
                        "\"Ships to Lyon, France\",\n")
    code, out = _cli(tmp_path, capsys, "import", str(csv_file), "--store", "crm",
                     "--id", "cust-3")
    assert code == 0 and out == "imported 2 rows into store crm: ADD 2\n"
    assert _cli(tmp_path, capsys, "ids", "--store", "crm") == (0, "cust-1\ncust-2\ncust-3\n")
    code, out = _cli(tmp_path, capsys, "facts", "cust-1", "--json")
    (fact,) = json.loads(out)
    assert fact["source"] == "import" and fact["mentions"] == 2 and fact["store"] == "crm"
    code, out = _cli(tmp_path, capsys, "facts", "cust-3", "--json")
    assert {f["text"]: f["importance"] for f in json.loads(out)} == {
        "Renewal due in May 2026": 0.9, "Ships to Lyon, France": 0.5}

    # An export re-imports under another id (history left out).
    exported = tmp_path / "cust-3.jsonl"
    code, out = _cli(tmp_path, capsys, "export", "cust-3")
    exported.write_text(out)
    code, out = _cli(tmp_path, capsys, "import", str(exported), "--store", "default",
                     "--id", "copy")
    assert code == 0 and out == "imported 2 rows into store default: ADD 2\n"
