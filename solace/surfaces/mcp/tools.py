"""The MCP surface's tools: what an MCP client sees and what each call does.

Six tools, in the order they are listed:

- ``remember`` and ``recall``: fact memory (:mod:`solace.facts`) under a memory id.
  ``remember(text, memory_id?, store?, importance?)`` writes one fact, read first and
  classified ADD / UPDATE / NOOP / CONFLICT like every write; ``recall(query,
  memory_id?, store?, k?)`` returns the id's best facts, scored, and the rendered
  hidden-context block. The memory id is the connection's (``solace mcp --memory``,
  ``?memory=``, the scoped token's) unless the call names one; a named id must be one
  the connection may reach (over HTTP, one its token covers). Two memory ids never see
  each other's facts.
- ``recall_conversation``: the application's cited recall over the conversation
  memory (:meth:`solace.app.Solace.recall`, from Main's point of view); each hit is
  ``text, date, speakers, entry_ids, rung, score``.
- ``notes``, ``important_info``, ``manage_topic_memory``: seed 000's built-in tools,
  dispatched through :meth:`Conversations.dispatch_tool` exactly as Main dispatches
  them, so their argument checks and guard messages are the seed's.

Guarantees: every argument is validated against the tool's JSON Schema before anything
is written; a bad argument or a refused move is a result with ``ok: false`` and the
reason (the agent reads it and carries on), never a crash of the connection.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from solace.app import Solace
from solace.conversation import DEFAULT_SCOPE
from solace.conversation.tools import BUILTIN_TOOLS, ToolSpec
from solace.facts.service import MAX_FACT_CHARS
from solace.facts.transfer import recall_record, write_record
from solace.surfaces.http.routes import MEMORY_ID_PATTERN, MEMORY_ID_RULE, TEXT_PATTERN, check

__all__ = [
    "DEFAULT_MEMORY_ID",
    "MCP_TOOLS",
    "McpSurfaceError",
    "MemoryIdError",
    "ToolCaller",
    "check_memory_id",
]

DEFAULT_MEMORY_ID = DEFAULT_SCOPE.user
"""The memory id used when a client names none: the conversation scope's user, the
default memory id of ``solace run`` and of the application API too."""

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

_MEMORY_ARG = {"type": "string", "pattern": MEMORY_ID_PATTERN,
               "description": f"the memory id ({MEMORY_ID_RULE}); default: this "
                              "connection's"}
_STORE_ARG = {"type": "string", "minLength": 1, "maxLength": 128,
              "description": "the store (policy) to use; default: the agent's, else "
                             "'default'"}

REMEMBER = ToolSpec(
    "remember",
    "Store one fact in long-lasting fact memory under a memory id (one id is one "
    "memory: a customer, a project, a team; ids never see each other's facts). Write "
    "it third-person and self-contained ('prefers invoices summarised in French'). "
    "It is read against the id's facts first and classified: ADD (new), UPDATE (a "
    "newer value of the same thing: the old one leaves recall), NOOP (already known: "
    "confirmed), CONFLICT (contradicts a fact and cannot be ordered: both kept, "
    "flagged). Returns {class, reason, fact, memory_id}. 'importance' (0..1, default "
    "0.5) decides what a full memory lets go first.",
    {"type": "object", "properties": {
        "text": {**_TEXT, "maxLength": MAX_FACT_CHARS},
        "memory_id": _MEMORY_ARG, "store": _STORE_ARG,
        "importance": {"type": "number", "minimum": 0, "maximum": 1,
                       "description": "0..1 (default 0.5)"}},
     "required": ["text"], "additionalProperties": False},
)

RECALL = ToolSpec(
    "recall",
    "Recall the facts of a memory id that best match 'query' (semantic and lexical "
    "match, decayed by age since last confirmed, above the store's min_score), best "
    "first. Returns {memory_id, store, text, tokens, facts}: 'text' is the facts "
    "rendered as one block to read (empty when nothing matched; a fact marked "
    "CONFLICT contradicts another: ask which holds), 'facts' each {id, text, status, "
    "importance, mentions, last_confirmed, score, ...}. 'k' defaults to the store's "
    "top_k. For what was said in conversations, use recall_conversation.",
    {"type": "object", "properties": {
        "query": _TEXT, "memory_id": _MEMORY_ARG, "store": _STORE_ARG,
        "k": {"type": "integer", "minimum": 1, "maximum": 100,
              "description": "how many facts at most (default: the store's top_k)"}},
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

    async def call(self, name: str, args: Mapping[str, Any] | None, memory_id: str,
                   *, reach: Callable[[str], bool] | None = None) -> tuple[bool, dict[str, Any]]:
        """Run tool ``name``; ``(ok, result)``, ``result`` a JSON object.

        Args:
            name, args: the tool and its arguments.
            memory_id: the connection's memory id (used unless the call names one).
            reach: whether the connection may act for a memory id it names (None: any).

        Raises:
            McpSurfaceError: ``name`` is not one of :data:`MCP_TOOLS`, or a named memory
                id the connection may not reach.
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
        if name == "recall_conversation":
            hits = await self.app.recall(arguments["query"], agent="Main",
                                         k=int(arguments.get("k", 5)))
            return True, {"query": arguments["query"], "hits": [_hit(h) for h in hits]}
        named = arguments.get("memory_id")
        if named is not None and named != memory_id and reach is not None \
                and not reach(named):
            raise McpSurfaceError(f"memory id {named!r} is outside this connection's scope "
                                  f"(it acts for {memory_id!r})")
        memory_id = named or memory_id
        if name == "remember":
            result = await self.app.remember(memory_id, arguments["text"],
                                             store=arguments.get("store"),
                                             importance=arguments.get("importance"))
            return True, {**write_record(result), "memory_id": memory_id}
        block = await self.app.recall_facts(arguments["query"], memory_id,
                                            store=arguments.get("store"),
                                            k=arguments.get("k"))
        return True, recall_record(block)

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
