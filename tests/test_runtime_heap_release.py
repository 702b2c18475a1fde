"""Memory the process freed is handed back to the OS after opening and then now and
again, in real seconds; ``release_heap_seconds = 0`` never does."""

from __future__ import annotations

import dataclasses
import platform
from pathlib import Path

import pytest
import trio
import trio.testing

import solace.runtime
from solace import TrioClock, open_runtime
from solace.config import Config, ModelsConfig, RuntimeConfig, SubstrateConfig
from solace.heap import release_free_heap


def config(release_heap_seconds: float) -> Config:
    return Config(models=ModelsConfig(embedder="hashing", llm_backend="none"),
                  substrate=SubstrateConfig(fsync="never"),
                  runtime=RuntimeConfig(release_heap_seconds=release_heap_seconds))


@pytest.mark.parametrize("every", [60.0, 0.0])
async def test_freed_heap_is_released_after_opening_and_rarely_after_unless_off(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, monkeypatch: pytest.MonkeyPatch,
    every: float,
) -> None:
    calls = []
    monkeypatch.setattr(solace.runtime, "release_free_heap", lambda: calls.append(1) or True)
    async with open_runtime(tmp_path, config(every), clock=TrioClock()):
        await trio.sleep(3600)  # an hour of the test's clock is not an hour of real time
    assert len(calls) == (1 if every else 0)


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="malloc_trim is glibc's")
def test_heap_freed_by_python_goes_back_to_the_os() -> None:
    release_free_heap()
    blocks = [bytes(2048) + bytes([i % 256]) for i in range(20_000)]  # 40 MB from malloc
    del blocks
    assert release_free_heap()  # pages were returned


def test_a_negative_interval_is_refused_naming_the_key() -> None:
    with pytest.raises(ValueError, match="release_heap_seconds must be >= 0"):
        dataclasses.replace(RuntimeConfig(), release_heap_seconds=-1.0)
