"""Shared test set-up: no network, ever (the models load from installed packages)."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from collections.abc import Iterator  # noqa: E402
from typing import Any  # noqa: E402

import pytest  # noqa: E402
import trio  # noqa: E402
import trio.testing  # noqa: E402

# How long the run loop waits, in real seconds, for a worker thread before it jumps
# the virtual clock anyway (a thread that blocks for long must not stop time).
THREAD_GRACE_S = 0.02


@pytest.fixture
def autojump_clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[trio.testing.MockClock]:
    """pytest-trio's autojump clock, that does not jump while a worker thread works.

    With ``autojump_threshold=0`` the run loop counts itself idle whenever no task is
    runnable, also while a task waits on ``trio.to_thread.run_sync``. It then polls
    with a zero timeout and jumps to the next deadline again and again: virtual hours
    pass during one embedding call, and the polling loop holds the GIL the worker
    needs, so on an idle machine each thread hop cost tens of milliseconds (a runtime
    test took minutes). While a thread is outstanding the threshold is
    ``THREAD_GRACE_S`` instead: the loop sleeps until the thread is done (it wakes the
    loop) and jumps only if the thread takes longer than that.

    So a test whose tasks never all sleep at once (a loop of ``sleep(0)`` beside
    threads) barely moves virtual time: pace such loops with a virtual sleep.
    """
    clock = trio.testing.MockClock(autojump_threshold=0)
    real_run_sync = trio.to_thread.run_sync
    outstanding = 0

    async def run_sync(*args: Any, **kwargs: Any) -> Any:
        nonlocal outstanding
        outstanding += 1
        clock.autojump_threshold = THREAD_GRACE_S
        try:
            return await real_run_sync(*args, **kwargs)
        finally:
            outstanding -= 1
            if outstanding == 0:
                clock.autojump_threshold = 0

    monkeypatch.setattr(trio.to_thread, "run_sync", run_sync)
    yield clock
