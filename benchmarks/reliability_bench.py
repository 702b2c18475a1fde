"""Reliability: the fault matrix, re-run, as one table.

Every row injects one kind of fault many times and counts, per row:

* ``trials``: faults injected;
* ``detected and named``: faults that were reported with the file (and entry or offset)
  named — an open refused with a :class:`SubstrateError` naming the segment or anchor,
  or a torn tail cut with a WARNING naming the byte count and where the bytes were
  saved — out of the trials where there was something to detect;
* ``acked lost``: acknowledged events that could not be read back afterwards, or, for a
  refused open, that the refusal cut (must be 0: a refusal changes no file);
* ``forged/wrong``: events read back with content other than what was appended (must
  be 0);
* ``deaths``: trials where opening, reading or verifying died with anything but a
  :class:`SubstrateError` (must be 0).

Substrate rows (this file): SIGKILL of a writing child at a random moment under each
fsync policy; a byte flip at every position of a small cleanly closed log, and of its
anchor file; truncation at every offset of the last frame, with the anchor covering it
(must be refused) and lagging behind it (a torn tail: cut with a warning); deleting the
last segment, or every segment (must be refused).

Adding rows: append a function to :data:`ROWS`. It takes the parsed options and returns
a list of row dicts with the keys of :func:`row` (extra keys are printed as notes and
kept in the JSON). Rows owned elsewhere (snapshot tampering, ENOSPC at each write site,
concurrent observe/recall) plug in the same way, e.g. ``lambda opts: row_x()`` over a
function from another module.

Usage: python benchmarks/reliability_bench.py [--trials 100] [--seed 0] [--out PATH]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import random
import re
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

try:
    from substrate import SubstrateError, open_substrate
except ImportError:  # run from a checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from substrate import SubstrateError, open_substrate
from substrate.anchor import ANCHOR_FILE
from substrate.frame import frame_spans

KEY = bytes(range(32))
DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "reliability_bench.json"
Row = dict[str, Any]
RowFn = Callable[[argparse.Namespace], list[Row]]
_NAMED = re.compile(r"seg-\d{6}\.sol|substrate\.anchor")
_WHERE = re.compile(r"entr(y|ies) \d+|offset \d+")


def row(name: str, trials: int, detected: int, to_detect: int, lost: int, wrong: int,
        deaths: int, **notes: Any) -> Row:
    """One table row; ``notes`` are extra columns (printed last, kept in the JSON)."""
    return {"row": name, "trials": trials, "detected_and_named": detected,
            "to_detect": to_detect, "acked_lost": lost, "forged_or_wrong": wrong,
            "process_deaths": deaths, **notes}


def _named(message: str) -> bool:
    """Whether an error or warning names the file and, for a segment, the entry or
    offset (the anchor is one small record: naming the file says where)."""
    if "substrate.anchor" in message and "altered" in message:
        return True
    return bool(_NAMED.search(message)) and bool(_WHERE.search(message))


class _Warnings(logging.Handler):
    """Collects the substrate logger's WARNING records while installed."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())

    def __enter__(self) -> _Warnings:
        self.messages = []
        logging.getLogger("substrate").addHandler(self)
        return self

    def __exit__(self, *exc: object) -> None:
        logging.getLogger("substrate").removeHandler(self)


def _content(entry_id: int) -> str:
    return f"payload of entry {entry_id} " + "x" * (entry_id % 37)


def _write_log(path: Path, n: int, **options: Any) -> None:
    with open_substrate(path, KEY, fsync="never", **options) as sub:
        for entry_id in range(1, n + 1):
            assert sub.append("Main", "message", _content(entry_id), ts=float(entry_id)) \
                == entry_id


def _frames(segment: Path) -> list[tuple[int, int]]:
    return frame_spans(segment.read_bytes())


def _files(path: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in path.iterdir() if p.is_file()}


def _restore(path: Path, files: dict[str, bytes]) -> None:
    for p in path.iterdir():
        if p.name not in files:
            p.unlink()
    for name, data in files.items():
        (path / name).write_bytes(data)


