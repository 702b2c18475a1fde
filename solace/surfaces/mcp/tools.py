"""The MCP surface's tools: what an MCP client sees and what each call does.

Six tools, in the order they are listed:

- ``remember``: observes the text as a ``message`` by speaker ``user`` with attrs
  ``{"memory_id": id, "via": "mcp"}``; returns the entry id.
- ``recall`` and ``recall_conversation``: the application's cited recall
  (:meth:`solace.app.Solace.recall`, from Main's point of view). Until fact memory
  exists both read the one runtime; each hit is ``text, date, speakers, entry_ids,
  rung, score``.
- ``notes``, ``important_info``, ``manage_topic_memory``: seed 000's built-in tools,
  dispatched through :meth:`Conversations.dispatch_tool` exactly as Main dispatches
  them, so their argument checks and guard messages are the seed's.

Guarantees: every argument is validated against the tool's JSON Schema before anything
is written; a bad argument or a refused move is a result with ``ok: false`` and the
reason (the agent reads it and carries on), never a crash of the connection.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from solace.app import Solace
from solace.conversation.tools import BUILTIN_TOOLS, ToolSpec
from solace.surfaces.http.routes import MEMORY_ID_PATTERN, MEMORY_ID_RULE, TEXT_PATTERN, check

__all__ = [
    "DEFAULT_MEMORY_ID",
    "MCP_TOOLS",
    "McpSurfaceError",
    "MemoryIdError",
    "ToolCaller",
    "check_memory_id",
]

DEFAULT_MEMORY_ID = "default"
"""The memory id used when a client names none (seed 001's ``default``)."""

_MEMORY_ID = re.compile(MEMORY_ID_PATTERN)


class McpSurfaceError(ValueError):
    """Raised by the MCP surface for a request it refuses (names the bad value)."""


class MemoryIdError(McpSurfaceError):
    """A memory id that breaks seed 001's rule (raised by :func:`check_memory_id`)."""


def check_memory_id(value: str) -> str:
    """``value`` if it is a valid memory id (1 to 128 letters, digits, '-' or '_').

    Raises:
        MemoryIdError: naming the value and the rule.
    """
    if not isinstance(value, str) or not _MEMORY_ID.fullmatch(value):
        raise MemoryIdError(f"memory id {value!r} is not valid: it must be {MEMORY_ID_RULE}")
    return value


_TEXT = {"type": "string", "minLength": 1, "maxLength": 100_000, "pattern": TEXT_PATTERN,
         "description": "what to store (at least one non-whitespace character)"}
_K = {"type": "integer", "minimum": 1, "maximum": 100, "default": 5,
      "description": "how many hits to return, best first (1..100, default 5)"}
_HIT = ("Each hit is {text, date (ISO UTC of its newest event), speakers, entry_ids "
        "(the substrate events it stands for), rung (0 raw .. 3 embedding + tags: how "
        "faded it is), score (higher is better)}.")

REMEMBER = ToolSpec(
    "remember",
    "Store one piece of information in long-lasting memory for this memory id. The "
    "text is recorded as a message said by the user (attrs memory_id and via=mcp) "
    "and delivered to the agents; it can later be found by recall. Returns "
    "{entry_id}, the event's id in the substrate. 'importance' (0..1, optional) "
    "becomes the record's emotional weight, which slows its fading.",
    {"type": "object", "properties": {
        "text": _TEXT,
        "importance": {"type": "number", "minimum": 0, "maximum": 1,
                       "description": "0..1; higher fades more slowly"}},
     "required": ["text"], "additionalProperties": False},
)

RECALL = ToolSpec(
    "recall",
    "Search memory for what is relevant to 'query' (semantic and lexical match, "
    "recency, importance) and return the best 'k' hits with citations. Until a "
    "separate fact memory exists this searches the same memory as recall_conversation: "
    "everything remembered and everything said in conversations. " + _HIT,
    {"type": "object", "properties": {"query": _TEXT, "k": _K},
     "required": ["query"], "additionalProperties": False},
)

RECALL_CONVERSATION = ToolSpec(
    "recall_conversation",
    "Search the runtime's conversation memory (Main's working and long-term tiers: "
    "messages, replies and remembered text, faded or not) for 'query' and return the "
    "best 'k' hits with citations. " + _HIT,
    {"type": "object", "properties": {"query": _TEXT, "k": _K},
     "required": ["query"], "additionalProperties": False},
)

MCP_TOOLS: tuple[ToolSpec, ...] = (REMEMBER, RECALL, RECALL_CONVERSATION, *BUILTIN_TOOLS)
"""Every tool the MCP surface lists, in order."""

_OWN = {t.name: t for t in (REMEMBER, RECALL, RECALL_CONVERSATION)}
_BUILTIN = {t.name for t in BUILTIN_TOOLS}


def _hit(h: Any) -> dict[str, Any]:
    return {"text": h.text, "date": h.date, "speakers": list(h.speakers),
            "entry_ids": list(h.entry_ids), "rung": h.rung, "score": round(h.score, 6)}


class ToolCaller:
    """Runs the MCP tools over one application API.

    Args:
        app: the application API over a running runtime.

    The built-in tools act in the scope's current session (resumed, or opened once,
    on the first such call), as Main's own tool calls do.
    """

    def __init__(self, app: Solace) -> None:
        self.app = app
        self._session: str | None = None

    async def call(self, name: str, args: Mapping[str, Any] | None,
                   memory_id: str) -> tuple[bool, dict[str, Any]]:
        """Run tool ``name``; ``(ok, result)``, ``result`` a JSON object.

        Raises:
            McpSurfaceError: ``name`` is not one of :data:`MCP_TOOLS`.
            solace.models.schema.SchemaError: an argument breaks the tool's schema
                (``remember``, ``recall``, ``recall_conversation``; the built-in
                tools answer ``ok: false`` instead, as the seed says).
        """
        arguments = dict(args or {})
        memory_id = check_memory_id(memory_id)
        if name in _BUILTIN:
            return await self._builtin(name, arguments)
        spec = _OWN.get(name)
        if spec is None:
            raise McpSurfaceError(f"unknown tool {name!r} (tools are "
                                  f"{', '.join(t.name for t in MCP_TOOLS)})")
        check(arguments, spec.parameters, "$")
        if name == "remember":
            entry_id = await self.app.observe(
                arguments["text"], speaker="user", kind="message",
                attrs={"memory_id": memory_id, "via": "mcp"},
                emotional_weight=arguments.get("importance"))
            return True, {"entry_id": entry_id, "memory_id": memory_id}
        hits = await self.app.recall(arguments["query"], agent="Main",
                                     k=int(arguments.get("k", 5)))
        return True, {"query": arguments["query"], "hits": [_hit(h) for h in hits]}

    async def _builtin(self, name: str, args: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
        conv = self.app.runtime.conversations
        if conv is None:
            raise McpSurfaceError(f"the tool {name!r} needs the conversation layer, "
                                  "which this runtime does not have")
        if self._session is None:
            from solace.conversation.sessions import resume_session

            self._session = str((await resume_session(conv, self.app.scope)).session_id)
        outcome = await conv.dispatch_tool(name, args, session=self._session)
        return bool(outcome.ok), dict(outcome.result)
