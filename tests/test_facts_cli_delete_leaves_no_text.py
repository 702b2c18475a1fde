"""`solace memory delete` and `solace memory forget` are data-subject requests: afterwards
the text is in no file under the home (raw bytes) and not in the substrate decrypted with
its key, while a kept fact is still recalled."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from facts_fixtures import decrypted_dump, home_bytes
from facts_surface_support import cli_config

from solace.surfaces.cli.main import main

SECRET = "Zorblax account number is 99-431-7786"
KEPT = "Acme prefers invoices summarised in French"
OTHER = "Quuxcorp's CFO is named Wendeline Okafor"


def _cli(tmp_path: Path, capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code = main(["memory", *argv, "--home", str(tmp_path / "home"),
                 "--config", cli_config(tmp_path)])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def _recoverable(root: Path, text: str) -> list[str]:
    needles = [text.encode(), text.encode("utf-16-le"), text.split()[0].encode()]
    where = [name for name, data in home_bytes(root).items()
             if any(n in data for n in needles)]
    if text in decrypted_dump(root) or text.split()[0] in decrypted_dump(root):
        where.append("decrypted substrate dump")
    return where


def test_delete_and_forget_leave_no_recoverable_text(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "home"
    root.mkdir()
    _cli(tmp_path, capsys, "remember", "acme", SECRET)
    _cli(tmp_path, capsys, "remember", "acme", KEPT)
    _cli(tmp_path, capsys, "remember", "quux", OTHER)
    facts = json.loads(_cli(tmp_path, capsys, "facts", "acme", "--json"))
    secret_id = next(f["id"] for f in facts if f["text"] == SECRET)
    # Before the delete the fact's key opens it (export decrypts it); its text is sealed
    # under that key, so neither the files' bytes nor the home-key dump show it.
    assert SECRET in _cli(tmp_path, capsys, "export", "acme")
    assert _recoverable(root, SECRET) == []
    vault_before = {n: b for n, b in home_bytes(root).items() if n.startswith("facts")}

    _cli(tmp_path, capsys, "delete", "acme", secret_id)
    assert _recoverable(root, SECRET) == []
    assert secret_id not in _cli(tmp_path, capsys, "export", "acme")
    assert {n: b for n, b in home_bytes(root).items() if n.startswith("facts")} != vault_before
    recalled = json.loads(_cli(tmp_path, capsys, "recall", "acme", "invoices French",
                               "--json"))
    assert [f["text"] for f in recalled["facts"]] == [KEPT]
    assert SECRET not in _cli(tmp_path, capsys, "export", "acme")

    _cli(tmp_path, capsys, "forget", "quux")
    assert _recoverable(root, OTHER) == []
    assert json.loads(_cli(tmp_path, capsys, "facts", "quux", "--all", "--json")) == []
    assert KEPT in _cli(tmp_path, capsys, "recall", "acme", "invoices")