class _Outcome:
    """Counts for one row of open-after-damage trials."""

    def __init__(self) -> None:
        self.trials = self.detected = self.to_detect = self.lost = self.wrong = 0
        self.deaths = self.refused = self.cut = 0

    def check_open(self, path: Path, acked: int, before: dict[str, bytes], *,
                   expect: str) -> None:
        """Open ``path`` after a fault and score it. ``expect``: "refuse" (the fault hit
        synced data: an open is a miss) or "cut" (beyond the anchor: a torn tail, if any,
        must be cut with a warning)."""
        self.trials += 1
        with _Warnings() as warnings:
            try:
                sub = open_substrate(path, KEY)
            except SubstrateError as exc:
                self.to_detect += 1
                self.refused += 1
                self.detected += _named(str(exc))
                if _files(path) != before:  # a refusal must change nothing
                    self.lost += acked
                return
            except Exception:  # noqa: BLE001 - a death is what this row counts
                self.deaths += 1
                return
        try:
            with sub:
                if expect == "refuse":
                    self.to_detect += 1  # opened though synced data was damaged: a miss
                elif sub.recovered:
                    self.to_detect += 1
                    self.cut += 1
                    torn = sub.recovered[0]
                    saved = torn.saved_to is None or Path(torn.saved_to).exists()
                    self.detected += saved and any(
                        f"{torn.bytes_dropped} bytes" in m and str(torn.saved_to) in m
                        for m in warnings.messages
                    )
                self.score_events(sub, acked)
        except SubstrateError:
            self.lost += acked
        except Exception:  # noqa: BLE001
            self.deaths += 1

    def score_events(self, sub: Any, acked: int) -> None:
        for entry_id in range(1, acked + 1):
            if entry_id > sub.last_id:
                self.lost += 1
                continue
            try:
                event = sub.get(entry_id)
            except SubstrateError:
                self.lost += 1
                continue
            self.wrong += event.content != _content(entry_id)

    def row(self, name: str, **notes: Any) -> Row:
        return row(name, self.trials, self.detected, self.to_detect, self.lost, self.wrong,
                   self.deaths, refused=self.refused, cut=self.cut, **notes)


# ------------------------------------------------------------------ SIGKILL


def _child(path: Path, policy: str, wfd: int) -> None:  # pragma: no cover - forked
    try:
        sub = open_substrate(path, KEY, fsync=policy, segment_bytes=16384,  # type: ignore[arg-type]
                             batch_interval_ms=5)
        turn = 0
        while True:
            first = sub.last_id + 1
            if turn % 7 == 6:
                ids = sub.append_many([("Main", "message", _content(first + j), None, 1.0)
                                       for j in range(3)])
            else:
                ids = [sub.append("Main", "message", _content(first), ts=1.0)]
            os.write(wfd, (" ".join(map(str, ids)) + "\n").encode())
            turn += 1
    finally:
        os._exit(3)


def _kill_trial(path: Path, policy: str, rng: random.Random) -> tuple[list[int], int]:
    """Fork a writer, SIGKILL it after a random number of acks plus a random delay.

    Returns the acknowledged ids and the child's exit status."""
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(rfd)
        _child(path, policy, wfd)
    os.close(wfd)
    target, pending = rng.randint(1, 400), b""
    acked: list[int] = []
    with os.fdopen(rfd, "rb") as pipe:
        while len(acked) < target:
            chunk = pipe.read1(65536)
            if not chunk:
                break
            pending += chunk
            *lines, pending = pending.split(b"\n")
            acked += [int(i) for line in lines for i in line.split()]
        time.sleep(rng.random() * 0.003)
        os.kill(pid, signal.SIGKILL)
        rest = pending + pipe.read()
    acked += [int(i) for line in rest.split(b"\n")[:-1] for i in line.split()]
    _, status = os.waitpid(pid, 0)
    return acked, status


