"""Segment files: naming, rotation, and rollback of a failed write."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from substrate import ChainBrokenError, open_substrate
from substrate.frame import MAGIC
from substrate.segments import SegmentFiles, list_segments, segment_name

KEY = bytes(range(32))


def test_segment_names_sort_by_number() -> None:
    assert segment_name(1) == "seg-000001.sol" and segment_name(1234567) == "seg-1234567.sol"


def test_list_segments_ignores_other_files_and_requires_no_gaps(tmp_path: Path) -> None:
    for name in ("seg-000001.sol", "seg-000002.sol", "seg-000001.sol.torn-8", "x.sol"):
        (tmp_path / name).write_bytes(b"")
    assert list_segments(tmp_path) == [1, 2]
    (tmp_path / "seg-000004.sol").write_bytes(b"")
    with pytest.raises(ChainBrokenError, match="seg-000003.sol is missing"):
        list_segments(tmp_path)


def test_writes_rotate_and_report_positions(tmp_path: Path) -> None:
    files = SegmentFiles(tmp_path, {}, segment_bytes=100, sync=False)
    positions = files.write([b"a" * 60, b"b" * 60, b"c" * 10])
    assert positions == [(1, 8), (2, 8), (2, 68)]
    assert (tmp_path / "seg-000001.sol").read_bytes() == MAGIC + b"a" * 60
    assert files.read(2, 68, 10) == b"c" * 10 and files.total_bytes == 68 + 78
    files.close()


def test_a_failed_write_is_rolled_back_completely(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with open_substrate(tmp_path, KEY, fsync="never", segment_bytes=2048) as sub:
        sub.append_many([("Main", "message", "x" * 500, None, 1.0)] * 3)
        before = {p.name: p.read_bytes() for p in tmp_path.glob("seg-*.sol")}
        real_write, calls = os.write, [0]

        def failing_write(fd: int, data: bytes) -> int:
            calls[0] += 1
            if calls[0] == 2:  # the write into the freshly rotated segment
                raise OSError(errno.ENOSPC, "No space left on device")
            return real_write(fd, data)

        monkeypatch.setattr(os, "write", failing_write)
        with pytest.raises(OSError, match="No space"):
            sub.append_many([("Main", "message", "y" * 500, None, 2.0)] * 4)
        monkeypatch.setattr(os, "write", real_write)
        assert {p.name: p.read_bytes() for p in tmp_path.glob("seg-*.sol")} == before
        assert sub.last_id == 3
        assert sub.append("Main", "message", "after", ts=3.0) == 4
        assert sub.verify().frames == 4
    with open_substrate(tmp_path, KEY) as sub:
        assert sub.recovered == () and sub.get(4).content == "after"
