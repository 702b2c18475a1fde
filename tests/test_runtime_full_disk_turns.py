"""On a full disk a chat turn is answered with what went wrong (never a hang or a dead
runtime), observe raises StorageFullError naming what it could not write, and recall
keeps serving."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio
from disk_support import FullDisk

from solace import StorageFullError, TrioClock, open_runtime
from solace.config import Config, ModelsConfig, SubstrateConfig


def config() -> Config:
    return Config(models=ModelsConfig(embedder="hashing", llm_backend="none"),
                  substrate=SubstrateConfig(fsync="always"))


async def test_a_turn_on_a_full_disk_is_answered_and_the_runtime_lives_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, autojump_clock: trio.testing.MockClock
) -> None:
    async with open_runtime(tmp_path, config(), clock=TrioClock()) as rt:
        await rt.agent("Main").observe("I started a pottery class.", speaker="Caroline")
        disk = FullDisk(monkeypatch, lambda path: path.endswith(".sol"))
        before = rt.substrate.last_id
        with pytest.raises(StorageFullError, match="message event by Caroline"):
            await rt.agent("Main").observe("a line the disk refuses", speaker="Caroline")
        with trio.fail_after(10**6):  # virtual: the fade backs off while the disk is full
            speech = await rt.ask("What class did Caroline start?")
        assert speech.text.startswith("I could not finish that turn")
        assert rt.inspect("Main")["Main"]["failed_turns"] == 1
        hits = await rt.agent("Main").recall("pottery class", k=3)
        assert hits and "pottery" in hits[0].text
        disk.full = False
        with trio.fail_after(10**6):  # virtual: the fade backs off while the disk is full
            speech = await rt.ask("What class did Caroline start?")
        assert not speech.text.startswith("I could not finish that turn")
        assert rt.substrate.last_id > before