def rows_sigkill(opts: argparse.Namespace) -> list[Row]:
    """SIGKILL a writing child at a random moment, ``--trials`` times per fsync policy."""
    rows = []
    for policy in ("always", "batch", "never"):
        rng = random.Random(f"{opts.seed}-{policy}")
        out, killed_ok, acked_total, torn_bytes, removed = _Outcome(), 0, 0, 0, 0
        start = time.perf_counter()
        for _ in range(opts.trials):
            with tempfile.TemporaryDirectory() as tmp:
                path = Path(tmp)
                acked, status = _kill_trial(path, policy, rng)
                killed_ok += os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
                acked_total += len(acked)
                if acked != list(range(1, len(acked) + 1)):
                    out.wrong += 1  # ids were not consecutive: never expected
                out.trials += 1
                with _Warnings() as warnings:
                    try:
                        sub = open_substrate(path, KEY)
                    except SubstrateError:
                        out.refused += 1
                        out.lost += len(acked)
                        continue
                    except Exception:  # noqa: BLE001
                        out.deaths += 1
                        continue
                with sub:
                    for torn in sub.recovered:
                        out.to_detect += 1
                        out.cut += 1
                        torn_bytes += torn.bytes_dropped
                        removed += torn.removed
                        out.detected += any(f"{torn.bytes_dropped} bytes" in m
                                            for m in warnings.messages)
                    out.score_events(sub, len(acked))
                    try:
                        sub.verify()
                    except SubstrateError:
                        out.lost += 1
        rows.append(out.row(
            f"SIGKILL mid-append, fsync={policy}", children_killed=killed_ok,
            acked_events=acked_total, torn_bytes=torn_bytes, torn_segments_removed=removed,
            seconds=round(time.perf_counter() - start, 1),
        ))
    return rows


# ------------------------------------------------------------------ byte flips


def rows_byte_flips(opts: argparse.Namespace) -> list[Row]:
    """XOR 0xFF into every byte of a cleanly closed 3-event log, then of its anchor."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp)
        _write_log(path, 3)
        before = _files(path)
        for target in ("seg-000001.sol", ANCHOR_FILE):
            out = _Outcome()
            for pos in range(len(before[target])):
                data = bytearray(before[target])
                data[pos] ^= 0xFF
                (path / target).write_bytes(bytes(data))
                damaged = _files(path)
                out.check_open(path, 3, damaged, expect="refuse")
                _restore(path, before)
            what = "segment" if target != ANCHOR_FILE else "anchor"
            rows.append(out.row(f"byte flip at every position ({what}, {len(data)} B)"))
    return rows


# ------------------------------------------------------------------ truncation


def rows_truncation(opts: argparse.Namespace) -> list[Row]:
    """Truncate the last frame at every offset: with the anchor covering it (synced:
    must be refused) and with the anchor one entry behind (unsynced: a torn tail, cut
    with a warning)."""
    rows = []
    for lagging in (False, True):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp)
            _write_log(path, 2 if lagging else 3)
            anchor = (path / ANCHOR_FILE).read_bytes()
            if lagging:
                with open_substrate(path, KEY, fsync="never") as sub:
                    sub.append("Main", "message", _content(3), ts=3.0)
                (path / ANCHOR_FILE).write_bytes(anchor)  # killed before the fsync
            before = _files(path)
            seg = path / "seg-000001.sol"
            offset, size = _frames(seg)[-1]
            out = _Outcome()
            for keep in range(size):
                os.truncate(seg, offset + keep)
                out.check_open(path, 2 if lagging else 3, _files(path),
                               expect="cut" if lagging else "refuse")
                _restore(path, before)
        name = ("truncate unsynced last frame at every offset (anchor lags; lost = synced)"
                if lagging else "truncate synced last frame at every offset")
        rows.append(out.row(name))
    return rows


# ------------------------------------------------------------------ deleted segments


def rows_deleted_segments(opts: argparse.Namespace) -> list[Row]:
    """Delete the last segment, or every segment, of logs of 2..11 segments."""
    rows = []
    for every in (False, True):
        out = _Outcome()
        for n_segments in range(2, 12):
            with tempfile.TemporaryDirectory() as tmp:
                path = Path(tmp)
                _write_log(path, 4 * n_segments, segment_bytes=1024)
                segments = sorted(path.glob("seg-*.sol"))
                for seg in segments if every else segments[-1:]:
                    seg.unlink()
                out.check_open(path, 4 * n_segments, _files(path), expect="refuse")
        rows.append(out.row("delete every segment" if every else "delete the last segment"))
    return rows


#: The rows, in table order. Append functions here (see the module docstring).
ROWS: list[RowFn] = [rows_sigkill, rows_byte_flips, rows_truncation, rows_deleted_segments]


def rows_concurrent_observe_recall(opts: argparse.Namespace) -> list[Row]:
    """Recall under concurrent observers, fade on (``reliability_rows_runtime.py``)."""
    from reliability_rows_runtime import rows_runtime  # imported late: loads the runtime

    return rows_runtime(opts)


ROWS.append(rows_concurrent_observe_recall)


def rows_home_files(opts: argparse.Namespace) -> list[Row]:
    """Snapshot tampering and ENOSPC at each write site (``reliability_rows_home.py``),
    in this table's columns; their own columns are kept in the JSON."""
    import reliability_rows_home as home  # imported late: loads FAISS and the models

    out: list[Row] = []
    for r in home.row_snapshot_tampering():
        if "unsealed" in r["row"]:
            continue  # the old format's baseline: reliability_rows_home.py reports it
        out.append(row(r["row"], r["flips"], r["refused"], r["flips"], 0,
                       r["forged_loads"] + r["wrong_recalls"], 0, ms_per_check=r["ms_per_check"]))
    for r in home.row_enospc_sites():
        kept = r["memory_unchanged"] and r["restart_restores_all"] and not r["tmp_left"]
        named = r["injected"] if str(r["reported"]).startswith("StorageFullError") else 0
        out.append(row(r["row"], r["injected"], named, r["injected"],
                       0 if kept else 1, 0, 0, reported=r["reported"], tmp_left=r["tmp_left"]))
    for r in home.row_fade_loop_on_full_disk():
        out.append(row(r["row"], r["failed_steps"], r["failed_steps"] if r["paused"] else 0,
                       r["failed_steps"], 0, 0, int(r["died"]), resumed=r["resumed"]))
    return out


