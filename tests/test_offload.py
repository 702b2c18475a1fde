"""The one adapter to worker threads: results in order, errors unchanged, chunks in parallel."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

import pytest
import trio

from solace.offload import Foreground, Offloader, start


async def test_run_returns_the_result_and_raises_the_callables_own_error() -> None:
    offloader = Offloader(2)
    assert await offloader.run(sum, [1, 2, 3]) == 6
    with pytest.raises(ZeroDivisionError):
        await offloader.run(lambda: 1 / 0)


async def test_run_chunks_splits_across_threads_and_keeps_the_order() -> None:
    offloader = Offloader(2)
    both_running = threading.Barrier(2, timeout=5)  # passes only if two chunks run at once

    def double(items: Sequence[int]) -> list[int]:
        both_running.wait()
        return [2 * i for i in items]

    chunks = await offloader.run_chunks(double, list(range(40)), min_chunk=8)
    assert [x for chunk in chunks for x in chunk] == [2 * i for i in range(40)]
    assert len(chunks) == 2


async def test_run_chunks_keeps_a_small_batch_whole() -> None:
    offloader = Offloader(2)
    assert await offloader.run_chunks(list, [1, 2, 3], min_chunk=8) == [[1, 2, 3]]
    assert await offloader.run_chunks(list, [], min_chunk=8) == [[]]
    with pytest.raises(ValueError, match="min_chunk"):
        await offloader.run_chunks(list, [1], min_chunk=0)


async def test_run_chunks_with_a_max_chunk_makes_as_many_chunks_as_it_needs_in_order() -> None:
    chunks = await Offloader(2).run_chunks(list, list(range(50)), max_chunk=16)
    assert chunks == [list(range(50))[b:e] for b, e in ((0, 12), (12, 25), (25, 38), (38, 50))]
    assert await Offloader(2).run_chunks(list, list(range(20)), max_chunk=64) == [
        list(range(10)), list(range(10, 20))]  # never fewer chunks than without it
    with pytest.raises(ValueError, match="max_chunk"):
        await Offloader(2).run_chunks(list, [1], max_chunk=0)


async def test_run_chunks_raises_a_chunks_error_unwrapped() -> None:
    def boom(items: Sequence[int]) -> list[int]:
        if 0 in items:
            raise KeyError("first chunk")
        return list(items)

    with pytest.raises(KeyError, match="first chunk"):
        await Offloader(2).run_chunks(boom, list(range(20)), min_chunk=8)


def test_an_offloader_needs_a_thread() -> None:
    with pytest.raises(ValueError, match="threads > 0"):
        Offloader(0)


async def test_a_started_call_finishes_and_returns_even_when_cancelled() -> None:
    with trio.move_on_after(0.01):
        chunks = await Offloader(2).run_chunks(
            lambda items: threading.Event().wait(0.2) or list(items), [1] * 16)
    assert chunks == [[1] * 8, [1] * 8]


async def test_a_started_call_runs_beside_the_loop_and_gives_its_result_or_its_error() -> None:
    loop_ran = threading.Event()

    def waits_for_the_loop() -> str:
        assert loop_ran.wait(5)  # only true if the loop went on while this ran
        return "read"

    pending = start(waits_for_the_loop)
    await trio.sleep(0)
    loop_ran.set()
    assert await pending.result() == "read"
    failing = start(lambda: 1 / 0)
    with pytest.raises(ZeroDivisionError):  # unchanged, not in a group
        await failing.result()


async def _later(go: trio.Event, offloader: Offloader, fn: Callable[[], object]) -> None:
    """Background work: a task started outside any foreground span calls ``fn``."""
    await go.wait()
    await offloader.run(fn)


async def test_a_deferring_offloader_starts_no_call_while_the_foreground_is_held() -> None:
    foreground = Foreground(max_wait=60)
    offloader = Offloader(2, defers_to=foreground)
    started, go = threading.Event(), trio.Event()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_later, go, offloader, started.set)
        with foreground.held():
            go.set()
            await trio.sleep(0.05)  # real time for a thread to start, had it been let
            assert not started.is_set()
    assert started.is_set()
    assert foreground.waits == 1 and foreground.waited_s < 60


async def test_a_held_foreground_delays_background_calls_by_at_most_max_wait() -> None:
    foreground = Foreground(max_wait=0.05)
    offloader = Offloader(1, defers_to=foreground)
    go = trio.Event()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_later, go, offloader, int)
        with foreground.held():
            go.set()
            await trio.sleep(0.5)  # held throughout: the call starts after max_wait anyway
            assert foreground.waits == 1 and 0.05 <= foreground.waited_s < 0.5


async def test_calls_made_inside_the_foreground_never_wait_for_it() -> None:
    foreground = Foreground(max_wait=60)
    offloader = Offloader(2, defers_to=foreground)
    with foreground.held():
        assert await offloader.run(sum, [1, 2]) == 3
        async with trio.open_nursery() as nursery:  # tasks the holder starts: its work
            nursery.start_soon(offloader.run, int)
    assert foreground.waits == 0


def test_a_foreground_needs_a_wait_of_zero_or_more_seconds() -> None:
    with pytest.raises(ValueError, match="max_wait"):
        Foreground(max_wait=-1)
