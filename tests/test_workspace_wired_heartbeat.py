"""Time's heartbeat drives the workspace (issue 10): each beat rewrites NOW.md, and
every ``synthesize_every_hours`` a beat synthesises MEMORY.md (and the roll-ups) from
the daily logs; hyperfocus pauses it with the cues."""

from __future__ import annotations

import time
from pathlib import Path

import trio

from solace import TrioClock, open_runtime
from solace.app import Solace
from solace.config import Config, ModelsConfig, RuntimeConfig, SubstrateConfig
from solace.config.schema import WorkspaceConfig

BEAT = 600.0


def config() -> Config:
    return Config(
        models=ModelsConfig(embedder="hashing", llm_backend="none"),
        substrate=SubstrateConfig(fsync="never"),
        runtime=RuntimeConfig(time_heartbeat_seconds=BEAT),
        workspace=WorkspaceConfig(synthesize_every_hours=1.0),
    )


async def wait_for_beats(rt, n: int) -> None:  # type: ignore[no-untyped-def]
    # Bounded in real time (virtual time also runs while worker threads work).
    deadline = time.monotonic() + 30.0
    while time.monotonic() < deadline:
        if rt.workspace_link.beats >= n:
            return
        await trio.sleep(BEAT / 4)
        await trio.to_thread.run_sync(time.sleep, 0.005)
    raise AssertionError(f"fewer than {n} workspace beats after 30 s")


async def test_times_heartbeat_synthesises_memory_md_and_rewrites_now_md(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with open_runtime(tmp_path, config(), clock=TrioClock()) as rt:
        assert rt.workspace is not None
        memory = rt.workspace.root / "MEMORY.md"
        now_md = rt.workspace.root / "NOW.md"
        await Solace(rt).remember("user", "The user keeps bees on the roof.")
        assert not memory.exists()  # only a beat (or a command) synthesises
        deadline = time.monotonic() + 30.0  # a beat before the remember synthesises nothing
        while not memory.exists() or "bees" not in memory.read_text():
            assert time.monotonic() < deadline, "no synthesis after 30 s"
            await wait_for_beats(rt, rt.workspace_link.beats + 1)
        assert "The user keeps bees on the roof." in memory.read_text()
        first_now = now_md.read_text()
        assert rt.agent("Time").stats()["workspace_syntheses"] >= 1
        first_at = rt.workspace.state.synthesized_at
        await Solace(rt).remember("user", "The user's bike is a green Brompton.")
        await wait_for_beats(rt, 2)
        assert now_md.read_text() != first_now  # rewritten each cycle (the time moved)
        deadline = time.monotonic() + 30.0  # beats until the next synthesis is due
        while "Brompton" not in memory.read_text():
            assert time.monotonic() < deadline, "no second synthesis after 30 s"
            await wait_for_beats(rt, rt.workspace_link.beats + 1)
        # Never sooner than synthesize_every_hours after the last (virtual time may jump
        # further while worker threads run, so only the lower bound is checked).
        assert rt.workspace.state.synthesized_at - first_at >= 3600
        syntheses = rt.agent("Time").stats()["workspace_syntheses"]
        assert 2 <= syntheses <= 1 + (rt.clock.now() - first_at) // 3600

async def test_hyperfocus_pauses_the_workspace_heartbeat_with_the_cues(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with open_runtime(tmp_path, config(), clock=TrioClock()) as rt:
        await wait_for_beats(rt, 1)
        at_pause = rt.workspace_link.beats
        rt.hyperfocus(True)
        deadline = time.monotonic() + 30.0
        while True:  # a beat already under way finishes first, then none for 5 beats
            beats = rt.workspace_link.beats
            await trio.sleep(BEAT * 5)
            await trio.to_thread.run_sync(time.sleep, 0.2)
            if rt.workspace_link.beats == beats:
                break
            assert time.monotonic() < deadline, "the heartbeat never paused"
        assert beats <= at_pause + 1  # at most the beat that was under way
        rt.hyperfocus(False)
        await wait_for_beats(rt, beats + 1)
