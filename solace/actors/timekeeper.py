"""Time: a heartbeat of temporal cues, paused while Supervisor is in hyperfocus.

Every ``runtime.time_heartbeat_seconds`` Time appends a ``cue`` event saying what
time it is and how long it has been since anything else happened; Time and Main
perceive it (see :mod:`solace.actors.routing`). Each beat also runs one workspace
cycle (seed 003): NOW.md rewritten, MEMORY.md and the roll-ups synthesised every
``[workspace] synthesize_every_hours``. Its working budget is tiny because
such cues are cheap to lose. While paused, beats are skipped, not queued: the agent
whose job is to remind everyone that time has passed knows when to shut up.
"""

from __future__ import annotations

from datetime import UTC, datetime

import trio

from solace.actors.base import Actor

__all__ = ["TimeActor", "format_cue"]


def _span(seconds: float) -> str:
    seconds = max(0.0, seconds)
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size:
            n = int(seconds // size)
            return f"{n} {unit}{'s' if n != 1 else ''}"
    return "less than a minute"


def format_cue(now: float, last_event_ts: float | None) -> str:
    """The text of one heartbeat cue at ``now`` (epoch seconds)."""
    stamp = datetime.fromtimestamp(now, tz=UTC)
    text = f"It is {stamp:%A} {stamp.day} {stamp:%B %Y, %H:%M} UTC."
    if last_event_ts is not None:
        text += f" {_span(now - last_event_ts)} since the last event."
    return text


class TimeActor(Actor):
    """The Time actor. ``paused`` is set by hyperfocus; ``beats`` counts cues written."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.paused = False
        self.beats = 0
        self.skipped = 0
        self.syntheses = 0  # workspace syntheses (MEMORY.md, roll-ups) run on a beat

    async def start_tasks(self, nursery: trio.Nursery) -> None:
        nursery.start_soon(self._heartbeat)

    def pause(self) -> None:
        """Stop writing cues until :meth:`resume` (beats due meanwhile are skipped)."""
        self.paused = True

    def resume(self) -> None:
        """Write cues again from the next beat on."""
        self.paused = False

    async def _heartbeat(self) -> None:
        interval = self.ctx.config.runtime.time_heartbeat_seconds
        while True:
            await trio.sleep(interval)
            if self.paused:
                self.skipped += 1
                continue
            await self.beat()

    async def beat(self) -> int:
        """Write one cue now, then run one workspace cycle (which never raises); returns
        the cue's entry id."""
        now = self.ctx.clock.now()
        entry_id = await self.observe(format_cue(now, self.ctx.last_event_ts()), kind="cue")
        self.beats += 1
        if await self.ctx.workspace_heartbeat():
            self.syntheses += 1
        return entry_id

    def stats(self) -> dict[str, object]:
        out = super().stats()
        out.update(paused=self.paused, beats=self.beats, skipped_beats=self.skipped,
                   workspace_syntheses=self.syntheses)
        return out
