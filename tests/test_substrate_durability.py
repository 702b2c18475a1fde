"""fsync policies: always syncs before returning; batch returns with fewer than
batch_max_events events unsynced, none batch_interval_ms old, its flusher syncing ahead
of both bounds and anchoring each synced batch; never never syncs; a failed fsync stops
further appends."""

from __future__ import annotations

import bisect
import os
import stat
import threading
import time
from pathlib import Path

import pytest

from substrate import KeyRing, SubstrateError, open_substrate
from substrate.anchor import AnchorFile, Head
from substrate.frame import frame_spans

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


class _Durable:
    """What the fsyncs made durable: per segment file, the size it had when an fsync of
    it was called, recorded once that fsync returned (a lower bound of what is durable,
    known before the substrate itself counts it as synced). ``slow`` seconds are slept
    before each fsync on the flusher thread (a disk the flusher cannot keep up with);
    ``threads`` names the thread of each segment fsync."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, *, slow: float = 0.0) -> None:
        self.sizes: dict[str, int] = {}
        self.threads: list[str] = []
        real = os.fsync

        def fsync(fd: int) -> None:
            name = os.path.basename(os.readlink(f"/proc/self/fd/{fd}"))
            if not name.endswith(".sol"):
                real(fd)
                return
            thread = threading.current_thread().name
            if slow and thread.startswith("substrate-flusher"):
                time.sleep(slow)
            size = os.fstat(fd).st_size
            real(fd)
            self.threads.append(thread)
            self.sizes[name] = max(size, self.sizes.get(name, 0))

        monkeypatch.setattr(os, "fsync", fsync)

    def synced(self, segment: str = "seg-000001.sol") -> int:
        return self.sizes.get(segment, 0)


def _ends(directory: Path) -> list[int]:
    """Where each frame of the first segment ends, in id order."""
    return [offset + size for offset, size in frame_spans((directory / "seg-000001.sol")
                                                            .read_bytes())]


@pytest.mark.parametrize("slow", [0.0, 0.02], ids=["flusher-keeps-up", "slow-disk"])
@pytest.mark.parametrize("threads", [1, 4])
def test_batch_returns_with_fewer_than_max_events_unsynced_and_close_syncs_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, slow: float, threads: int
) -> None:
    """The count bound, whoever fsyncs: when an append returns, fewer than
    ``batch_max_events`` events up to its own are unsynced (checked at every return, with
    the flusher keeping up or not, one appender or several); ``close`` syncs the rest and
    anchors the last entry."""
    durable = _Durable(monkeypatch, slow=slow)
    returns: list[tuple[int, int]] = []  # (entry id, bytes durable just after it returned)
    sub = open_substrate(tmp_path, KEY, fsync="batch", batch_max_events=10,
                         batch_interval_ms=60_000)

    def appender() -> None:
        for _ in range(120 // threads):
            entry_id = sub.append("Main", "message", "x" * 100, ts=1.0)
            returns.append((entry_id, durable.synced()))

    workers = [threading.Thread(target=appender) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    ends = _ends(tmp_path)
    assert len(ends) == len(returns) == 120
    for entry_id, synced in returns:
        unsynced = entry_id - bisect.bisect_right(ends, synced)
        assert unsynced < 10, (entry_id, unsynced)
    sub.close()
    assert durable.synced() == ends[-1]  # close synced everything
    head = AnchorFile(tmp_path).read(KeyRing.single(KEY))
    assert head is not None and head.last_id == 120


@pytest.mark.parametrize("slow", [0.0, 0.02], ids=["flusher-keeps-up", "slow-disk"])
def test_batch_returns_with_no_unsynced_event_batch_interval_old(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, slow: float
) -> None:
    """The age bound, on a clock the test moves (4 ms per append, interval 50 ms): when
    an append returns, no event up to its own was written 50 ms or more before it and is
    still unsynced."""
    import substrate.durability

    now = [1000.0]
    monkeypatch.setattr(substrate.durability, "_monotonic", lambda: now[0])
    durable = _Durable(monkeypatch, slow=slow)
    written: list[float] = []
    returns: list[tuple[int, float, int]] = []  # (entry id, its write time, bytes durable)
    with open_substrate(tmp_path, KEY, fsync="batch", batch_max_events=10**6,
                        batch_interval_ms=50) as sub:
        for _ in range(150):
            now[0] += 0.004
            written.append(now[0])
            entry_id = sub.append("Main", "message", "x" * 100, ts=1.0)
            returns.append((entry_id, now[0], durable.synced()))
        ends = _ends(tmp_path)
        for entry_id, when, synced in returns:
            oldest = bisect.bisect_right(ends, synced)  # index of the oldest unsynced event
            if oldest < entry_id:
                assert when - written[oldest] < 0.05, (entry_id, oldest + 1)
    assert durable.synced() == ends[-1]  # close synced everything


def test_while_the_flusher_keeps_up_no_append_fsyncs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The flusher is woken once half of ``batch_max_events`` are unsynced, long before
    the interval: an appender that never outruns it never fsyncs itself."""
    durable = _Durable(monkeypatch)
    with open_substrate(tmp_path, KEY, fsync="batch", batch_max_events=10,
                        batch_interval_ms=600_000) as sub:
        for i in range(1, 41):
            sub.append("Main", "message", "x" * 100, ts=1.0)
            if i % 5 == 0:  # half of batch_max_events: the flusher syncs them all
                size = sub.stats().bytes
                deadline = time.monotonic() + 10
                while durable.synced() < size:
                    assert time.monotonic() < deadline, f"the flusher did not sync {i}"
                    time.sleep(0.002)
        assert len(durable.threads) == 8
    assert all(name.startswith("substrate-flusher") for name in durable.threads[:8])


