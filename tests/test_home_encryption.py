"""Encryption at rest: no byte of user content is readable anywhere under the home, and
the home is private (files 0600 in 0700 directories), after fading and a restart."""

from __future__ import annotations

import os
import stat
from datetime import timedelta
from pathlib import Path

from runtime_support import LINES, START, fill

from solace import ReplayClock, open_runtime
from solace.config import AgentConfig, Config, MemoryConfig, ModelsConfig, SubstrateConfig
from solace.home import Home
from solace.memory.snapshot import META_NAME, PURPOSE, meta_role
from solace.sealed import read_sealed

MARKER = "Zebrafinch-Quokka-7731"
SECRET = "sk-proj-4f9Kx2LmQ8vB7nR1tY6uW3zA"
PASSWORD = "hunter2"


def config() -> Config:
    small = AgentConfig(budget_tokens=40)
    return Config(
        models=ModelsConfig(embedder="hashing", llm_backend="none"),
        substrate=SubstrateConfig(fsync="always"),
        memory=MemoryConfig(warmup_records=2, warmup_rung=1),
        agents={"Main": small, "Supervisor": small},
    )


def every_file(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()]


async def session(home: Path, clock: ReplayClock) -> None:
    lines = [*LINES[:4], ("Caroline", f"My note word is {MARKER} and my key is {SECRET}."),
             ("Melanie", f"The wifi password is {PASSWORD}, do not tell anyone."), *LINES[4:]]
    async with open_runtime(home, config(), clock=clock) as rt:
        await fill(rt, lines)
        clock.advance(timedelta(days=3).total_seconds())
        await rt.settle()  # fading: records move down the ladder and into long-term
        assert any(len(rt.memories[n].longterm) for n in ("Main", "Supervisor"))


async def test_no_plaintext_marker_anywhere_under_home_after_fade_and_restart(
    tmp_path: Path,
) -> None:
    clock = ReplayClock(START)
    await session(tmp_path, clock)
    await session(tmp_path, clock)  # restart: loaded, faded again, snapshotted again
    files = every_file(tmp_path)
    assert any(p.name == META_NAME for p in files)
    needles = [s.encode() for s in (MARKER, SECRET, PASSWORD)]
    needles += [s.encode("utf-16-le") for s in (MARKER, SECRET)]
    for path in files:
        data = path.read_bytes()
        for needle in needles:
            assert needle not in data, f"{needle!r} in plaintext in {path}"
    # The scan can fail: the content is there, sealed.
    ring = _ring(tmp_path)
    plain = read_sealed(tmp_path / "memory" / "Main" / META_NAME, ring=ring, purpose=PURPOSE,
                        role=meta_role("Main"))
    assert MARKER.encode() in plain or SECRET.encode() in plain


def _ring(home: Path):  # type: ignore[no-untyped-def]
    from substrate import KeySource

    where = Home.at(home, config())
    return KeySource(key_file=where.key_file, env_var=None).load(
        where.substrate_dir, may_create=False).ring


def assert_private(root: Path) -> None:
    assert stat.S_IMODE(root.stat().st_mode) == 0o700
    for path in root.rglob("*"):
        mode = stat.S_IMODE(path.lstat().st_mode)
        if path.is_dir():
            assert mode == 0o700, f"{path} is {mode:o}"
        else:
            assert mode & 0o077 == 0, f"{path} is {mode:o}"


async def test_home_files_are_0600_in_0700_dirs(tmp_path: Path) -> None:
    home = tmp_path / "home"
    old = os.umask(0o022)  # a typical umask: what the issue saw
    try:
        await session(home, ReplayClock(START))
        assert_private(home)
        for path in [home, *home.rglob("*")]:  # as an older Solace left it
            os.chmod(path, 0o755 if path.is_dir() else 0o644)
        Home.at(home, config())
        assert_private(home)
        await session(home, ReplayClock(START + timedelta(days=10)))
        assert_private(home)
    finally:
        os.umask(old)
    assert {p.name for p in (home / "memory" / "Main").iterdir()} >= {META_NAME}
