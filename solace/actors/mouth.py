"""Mouth: the thought→speech filter, the only actor that emits ``speech`` events.

Drafts come in (from Main); what survives :func:`~solace.actors.mouth_filter.to_speech`
is appended as a ``speech`` event and handed to whoever waits for the reply. A draft
that is all narration or secrets produces no speech event at all.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import trio

from solace.actors.base import Actor, Message
from solace.actors.mouth_filter import to_speech

__all__ = ["DraftMessage", "Mouth", "Speech", "send_speech"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Speech:
    """What was said aloud in answer to one draft.

    Attributes:
        text: the spoken text ("" when nothing could be said).
        entry_id: the ``speech`` event's id, None when nothing was said.
        draft_id: the entry id of the draft it came from.
        dropped_narration / dropped_credentials: lines the filter removed.
    """

    text: str
    entry_id: int | None
    draft_id: int | None
    dropped_narration: int = 0
    dropped_credentials: int = 0


@dataclass(frozen=True, slots=True)
class DraftMessage(Message):
    """A draft for Mouth to filter; ``reply`` receives the :class:`Speech`."""

    text: str
    draft_id: int | None
    reply: trio.MemorySendChannel[Speech] | None = None


class Mouth(Actor):
    """Filters drafts into speech. Counters: ``spoken``, ``silenced``, ``redacted_lines``."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.spoken = 0
        self.silenced = 0
        self.redacted_lines = 0
        self.unrecorded = 0

    async def handle(self, message: Message) -> None:
        if not isinstance(message, DraftMessage):
            await super().handle(message)
            return
        spoken = to_speech(message.text)
        self.redacted_lines += spoken.dropped_narration + spoken.dropped_credentials
        entry_id = None
        if spoken.silent:
            self.silenced += 1
            log.info("Mouth: draft %s had nothing sayable", message.draft_id)
        else:
            try:
                entry_id = await self.observe(spoken.text, kind="speech")
            except OSError as exc:  # a full disk: say it all the same, unrecorded
                self.unrecorded += 1
                log.error("Mouth: speech for draft %s not recorded (%s)", message.draft_id, exc)
            self.spoken += 1
        speech = Speech(spoken.text, entry_id, message.draft_id, spoken.dropped_narration,
                        spoken.dropped_credentials)
        await self.ctx.publish(speech)
        await send_speech(message.reply, speech)

    def stats(self) -> dict[str, object]:
        out = super().stats()
        out.update(spoken=self.spoken, silenced=self.silenced,
                   redacted_lines=self.redacted_lines, unrecorded=self.unrecorded)
        return out


async def send_speech(reply: trio.MemorySendChannel[Speech] | None, speech: Speech) -> None:
    """Hand ``speech`` to whoever waits for it, if anyone still does."""
    if reply is None:
        return
    try:
        await reply.send(speech)
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        pass  # the asker stopped waiting; the speech is recorded all the same
