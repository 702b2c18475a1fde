"""The head anchor: loss at the end of the log is refused on open, naming what is missing,
unless accept_loss; a log longer than its anchor (an unsynced batch) is fine; the anchor
is authenticated, atomic, mode 0600, survives key rotation and works with env keys."""

from __future__ import annotations

import errno
import logging
import os
import stat
import time
from pathlib import Path
from typing import Any

import pytest

from substrate import (
    AnchorMismatchError,
    KeyRing,
    SubstrateError,
    open_substrate,
)
from substrate.anchor import ANCHOR_FILE, AnchorFile
from substrate.frame import frame_spans

KEY = bytes(range(32))
OTHER = bytes(range(1, 33))


def _frames(segment: Path) -> list[tuple[int, int]]:
    return frame_spans(segment.read_bytes())


def _write(path: Path, n: int, *, start: int = 0, **options: object) -> None:
    opts: dict[str, object] = {"fsync": "never", **options}
    with open_substrate(path, KEY, **opts) as sub:  # type: ignore[arg-type]
        for i in range(start, start + n):
            sub.append("Main", "message", f"event {i}".ljust(200, "."), ts=float(i))


def _files(path: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(path.iterdir()) if p.is_file()}


def test_deleted_last_segment_is_refused_against_the_anchor(tmp_path: Path) -> None:
    _write(tmp_path, 30, segment_bytes=2048)
    segments = sorted(tmp_path.glob("seg-*.sol"))
    assert len(segments) >= 3
    last_in_previous = len(_frames(segments[0])) * (len(segments) - 1)
    segments[-1].unlink()
    before = _files(tmp_path)
    pattern = (rf"ends at entry {last_in_previous} .*records entry 30.*entries "
               rf"{last_in_previous + 1}\.\.30 are missing.*{segments[-1].name} is missing"
               r".*accept_loss=True")
    with pytest.raises(AnchorMismatchError, match=pattern):
        open_substrate(tmp_path, KEY)
    assert _files(tmp_path) == before  # refused, nothing changed


def test_a_log_cut_at_a_frame_boundary_is_refused_against_the_anchor(tmp_path: Path) -> None:
    _write(tmp_path, 5)
    seg = tmp_path / "seg-000001.sol"
    offset, size = _frames(seg)[-1]
    os.truncate(seg, offset)  # exactly the last frame gone: the chain still links
    with pytest.raises(AnchorMismatchError,
                       match=rf"entry 5 is missing.*up to byte {offset + size}; they end at "
                             rf"byte {offset}"):
        open_substrate(tmp_path, KEY)


def test_deleting_every_segment_is_refused_against_the_anchor(tmp_path: Path) -> None:
    _write(tmp_path, 12, segment_bytes=1024)
    for seg in tmp_path.glob("seg-*.sol"):
        seg.unlink()
    with pytest.raises(AnchorMismatchError, match=r"ends at entry 0 .*entries 1\.\.12 are"):
        open_substrate(tmp_path, KEY)
    assert not list(tmp_path.glob("seg-*.sol"))  # and no fresh log was started


def test_a_flipped_bit_in_the_last_frame_of_a_closed_log_is_refused(tmp_path: Path) -> None:
    _write(tmp_path, 3)
    seg = tmp_path / "seg-000001.sol"
    offset, size = _frames(seg)[-1]
    for pos in range(offset, offset + size):
        data = bytearray(seg.read_bytes())
        data[pos] ^= 0x01
        seg.write_bytes(bytes(data))
        with pytest.raises(AnchorMismatchError, match="entry 3 is missing"):
            open_substrate(tmp_path, KEY)
        data[pos] ^= 0x01
        seg.write_bytes(bytes(data))
    assert not list(tmp_path.glob("*.torn-*"))  # nothing was cut