ROWS.append(rows_home_files)

_COLUMNS = (("row", "row", 72), ("trials", "trials", 6),
            ("detected_and_named", "detected+named", 14), ("acked_lost", "acked lost", 10),
            ("forged_or_wrong", "forged/wrong", 12), ("process_deaths", "deaths", 6))


def _cell(r: Row, key: str) -> str:
    if key == "detected_and_named":
        return f"{r.get(key, '-')}/{r.get('to_detect', '-')}"
    return str(r.get(key, "-"))


def print_table(rows: list[Row]) -> None:
    """Print the rows as a fixed-width table; extra keys go in a notes column."""
    known = {key for key, _, _ in _COLUMNS} | {"to_detect"}
    print("  ".join(f"{title:<{w}}" if key == "row" else f"{title:>{w}}"
                    for key, title, w in _COLUMNS) + "  notes")
    for r in rows:
        cells = [f"{_cell(r, key):<{w}}" if key == "row" else f"{_cell(r, key):>{w}}"
                 for key, _, w in _COLUMNS]
        notes = ", ".join(f"{k}={v}" for k, v in r.items() if k not in known)
        print("  ".join(cells) + "  " + notes)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=100,
                        help="SIGKILL trials per fsync policy (default 100)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    opts = parser.parse_args(argv)
    logging.getLogger("substrate").propagate = False  # the rows read the warnings
    rows: list[Row] = []
    start = time.perf_counter()
    for fn in ROWS:
        rows += fn(opts)
    print_table(rows)
    failures = [r["row"] for r in rows if r.get("acked_lost") or r.get("forged_or_wrong")
                or r.get("process_deaths")]
    result = {
        "benchmark": "reliability_bench",
        "config": {"trials": opts.trials, "seed": opts.seed},
        "machine": {"python": platform.python_version(), "platform": platform.platform(),
                    "cpus": os.cpu_count(), "load_avg": list(os.getloadavg())},
        "seconds": round(time.perf_counter() - start, 1),
        "rows": rows,
        "failures": failures,
    }
    opts.out.parent.mkdir(parents=True, exist_ok=True)
    opts.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {opts.out}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
