"""Crash recovery and tamper detection: a torn tail is cut and reported, nothing
acknowledged is lost, and every other kind of damage raises without cutting good data.

A torn tail is what a crash leaves after the last fsync; frames the anchor covers were
synced, so damage to them is refused (see test_substrate_anchor.py). Tests of torn tails
therefore build logs whose anchor lags, as after a crash (``_write(..., synced=n)``).
"""

from __future__ import annotations

import logging
import os
import signal
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from substrate import (
    ChainBrokenError,
    CorruptFrameError,
    SubstrateError,
    UnknownEntryError,
    open_substrate,
)
from substrate.frame import MAGIC, frame_spans

KEY = bytes(range(32))
REPO = Path(__file__).resolve().parents[1]


def _frames(segment: Path) -> list[tuple[int, int]]:
    return frame_spans(segment.read_bytes())


def _write(path: Path, n: int, *, size: int = 20, synced: int | None = None,
           **options: object) -> None:
    """Append ``n`` events and close; with ``synced``, leave the anchor at entry
    ``synced``, as a crash after writing but before syncing the rest would."""
    first = n if synced is None else synced
    with open_substrate(path, KEY, fsync="never", **options) as sub:  # type: ignore[arg-type]
        for i in range(first):
            sub.append("Main", "message", f"{i:04d}".ljust(size, "."), ts=float(i))
    if synced is None:
        return
    anchor = (path / "substrate.anchor").read_bytes()
    with open_substrate(path, KEY, fsync="never", **options) as sub:  # type: ignore[arg-type]
        for i in range(first, n):
            sub.append("Main", "message", f"{i:04d}".ljust(size, "."), ts=float(i))
    (path / "substrate.anchor").write_bytes(anchor)


def _flip(path: Path, pos: int) -> None:
    fd = os.open(path, os.O_RDWR)
    try:
        os.pwrite(fd, bytes([os.pread(fd, 1, pos)[0] ^ 0xFF]), pos)
    finally:
        os.close(fd)


CHILD = textwrap.dedent(
    """
    import sys
    from substrate import open_substrate
    path, key, fsync = sys.argv[1], bytes.fromhex(sys.argv[2]), sys.argv[3]
    sub = open_substrate(path, key, fsync=fsync, segment_bytes=16384, batch_interval_ms=5)
    i = 0
    while True:
        if i % 7 == 6:
            ids = sub.append_many([("Main", "message", f"event {i}.{j}", None, float(i))
                                   for j in range(3)])
        else:
            ids = [sub.append("Main", "message", f"event {i}", attrs={"i": str(i)}, ts=float(i))]
        print(" ".join(map(str, ids)), flush=True)
        i += 1
    """
)


