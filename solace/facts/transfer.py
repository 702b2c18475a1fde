"""Import and export of fact memory (seed 001: "seed a store from your CRM export with
extraction off").

Import reads JSONL or CSV into :class:`ImportRow` values, checking every line before
anything is written: :func:`read_import` either returns every row of the file, valid,
or raises :class:`ImportFileError` naming the file, the line and the field. Rows are
then written by :func:`import_rows` through :meth:`FactMemory.write` with
``source="import"``: each is read-first-then-classified (ADD / UPDATE / NOOP /
CONFLICT) like any other write, with no extraction.

Formats:

- JSONL: one object a line, ``{"text", "memory_id"?, "importance"?, "at"?, "slot"?}``.
  The lines :func:`export_lines` writes are accepted as they are (their other keys are
  the export's and are ignored; a fact that is history, i.e. superseded or evicted, is
  skipped, and its ``last_confirmed`` stands for ``at``), so an export re-imports.
- CSV with a header row: ``text`` required; ``memory_id`` (or ``id``), ``importance``,
  ``at``, ``slot`` optional; an empty cell is an absent value.

``at`` is when the fact was stated: epoch seconds, or an ISO 8601 date or time (UTC
unless it names its offset). ``importance`` is a number in [0, 1] (default 0.5).
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from solace.facts.errors import InvalidFactError
from solace.facts.model import (
    MEMORY_ID_RULE,
    Candidate,
    Compaction,
    RecallBlock,
    WriteResult,
    is_memory_id,
)
from solace.facts.service import MAX_FACT_CHARS, FactMemory, fact_record
from solace.validation import InvalidObservationError, check_text

__all__ = [
    "FIELDS",
    "ImportFileError",
    "ImportRow",
    "compaction_record",
    "export_lines",
    "import_rows",
    "parse_csv",
    "parse_jsonl",
    "read_import",
    "recall_record",
    "rows_from_records",
    "write_record",
]

#: The fields an import row may carry.
FIELDS = ("text", "memory_id", "importance", "at", "slot")
#: The keys of an exported fact (``fact_record``) that an import accepts and ignores.
_EXPORT_KEYS = frozenset({"id", "store", "status", "mentions", "created", "last_confirmed",
                          "source", "class", "reason", "superseded_by", "conflicts_with"})
_HISTORY = frozenset({"superseded", "evicted"})
_MAX_AT = 32503680000.0  # year 3000, the bound the HTTP surface puts on observe's ``at``


class ImportFileError(InvalidFactError):
    """An import file (or row list) that cannot be imported; names where and why."""


@dataclass(frozen=True, slots=True)
class ImportRow:
    """One fact to import, checked.

    Attributes:
        memory_id: the id it is filed under (follows :data:`MEMORY_ID_RULE`).
        text: the fact, stripped, at most ``MAX_FACT_CHARS`` characters.
        importance: in [0, 1].
        at: when it was stated (epoch seconds), None for "now".
        slot: what the fact is about, '' when unknown.
        where: ``FILE line N``, for messages.
    """

    memory_id: str
    text: str
    importance: float = 0.5
    at: float | None = None
    slot: str = ""
    where: str = ""

    def as_json(self) -> dict[str, Any]:
        """The row as the ``rows`` items of ``POST /memory/import``."""
        out: dict[str, Any] = {"memory_id": self.memory_id, "text": self.text,
                               "importance": self.importance}
        if self.at is not None:
            out["at"] = self.at
        if self.slot:
            out["slot"] = self.slot
        return out


def _fail(where: str, field: str, problem: str) -> ImportFileError:
    return ImportFileError(f"{where}: field {field!r} {problem}")


def _number(value: object, where: str, field: str) -> float | None:
    if isinstance(value, bool):
        raise _fail(where, field, f"must be a number, got {value!r}")
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    raise _fail(where, field, f"must be a number, got {value!r}")


def _importance(value: object, where: str) -> float:
    number = _number(value, where, "importance")
    if number is None or not math.isfinite(number) or not 0.0 <= number <= 1.0:
        raise _fail(where, "importance", f"must be a number in [0, 1], got {value!r}")
    return number


def _at(value: object, where: str) -> float:
    number = _number(value, where, "at")
    if number is None:
        assert isinstance(value, str)
        try:
            parsed = datetime.fromisoformat(value.strip())
        except ValueError:
            raise _fail(where, "at", f"must be epoch seconds or an ISO 8601 date, got "
                                     f"{value!r}") from None
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=UTC)
        number = parsed.timestamp()
    if not math.isfinite(number) or not 0.0 <= number <= _MAX_AT:
        raise _fail(where, "at", f"must be a time between 1970 and 3000, got {value!r}")
    return number


def _row(record: Mapping[str, Any], where: str, memory_id: str | None,
         id_field: str = "memory_id") -> ImportRow | None:
    unknown = sorted(set(record) - set(FIELDS) - _EXPORT_KEYS - {id_field})
    if unknown:
        raise _fail(where, unknown[0], f"is not one of {', '.join(FIELDS)}")
    if "text" not in record or record["text"] in (None, ""):
        raise _fail(where, "text", "is missing (every row needs the fact's text)")
    try:
        text = check_text(record["text"]).strip()
    except InvalidObservationError as exc:
        raise _fail(where, "text", str(exc)) from None
    if len(text) > MAX_FACT_CHARS:
        raise _fail(where, "text", f"has {len(text)} characters; a fact has at most "
                                   f"{MAX_FACT_CHARS} ({text[:40]!r}...)")
    if memory_id is None:
        named = record.get(id_field)
        if named in (None, ""):
            raise _fail(where, id_field, "is missing: name each row's memory id, or pass "
                                         "--id ID to file every row under ID")
        if not is_memory_id(named):
            raise _fail(where, id_field, f"{named!r} is not a valid memory id: "
                                         f"{MEMORY_ID_RULE}")
        memory_id = str(named)
    elif not is_memory_id(memory_id):
        raise ImportFileError(f"memory id {memory_id!r} is not valid: {MEMORY_ID_RULE}")
    if record.get("status") in _HISTORY:
        return None  # an exported fact that is history: not recalled, not re-imported
    importance = record.get("importance")
    at = record.get("at")
    if at in (None, "") and record.get("last_confirmed") not in (None, ""):
        at = record["last_confirmed"]
    slot = record.get("slot")
    if slot is not None and not isinstance(slot, str):
        raise _fail(where, "slot", f"must be a string, got {slot!r}")
    return ImportRow(
        memory_id, text,
        0.5 if importance in (None, "") else _importance(importance, where),
        None if at in (None, "") else _at(at, where),
        (slot or "").strip(), where,
    )


def rows_from_records(records: Iterable[object], *, source: str = "rows",
                      memory_id: str | None = None) -> list[ImportRow]:
    """Check decoded rows (``POST /memory/import``'s ``rows``, or JSONL objects).

    Args:
        records: one mapping per row.
        source: how messages name where the rows came from.
        memory_id: file every row under this id (their own ``memory_id`` is ignored).

    Raises:
        ImportFileError: the first bad row, naming ``source``, its position and field.
    """
    rows = []
    for i, record in enumerate(records):
        where = f"{source} row {i}"
        if not isinstance(record, Mapping):
            raise ImportFileError(f"{where}: must be an object, got {record!r:.80}")
        row = _row(record, where, memory_id)
        if row is not None:
            rows.append(row)
    return rows


def parse_jsonl(text: str, *, source: str, memory_id: str | None = None) -> list[ImportRow]:
    """Every row of a JSONL text (blank lines skipped), or the first bad line's error."""
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{source} line {number}"
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise ImportFileError(f"{where}: not a JSON object ({exc})") from None
        if not isinstance(record, dict):
            raise ImportFileError(f"{where}: must be a JSON object, got {line.strip()[:80]!r}")
        row = _row(record, where, memory_id)
        if row is not None:
            rows.append(row)
    return rows


def parse_csv(text: str, *, source: str, memory_id: str | None = None) -> list[ImportRow]:
    """Every row of a CSV text with a header row, or the first bad line's error."""
    reader = csv.DictReader(io.StringIO(text, newline=""))
    header = [h.strip() for h in reader.fieldnames or []]
    if "text" not in header:
        raise ImportFileError(f"{source} line 1: the CSV header {header!r} has no 'text' "
                              "column (columns: text, memory_id or id, importance, at, slot)")
    id_field = "memory_id" if "memory_id" in header or "id" not in header else "id"
    allowed = set(FIELDS) | {id_field}
    for name in header:
        if name not in allowed:
            raise ImportFileError(f"{source} line 1: column {name!r} is not one of text, "
                                  "memory_id (or id), importance, at, slot")
    reader.fieldnames = header
    rows = []
    for raw in reader:
        where = f"{source} line {reader.line_num}"
        if None in raw:
            raise ImportFileError(f"{where}: more cells than the header's {len(header)} "
                                  "columns")
        record = {k: (v.strip() if isinstance(v, str) else v) for k, v in raw.items()}
        if not any(record.values()):
            continue
        row = _row(record, where, memory_id, id_field)
        if row is not None:
            rows.append(row)
    return rows


def read_import(path: str | Path, *, memory_id: str | None = None) -> list[ImportRow]:
    """Every row of an import file, checked; nothing is written.

    The format is CSV for a ``.csv`` file, else JSONL.

    Raises:
        ImportFileError: a bad line (naming the file, line and field), an empty file,
            or a file that is not UTF-8.
        OSError: the file cannot be read.
    """
    p = Path(path).expanduser()
    try:
        text = p.read_text("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ImportFileError(f"{p}: not UTF-8 text ({exc.reason} at byte {exc.start})") \
            from None
    source = str(path)
    rows = (parse_csv if p.suffix.lower() == ".csv" else parse_jsonl)(
        text, source=source, memory_id=memory_id)
    if not rows:
        raise ImportFileError(f"{source}: no rows to import")
    return rows


async def import_rows(memory: FactMemory, rows: Sequence[ImportRow | Mapping[str, Any]], *,
                      store: str, now: float) -> list[tuple[ImportRow, WriteResult]]:
    """Write checked rows into ``store`` as imports (classified, no extraction).

    The rows of one memory id are written as one batch, in file order (later rows are
    classified against the earlier ones). Mappings are checked first
    (:func:`rows_from_records`), and the store is resolved before anything is written.

    Args:
        memory: the open fact memory.
        rows: :class:`ImportRow` values, or mappings as ``POST /memory/import`` takes.
        store: the store every row is filed in.
        now: the time of rows without ``at``.

    Returns:
        Each row with what its write became, in the order of ``rows``.

    Raises:
        ImportFileError: a bad mapping. UnknownStoreError: ``store`` is not configured.
    """
    checked: list[ImportRow] = []
    for r in rows:  # a history row (superseded, evicted) of an export is skipped
        checked.extend([r] if isinstance(r, ImportRow) else rows_from_records([r], source="rows"))
    name = memory.store_name(store)
    by_id: dict[str, list[int]] = {}
    for i, row in enumerate(checked):
        by_id.setdefault(row.memory_id, []).append(i)
    results: dict[int, WriteResult] = {}
    for memory_id, indexes in by_id.items():
        batch = [checked[i] for i in indexes]
        written = await memory.write(
            memory_id, [Candidate(r.text, r.importance, r.slot) for r in batch], store=name,
            source="import", as_of=[now if r.at is None else r.at for r in batch])
        results.update(zip(indexes, written, strict=True))
    return [(checked[i], results[i]) for i in range(len(checked))]


def export_lines(records: Iterable[Mapping[str, Any]]) -> str:
    """Exported facts (``fact_record`` objects) as JSONL: one object a line, each line
    ending in a newline; '' for none."""
    return "".join(json.dumps(dict(r), ensure_ascii=False, sort_keys=True) + "\n"
                   for r in records)


# -- the JSON shapes of answers (HTTP, MCP and the CLI's --json print the same) ------


def write_record(result: WriteResult) -> dict[str, Any]:
    """A write's answer: ``{"class", "reason", "fact": fact_record}``."""
    return {"class": result.write_class.value, "reason": result.reason,
            "fact": fact_record(result.fact)}


def recall_record(block: RecallBlock) -> dict[str, Any]:
    """A recall's answer: ``{"memory_id", "store", "text", "tokens", "facts"}``, each
    fact a ``fact_record`` with its ``score`` (best first)."""
    return {"memory_id": block.memory_id, "store": block.store, "text": block.text,
            "tokens": block.tokens,
            "facts": [{**fact_record(s.fact), "score": round(s.score, 6)}
                      for s in block.facts]}


def compaction_record(c: Compaction) -> dict[str, Any]:
    """A compactor's verdict: ``{"accepted", "reason", "detail", "tokens_before",
    "tokens_after"}``."""
    return {"accepted": c.accepted, "reason": c.reason, "detail": c.detail,
            "tokens_before": c.tokens_before, "tokens_after": c.tokens_after}
