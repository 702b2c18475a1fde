"""Supervised background tasks: a failure is logged and restarted, never fatal, never silent.

The runtime's long-lived tasks — each actor's task tree (its fade coroutine, its
reasoning loop, its own timers), the conversation layer's timers, the status line —
run under :func:`supervise`. If one raises, the exception is logged at ERROR with the
task's name, counted in its :class:`TaskHealth` (which ``Runtime.inspect()`` shows),
and the task is started again after a back-off that doubles on each consecutive
failure; after :attr:`Backoff.degrade_after` consecutive failures the task is marked
degraded until a run of it lasts :attr:`Backoff.healthy_after` seconds. So one agent's
broken fade can slow that agent down, but never cancels its siblings' nursery, never
takes the process down and never fails unreported.

Cancellation is not a failure: ``trio.Cancelled`` (a ``BaseException``) passes through
untouched, so leaving ``open_runtime`` still stops everything at once. Time is trio's
clock (virtual under ``MockClock``), never the wall clock.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import trio

__all__ = ["Backoff", "TaskHealth", "describe", "supervise"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Backoff:
    """When a failed task is restarted.

    Attributes:
        initial: seconds before the first restart. factor: multiplies the wait after
            each consecutive failure. maximum: the longest wait.
        healthy_after: a run lasting this long resets the wait and clears ``degraded``.
        degrade_after: consecutive failures that mark the task degraded.
    """

    initial: float = 1.0
    factor: float = 2.0
    maximum: float = 300.0
    healthy_after: float = 60.0
    degrade_after: int = 3

    def __post_init__(self) -> None:
        for name in ("initial", "maximum", "healthy_after"):
            value = getattr(self, name)
            if not value > 0:
                raise ValueError(f"Backoff.{name} must be > 0, got {value!r}")
        if not self.factor >= 1:
            raise ValueError(f"Backoff.factor must be >= 1, got {self.factor!r}")
        if self.degrade_after < 1:
            raise ValueError(f"Backoff.degrade_after must be >= 1, got {self.degrade_after!r}")


@dataclass(slots=True)
class TaskHealth:
    """How one supervised task has fared (mutated by :func:`supervise` only).

    Attributes:
        name: the task's name, as logged. failures: runs that raised, in all.
        consecutive: failures since the last healthy run. restarts: runs started again.
        last_error: the latest failure, described (type and message), or None.
        degraded: ``consecutive >= degrade_after`` and no healthy run since.
    """

    name: str
    failures: int = 0
    consecutive: int = 0
    restarts: int = 0
    last_error: str | None = None
    degraded: bool = False

    def as_dict(self) -> dict[str, object]:
        """For ``inspect()``: the counters and the last error."""
        return {
            "task_failures": self.failures,
            "task_restarts": self.restarts,
            "last_task_error": self.last_error,
            "degraded": self.degraded,
        }


class _StartedOnce:
    """Passes ``started()`` to the real task status the first time only, so a restarted
    run (which calls it again) does not upset ``nursery.start``."""

    def __init__(self, status: trio.TaskStatus[None]) -> None:
        self._status = status
        self.done = False

    def started(self, value: None = None) -> None:
        if not self.done:
            self.done = True
            self._status.started(value)


def describe(exc: BaseException) -> str:
    """``"Type: message"`` of ``exc``, or of each leaf of an exception group."""
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(describe(e) for e in exc.exceptions)
    return f"{type(exc).__name__}: {exc}"


async def supervise(
    fn: Callable[..., Awaitable[Any]],
    health: TaskHealth,
    *,
    backoff: Backoff = Backoff(),  # noqa: B008  (frozen: one shared default is safe)
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Run ``fn(task_status=...)`` until cancelled, restarting it whenever it raises.

    Args:
        fn: a long-lived task taking ``task_status`` (as for ``nursery.start``).
        health: where failures are counted (shown by ``inspect()``).
        backoff: when to restart.
        task_status: reported started once, the first time ``fn`` reports it.

    Returns:
        When ``fn`` returns normally (a task that is done is not restarted).

    Guarantees: an ``Exception`` from ``fn`` is logged at ERROR (naming
    ``health.name`` and the exception, with its traceback) and counted before the
    restart; it never propagates. ``BaseException`` (cancellation,
    ``KeyboardInterrupt``) always does.
    """
    status = _StartedOnce(task_status)
    delay = backoff.initial
    while True:
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(_healthy_after, health, backoff)
                await fn(task_status=status)
                nursery.cancel_scope.cancel()
            return
        except Exception as exc:  # logged and counted here; cancellation passes through
            if health.consecutive == 0:
                delay = backoff.initial
            health.failures += 1
            health.consecutive += 1
            health.last_error = describe(exc)
            health.degraded = health.consecutive >= backoff.degrade_after
            log.error(
                "%s failed (%d in a row, %d in all%s): %s; restarting in %.3g s",
                health.name, health.consecutive, health.failures,
                ", degraded" if health.degraded else "", health.last_error, delay,
                exc_info=exc,
            )
        await trio.sleep(delay)
        delay = min(delay * backoff.factor, backoff.maximum)
        health.restarts += 1


async def _healthy_after(health: TaskHealth, backoff: Backoff) -> None:
    await trio.sleep(backoff.healthy_after)
    if health.consecutive:
        log.info("%s has run %.3g s since its last failure: healthy again",
                 health.name, backoff.healthy_after)
    health.consecutive = 0
    health.degraded = False
