"""Mood: the advisor that reads the feeling of every event.

Mood's reading (:func:`~solace.models.affect.score_affect`) is what gives the
records other actors create their emotional weight and tags — applied by
:func:`~solace.actors.routing.perceive` as each event is delivered, so a rebuild
after a restart gives the same weights. Mood also keeps its own records of the
emotional events (routing adds it when the weight is high enough), and the running
mood of the session: an exponential moving average of valence and arousal over the
events it is told about.
"""

from __future__ import annotations

from dataclasses import dataclass

import trio

from solace.actors.base import Actor, Message
from solace.models.affect import Affect, score_affect

__all__ = ["EventNotice", "MoodActor"]

SMOOTHING = 0.2  # weight of the newest event in the session mood


@dataclass(frozen=True, slots=True)
class EventNotice(Message):
    """An event was observed; ``content`` is its text."""

    entry_id: int
    content: str


class MoodActor(Actor):
    """The Mood actor. ``valence`` and ``arousal`` are the session's running mood."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.valence = 0.0
        self.arousal = 0.0
        self.assessed = 0
        self.skipped = 0

    def notice(self, entry_id: int, content: str) -> None:
        """Tell Mood an event was observed, without waiting: if its inbox is full the
        sample is skipped (the session mood is an average; nothing stored is lost)."""
        try:
            self._send.send_nowait(EventNotice(entry_id, content))
        except trio.WouldBlock:
            self.skipped += 1

    def assess(self, text: str) -> Affect:
        """Mood's reading of ``text`` (pure; see :func:`score_affect`)."""
        return score_affect(text)

    async def handle(self, message: Message) -> None:
        if not isinstance(message, EventNotice):
            await super().handle(message)
            return
        affect = score_affect(message.content)
        if affect.weight > 0.0:
            self.valence += SMOOTHING * (affect.valence - self.valence)
            self.arousal += SMOOTHING * (affect.arousal - self.arousal)
        self.assessed += 1

    def stats(self) -> dict[str, object]:
        out = super().stats()
        out.update(session_valence=round(self.valence, 3), session_arousal=round(self.arousal, 3),
                   assessed=self.assessed)
        return out
