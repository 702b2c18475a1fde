"""When evaluation runs: the triggers, the 2,000 ms trailing-edge debounce, ``hasEvaluated``.

The same pipeline (drift detection, then a silent fork or an in-place summary
refresh) fires from several triggers so a topic is summarised even when the user
walks away mid-conversation:

* ``interval`` — every ``drift_interval`` (10) messages, from the message handler;
* ``topic_creation`` — handled inline: the prior topic is summarised before the new
  one becomes active;
* the exit triggers ``navigation``, ``visibility_hidden`` and ``disconnect`` — they
  come in bursts (tab switch, then socket drop, then navigation), so they go through
  one trailing-edge :class:`Debouncer` that runs the pipeline once, ``debounce_ms``
  after the last trigger of the burst.

A ``hasEvaluated`` flag per session (:class:`EvaluatedGuard`) then suppresses further
evaluations of the active topic until a new message arrives or the active topic
changes. Evaluations are queued (:class:`EvaluationQueue`) and run one at a time in
the service's background task: fire-and-forget for the caller.

Timers use trio's clock (virtual under ``MockClock``), never the wall clock.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Awaitable, Callable

import trio

from solace.conversation.errors import InvalidArgumentError
from solace.conversation.evaluation import EvaluationReport, Evaluator
from solace.conversation.model import EXIT_TRIGGERS, Trigger

__all__ = [
    "EXIT_TRIGGERS",
    "Debouncer",
    "EvaluatedGuard",
    "EvaluationQueue",
    "Lifecycle",
    "Trigger",
]

log = logging.getLogger(__name__)


class Debouncer:
    """Trailing-edge debounce per key: ``fire(key)`` once, ``delay`` seconds after the
    last :meth:`poke` of a burst.

    Pokes before :meth:`run` starts are kept and fire once it runs. ``fire`` is
    called from the run task and must not block (it schedules work).
    """

    def __init__(self, delay: float, fire: Callable[[str], None]) -> None:
        if not delay > 0:
            raise ValueError(f"debounce delay must be > 0 seconds, got {delay!r}")
        self.delay = delay
        self._fire = fire
        self._deadlines: dict[str, float] = {}
        self._wake = trio.Event()
        self.fired = 0

    @property
    def pending(self) -> frozenset[str]:
        """Keys with a burst in progress."""
        return frozenset(self._deadlines)

    def fire_now(self) -> int:
        """Fire every pending key at once (the process is exiting); returns how many."""
        due = sorted(self._deadlines.items(), key=lambda kv: kv[1])
        self._deadlines.clear()
        for key, _ in due:
            self.fired += 1
            self._fire(key)
        return len(due)

    def poke(self, key: str) -> None:
        """(Re)start ``key``'s timer: it fires ``delay`` seconds from now."""
        self._deadlines[key] = trio.current_time() + self.delay
        self._wake.set()

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Fire due keys until cancelled."""
        task_status.started()
        while True:
            when = min(self._deadlines.values(), default=math.inf)
            with trio.move_on_at(when):
                await self._wake.wait()
            self._wake = trio.Event()
            now = trio.current_time()
            for key, deadline in sorted(self._deadlines.items(), key=lambda kv: kv[1]):
                if deadline <= now:
                    del self._deadlines[key]
                    self.fired += 1
                    self._fire(key)


class EvaluatedGuard:
    """The ``hasEvaluated`` flags: set after an evaluation, reset by a new message or a
    change of active topic."""

    def __init__(self) -> None:
        self._set: set[str] = set()

    def __contains__(self, session_id: object) -> bool:
        return session_id in self._set

    def mark(self, session_id: str) -> None:
        """The active topic of ``session_id`` has been evaluated."""
        self._set.add(session_id)

    def reset(self, session_id: str) -> None:
        """A new message or a new active topic: the next trigger evaluates again."""
        self._set.discard(session_id)


class EvaluationQueue:
    """Runs scheduled evaluations one at a time, at most one queued per session.

    Args:
        evaluate: ``await evaluate(session_id, trigger)``; it must not raise
            (the service's evaluation swallows and logs its own errors).
    """

    def __init__(self, evaluate: Callable[[str, Trigger], Awaitable[object]]) -> None:
        self._evaluate = evaluate
        self._pending: dict[str, Trigger] = {}
        self._send, self._receive = trio.open_memory_channel[str](math.inf)
        self._running = 0
        self._idle = trio.Event()
        self._idle.set()
        self.completed = 0

    @property
    def pending(self) -> frozenset[str]:
        """Sessions waiting for an evaluation."""
        return frozenset(self._pending)

    def schedule(self, session_id: str, trigger: Trigger) -> bool:
        """Queue an evaluation of ``session_id``; False if one is already queued."""
        if session_id in self._pending:
            return False
        self._pending[session_id] = trigger
        self._idle = trio.Event() if self._idle.is_set() else self._idle
        self._send.send_nowait(session_id)
        return True

    async def settle(self) -> None:
        """Wait until nothing is queued or running (needs :meth:`run` to be running)."""
        while self._pending or self._running:
            await self._idle.wait()

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Run queued evaluations until cancelled."""
        task_status.started()
        async for session_id in self._receive:
            trigger = self._pending.pop(session_id)
            self._running += 1
            try:
                await self._evaluate(session_id, trigger)
            finally:
                self._running -= 1
                self.completed += 1
                if not self._pending and not self._running:
                    self._idle.set()


class Lifecycle:
    """The evaluation side of the service: guard, queue, debounce, error policy.

    Args:
        evaluator: runs the pipeline; replaced on a rebuild (``lifecycle.evaluator``).
        debounce: seconds of quiet after the last exit trigger before evaluating.
    """

    def __init__(self, evaluator: Evaluator, debounce: float) -> None:
        self.evaluator = evaluator
        self.guard = EvaluatedGuard()
        self.queue = EvaluationQueue(self.evaluate_now)
        self.debouncer = Debouncer(debounce, self._debounced)
        self.errors = 0
        self._exit_triggers: dict[str, Trigger] = {}
        self._running = False

    def evaluate(self, session_id: str, trigger: Trigger = "manual") -> None:
        """Schedule an evaluation; returns at once and never raises."""
        self.queue.schedule(session_id, trigger)

    async def evaluate_now(
        self, session_id: str, trigger: Trigger = "manual"
    ) -> EvaluationReport | None:
        """Run the pipeline now unless ``hasEvaluated`` is set. Never raises: errors are
        logged and swallowed (the one place that is specified; the evaluation only
        derives summaries and forks from events already stored); returns None then,
        and the guard stays unset so the next trigger retries."""
        try:
            if session_id in self.guard:
                return EvaluationReport(session_id, trigger, "skipped")
            report = await self.evaluator.evaluate(session_id, trigger)
        except Exception:
            self.errors += 1
            log.exception(
                "evaluation of session %r (%s) failed; will retry on the next trigger",
                session_id, trigger,
            )
            return None
        if report.outcome == "forked":
            self.guard.reset(session_id)  # a new active topic is not yet evaluated
        elif report.outcome in ("empty", "unchanged", "refreshed"):
            self.guard.mark(session_id)
        return report

    def exit_trigger(self, session_id: str, trigger: Trigger) -> None:
        """Route an exit trigger through the debounce.

        Raises:
            InvalidArgumentError: ``trigger`` is not one of :data:`EXIT_TRIGGERS`.
        """
        if trigger not in EXIT_TRIGGERS:
            raise InvalidArgumentError(
                f"exit triggers are {', '.join(EXIT_TRIGGERS)}, got {trigger!r}"
            )
        self._exit_triggers[session_id] = trigger
        self.debouncer.poke(session_id)

    def _debounced(self, session_id: str) -> None:
        self.evaluate(session_id, self._exit_triggers.pop(session_id, "disconnect"))

    async def flush(self) -> None:
        """Fire pending exit triggers without waiting out the debounce, then wait for
        every scheduled evaluation: what a process does on its way out, so a burst
        of exit triggers still evaluates once and nothing is left half done."""
        self.debouncer.fire_now()
        await self.settle()

    async def settle(self) -> None:
        """Wait for every scheduled evaluation to finish (needs :meth:`run`)."""
        if not self._running:
            raise RuntimeError("Conversations.run() is not running; nothing evaluates the queue")
        await self.queue.settle()

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """The evaluation queue and the debounce timers, until cancelled."""
        async with trio.open_nursery() as nursery:
            await nursery.start(self.queue.run)
            await nursery.start(self.debouncer.run)
            self._running = True
            try:
                task_status.started()
                await trio.sleep_forever()
            finally:
                self._running = False