def test_group_commit_advances_the_anchor_after_each_synced_batch_never_past_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each batch the flusher syncs is anchored (the anchor thread catches up with it),
    every anchor written names only frames an fsync already made durable, and close
    anchors the tail."""
    durable = _Durable(monkeypatch)
    anchored: list[int] = []
    past_the_fsync: list[Head] = []  # checked on the anchor thread, asserted here
    real_write = AnchorFile.write

    def write(self: AnchorFile, head: Head, ring: KeyRing, *, sync: bool) -> None:
        if head.last_id and head.size > durable.synced(f"seg-{head.segment:06d}.sol"):
            past_the_fsync.append(head)
        anchored.append(head.last_id)
        real_write(self, head, ring, sync=sync)

    monkeypatch.setattr(AnchorFile, "write", write)
    ring = KeyRing.single(KEY)
    with open_substrate(tmp_path, KEY, fsync="batch", batch_max_events=10,
                        batch_interval_ms=600_000) as sub:
        for batch in range(1, 5):
            for _ in range(5):  # half of batch_max_events: the flusher syncs them
                sub.append("Main", "message", "x", ts=1.0)
            deadline = time.monotonic() + 10
            while (head := AnchorFile(tmp_path).read(ring)) is None or head.last_id < 5 * batch:
                assert time.monotonic() < deadline, head
                time.sleep(0.002)
            assert head.last_id == 5 * batch
        for _ in range(3):
            sub.append("Main", "message", "x", ts=1.0)
        assert anchored[-1] == 20  # the 3 unsynced events are not anchored
    head = AnchorFile(tmp_path).read(ring)
    assert head is not None and head.last_id == 23  # close synced and anchored the rest
    assert anchored == sorted(anchored) and past_the_fsync == []


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


def test_anchor_writes_start_at_most_once_per_gap_and_close_anchors_the_tail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The batches synced within a gap are coalesced into the next anchor write (each
    write costs the appending thread GIL handoffs); closing does not wait out a gap."""
    monkeypatch.setattr("substrate.durability.ANCHOR_GAP_S", 1.0)
    starts: list[float] = []
    real_write = AnchorFile.write

    def write(self: AnchorFile, head: Head, ring: KeyRing, *, sync: bool) -> None:
        starts.append(time.monotonic())
        real_write(self, head, ring, sync=sync)

    monkeypatch.setattr(AnchorFile, "write", write)
    with open_substrate(tmp_path, KEY, fsync="batch", batch_max_events=4,
                        batch_interval_ms=600_000) as sub:
        writes_at_open = len(starts)
        deadline = time.monotonic() + 0.3  # well inside the gap
        while time.monotonic() < deadline:  # a synced batch every 2 appends
            sub.append("Main", "message", "x", ts=1.0)
            time.sleep(0.001)
        assert sub.last_id > 20
        last = sub.last_id
        closing = time.monotonic()
    ours = starts[writes_at_open:]
    assert len(ours) == 2  # the first synced batch's, then only close's: the rest coalesced
    assert ours[1] - closing < 0.5  # close did not wait out the gap (0.7 s more)
    head = AnchorFile(tmp_path).read(KeyRing.single(KEY))
    assert head is not None and head.last_id == last
