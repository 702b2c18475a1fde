"""Import files become checked rows (JSONL and CSV, with errors naming file, line and
field); rows are written as imports, each classified against what the id already holds,
in file order; an export re-imports (its history left out)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from facts_fixtures import ManualClock, fact_memory

from solace.facts import FactStatus, WriteClass
from solace.facts.transfer import (
    ImportFileError,
    ImportRow,
    export_lines,
    import_rows,
    parse_csv,
    parse_jsonl,
    read_import,
    rows_from_records,
)


def test_jsonl_rows_carry_id_importance_time_and_slot() -> None:
    rows = parse_jsonl(
        '{"memory_id": "c1", "text": "  Lives in Lyon ", "importance": 0.25, '
        '"at": "2025-03-01T12:00:00", "slot": "residence"}\n\n'
        '{"memory_id": "c2", "text": "Pays by card", "at": 1700000000}\n', source="f.jsonl")
    assert rows[0] == ImportRow("c1", "Lives in Lyon", 0.25,
                                datetime(2025, 3, 1, 12, tzinfo=UTC).timestamp(),
                                "residence", "f.jsonl line 1")
    assert rows[1] == ImportRow("c2", "Pays by card", 0.5, 1700000000.0, "",
                                "f.jsonl line 3")


def test_csv_takes_id_or_memory_id_columns_and_empty_cells_are_absent() -> None:
    rows = parse_csv("id,text,importance,at\nc1,\"Ships to Lyon, France\",,\n"
                     "c2,Renews in May,0.9,2026-05-01\n", source="f.csv")
    assert [(r.memory_id, r.text, r.importance) for r in rows] == [
        ("c1", "Ships to Lyon, France", 0.5), ("c2", "Renews in May", 0.9)]
    assert rows[0].at is None and rows[1].at == datetime(2026, 5, 1, tzinfo=UTC).timestamp()
    forced = parse_csv("text\nOne\nTwo\n", source="f.csv", memory_id="acme")
    assert {r.memory_id for r in forced} == {"acme"} and forced[1].where == "f.csv line 3"


def test_errors_name_the_file_line_and_field(tmp_path: Path) -> None:
    with pytest.raises(ImportFileError, match=r"f.jsonl line 2: field 'importance' must be "
                                              r"a number in \[0, 1\], got -0.1"):
        parse_jsonl('{"memory_id":"a","text":"x"}\n{"memory_id":"a","text":"y",'
                    '"importance":-0.1}\n', source="f.jsonl")
    with pytest.raises(ImportFileError, match=r"f.jsonl line 1: field 'importance' must be "
                                              r"a number, got True"):
        parse_jsonl('{"memory_id":"a","text":"x","importance":true}\n', source="f.jsonl")
    with pytest.raises(ImportFileError, match=r"f.jsonl line 1: field 'text' .*2000"):
        parse_jsonl('{"memory_id":"a","text":"' + "x" * 2001 + '"}\n', source="f.jsonl")
    with pytest.raises(ImportFileError, match=r"line 1: must be a JSON object"):
        parse_jsonl('["a", "b"]\n', source="f.jsonl")
    with pytest.raises(ImportFileError, match=r"\$.rows row 1: field 'text' is missing"):
        rows_from_records([{"memory_id": "a", "text": "x"}, {"memory_id": "a"}],
                          source="$.rows")
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes('{"memory_id":"a","text":"caf\xe9"}\n'.encode("latin-1"))
    with pytest.raises(ImportFileError, match="latin.jsonl: not UTF-8"):
        read_import(latin)


async def test_rows_are_classified_in_file_order_per_memory_id(tmp_path: Path) -> None:
    clock = ManualClock()
    async with fact_memory(tmp_path / "home", clock=clock) as fm:
        await fm.remember("c1", "Prefers email over phone")
        rows = parse_jsonl(
            '{"memory_id": "c1", "text": "Prefers email over phone"}\n'
            '{"memory_id": "c2", "text": "Account manager is Dana"}\n'
            '{"memory_id": "c2", "text": "Account manager is Dana"}\n'
            '{"memory_id": "c1", "text": "Has two offices, in Lyon and Porto"}\n',
            source="f.jsonl")
        done = await import_rows(fm, rows, store="default", now=clock.now())
        assert [(row.memory_id, r.write_class) for row, r in done] == [
            ("c1", WriteClass.NOOP), ("c2", WriteClass.ADD), ("c2", WriteClass.NOOP),
            ("c1", WriteClass.ADD)]
        assert all(r.fact.source in ("import", "remember") for _, r in done)
        assert {f.source for f in fm.facts("c2")} == {"import"}


async def test_an_export_reimports_without_its_history(tmp_path: Path) -> None:
    clock = ManualClock()
    async with fact_memory(tmp_path / "home", clock=clock) as fm:
        for text in ("Ships to Lyon", "Pays by card"):
            await fm.remember("src", text)
        gone = fm.facts("src")[0]
        exported = [{**r, "status": FactStatus.SUPERSEDED.value} if r["id"] == gone.fact_id
                    else r for r in fm.export("src")]
        rows = parse_jsonl(export_lines(exported), source="export.jsonl", memory_id="dst")
        assert [r.text for r in rows] == ["Pays by card"]
        await import_rows(fm, rows, store="default", now=clock.now())
        assert [f.text for f in fm.facts("dst")] == ["Pays by card"]


def test_remote_import_batches_stay_under_the_server_limits() -> None:
    from solace.surfaces.cli.memory_cmd import IMPORT_BATCH_BYTES, IMPORT_BATCH_ROWS, _batches

    rows = [ImportRow("c1", f"fact number {i} " + "x" * 1500) for i in range(2500)]
    batches = _batches(rows)
    assert [r["text"] for b in batches for r in b] == [r.text for r in rows]
    assert len(batches) > 1 and all(len(b) <= IMPORT_BATCH_ROWS for b in batches)
    assert all(len(json.dumps(b).encode()) <= IMPORT_BATCH_BYTES + 4096 for b in batches)
