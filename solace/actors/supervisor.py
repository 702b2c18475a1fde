"""Supervisor: narrative coherence across the session, with the largest budget.

Supervisor perceives every message and every utterance (see
:mod:`solace.actors.routing`) and keeps them sharp longest: forgetting context is
more expensive for it than holding it. Hyperfocus ("seven layers deep ... I need to
surface") temporarily multiplies its working budget by
``runtime.hyperfocus_factor``; leaving hyperfocus restores the budget it had before.
Pausing Time's heartbeat meanwhile is the runtime's part (``Runtime.hyperfocus``):
an actor never reaches into a peer.
"""

from __future__ import annotations

import logging

from solace.actors.base import Actor

__all__ = ["Supervisor"]

log = logging.getLogger(__name__)


class Supervisor(Actor):
    """The Supervisor actor. ``hyperfocus`` tells whether it is in hyperfocus."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.hyperfocus = False
        self._budget_before: int | None = None

    def set_hyperfocus(self, on: bool) -> None:
        """Enter or leave hyperfocus; idempotent.

        Entering multiplies the working budget by ``runtime.hyperfocus_factor`` (the
        retune wakes the fade coroutine); leaving restores the budget Supervisor had
        when it entered (a retune made during hyperfocus is undone).
        """
        if on == self.hyperfocus:
            return
        if on:
            self._budget_before = int(self.memory.config.budget_tokens)
            factor = self.ctx.config.runtime.hyperfocus_factor
            self.memory.tune(budget_tokens=int(self._budget_before * factor))
        else:
            assert self._budget_before is not None
            self.memory.tune(budget_tokens=self._budget_before)
            self._budget_before = None
        self.hyperfocus = on
        log.info("Supervisor: hyperfocus %s (budget %d tokens)", "on" if on else "off",
                 self.memory.config.budget_tokens)

    def stats(self) -> dict[str, object]:
        out = super().stats()
        out["hyperfocus"] = self.hyperfocus
        return out
