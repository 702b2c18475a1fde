"""The texts retrieval derives from substrate events, with speakers as the
conversation layer names them: a rehydrated record (:func:`rehydrate_for`) and a unit's
line (:func:`resolved_turn`). They join the conversation layer and the ladder, so they
live beside the runtime rather than in either."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from solace.conversation.events import speaker_of

__all__ = ["rehydrate_for", "resolved_turn"]


def rehydrate_for(
    rehydrate_text: Any, tokenizer: Any, config: Any, events: Sequence[Any], rung: int, *,
    perspective: str = "whole",
) -> str:
    """The ladder's ``rehydrate_text`` over ``events`` with their speakers as routing
    names them (a message the conversation layer logged for the user is the user's),
    for an agent with ``perspective``."""
    from substrate import Event

    named = [
        e if speaker_of(e) == e.agent
        else Event(e.entry_id, e.ts, speaker_of(e), e.kind, e.content, e.attrs)
        for e in events
    ]
    return str(rehydrate_text(named, rung, tokenizer=tokenizer, config=config,
                              perspective=perspective))


def resolved_turn(event: Any) -> str:
    """One event as a self-contained line: ``"Speaker: content"`` with relative dates
    ("yesterday", "last week") rewritten as the dates they meant when it was said.

    Every word of the utterance is kept (unlike the ladder's rung-1 key sentences),
    so detail is not lost; only what would be wrong out of context is fixed.
    """
    from solace.memory.ladder import format_raw, resolve_relative_dates

    return format_raw(speaker_of(event), resolve_relative_dates(event.content, event.ts))
