"""Full disks for tests (no tests here): ENOSPC injected at the write layer, or a real
small tmpfs where the machine lets us mount one."""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from substrate.segments import SegmentFiles


def fd_path(fd: int) -> str:
    """The path an open file descriptor refers to ('' if unknown)."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return ""


class FullDisk:
    """Makes ``os.write``/``os.fsync``/``os.replace`` fail with ENOSPC for paths that
    ``matches`` while :attr:`full` is set; counts the refusals per call. The substrate's
    appends go through its Python path meanwhile (``os.write``)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, matches: Callable[[str], bool],
                 calls: tuple[str, ...] = ("write",)) -> None:
        self.matches = matches
        self.full = True
        self.refused: dict[str, int] = {}
        real_write, real_fsync, real_replace = os.write, os.fsync, os.replace

        def refuse(call: str, path: str) -> None:
            if self.full and call in calls and self.matches(path):
                self.refused[call] = self.refused.get(call, 0) + 1
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), path)

        def write(fd: int, data: Any) -> int:
            refuse("write", fd_path(fd))
            return real_write(fd, data)

        def fsync(fd: Any) -> None:
            refuse("fsync", fd_path(fd if isinstance(fd, int) else fd.fileno()))
            real_fsync(fd)

        def replace(src: Any, dst: Any, **kw: Any) -> None:
            refuse("replace", str(dst))
            real_replace(src, dst, **kw)

        monkeypatch.setattr(os, "write", write)
        monkeypatch.setattr(os, "fsync", fsync)
        monkeypatch.setattr(os, "replace", replace)
        # The compiled append (substrate/_native.c) calls write(2) itself, out of reach:
        # send every frame through the Python path, whose os.write is refused above.
        monkeypatch.setattr(SegmentFiles, "write_sealed", lambda self, *event: None)


@contextlib.contextmanager
def small_tmpfs(where: Path, size: str = "2m") -> Iterator[Path]:
    """A tmpfs of ``size`` mounted at ``where`` for the block; skips the test if the
    machine does not allow mounting."""
    where.mkdir(parents=True, exist_ok=True)
    try:
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs",
                        str(where)], check=True, capture_output=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as exc:
        pytest.skip(f"cannot mount a tmpfs here ({exc})")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False, capture_output=True,
                       timeout=30)


def fill(directory: Path) -> Path:
    """Fill the file system of ``directory`` to the last byte; returns the filler file
    (delete it to give the space back)."""
    filler = directory / "filler.bin"
    chunk = b"\0" * 65536
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        while True:
            try:
                os.write(fd, chunk)
            except OSError as exc:
                if exc.errno != errno.ENOSPC:
                    raise
                if len(chunk) == 1:
                    break
                chunk = chunk[: len(chunk) // 2]
    finally:
        os.close(fd)
    return filler
