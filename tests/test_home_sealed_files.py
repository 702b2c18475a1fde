"""The sealed-file format every file under the home uses: only the exact bytes, for the
exact role, under a key of the ring open; writes are atomic, private and leave nothing
behind when they fail."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest
from disk_support import FullDisk

from solace.home import Home
from solace.sealed import (
    HEADER_BYTES,
    SealedFileRefused,
    StorageFullError,
    read_sealed,
    remove_stale_tmp,
    seal,
    unseal,
    write_sealed,
)
from substrate import KeyRing

RING = KeyRing.single(bytes(range(32)))
PLAIN = b"Reykjavik sk-proj-4f9Kx2LmQ8vB7nR1 hunter2 " * 4


def sealed() -> bytes:
    return seal(PLAIN, ring=RING, purpose="snapshot", role="memory/Main/snapshot")


def test_a_sealed_file_round_trips_and_hides_its_plaintext() -> None:
    data = sealed()
    assert b"Reykjavik" not in data and b"hunter2" not in data
    assert unseal(data, ring=RING, purpose="snapshot", role="memory/Main/snapshot") == PLAIN
    assert sealed() != data  # a fresh nonce every time


def test_every_flipped_byte_is_refused() -> None:
    data = sealed()
    for i in range(len(data)):
        for bit in (0x01, 0x80):
            forged = bytearray(data)
            forged[i] ^= bit
            with pytest.raises(SealedFileRefused):
                unseal(bytes(forged), ring=RING, purpose="snapshot", role="memory/Main/snapshot")


def test_every_truncation_is_refused() -> None:
    data = sealed()
    for n in range(len(data)):
        with pytest.raises(SealedFileRefused):
            unseal(data[:n], ring=RING, purpose="snapshot", role="memory/Main/snapshot")


def test_a_file_is_refused_as_its_bytes_are_whether_mapped_or_read(tmp_path: Path) -> None:
    """read_sealed maps a file (read whole below the header's size): either way an
    empty, cut or edited file is refused, naming it."""
    data = sealed()
    path = tmp_path / "f.sealed"
    path.write_bytes(data)
    assert read_sealed(path, ring=RING, purpose="snapshot", role="memory/Main/snapshot") \
        == PLAIN
    flipped = bytearray(data)
    flipped[-20] ^= 1
    for bad in (b"", data[:10], data[:HEADER_BYTES + 15], data[:-1], bytes(flipped)):
        path.write_bytes(bad)
        with pytest.raises(SealedFileRefused, match="f.sealed"):
            read_sealed(path, ring=RING, purpose="snapshot", role="memory/Main/snapshot")


@pytest.mark.parametrize(("ring", "purpose", "role", "why"), [
    (RING, "snapshot", "memory/Supervisor/snapshot", "failed authentication"),
    (RING, "lexical", "memory/Main/snapshot", "failed authentication"),
    (KeyRing.single(bytes(32)), "snapshot", "memory/Main/snapshot", "failed authentication"),
    (KeyRing({2: bytes(range(32))}), "snapshot", "memory/Main/snapshot", "key id 1"),
])
def test_another_role_purpose_or_key_is_refused(
    ring: KeyRing, purpose: str, role: str, why: str
) -> None:
    with pytest.raises(SealedFileRefused, match=why):
        unseal(sealed(), ring=ring, purpose=purpose, role=role, name="F")


def test_plaintext_and_other_versions_are_refused_by_name() -> None:
    with pytest.raises(SealedFileRefused, match=r"^F is not a sealed file"):
        unseal(b"\x8f" + PLAIN, ring=RING, purpose="snapshot", role="r", name="F")
    other = bytearray(sealed())
    other[7] = 9
    with pytest.raises(SealedFileRefused, match="sealed-file version 9"):
        unseal(bytes(other), ring=RING, purpose="snapshot", role="r", name="F")


def test_a_rotated_ring_opens_files_sealed_before_and_seals_with_the_new_key() -> None:
    data = sealed()
    rotated = RING.with_new_key()
    assert unseal(data, ring=rotated, purpose="snapshot", role="memory/Main/snapshot") == PLAIN
    new = seal(PLAIN, ring=rotated, purpose="snapshot", role="memory/Main/snapshot")
    assert int.from_bytes(new[8:10], "big") == 2 and len(new) == len(data)
    with pytest.raises(SealedFileRefused, match="key id 2"):
        unseal(new, ring=RING, purpose="snapshot", role="memory/Main/snapshot")
    assert len(data) == HEADER_BYTES + len(PLAIN) + 16


def test_written_files_are_0600_in_0700_dirs_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        path = write_sealed(tmp_path / "a" / "b" / "f.sealed", PLAIN, ring=RING,
                            purpose="snapshot", role="r")
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    for d in (tmp_path / "a", tmp_path / "a" / "b"):
        assert stat.S_IMODE(d.stat().st_mode) == 0o700
    assert read_sealed(path, ring=RING, purpose="snapshot", role="r") == PLAIN
    assert sorted(p.name for p in path.parent.iterdir()) == ["f.sealed"]


@pytest.mark.parametrize("call", ["write", "fsync", "replace"])
def test_a_write_on_a_full_disk_names_what_failed_and_leaves_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, call: str
) -> None:
    path = write_sealed(tmp_path / "f.sealed", b"old", ring=RING, purpose="p", role="r")
    before = path.read_bytes()
    FullDisk(monkeypatch, lambda p: "f.sealed" in p, calls=(call,))
    with pytest.raises(StorageFullError, match=r"cannot write Main's notes \(.*\): No space") \
            as info:
        write_sealed(path, b"new", ring=RING, purpose="p", role="r", what="Main's notes")
    assert info.value.errno == errno.ENOSPC
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.sealed"]


def test_stale_temporary_files_are_removed(tmp_path: Path) -> None:
    (tmp_path / ".x.sealed.0a1b2c3d.tmp").write_bytes(b"half")
    (tmp_path / "keep.sealed").write_bytes(b"whole")
    assert [p.name for p in remove_stale_tmp(tmp_path)] == [".x.sealed.0a1b2c3d.tmp"]
    assert [p.name for p in tmp_path.iterdir()] == ["keep.sealed"]


def test_home_tightens_what_an_older_solace_left_readable(tmp_path: Path) -> None:
    from solace.config import Config

    root = tmp_path / "home"
    for d in ("memory/Main", "substrate", "files"):
        (root / d).mkdir(parents=True)
    (root / "memory" / "Main" / "snapshot.msgpack").write_bytes(b"old")
    (root / "files" / "USER.md").write_text("me")
    (root / "unrelated.txt").write_text("left alone")
    for p in [root, *root.rglob("*")]:
        os.chmod(p, 0o755 if p.is_dir() else 0o644)
    Home.at(root, Config())
    assert stat.S_IMODE(root.stat().st_mode) == 0o700
    for p in root.rglob("*"):
        mode = stat.S_IMODE(p.stat().st_mode)
        if p.name == "unrelated.txt":
            assert mode == 0o644
        else:
            assert mode == (0o700 if p.is_dir() else 0o600), p
