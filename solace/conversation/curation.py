"""Tri-state curation and the user-decision guard.

A topic is *not in memory*, *promoted* or *deprecated*. The agent moves it
automatically (each summary's ``include_in_memory``) or explicitly (its
``manage_topic_memory`` tool); the user moves it from the UI, CLI or REPL. Once the
user has taken a position the agent cannot override it: ``keepInMemoryManuallySet``
and ``deprecatedManuallySet`` record that position, and un-deprecation is the user's
alone. These are pure decisions that return the events to append or raise
:class:`CurationRejected` with the seed's exact message.
"""

from __future__ import annotations

from typing import Literal

from solace.conversation import events
from solace.conversation.errors import CurationRejected, InvalidArgumentError
from solace.conversation.events import Draft
from solace.conversation.model import CurationState, SummaryMode, Topic

__all__ = [
    "AGENT_ACTIONS",
    "DEPRECATED_MANUAL_MESSAGE",
    "KEEP_MANUAL_MESSAGE",
    "UNDEPRECATE_MESSAGE",
    "USER_ACTIONS",
    "AgentAction",
    "CurationRejected",
    "UserAction",
    "agent_curation",
    "keep_after_summary",
    "user_curation",
]

KEEP_MANUAL_MESSAGE = "keepInMemory was set manually by the user; the agent cannot override it."
DEPRECATED_MANUAL_MESSAGE = (
    "deprecated was set manually by the user; the agent cannot override it."
)
UNDEPRECATE_MESSAGE = (
    "un-deprecation is reserved for the user; the agent cannot un-deprecate a topic."
)

AgentAction = Literal["promote", "demote", "deprecate"]
UserAction = Literal["promote", "demote", "deprecate", "undeprecate", "cycle"]
AGENT_ACTIONS: tuple[str, ...] = ("promote", "demote", "deprecate")
USER_ACTIONS: tuple[str, ...] = ("promote", "demote", "deprecate", "undeprecate", "cycle")


def agent_curation(topic: Topic, action: str, *, min_turns: int) -> list[Draft]:
    """The events for the agent's ``manage_topic_memory`` move, through the guard.

    Args:
        topic: the topic to curate.
        action: ``promote``, ``demote`` or ``deprecate``.
        min_turns: ``MIN_MEMORY_TURNS``; a shorter topic is never promoted.

    Returns:
        The events to append; empty if the topic is already in that state.

    Raises:
        CurationRejected: the user set the flag manually (the seed's messages), the
            agent tried to un-deprecate, promote a deprecated topic (which would
            un-deprecate it) or promote a topic under the turn threshold.
        InvalidArgumentError: an unknown action, naming it.
    """
    if action == "undeprecate":
        raise CurationRejected(UNDEPRECATE_MESSAGE)
    if action not in AGENT_ACTIONS:
        raise InvalidArgumentError(
            f"unknown manage_topic_memory action {action!r} (actions: {', '.join(AGENT_ACTIONS)})"
        )
    if action in ("promote", "demote"):
        if topic.keep_in_memory_manually_set:
            raise CurationRejected(KEEP_MANUAL_MESSAGE)
        if action == "promote" and topic.deprecated:
            raise CurationRejected(
                f"topic {topic.topic_id} is deprecated; {UNDEPRECATE_MESSAGE}"
            )
        if action == "promote" and topic.message_count < min_turns:
            raise CurationRejected(
                f"topic {topic.topic_id} has {topic.message_count} messages; topics with "
                f"fewer than {min_turns} (MIN_MEMORY_TURNS) are never promoted."
            )
        if topic.keep_in_memory == (action == "promote"):
            return []
    else:
        if topic.deprecated_manually_set:
            raise CurationRejected(DEPRECATED_MANUAL_MESSAGE)
        if topic.deprecated:
            return []
    return [events.curation(topic.scope, topic.session_id, topic.topic_id, action, by="agent")]


def user_curation(topic: Topic, action: str) -> list[Draft]:
    """The events for the user's move; always allowed, and it sets the manual flags.

    The actions name the target state: ``promote`` (teal), ``demote`` (gray) and
    ``deprecate`` (red) reach it from any state (promoting or demoting a deprecated
    topic un-deprecates it first); ``undeprecate`` lifts deprecation and leaves the
    keep flag as it was; ``cycle`` is the brain toggle: gray -> teal -> red -> gray.

    Raises:
        InvalidArgumentError: an unknown action, naming it.
    """
    if action not in USER_ACTIONS:
        raise InvalidArgumentError(
            f"unknown curation action {action!r} (actions: {', '.join(USER_ACTIONS)})"
        )
    if action == "cycle":
        action = {
            CurationState.NOT_IN_MEMORY: "promote",
            CurationState.PROMOTED: "deprecate",
            CurationState.DEPRECATED: "demote",
        }[topic.state]
    ops: list[str] = []
    if action in ("promote", "demote"):
        if topic.deprecated:
            ops.append("undeprecate")
        ops.append(action)
    else:
        ops.append(action)
    return [
        events.curation(topic.scope, topic.session_id, topic.topic_id, op, by="user")
        for op in ops
    ]


def keep_after_summary(
    topic: Topic, *, include: bool, mode: SummaryMode, message_count: int, min_turns: int
) -> bool:
    """``keep_in_memory`` after a just-in-time summary of ``topic``.

    The user's manual setting persists across summarisation cycles; otherwise a
    fallback summary never promotes, a topic with fewer than ``min_turns`` messages
    never promotes, and only a strict ``True`` from the summariser promotes.
    """
    if topic.keep_in_memory_manually_set:
        return topic.keep_in_memory
    if mode == "fallback" or message_count < min_turns:
        return False
    return include is True
