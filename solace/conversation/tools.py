"""The agent's built-in memory tools: ``notes``, ``important_info``, ``manage_topic_memory``,
and fact memory's ``remember`` and ``recall`` (seed 004, :data:`FACT_TOOLS`).

They are dispatched ahead of any external (MCP) tool: the runtime offers every tool
call to :meth:`Conversations.dispatch_tool` first, which returns None for a name it
does not own. Arguments are validated against the schemas below; a bad argument or a
refused curation move is a *result* the agent reads (``ok: false`` with the reason),
never an exception, because the agent must learn why and carry on.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "BUILTIN_TOOLS",
    "FACT_TOOLS",
    "IMPORTANT_INFO",
    "MANAGE_TOPIC_MEMORY",
    "NOTES",
    "RECALL",
    "REMEMBER",
    "ToolOutcome",
    "ToolSpec",
]


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool the agent can call: name, one-line description, JSON-schema parameters."""

    name: str
    description: str
    parameters: Mapping[str, Any] = field(default_factory=dict)

    def as_openai(self) -> dict[str, Any]:
        """The OpenAI-compatible ``tools`` entry for this tool."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": dict(self.parameters),
            },
        }


NOTES = ToolSpec(
    "notes",
    "Scratchpad for the current topic: '$set' appends a note (log decisions as they "
    "happen), 'read' returns the current topic's notes or a topic of this session by "
    "topic_id, 'update' replaces the notes when understanding changed.",
    {
        "type": "object",
        "properties": {
            "operation": {"type": "string", "enum": ["$set", "read", "update"]},
            "content": {"type": "string"},
            "topic_id": {"type": "string"},
        },
        "required": ["operation"],
        "additionalProperties": False,
    },
)

IMPORTANT_INFO = ToolSpec(
    "important_info",
    "Durable facts for this user, kept exactly and shown every turn: '$set' a key to a "
    "value, 'read' all facts or one key, '$unset' a key.",
    {
        "type": "object",
        "properties": {
            "operation": {"type": "string", "enum": ["$set", "read", "$unset"]},
            "key": {"type": "string"},
            "value": {"description": "the fact's value (text, or any JSON value)"},
        },
        "required": ["operation"],
        "additionalProperties": False,
    },
)

MANAGE_TOPIC_MEMORY = ToolSpec(
    "manage_topic_memory",
    "Curate cross-session memory: 'promote' a topic into memory, 'demote' it out, or "
    "'deprecate' it (a reversed decision; shown as a title only). Defaults to the "
    "active topic. A choice the user made by hand cannot be overridden.",
    {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["promote", "demote", "deprecate"]},
            "topic_id": {"type": "string"},
        },
        "required": ["action"],
        "additionalProperties": False,
    },
)

#: The built-in tools, in the order they are listed to the agent.
BUILTIN_TOOLS: tuple[ToolSpec, ...] = (NOTES, IMPORTANT_INFO, MANAGE_TOPIC_MEMORY)

REMEMBER = ToolSpec(
    "remember",
    "Save a fact worth keeping across conversations (a preference, a fact about the "
    "person, the state of something ongoing), third-person and self-contained. It is "
    "classified against what is known: ADD, UPDATE (a newer value), NOOP (already "
    "known) or CONFLICT.",
    {
        "type": "object",
        "properties": {
            "text": {"type": "string"},
            "importance": {"type": "number", "minimum": 0, "maximum": 1},
        },
        "required": ["text"],
        "additionalProperties": False,
    },
)

RECALL = ToolSpec(
    "recall",
    "Search the facts remembered for this memory id; returns the best matches.",
    {
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "k": {"type": "integer", "minimum": 1, "maximum": 100},
        },
        "required": ["query"],
        "additionalProperties": False,
    },
)

#: Fact memory's tools (seed 004), listed after the built-in ones and dispatched by
#: the runtime's fact tools (:mod:`solace.actors.fact_tools`), not by the
#: conversation layer.
FACT_TOOLS: tuple[ToolSpec, ...] = (REMEMBER, RECALL)


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """The result of one built-in tool call, as recorded in the thread.

    Attributes:
        name: the tool.
        call_id: the id pairing the ``tool_call`` and ``tool_result`` events.
        ok: False if the arguments were invalid or the move was refused.
        result: the JSON object returned to the agent (``error`` says why when not ok).
    """

    name: str
    call_id: str
    ok: bool
    result: Mapping[str, Any]

    @property
    def content(self) -> str:
        """``result`` as the JSON text the agent reads."""
        return json.dumps(dict(self.result), ensure_ascii=False, sort_keys=True)
