"""Supervised tasks: a failure is logged at ERROR, counted and restarted with back-off."""

from __future__ import annotations

import logging

import pytest
import trio
import trio.testing

from solace.supervision import Backoff, TaskHealth, describe, supervise


class Flaky:
    """Fails ``failures`` times (after reporting started), then runs until cancelled."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.starts: list[float] = []

    async def __call__(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
                       ) -> None:
        self.starts.append(trio.current_time())
        task_status.started()
        if len(self.starts) <= self.failures:
            raise RuntimeError(f"boom {len(self.starts)}")
        await trio.sleep_forever()


async def test_a_failing_task_is_logged_counted_and_restarted_with_back_off(
    autojump_clock: trio.testing.MockClock, caplog: pytest.LogCaptureFixture
) -> None:
    flaky, health = Flaky(failures=2), TaskHealth("Main tasks")
    async with trio.open_nursery() as nursery:
        await nursery.start(supervise, flaky, health)  # started once, though run 3 times
        await trio.sleep(10)
        nursery.cancel_scope.cancel()
    assert flaky.starts == [0.0, 1.0, 3.0]  # waits of 1 s, then 2 s
    assert (health.failures, health.restarts, health.last_error) == (2, 2, "RuntimeError: boom 2")
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert [r.getMessage().split(";")[0] for r in errors] == [
        "Main tasks failed (1 in a row, 1 in all): RuntimeError: boom 1",
        "Main tasks failed (2 in a row, 2 in all): RuntimeError: boom 2",
    ]
    assert all(r.exc_info is not None for r in errors)  # with the traceback


async def test_repeated_failures_mark_the_task_degraded_until_a_run_lasts(
    autojump_clock: trio.testing.MockClock,
) -> None:
    backoff = Backoff(initial=1.0, factor=2.0, maximum=4.0, healthy_after=30.0, degrade_after=3)
    flaky, health = Flaky(failures=4), TaskHealth("Mood tasks")
    async with trio.open_nursery() as nursery:
        nursery.start_soon(lambda: supervise(flaky, health, backoff=backoff))
        await trio.sleep(5)
        assert health.degraded and health.consecutive == 3
        await trio.sleep(60)
        nursery.cancel_scope.cancel()
    assert flaky.starts == [0.0, 1.0, 3.0, 7.0, 11.0]  # waits capped at 4 s
    assert not health.degraded and health.consecutive == 0 and health.failures == 4


async def test_cancellation_is_not_a_failure(autojump_clock: trio.testing.MockClock) -> None:
    flaky, health = Flaky(failures=0), TaskHealth("Time tasks")
    with trio.move_on_after(5):
        await supervise(flaky, health)
    assert (health.failures, health.restarts, flaky.starts) == (0, 0, [0.0])


async def test_a_task_that_returns_is_not_restarted() -> None:
    calls = []

    async def once(*, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        calls.append(1)
        task_status.started()

    health = TaskHealth("status line")
    await supervise(once, health)
    assert calls == [1] and health.failures == 0


def test_exception_groups_are_described_leaf_by_leaf() -> None:
    group = ExceptionGroup("x", [ValueError("a"), ExceptionGroup("y", [KeyError(3)])])
    assert describe(group) == "ValueError: a; KeyError: 3"


def test_backoff_refuses_nonsense() -> None:
    with pytest.raises(ValueError, match="initial must be > 0, got 0"):
        Backoff(initial=0)
    with pytest.raises(ValueError, match="factor must be >= 1"):
        Backoff(factor=0.5)
