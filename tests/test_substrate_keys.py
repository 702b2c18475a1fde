"""Key sources: env var wins, key file created once with mode 0600, missing keys refused."""

from __future__ import annotations

import base64
import os
import stat
import threading
from pathlib import Path

import pytest

from substrate import KeyRing, KeySource, MissingKeyError, SubstrateError, open_substrate
from substrate.crypto import format_ring, parse_ring
from substrate.keys import create_key_file

ENV = "SOLACE_SUBSTRATE_KEY"
K1 = bytes(range(32))


@pytest.fixture(autouse=True)
def _no_env_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV, raising=False)


def test_first_open_creates_a_key_file_with_mode_0600(tmp_path: Path) -> None:
    old_umask = os.umask(0)  # even a permissive umask must not widen it
    try:
        with open_substrate(tmp_path, fsync="never") as sub:
            sub.append("Main", "message", "x", ts=1.0)
    finally:
        os.umask(old_umask)
    key_file = tmp_path / "substrate.key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    ring = parse_ring(key_file.read_text())
    assert ring.current_id == 1
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    with open_substrate(tmp_path, fsync="never") as sub:  # reopens with the same key
        assert sub.get(1).content == "x"


def test_key_file_creation_is_exclusive_under_races(tmp_path: Path) -> None:
    path = tmp_path / "k" / "substrate.key"
    rings: list[KeyRing] = []
    threads = [threading.Thread(target=lambda: rings.append(create_key_file(path)))
               for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({r.keys[1] for r in rings}) == 1  # everyone got the one winning key
    assert parse_ring(path.read_text()) == rings[0]


@pytest.mark.parametrize("encode", [bytes.hex, lambda k: base64.b64encode(k).decode()])
def test_env_var_wins_over_the_key_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, encode: object
) -> None:
    (tmp_path / "substrate.key").write_text(format_ring(KeyRing.single(bytes(32))))
    monkeypatch.setenv(ENV, encode(K1))  # type: ignore[operator]
    loaded = KeySource().load(tmp_path, may_create=True)
    assert loaded.ring == KeyRing.single(K1) and loaded.file is None and loaded.origin == f"${ENV}"


def test_env_var_may_hold_a_ring(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, f"1:{K1.hex()},2:{bytes(32).hex()}")
    assert KeySource().load(tmp_path, may_create=False).ring.current_id == 2


def test_a_malformed_env_var_is_an_error_that_does_not_echo_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV, "s3cr3t-but-wrong")
    with pytest.raises(SubstrateError, match=ENV) as info:
        KeySource().load(tmp_path, may_create=True)
    assert "s3cr3t" not in str(info.value)


def test_missing_key_for_existing_data_is_refused(tmp_path: Path) -> None:
    with open_substrate(tmp_path, fsync="never") as sub:
        sub.append("Main", "message", "x", ts=1.0)
    (tmp_path / "substrate.key").unlink()
    with pytest.raises(MissingKeyError, match=r"substrate\.key does not exist.*restore"):
        open_substrate(tmp_path)
    assert not (tmp_path / "substrate.key").exists()  # never silently replaced


def test_a_source_that_may_not_create_refuses_an_empty_directory(tmp_path: Path) -> None:
    with pytest.raises(MissingKeyError, match=ENV):
        KeySource(create=False).load(tmp_path, may_create=True)


def test_a_custom_key_file_and_env_var_name_are_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = KeySource(key_file=tmp_path / "keys" / "ring", env_var="MY_KEY")
    with open_substrate(tmp_path / "sub", key_source=source, fsync="never") as sub:
        sub.append("Main", "message", "x", ts=1.0)
    assert (tmp_path / "keys" / "ring").exists()
    assert not (tmp_path / "sub" / "substrate.key").exists()
    monkeypatch.setenv("MY_KEY", (tmp_path / "keys" / "ring").read_text())
    (tmp_path / "keys" / "ring").unlink()
    with open_substrate(tmp_path / "sub", key_source=source, fsync="never") as sub:
        assert sub.get(1).content == "x"


def test_the_key_source_helper_rotates_the_file_for_the_next_open(tmp_path: Path) -> None:
    with open_substrate(tmp_path, fsync="never") as sub:
        sub.append("Main", "message", "old", ts=1.0)
    assert KeySource().rotate(tmp_path) == 2
    assert stat.S_IMODE((tmp_path / "substrate.key").stat().st_mode) == 0o600
    with open_substrate(tmp_path, fsync="never") as sub:
        sub.append("Main", "message", "new", ts=2.0)
        assert [e.content for e in sub.scan()] == ["old", "new"]
        assert sub.stats().key_ids == {1: 1, 2: 1}


def test_rotating_env_keys_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, K1.hex())
    with pytest.raises(SubstrateError, match="cannot|adding"):
        KeySource().rotate(tmp_path)


@pytest.mark.parametrize("mode", [0o644, 0o666, 0o640, 0o604, 0o700])
def test_a_key_file_open_to_group_or_others_is_refused(tmp_path: Path, mode: int) -> None:
    with open_substrate(tmp_path, fsync="never") as sub:
        sub.append("Main", "message", "x", ts=1.0)
    key_file = tmp_path / "substrate.key"
    key_file.chmod(mode)
    if mode & 0o077:
        with pytest.raises(SubstrateError, match=rf"mode 0{mode:o}.*chmod 600 {key_file}"):
            open_substrate(tmp_path)
        assert stat.S_IMODE(key_file.stat().st_mode) == mode  # refused, never changed
    else:  # owner-only modes are fine
        with open_substrate(tmp_path) as sub:
            assert sub.get(1).content == "x"


def test_a_key_file_with_non_ascii_bytes_is_a_substrate_error(tmp_path: Path) -> None:
    key_file = tmp_path / "substrate.key"
    key_file.write_bytes(f"1:{K1.hex()}\n# clé\n".encode())
    key_file.chmod(0o600)
    with pytest.raises(SubstrateError,
                       match=r"substrate\.key is not ASCII text \(byte 71 is 0xc3\)"):
        open_substrate(tmp_path)


def test_a_key_file_that_is_a_directory_is_a_substrate_error(tmp_path: Path) -> None:
    (tmp_path / "substrate.key").mkdir()
    with pytest.raises(SubstrateError, match=r"substrate\.key is a directory"):
        open_substrate(tmp_path)


def test_an_unreadable_key_file_is_a_substrate_error(tmp_path: Path) -> None:
    key_file = tmp_path / "substrate.key"
    key_file.symlink_to(key_file)  # a symlink loop: ELOOP
    with pytest.raises(SubstrateError, match=r"cannot read the key file .*substrate\.key"):
        open_substrate(tmp_path)
