"""Time's heartbeat, paused while Supervisor is in hyperfocus (which widens its budget)."""

from __future__ import annotations

import time
from pathlib import Path

import trio

from solace import TrioClock, open_runtime
from solace.config import Config, ModelsConfig, RuntimeConfig, SubstrateConfig

BEAT = 600.0


def config() -> Config:
    return Config(
        models=ModelsConfig(embedder="hashing", llm_backend="none"),
        substrate=SubstrateConfig(fsync="never"),
        runtime=RuntimeConfig(time_heartbeat_seconds=BEAT, hyperfocus_factor=3.0),
    )


async def cues(rt) -> list:  # type: ignore[no-untyped-def]
    return await rt.substrate.scan(agent="Time", kind="cue")


async def wait_for_cues(rt, n: int) -> list:  # type: ignore[no-untyped-def]
    # Under the autojump clock virtual time also runs while worker threads work
    # (substrate writes, embedding), so a hundred virtual heartbeats can pass while one
    # beat's write is still in its thread on a loaded machine: bound the wait in real
    # time instead, and let the threads run between beats.
    deadline = time.monotonic() + 30.0
    while time.monotonic() < deadline:
        if rt.agent("Time").beats >= n:  # counted once a cue is written and delivered
            return (await cues(rt))[:n]
        await trio.sleep(BEAT)
        await trio.to_thread.run_sync(time.sleep, 0.005)
    raise AssertionError(f"fewer than {n} cues after 30 s")


async def test_time_writes_a_cue_every_heartbeat_perceived_by_time_and_main(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with open_runtime(tmp_path, config(), clock=TrioClock()) as rt:
        written = await wait_for_cues(rt, 3)
        gaps = [b.ts - a.ts for a, b in zip(written, written[1:], strict=False)]
        assert all(gap >= BEAT for gap in gaps), gaps  # never faster than the heartbeat
        assert written[0].content.startswith("It is ")
        for event in written:
            for name in ("Time", "Main"):
                memory = rt.memories[name]
                held = [*memory.working.records(), *memory.longterm.records()]
                assert any(event.entry_id in r.entry_ids for r in held), name


async def test_hyperfocus_pauses_time_and_expands_supervisor_budget_until_it_ends(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with open_runtime(tmp_path, config(), clock=TrioClock()) as rt:
        supervisor = rt.memories["Supervisor"]
        base = supervisor.working.budget_tokens
        await trio.sleep(BEAT / 2)
        rt.hyperfocus(True)
        assert supervisor.working.budget_tokens == 3 * base
        await trio.sleep(BEAT)  # a beat already past its pause check finishes first
        paused_from = len(await cues(rt))
        await trio.sleep(5 * BEAT)
        assert len(await cues(rt)) == paused_from  # not one cue while in hyperfocus
        skipped = rt.agent("Time").stats()["skipped_beats"]
        assert isinstance(skipped, int) and skipped >= 1
        rt.hyperfocus(False)
        assert supervisor.working.budget_tokens == base
        await wait_for_cues(rt, paused_from + 1)  # the heartbeat resumes