@pytest.mark.parametrize("fsync", ["always", "batch", "never"])
def test_sigkill_mid_append_loses_no_acknowledged_event(tmp_path: Path, fsync: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(tmp_path), KEY.hex(), fsync],
        stdout=subprocess.PIPE, text=True, env=env,
    )
    assert child.stdout is not None
    acked: list[int] = []
    while len(acked) < 300:
        line = child.stdout.readline()
        assert line, "the child died before acknowledging 300 events"
        acked += map(int, line.split())
    child.send_signal(signal.SIGKILL)
    acked += [int(i) for line in child.stdout for i in line.split()]  # acked before death
    child.wait()
    child.stdout.close()
    assert child.returncode == -signal.SIGKILL
    assert acked == list(range(1, len(acked) + 1))

    # A write the kill interrupted looks like this: half a frame at the end.
    last = sorted(tmp_path.glob("seg-*.sol"))[-1]
    offset, size = _frames(last)[-1]
    partial = last.read_bytes()[offset : offset + size // 2]
    with open(last, "ab") as f:
        f.write(partial)

    with open_substrate(tmp_path, KEY) as sub:
        assert [(t.segment, t.bytes_dropped) for t in sub.recovered] == [(str(last), len(partial))]
        assert sub.last_id >= len(acked)
        events = {e.entry_id: e for e in sub.scan()}
        for entry_id in acked:
            assert events[entry_id].content.startswith("event ")
        assert sub.verify().frames == sub.last_id
        assert sub.append("Main", "message", "after", ts=0.0) == sub.last_id


def test_a_torn_last_frame_is_cut_saved_and_reported(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _write(tmp_path, 5, synced=4)
    seg, anchor = tmp_path / "seg-000001.sol", tmp_path / "substrate.anchor"
    original, synced_anchor = seg.read_bytes(), anchor.read_bytes()
    offset, size = _frames(seg)[-1]
    for keep in (1, 7, 8, 9, size // 2, size - 1):
        seg.write_bytes(original[: offset + keep])
        anchor.write_bytes(synced_anchor)
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="substrate"):
            sub = open_substrate(tmp_path, KEY)
        with sub:
            (torn,) = sub.recovered
            assert (torn.segment, torn.offset, torn.bytes_dropped, torn.removed) == (
                str(seg), offset, keep, False
            )
            assert Path(torn.saved_to or "").read_bytes() == original[offset : offset + keep]
            assert stat.S_IMODE(os.stat(torn.saved_to or "").st_mode) == 0o600
            (record,) = caplog.records
            assert record.levelno == logging.WARNING
            assert f"{keep} bytes" in record.getMessage()
            assert str(torn.saved_to) in record.getMessage()
            assert sub.last_id == 4 and sub.verify().frames == 4
            assert [e.content[:4] for e in sub.scan()] == ["0000", "0001", "0002", "0003"]
        Path(torn.saved_to or "").unlink()
        with open_substrate(tmp_path, KEY) as sub:
            assert sub.recovered == ()  # the cut was durable


def test_a_zero_filled_tail_after_power_loss_is_cut(tmp_path: Path) -> None:
    # (zeros past the anchor: the kernel had sized the file but not written the data)
    _write(tmp_path, 3)
    with open(tmp_path / "seg-000001.sol", "ab") as f:
        f.write(bytes(4096))
    with open_substrate(tmp_path, KEY) as sub:
        assert sub.recovered[0].bytes_dropped == 4096 and sub.last_id == 3


def test_a_torn_batch_keeps_its_complete_frames(tmp_path: Path) -> None:
    with open_substrate(tmp_path, KEY, fsync="never") as sub:
        sub.append("Main", "message", "before", ts=0.0)
    anchor = (tmp_path / "substrate.anchor").read_bytes()
    with open_substrate(tmp_path, KEY, fsync="never") as sub:
        sub.append_many([("Main", "message", f"batch {i}", None, 1.0) for i in range(5)])
    (tmp_path / "substrate.anchor").write_bytes(anchor)  # crashed before syncing the batch
    seg = tmp_path / "seg-000001.sol"
    offset, size = _frames(seg)[4]  # entry 5, the batch's 4th frame
    os.truncate(seg, offset + size - 3)
    with open_substrate(tmp_path, KEY) as sub:
        assert sub.last_id == 4
        assert [e.content for e in sub.scan()] == ["before", "batch 0", "batch 1", "batch 2"]


@pytest.mark.parametrize("contents", [b"", MAGIC[:5], b"\x00" * 300])
def test_an_empty_or_garbage_last_segment_is_removed(tmp_path: Path, contents: bytes) -> None:
    _write(tmp_path, 3)
    extra = tmp_path / "seg-000002.sol"
    extra.write_bytes(contents)
    with open_substrate(tmp_path, KEY) as sub:
        (torn,) = sub.recovered
        assert torn.removed and torn.bytes_dropped == len(contents) and not extra.exists()
        assert sub.last_id == 3
        sub.append("Main", "message", "next", ts=9.0)
        assert sub.stats().segments == 1 and sub.verify().frames == 4


def test_a_last_segment_holding_only_the_magic_is_valid_and_used(tmp_path: Path) -> None:
    _write(tmp_path, 3)
    (tmp_path / "seg-000002.sol").write_bytes(MAGIC)
    with open_substrate(tmp_path, KEY) as sub:
        assert sub.recovered == ()
        sub.append("Main", "message", "next", ts=9.0)
        assert sub.stats().segments == 2 and sub.verify().frames == 4


def test_damage_followed_by_good_frames_raises_and_cuts_nothing(tmp_path: Path) -> None:
    _write(tmp_path, 4)
    seg = tmp_path / "seg-000001.sol"
    offset, _ = _frames(seg)[1]
    _flip(seg, offset + 20)
    damaged = seg.read_bytes()
    pattern = r"seg-000001\.sol at offset \d+.*entry 2.*intact frames follow"
    with pytest.raises(CorruptFrameError, match=pattern):
        open_substrate(tmp_path, KEY)
    assert seg.read_bytes() == damaged and not list(tmp_path.glob("*.torn-*"))


def test_every_single_byte_flip_is_caught_by_verify_and_by_get(tmp_path: Path) -> None:
    _write(tmp_path, 3, size=4)
    seg = tmp_path / "seg-000001.sol"
    frames = _frames(seg)
    with open_substrate(tmp_path, KEY) as sub:
        assert sub.verify().frames == 3
        for pos in range(seg.stat().st_size):
            _flip(seg, pos)
            with pytest.raises(SubstrateError):
                sub.verify()
            for entry_id, (offset, size) in enumerate(frames, 1):
                if offset <= pos < offset + size:
                    with pytest.raises(SubstrateError, match=f"entry {entry_id}"):
                        sub.get(entry_id)
                else:
                    assert sub.get(entry_id).entry_id == entry_id
            _flip(seg, pos)
        assert sub.verify().frames == 3


def test_every_single_byte_flip_is_refused_or_reported_on_reopen(tmp_path: Path) -> None:
    _write(tmp_path, 3, size=4, synced=2)
    seg, anchor = tmp_path / "seg-000001.sol", tmp_path / "substrate.anchor"
    original, synced_anchor = seg.read_bytes(), anchor.read_bytes()
    last_offset = _frames(seg)[-1][0]
    for pos in range(len(original)):
        _flip(seg, pos)
        damaged = seg.read_bytes()
        if pos < last_offset:
            with pytest.raises(SubstrateError):
                open_substrate(tmp_path, KEY)
            assert seg.read_bytes() == damaged  # good data is never cut
        else:  # damage to the unsynced final frame cannot be told from a torn write
            with open_substrate(tmp_path, KEY) as sub:
                assert sub.recovered[0].offset == last_offset and sub.last_id == 2
            for saved in tmp_path.glob("*.torn-*"):
                saved.unlink()
        seg.write_bytes(original)
        anchor.write_bytes(synced_anchor)


def test_swapping_two_frames_breaks_the_chain(tmp_path: Path) -> None:
    _write(tmp_path, 4)
    seg = tmp_path / "seg-000001.sol"
    (a, size), (b, size_b) = _frames(seg)[1:3]
    assert size == size_b
    with open_substrate(tmp_path, KEY) as sub:
        buf = bytearray(seg.read_bytes())
        buf[a : a + size], buf[b : b + size] = buf[b : b + size], buf[a : a + size]
        seg.write_bytes(bytes(buf))
        with pytest.raises(ChainBrokenError, match="entry 3 where entry 2 should be"):
            sub.verify()
    with pytest.raises(ChainBrokenError, match="reordered"):
        open_substrate(tmp_path, KEY)


def test_a_frame_from_another_log_breaks_the_chain(tmp_path: Path) -> None:
    _write(tmp_path / "a", 3)
    with open_substrate(tmp_path / "b", KEY, fsync="never") as sub:  # same key, same ids
        for i in range(3):
            sub.append("Main", "message", f"{i:04d}".ljust(20, "!"), ts=float(i))
    seg_a, seg_b = tmp_path / "a" / "seg-000001.sol", tmp_path / "b" / "seg-000001.sol"
    offset, size = _frames(seg_a)[1]
    buf = bytearray(seg_a.read_bytes())
    buf[offset : offset + size] = seg_b.read_bytes()[offset : offset + size]
    seg_a.write_bytes(bytes(buf))
    with pytest.raises(ChainBrokenError, match="entry 2 .*hash chain mismatch"):
        open_substrate(tmp_path / "a", KEY)


def test_removing_whole_frames_mid_file_breaks_the_chain(tmp_path: Path) -> None:
    _write(tmp_path, 5)
    seg = tmp_path / "seg-000001.sol"
    frames = _frames(seg)
    buf = seg.read_bytes()
    seg.write_bytes(buf[: frames[1][0]] + buf[frames[3][0] :])  # drop entries 2 and 3
    with pytest.raises(ChainBrokenError, match="entry 4 where entry 2"):
        open_substrate(tmp_path, KEY)


def test_cutting_bytes_mid_file_is_corruption(tmp_path: Path) -> None:
    _write(tmp_path, 5)
    seg = tmp_path / "seg-000001.sol"
    offset, _ = _frames(seg)[1]
    buf = seg.read_bytes()
    seg.write_bytes(buf[: offset + 10] + buf[offset + 40 :])
    with pytest.raises(CorruptFrameError):
        open_substrate(tmp_path, KEY)


def test_a_truncated_or_missing_earlier_segment_is_detected(tmp_path: Path) -> None:
    _write(tmp_path, 30, size=200, segment_bytes=1024)
    first, second = tmp_path / "seg-000001.sol", tmp_path / "seg-000002.sol"
    original = first.read_bytes()
    os.truncate(first, len(original) - 5)  # not the last segment: never a torn tail
    with pytest.raises(CorruptFrameError, match="not the last segment"):
        open_substrate(tmp_path, KEY)
    first.write_bytes(original)
    last_offset = _frames(first)[-1][0]
    os.truncate(first, last_offset)  # a whole frame missing at the segment's end
    with pytest.raises(ChainBrokenError):
        open_substrate(tmp_path, KEY)
    first.write_bytes(original)
    second.unlink()
    with pytest.raises(ChainBrokenError, match=r"seg-000002\.sol is missing"):
        open_substrate(tmp_path, KEY)


def test_truncating_an_open_segment_is_caught_by_verify_and_get(tmp_path: Path) -> None:
    _write(tmp_path, 3)
    seg = tmp_path / "seg-000001.sol"
    offset, _ = _frames(seg)[-1]
    with open_substrate(tmp_path, KEY) as sub:
        os.truncate(seg, offset)
        with pytest.raises(CorruptFrameError, match="truncated"):
            sub.verify()
        with pytest.raises(CorruptFrameError, match="truncated"):
            sub.get(3)
        assert sub.get(2).entry_id == 2
        with pytest.raises(UnknownEntryError):
            sub.get(4)
