"""The frame index kept at close: an open walks only the frames written since, and a kept
index that does not match the log on disk is never used (substrate.kept_index)."""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path

import pytest

from substrate import open_substrate, recovery
from substrate.kept_index import KEPT_INDEX_FILE

KEY = bytes(range(32))
OTHER_KEY = bytes(range(1, 33))


def write(path: Path, start: int, n: int, **options: object) -> None:
    with open_substrate(path, KEY, fsync="never", **options) as sub:  # type: ignore[arg-type]
        for i in range(start, start + n):
            sub.append("Main" if i % 3 else "Mood", "message" if i % 2 else "reflection",
                       f"event {i:05d} " + "x" * (i % 50), ts=float(i))


def walked(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int, int]]:
    """(segment, first entry id, start offset) of every walk an open makes."""
    seen: list[tuple[str, int, int]] = []
    original = recovery.FrameWalk

    class Noting(original):  # type: ignore[misc, valid-type]
        def __init__(self, buf, path, *, next_id, prev_hash, tail_ok, start=0):  # type: ignore[no-untyped-def]
            seen.append((path.name, next_id, start))
            super().__init__(buf, path, next_id=next_id, prev_hash=prev_hash,
                             tail_ok=tail_ok, start=start)

    monkeypatch.setattr(recovery, "FrameWalk", Noting)
    return seen


def contents(path: Path, **options: object) -> list[tuple[int, str, str, str, float]]:
    with open_substrate(path, KEY, read_only=True, **options) as sub:  # type: ignore[arg-type]
        events = [sub.get(i) for i in range(1, sub.last_id + 1)]
        sub.verify()
    return [(e.entry_id, e.agent, e.kind, e.content, e.ts) for e in events]


def test_an_open_after_a_clean_close_walks_only_the_frames_written_since(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    write(tmp_path, 0, 300, segment_bytes=4096)  # several segments
    assert (tmp_path / KEPT_INDEX_FILE).exists()
    seen = walked(monkeypatch)
    write(tmp_path, 300, 40, segment_bytes=4096)  # opens on the kept index, appends
    assert len(seen) == 1 and seen[0][1] == 301 and seen[0][2] > 0  # the tail, from entry 301
    seen.clear()
    with open_substrate(tmp_path, KEY) as sub:
        assert sub.last_id == 340 and [s[1] for s in seen] == [341]
        by_kind = sub.stats()
    monkeypatch.undo()
    (tmp_path / KEPT_INDEX_FILE).unlink()
    with open_substrate(tmp_path, KEY) as walked_in_full:  # the same index, walked
        assert walked_in_full.stats() == by_kind
    assert [e[0] for e in contents(tmp_path)] == list(range(1, 341))


def test_a_kept_index_that_fails_any_check_is_ignored_and_the_log_walked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
) -> None:
    write(tmp_path, 0, 60)
    want = contents(tmp_path)
    kept = tmp_path / KEPT_INDEX_FILE
    good = kept.read_bytes()
    other = tmp_path / "other"
    write(other, 0, 60)
    foreign = (other / KEPT_INDEX_FILE).read_bytes()
    for why, data in [("HMAC", good[:100] + bytes([good[100] ^ 1]) + good[101:]),
                      ("not a kept index", b"junk"),
                      ("not the file it indexed", foreign)]:  # another log's, same key
        kept.write_bytes(data)
        seen = walked(monkeypatch)
        with caplog.at_level(logging.INFO, logger="substrate.kept_index"):
            assert contents(tmp_path) == want
        assert seen[0][1:] == (1, 0), why  # walked from the first frame
        assert why in caplog.text
        caplog.clear()
        monkeypatch.undo()
    kept.write_bytes(good)
    with caplog.at_level(logging.INFO, logger="substrate.kept_index"):
        with pytest.raises(Exception, match="authentication|key"):
            open_substrate(tmp_path, OTHER_KEY)  # sealed with another key: refused as ever


def test_a_segment_changed_after_the_close_is_walked_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    write(tmp_path, 0, 30)
    segment = tmp_path / "seg-000001.sol"
    st = segment.stat()
    os.utime(segment, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))  # touched
    seen = walked(monkeypatch)
    assert len(contents(tmp_path)) == 30
    assert seen[0][1:] == (1, 0)


def test_a_crash_after_appending_past_the_kept_index_loses_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    write(tmp_path, 0, 50)
    crashed = tmp_path / "crashed"
    with open_substrate(tmp_path, KEY, fsync="never") as sub:
        for i in range(50, 80):
            sub.append("Main", "message", f"after {i}", ts=float(i))
        shutil.copytree(tmp_path, crashed, ignore=shutil.ignore_patterns("crashed", "*.lock"))
    seen = walked(monkeypatch)
    events = contents(crashed)  # the copy is the log as a crash left it: stale kept index
    assert [e[0] for e in events] == list(range(1, 81)) and events[-1][3] == "after 79"
    assert seen[0][1:] == (1, 0)


def test_a_segment_changed_by_another_hand_while_open_leaves_no_kept_index(
    tmp_path: Path, caplog: pytest.LogCaptureFixture,
) -> None:
    write(tmp_path, 0, 20)
    segment = tmp_path / "seg-000001.sol"
    with caplog.at_level(logging.WARNING, logger="substrate"):
        with open_substrate(tmp_path, KEY, fsync="never"):
            st = segment.stat()
            os.utime(segment, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    assert not (tmp_path / KEPT_INDEX_FILE).exists()
    assert "changed on disk while open" in caplog.text


def test_a_read_only_open_uses_a_kept_index_and_writes_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    write(tmp_path, 0, 25)
    kept = tmp_path / KEPT_INDEX_FILE
    before = kept.stat().st_mtime_ns, kept.read_bytes()
    seen = walked(monkeypatch)
    assert len(contents(tmp_path)) == 25 and seen == [("seg-000001.sol", 26, seen[0][2])]
    assert (kept.stat().st_mtime_ns, kept.read_bytes()) == before