def test_accept_loss_opens_warns_and_reanchors(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _write(tmp_path, 5)
    seg = tmp_path / "seg-000001.sol"
    offset, _ = _frames(seg)[-1]
    os.truncate(seg, offset + 10)  # last frame torn, and it was synced
    with caplog.at_level(logging.WARNING, logger="substrate"):
        sub = open_substrate(tmp_path, KEY, accept_loss=True)
    with sub:
        assert sub.last_id == 4 and "entry 5 is missing" in (sub.accepted_loss or "")
        assert sub.recovered[0].bytes_dropped == 10
        messages = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        assert any("accept_loss" in m and "entry 5 is missing" in m for m in messages)
        assert any("10 bytes" in m and ".torn-" in m for m in messages)
        assert sub.append("Main", "message", "after", ts=9.0) == 5
    with open_substrate(tmp_path, KEY) as sub:  # re-anchored: opens without the flag
        assert sub.accepted_loss is None and sub.get(5).content == "after"


def test_a_log_longer_than_its_anchor_is_fine(tmp_path: Path) -> None:
    _write(tmp_path, 3)
    anchor = tmp_path / ANCHOR_FILE
    lagging = anchor.read_bytes()
    _write(tmp_path, 4, start=3)
    anchor.write_bytes(lagging)  # as if killed before the batch's fsync
    with open_substrate(tmp_path, KEY) as sub:
        assert sub.last_id == 7 and sub.recovered == () and sub.accepted_loss is None
    head = AnchorFile(tmp_path).read(KeyRing.single(KEY))
    assert head is not None and head.last_id == 7  # the open advanced it


@pytest.mark.parametrize("pos", [0, 9, 12, 20, -1])
def test_an_altered_anchor_is_refused(tmp_path: Path, pos: int) -> None:
    _write(tmp_path, 3)
    anchor = tmp_path / ANCHOR_FILE
    data = bytearray(anchor.read_bytes())
    data[pos] ^= 0x01
    anchor.write_bytes(bytes(data))
    with pytest.raises(AnchorMismatchError, match=rf"{ANCHOR_FILE}.*altered"):
        open_substrate(tmp_path, KEY)
    with open_substrate(tmp_path, KEY, accept_loss=True) as sub:
        assert sub.last_id == 3 and "altered" in (sub.accepted_loss or "")
    with open_substrate(tmp_path, KEY) as sub:
        assert sub.last_id == 3


def test_an_anchor_from_another_log_is_refused(tmp_path: Path) -> None:
    _write(tmp_path / "a", 3)
    _write(tmp_path / "b", 3, start=10)  # same key, same ids, other events
    (tmp_path / "a" / ANCHOR_FILE).write_bytes((tmp_path / "b" / ANCHOR_FILE).read_bytes())
    with pytest.raises(AnchorMismatchError, match="entry 3 .*chain hash mismatch.*replaced"):
        open_substrate(tmp_path / "a", KEY)


def test_the_anchor_is_mode_0600_and_written_atomically(tmp_path: Path) -> None:
    old_umask = os.umask(0)
    try:
        _write(tmp_path, 2, fsync="always")
    finally:
        os.umask(old_umask)
    assert stat.S_IMODE((tmp_path / ANCHOR_FILE).stat().st_mode) == 0o600
    assert not list(tmp_path.glob(".*.tmp"))


def test_a_stale_anchor_temp_from_a_killed_writer_is_removed(tmp_path: Path) -> None:
    _write(tmp_path, 2)
    stale = tmp_path / f".{ANCHOR_FILE}.1234.abcd.tmp"
    stale.write_bytes(b"half an anchor")
    with open_substrate(tmp_path, KEY) as sub:
        assert sub.last_id == 2
    assert not stale.exists()


def test_an_old_log_without_an_anchor_gets_one_on_first_open(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _write(tmp_path, 4)
    (tmp_path / ANCHOR_FILE).unlink()  # as written before anchors existed
    with caplog.at_level(logging.WARNING, logger="substrate"):
        sub = open_substrate(tmp_path, KEY)
    sub.close()
    assert any("no anchor file" in r.getMessage() and "entry 4" in r.getMessage()
               for r in caplog.records)
    os.truncate(tmp_path / "seg-000001.sol", _frames(tmp_path / "seg-000001.sol")[-1][0])
    with pytest.raises(AnchorMismatchError, match="entry 4 is missing"):
        open_substrate(tmp_path, KEY)  # from now on, loss at the end is caught


def test_the_anchor_survives_key_rotation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SOLACE_SUBSTRATE_KEY", raising=False)
    with open_substrate(tmp_path, fsync="always") as sub:
        sub.append("Main", "message", "old key", ts=1.0)
        assert sub.rotate_key() == 2
        sub.append("Main", "message", "new key", ts=2.0)
    with open_substrate(tmp_path) as sub:
        assert sub.last_id == 2
    os.truncate(tmp_path / "seg-000001.sol", _frames(tmp_path / "seg-000001.sol")[-1][0])
    with pytest.raises(AnchorMismatchError, match="entry 2 is missing"):
        open_substrate(tmp_path)


def test_an_anchor_sealed_with_a_key_not_in_the_ring_is_refused(tmp_path: Path) -> None:
    with open_substrate(tmp_path, KeyRing({1: KEY, 2: OTHER}), fsync="never"):
        pass  # no frames: only the anchor uses key 2
    with pytest.raises(AnchorMismatchError, match=rf"{ANCHOR_FILE} names key id 2, which"):
        open_substrate(tmp_path, KEY)


def test_env_var_keys_anchor_the_log_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOLACE_SUBSTRATE_KEY", KEY.hex())
    with open_substrate(tmp_path, fsync="always") as sub:
        sub.append("Main", "message", "x", ts=1.0)
        sub.append("Main", "message", "y", ts=2.0)
    assert not (tmp_path / "substrate.key").exists()
    os.truncate(tmp_path / "seg-000001.sol", _frames(tmp_path / "seg-000001.sol")[-1][0])
    with pytest.raises(AnchorMismatchError, match="entry 2 is missing"):
        open_substrate(tmp_path)
    monkeypatch.setenv("SOLACE_SUBSTRATE_KEY", OTHER.hex())  # another key: not forged, wrong
    with pytest.raises(SubstrateError):
        open_substrate(tmp_path)


def test_a_read_only_open_changes_no_file(tmp_path: Path) -> None:
    _write(tmp_path, 3)
    with open(tmp_path / "seg-000001.sol", "ab") as f:
        f.write(b"torn bytes of an unsynced write")
    (tmp_path / ANCHOR_FILE).unlink()
    before = _files(tmp_path)
    with open_substrate(tmp_path, KEY, read_only=True) as sub:
        (torn,) = sub.recovered
        assert not torn.cut and torn.saved_to is None and torn.bytes_dropped == 31
        assert sub.last_id == 3 and sub.verify().anchored_id is None
        with pytest.raises(SubstrateError, match="read-only"):
            sub.append("Main", "message", "x", ts=1.0)
    assert _files(tmp_path) == before
    with pytest.raises(SubstrateError, match="not a directory"):
        open_substrate(tmp_path / "missing", KEY, read_only=True)
    assert not (tmp_path / "missing").exists()


def _wait_for(condition: Any, seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.002)


def _trailing(caplog: pytest.LogCaptureFixture) -> int:
    return sum("it trails the log" in r.getMessage() for r in caplog.records)


def test_an_anchor_that_cannot_be_written_trails_and_never_stops_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    _write(tmp_path, 2)
    lagging = (tmp_path / ANCHOR_FILE).read_bytes()
    _write(tmp_path, 1, start=2)
    (tmp_path / ANCHOR_FILE).write_bytes(lagging)  # anchored at 2, log at 3
    real_open = os.open

    def full_disk_for_anchors(path: Any, flags: int, *args: Any, **kw: Any) -> int:
        if f".{ANCHOR_FILE}." in str(path):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        return real_open(path, flags, *args, **kw)

    monkeypatch.setattr(os, "open", full_disk_for_anchors)
    ring = KeyRing.single(KEY)
    with caplog.at_level(logging.WARNING, logger="substrate"):
        sub = open_substrate(tmp_path, KEY, fsync="always")  # opens on a full disk
        assert sub.last_id == 3
        assert sub.append("Main", "message", "while full", ts=4.0) == 4  # appends go on
        _wait_for(lambda: _trailing(caplog) == 1)  # the anchor thread tried and failed
        assert sub.append("Main", "message", "still full", ts=5.0) == 5
        time.sleep(0.05)
    head = AnchorFile(tmp_path).read(ring)
    assert head is not None and head.last_id == 2  # the anchor trails: safe
    assert any("could not advance the anchor" in r.getMessage() and "entry 3" in
               r.getMessage() for r in caplog.records)  # the open's attempt
    assert _trailing(caplog) == 1  # the anchor thread warns once, not once per append
    monkeypatch.undo()  # space comes back
    sub.append("Main", "message", "space back", ts=6.0)
    sub.close()
    head = AnchorFile(tmp_path).read(ring)
    assert head is not None and head.last_id == 6
