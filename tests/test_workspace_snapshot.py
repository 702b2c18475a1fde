"""The workspace's kept projection (issue 12 §1): a reopen from its sealed snapshot
folds only the events after the checkpoint and equals a full replay (ledger, human
layers and every file); a damaged, foreign-format, other-time-zone or newer-than-the-
log snapshot is refused with one WARNING and the workspace replays from the start;
and a fact deleted after the snapshot was written is not in it (it holds no fact
text at all) and does not come back after a restart."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgpack
import pytest

from solace.config.schema import Config
from solace.home import Home
from solace.projections import ReplayReport, replay
from solace.sealed import read_sealed
from solace.workspace import Workspace
from solace.workspace.service import WORKSPACE_PROJECTION
from solace.workspace.snapshot import FORMAT, write_encoded
from tests.workspace_fixtures import (
    DAY,
    Bench,
    ManualClock,
    every_file,
    topic_events,
    workspace_home,
)

SECRET = "Zoe's passport number is XK4471923."
KEPT = ["Zoe prefers window seats.", "Zoe collects vintage maps."]


@dataclass(frozen=True)
class _Line:  # an imported line (solace.workspace.digest.ImportedLine)
    key: str
    speaker: str
    text: str
    at: float


def _path(root: Path) -> Path:
    return Home.at(root, Config()).workspace_snapshot


@asynccontextmanager
async def _opened(root: Path, clock: ManualClock, *, kept: bool = True,
                  config: Config | None = None) -> AsyncIterator[tuple[Bench, ReplayReport]]:
    """The workspace opened from its snapshot (``kept``) or from nothing, with the
    replay's report."""
    async with workspace_home(root, clock, config, replayed=False,
                              snapshot=_path(root) if kept else None) as b:
        yield b, await replay(b.substrate, [b.ws.replaying()])


def _state(ws: Workspace) -> dict[str, Any]:
    """Everything a replay folds (the ledger's indexes included) and the files."""
    led = ws.ledger
    return {"days": led.days, "titles": led.titles, "active": led.active_topic,
            "notes": led.notes, "decisions": led.decisions, "digests": led.digests,
            "fact_days": led._fact_days, "memory_days": led._memory_days,
            "layers": ws.layers, "files": _markdown(ws.root)}


def _markdown(root: Path) -> dict[str, bytes]:
    return {n: d for n, d in every_file(root).items() if n != "NOW.md"}


async def _history(b: Bench, clock: ManualClock, n: int, *, first: int = 0) -> None:
    """``n`` days of topics (a summary, a note, a curation, a decision) and facts."""
    for i in range(first, first + n):
        await b.conversation(*topic_events(i, f"Trip {i}", f"We planned trip {i}.",
                                           note=f"Book hotel {i}", decision=(f"k{i}", "v")))
        await b.remember(f"Zoe visited city number {i}.", memory_id="zoe")
        clock.t += DAY


async def _populated(root: Path, clock: ManualClock) -> tuple[int, dict[str, Any]]:
    """A workspace with history, a human edit and a digest, snapshotted, then a tail
    (more history, a superseding digest, a deleted fact). Returns the checkpoint and
    the live state at close."""
    async with _opened(root, clock) as (b, _):  # a new home: nothing kept yet
        await _history(b, clock, 4)
        day_log = next(iter(sorted((b.files / "memory").glob("2026-*.md"))))
        day_log.write_text(day_log.read_text() + "- A line the human added.\n")
        assert len(await b.ws.reload()) == 1
        at = clock.t
        await b.ws.digest_import([_Line("a", "Ana", "I adopted a greyhound.", at)])
        assert await b.ws.snapshot()
        checkpoint = int(b.substrate.last_id)
        await _history(b, clock, 3, first=4)
        assert await b.ws.digest_import([  # supersedes the kept day's digest
            _Line("a", "Ana", "I adopted a greyhound.", at),
            _Line("b", "Ben", "Pixel is a lovely name.", at + 60)]) == 1
        gone = await b.remember(SECRET, memory_id="zoe")
        await b.facts.delete("zoe", gone)
        await b.ws.catch_up()
        return checkpoint, _state(b.ws)


async def test_a_reopen_from_the_snapshot_folds_only_the_tail_and_equals_a_full_replay(
        tmp_path: Path) -> None:
    clock = ManualClock()
    checkpoint, live = await _populated(tmp_path, clock)
    async with _opened(tmp_path, clock) as (b, report):
        assert report.since == checkpoint
        tail = await b.substrate.scan(since_id=checkpoint, kinds=b.ws.replaying().kinds)
        assert 0 < report.applied[WORKSPACE_PROJECTION] == len(
            [e for e in tail if e.entry_id <= report.head])
        kept = _state(b.ws)
    async with _opened(tmp_path, clock, kept=False) as (b, report):
        assert report.since == 0 and report.applied[WORKSPACE_PROJECTION] > len(tail)
        assert _state(b.ws) == kept == live


