"""fsync policies: always syncs before returning, batch groups syncs by count and time,
never never syncs; a failed fsync stops further appends."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import pytest

from substrate import KeyRing, SubstrateError, open_substrate
from substrate.anchor import AnchorFile

KEY = bytes(range(32))


@pytest.mark.parametrize("fsync", ["sometimes", "ALWAYS", None, 1])
def test_a_bad_fsync_policy_is_a_value_error_naming_it(tmp_path: Path, fsync: object) -> None:
    with pytest.raises(ValueError, match=f"got {fsync!r}"):
        open_substrate(tmp_path, KEY, fsync=fsync)  # type: ignore[arg-type]


class _FsyncCounter:
    """Counts fsyncs of segment files (``calls``) and of anchor files (``anchors``)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = 0
        self.anchors = 0
        real = os.fsync

        def fsync(fd: int) -> None:
            if stat.S_ISREG(os.fstat(fd).st_mode):
                name = os.path.basename(os.readlink(f"/proc/self/fd/{fd}"))
                if name.endswith(".sol"):
                    self.calls += 1
                elif name.startswith(".substrate.anchor."):
                    self.anchors += 1
                else:
                    raise AssertionError(f"unexpected fsync of {name}")
            real(fd)

        monkeypatch.setattr(os, "fsync", fsync)


def test_always_fsyncs_before_every_append_returns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    counter = _FsyncCounter(monkeypatch)
    with open_substrate(tmp_path, KEY, fsync="always") as sub:
        assert counter.anchors == 1  # a new substrate is anchored at entry 0
        for i in range(5):
            sub.append("Main", "message", "x", ts=1.0)
            assert counter.calls == i + 1
        sub.append_many([("Main", "message", "y")] * 10)
        assert counter.calls == 6
    # the anchor follows the fsyncs on its own thread, coalescing: at most one each
    assert 2 <= counter.anchors <= 1 + 6
    head = AnchorFile(tmp_path).read(KeyRing.single(KEY))
    assert head is not None and head.last_id == 15


def test_batch_fsyncs_every_max_events_and_on_close(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    counter = _FsyncCounter(monkeypatch)
    sub = open_substrate(tmp_path, KEY, fsync="batch", batch_max_events=10,
                         batch_interval_ms=60_000)
    for _ in range(25):
        sub.append("Main", "message", "x", ts=1.0)
    assert counter.calls == 2
    sub.close()
    assert counter.calls == 3 and 2 <= counter.anchors <= 1 + 3
    head = AnchorFile(tmp_path).read(KeyRing.single(KEY))
    assert head is not None and head.last_id == 25


def test_batch_syncs_an_idle_tail_after_the_interval(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    counter = _FsyncCounter(monkeypatch)
    with open_substrate(tmp_path, KEY, fsync="batch", batch_interval_ms=20) as sub:
        sub.append("Main", "message", "x", ts=1.0)
        deadline = time.monotonic() + 5
        while counter.calls == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert counter.calls == 1  # the flusher thread synced it


def test_never_does_not_fsync_even_on_close(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    counter = _FsyncCounter(monkeypatch)
    with open_substrate(tmp_path, KEY, fsync="never", segment_bytes=1024) as sub:
        sub.append_many([("Main", "message", "x" * 200)] * 20)
    assert counter.calls == 0 and counter.anchors == 0
    assert (tmp_path / "substrate.anchor").exists()  # written on close, without fsync


def test_a_failed_fsync_refuses_further_appends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sub = open_substrate(tmp_path, KEY, fsync="always")
    sub.append("Main", "message", "durable", ts=1.0)

    def broken_fsync(fd: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(SubstrateError, match="fsync failed"):
        sub.append("Main", "message", "maybe lost", ts=2.0)
    with pytest.raises(SubstrateError, match="fsync failed"):
        sub.append("Main", "message", "refused", ts=3.0)
    monkeypatch.undo()
    sub.close()
    with open_substrate(tmp_path, KEY) as sub:
        assert sub.get(1).content == "durable"
        assert sub.last_id in (1, 2)


def test_concurrent_always_appends_fsync_at_most_once_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    counter = _FsyncCounter(monkeypatch)
    with open_substrate(tmp_path, KEY, fsync="always") as sub:
        sub.append("Main", "message", "first", ts=1.0)
        start = counter.calls
        threads = [threading.Thread(target=lambda: [sub.append("T", "message", "x", ts=1.0)
                                                    for _ in range(25)]) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sub.last_id == 201 and counter.calls - start <= 200  # never more than one each


@pytest.mark.parametrize("fsync", ["batch", "never"])
def test_an_append_is_in_the_file_before_it_returns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fsync: str
) -> None:
    """What survives SIGKILL without an fsync: each frame is handed to the OS (one
    write, no userspace buffer) before ``append`` returns, so another descriptor sees
    it at once."""
    from substrate.frame import frame_spans

    counter = _FsyncCounter(monkeypatch)
    seg = tmp_path / "seg-000001.sol"
    with open_substrate(tmp_path, KEY, fsync=fsync, batch_max_events=10**6,  # type: ignore[arg-type]
                        batch_interval_ms=60_000) as sub:
        for i in range(1, 51):
            assert sub.append("Main", "message", f"event {i} " + "x" * i, ts=float(i)) == i
            data = seg.read_bytes()  # a fresh descriptor: only what the kernel holds
            assert len(frame_spans(data)) == i and len(data) == sub.stats().bytes
        assert counter.calls == 0  # no fsync put them there



def test_the_batch_flusher_syncs_a_quarter_interval_after_the_first_unsynced_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Early enough that under a steady stream the flusher, not an append, does the
    fsyncs (an append syncs itself only at the full interval or ``batch_max_events``),
    and still late enough to group the writes of a quarter interval."""
    import threading

    syncs: list[tuple[str, float]] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        if os.readlink(f"/proc/self/fd/{fd}").endswith(".sol"):
            syncs.append((threading.current_thread().name, time.monotonic()))
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    with open_substrate(tmp_path, KEY, fsync="batch", batch_interval_ms=2000) as sub:
        start = time.monotonic()
        sub.append("Main", "message", "x", ts=1.0)
        while not syncs and time.monotonic() < start + 10:
            time.sleep(0.005)
        assert syncs, "the flusher never synced"
        (name, when), = syncs
        assert name.startswith("substrate-flusher")
        assert 0.45 <= when - start < 1.5  # 0.5 s: a quarter of the interval
