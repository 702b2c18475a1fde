"""The trio adapter: many tasks append concurrently without blocking the loop or
interleaving frames."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from substrate import NewEvent, UnknownEntryError, open_substrate
from substrate.aio import TrioSubstrate, open_trio_substrate

KEY = bytes(range(32))


@pytest.mark.parametrize("fsync", ["always", "batch"])
async def test_many_trio_tasks_get_monotonic_ids_and_verify_passes(
    tmp_path: Path, fsync: str
) -> None:
    tasks, per_task = 20, 25
    got: dict[int, list[int]] = {}

    async with await open_trio_substrate(
        tmp_path, KEY, fsync=fsync, segment_bytes=8192, limiter=trio.CapacityLimiter(8)
    ) as sub:

        async def worker(t: int) -> None:
            ids = []
            for i in range(per_task):
                if i % 5 == 4:
                    ids += await sub.append_many(
                        [NewEvent(f"T{t}", "message", f"{t}:{i}:{j}", ts=1.0) for j in range(2)]
                    )
                else:
                    ids.append(await sub.append(f"T{t}", "message", f"{t}:{i}", ts=1.0))
            got[t] = ids

        async with trio.open_nursery() as nursery:
            for t in range(tasks):
                nursery.start_soon(worker, t)

        all_ids = sorted(i for ids in got.values() for i in ids)
        assert all_ids == list(range(1, sub.last_id + 1))
        for t, ids in got.items():
            assert ids == sorted(ids)
            events = [await sub.get(i) for i in ids]
            assert {e.agent for e in events} == {f"T{t}"}
        report = await sub.verify()
        assert report.frames == len(all_ids) and report.segments > 1
        assert (await sub.stats()).events == len(all_ids)
        assert [e.entry_id for e in await sub.scan(agent="T3")] == got[3]


async def test_errors_cross_the_thread_boundary_unchanged(tmp_path: Path) -> None:
    async with TrioSubstrate(open_substrate(tmp_path, KEY)) as sub:
        with pytest.raises(UnknownEntryError):
            await sub.get(1)
        with pytest.raises(ValueError, match="unknown kind"):
            await sub.append("Main", "nope", "x")


async def test_the_event_loop_keeps_running_during_appends(tmp_path: Path) -> None:
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await trio.sleep(0)

    async with await open_trio_substrate(tmp_path, KEY, fsync="always") as sub:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(ticker)
            for i in range(20):
                await sub.append("Main", "message", str(i), ts=1.0)
            nursery.cancel_scope.cancel()
    assert ticks >= 20