def _rewritten(change: Callable[[dict[str, Any], int], None]) -> Callable[[Path, Any], None]:
    def rewrite(path: Path, sub: Any) -> None:
        body = msgpack.unpackb(read_sealed(path, ring=sub.key_ring, purpose="snapshot",
                                           role="workspace-projection"), raw=False)
        change(body, int(sub.last_id))
        write_encoded(path, msgpack.packb(body, use_bin_type=True), ring=sub.key_ring)
    return rewrite


def _flip_a_byte(path: Path, sub: Any) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x40
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("damage", [
    _flip_a_byte,
    _rewritten(lambda body, last: body.update(format=FORMAT + 1)),
    _rewritten(lambda body, last: body.update(checkpoint=last + 100)),
    _rewritten(lambda body, last: body.update(zone="Europe/Lisbon")),
    _rewritten(lambda body, last: body.update(days=[["not a date", []]])),
], ids=["damaged", "another-format", "newer-than-the-log", "another-time-zone", "malformed"])
async def test_an_unusable_snapshot_is_refused_once_and_the_workspace_replays_everything(
        tmp_path: Path, caplog: pytest.LogCaptureFixture,
        damage: Callable[[Path, Any], None]) -> None:
    clock = ManualClock()
    _, live = await _populated(tmp_path, clock)
    async with workspace_home(tmp_path, clock) as b:
        damage(_path(tmp_path), b.substrate)
    with caplog.at_level(logging.WARNING):
        async with _opened(tmp_path, clock) as (b, report):
            assert report.since == 0
            assert _state(b.ws) == live
    refused = [r for r in caplog.records if "workspace snapshot" in r.getMessage()]
    assert [r.levelno for r in refused] == [logging.WARNING]


async def test_a_fact_deleted_after_the_snapshot_is_not_in_it_and_stays_gone(
        tmp_path: Path) -> None:
    clock = ManualClock()
    snapshot = _path(tmp_path)
    async with _opened(tmp_path, clock) as (b, _):
        secret = await b.remember(SECRET, memory_id="zoe")
        for text in KEPT:
            clock.t += DAY / 4
            await b.remember(text, memory_id="zoe")
        await b.ws.synthesize()
        assert await b.ws.snapshot()
        await b.facts.delete("zoe", secret)
        await b.ws.catch_up()
        # Even opened with the home's key ring, the snapshot names the fact by its ids
        # only: no fact text, deleted or kept, is in it.
        inside = read_sealed(snapshot, ring=b.substrate.key_ring, purpose="snapshot",
                             role="workspace-projection")
        for text in (SECRET, *KEPT):
            assert text.split()[-1].rstrip(".").encode() not in inside, text
        assert b"XK4471923" not in inside
    async with _opened(tmp_path, clock) as (b, report):  # a restart from that snapshot
        assert report.since > 0
        await b.ws.synthesize()
        await b.ws.rollup()
        held = {n for n, d in every_file(tmp_path).items() if b"XK4471923" in d}
        assert held == set()
        assert "Zoe collects vintage maps." in (b.files / "MEMORY.md").read_text()


async def test_the_runtime_keeps_the_workspace_snapshot_at_close_and_reopens_from_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from runtime_support import START, fill

    from solace import ReplayClock, open_runtime
    from solace.config import ModelsConfig

    config = Config(models=ModelsConfig(embedder="hashing", llm_backend="none"))
    clock = ReplayClock(START)
    async with open_runtime(tmp_path, config, clock=clock) as rt:
        await fill(rt)
        assert rt.workspace is not None
        await rt.workspace.catch_up()
        live = _state(rt.workspace)
    assert _path(tmp_path).exists()
    checkpoints: list[int] = []
    replaying = Workspace.replaying

    def spy(self: Workspace, **kwargs: Any) -> Any:
        batched = replaying(self, **kwargs)
        checkpoints.append(batched.checkpoint)
        return batched

    monkeypatch.setattr(Workspace, "replaying", spy)
    async with open_runtime(tmp_path, config, clock=clock, warm_up=False) as rt:
        assert rt.workspace is not None
        assert checkpoints and checkpoints[0] > 0
        reopened = _state(rt.workspace)
    assert {k: v for k, v in reopened.items() if k != "files"} == \
        {k: v for k, v in live.items() if k != "files"}
