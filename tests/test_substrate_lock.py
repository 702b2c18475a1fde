"""One writer: the directory itself is locked (nothing to unlink), and a foreign write
(bytes, a segment or an anchor from anyone else) is refused at our next append, so the
chain never forks."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from substrate import KeyRing, SubstrateError, SubstrateLockedError, open_substrate
from substrate.anchor import ANCHOR_FILE, AnchorFile, Head
from substrate.codec import seal
from substrate.crypto import Cipher
from substrate.frame import MAGIC, check_frame, frame_hash

KEY = bytes(range(32))
REPO = Path(__file__).resolve().parents[1]

SECOND_WRITER = textwrap.dedent(
    """
    import sys
    from substrate import SubstrateLockedError, open_substrate
    try:
        with open_substrate(sys.argv[1], bytes.fromhex(sys.argv[2])) as sub:
            sub.append("Main", "message", "second writer", ts=0.0)
    except SubstrateLockedError as exc:
        print("locked:", exc)
    else:
        print("appended")
    """
)


def _rogue_frame(seg: Path, entry_id: int) -> bytes:
    """A valid frame for ``entry_id`` chained to the segment's last frame, as a second
    writer that bypassed the lock would append it."""
    buf, pos, last = seg.read_bytes(), len(MAGIC), (0, 0)
    while pos < len(buf):
        size = check_frame(buf, pos, len(buf))
        assert isinstance(size, int)
        last, pos = (pos, size), pos + size
    prev = frame_hash(buf, *last)
    frame, _ = seal(Cipher(KeyRing.single(KEY)), entry_id, 5.0, "Rogue", "message",
                    "written by someone else", None, prev, os.urandom(12))
    return frame


def test_unlinked_lock_does_not_admit_a_second_writer(tmp_path: Path) -> None:
    (tmp_path / "substrate.lock").touch()  # as older versions left it
    with open_substrate(tmp_path, KEY) as sub:
        sub.append("Main", "message", "first writer", ts=0.0)
        for name in os.listdir(tmp_path):
            if name.endswith(".lock"):
                os.unlink(tmp_path / name)  # what broke the old lock file
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        done = subprocess.run(
            [sys.executable, "-c", SECOND_WRITER, str(tmp_path), KEY.hex()],
            capture_output=True, text=True, env=env, check=True,
        )
        assert done.stdout.startswith("locked:"), done.stdout + done.stderr
        assert "already open" in done.stdout
        with pytest.raises(SubstrateLockedError, match="already open"):
            open_substrate(tmp_path, KEY)  # another descriptor in this process, too
        assert sub.append("Main", "message", "still the only writer", ts=1.0) == 2
    with open_substrate(tmp_path, KEY) as sub:
        assert [e.content for e in sub.scan()] == ["first writer", "still the only writer"]


def test_a_foreign_write_is_refused_at_the_next_append(tmp_path: Path) -> None:
    seg = tmp_path / "seg-000001.sol"
    sub = open_substrate(tmp_path, KEY, fsync="always")
    sub.append("Main", "message", "one", ts=1.0)
    sub.append("Main", "message", "two", ts=2.0)
    with open(seg, "ab") as f:
        f.write(_rogue_frame(seg, 3))  # the second writer's entry 3
    for _ in range(2):  # refused, and stays refused: never a second entry 3
        with pytest.raises(SubstrateError, match=r"seg-000001\.sol is \d+ bytes but this "
                                                 r"substrate wrote \d+: another process"):
            sub.append("Main", "message", "our three", ts=3.0)
    with pytest.raises(SubstrateError, match="another process"):
        sub.append_many([("Main", "message", "our three", None, 3.0)])
    sub.close()
    with open_substrate(tmp_path, KEY) as sub:  # the chain did not fork
        assert [e.content for e in sub.scan()] == ["one", "two", "written by someone else"]
        assert sub.verify().frames == 3


def test_a_segment_created_by_another_writer_is_refused_at_rotation(tmp_path: Path) -> None:
    with open_substrate(tmp_path, KEY, fsync="never", segment_bytes=1024) as sub:
        sub.append("Main", "message", "x" * 600, ts=1.0)
        (tmp_path / "seg-000002.sol").write_bytes(MAGIC)  # someone rotated before us
        with pytest.raises(SubstrateError, match=r"seg-000002\.sol appeared.*second writer"):
            sub.append("Main", "message", "y" * 600, ts=2.0)
        assert sub.last_id == 1
    assert (tmp_path / "seg-000002.sol").read_bytes() == MAGIC  # theirs, untouched


def test_a_replaced_anchor_stops_further_appends(tmp_path: Path) -> None:
    sub = open_substrate(tmp_path, KEY, fsync="always")
    sub.append("Main", "message", "one", ts=1.0)
    ring, deadline = KeyRing.single(KEY), time.monotonic() + 10
    while (head := AnchorFile(tmp_path).read(ring)) is None or head.last_id < 1:
        assert time.monotonic() < deadline  # our anchor thread caught up: not mid-write
        time.sleep(0.001)
    rogue = tmp_path / "rogue"
    rogue.mkdir()
    other = AnchorFile(rogue)
    other.write(Head(9, bytes(32), 1, 999), KeyRing.single(KEY), sync=False)
    os.replace(rogue / ANCHOR_FILE, tmp_path / ANCHOR_FILE)  # another writer's anchor
    deadline = time.monotonic() + 10
    with pytest.raises(SubstrateError, match="anchor.*changed.*another process"):
        while time.monotonic() < deadline:  # the anchor thread notices at its next write
            sub.append("Main", "message", "more", ts=2.0)
            time.sleep(0.001)
    with pytest.raises(SubstrateError, match="anchor"):
        sub.append("Main", "message", "refused", ts=3.0)
    sub.close()
    head = AnchorFile(tmp_path).read(KeyRing.single(KEY))
    assert head is not None and head.last_id == 9  # theirs was never overwritten
    # and the disagreement is refused, not papered over: the log is shorter than their
    # entry 9, or its entry 9 is not theirs (appends went on until the anchor thread's
    # next write, up to ANCHOR_GAP_S later, noticed)
    with pytest.raises(SubstrateError, match="records entry 9|entry 9 of the log .* records"):
        open_substrate(tmp_path, KEY)


def test_readers_share_the_lock_and_a_writer_excludes_them(tmp_path: Path) -> None:
    with open_substrate(tmp_path, KEY) as sub:
        sub.append("Main", "message", "x", ts=1.0)
        with pytest.raises(SubstrateLockedError):
            open_substrate(tmp_path, KEY, read_only=True)
    with open_substrate(tmp_path, KEY, read_only=True) as a, \
            open_substrate(tmp_path, KEY, read_only=True) as b:
        assert a.get(1).content == b.get(1).content == "x"
        with pytest.raises(SubstrateLockedError):
            open_substrate(tmp_path, KEY)
