"""Running the built-in tools: argument checks, then the service's own calls.

Kept apart from the tool specs so the specs stay plain data. A refused or invalid call
becomes an ``ok: false`` result carrying the reason; only this layer's own errors are
turned into results, anything else (a failing disk) propagates.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from solace.conversation.curation import UNDEPRECATE_MESSAGE
from solace.conversation.errors import (
    ConversationError,
    CurationRejected,
    InvalidArgumentError,
    UnknownFactError,
    UnknownTopicError,
)
from solace.conversation.tools import BUILTIN_TOOLS, ToolOutcome
from solace.models.schema import SchemaError, validate

if TYPE_CHECKING:
    from solace.conversation.service import Conversations

__all__ = ["run_tool"]

_SPECS = {spec.name: spec for spec in BUILTIN_TOOLS}


async def run_tool(
    conv: Conversations, name: str, args: Mapping[str, Any], *, session_id: str, call_id: str
) -> ToolOutcome:
    """Run built-in tool ``name`` for ``session_id``; never raises this layer's errors."""
    try:
        if name == "manage_topic_memory" and args.get("action") == "undeprecate":
            # Not offered to the agent at all; say why rather than "not in the enum".
            raise CurationRejected(UNDEPRECATE_MESSAGE)
        try:
            validate(dict(args), _SPECS[name].parameters)
        except SchemaError as exc:
            raise InvalidArgumentError(f"{name}: invalid arguments: {exc}") from None
        if name == "notes":
            result = await _notes(conv, args, session_id)
        elif name == "important_info":
            result = await _important_info(conv, args, session_id)
        else:
            result = await _manage_topic_memory(conv, args, session_id)
    except ConversationError as exc:
        return ToolOutcome(name, call_id, False, {"ok": False, "error": str(exc)})
    return ToolOutcome(name, call_id, True, {"ok": True, **result})


def _required(args: Mapping[str, Any], key: str, operation: str) -> Any:
    if key not in args:
        raise InvalidArgumentError(f"operation {operation!r} needs {key!r}")
    return args[key]


async def _notes(conv: Conversations, args: Mapping[str, Any], session_id: str) -> dict[str, Any]:
    operation = args["operation"]
    active = conv.active_topic(session_id)
    if operation == "read":
        topic_id = args.get("topic_id", active.topic_id)
        if topic_id not in conv.session(session_id).topic_ids:
            raise UnknownTopicError(f"no topic {topic_id!r} in session {session_id!r}")
        doc = conv.notes(topic_id)
        return {"topic_id": topic_id, "notes": doc.active, "archived": list(doc.archived)}
    if "topic_id" in args and args["topic_id"] != active.topic_id:
        raise InvalidArgumentError(
            f"notes {operation!r} writes the current topic {active.topic_id!r} only, "
            f"got topic_id {args['topic_id']!r}"
        )
    text = _required(args, "content", operation)
    if operation == "$set":
        doc = await conv.append_notes(active.topic_id, text)
    else:
        doc = await conv.replace_notes(active.topic_id, text)
    return {"topic_id": active.topic_id, "notes": doc.active}


async def _important_info(
    conv: Conversations, args: Mapping[str, Any], session_id: str
) -> dict[str, Any]:
    operation = args["operation"]
    scope = conv.session(session_id).scope
    if operation == "read":
        known = conv.facts(scope)
        if "key" not in args:
            return {"facts": {k: known[k].value for k in sorted(known)}}
        key = args["key"]
        if key not in known:
            names = ", ".join(sorted(known)) or "none"
            raise UnknownFactError(f"no durable fact {key!r} (known keys: {names})")
        return {"key": key, "value": known[key].value}
    key = _required(args, "key", operation)
    if operation == "$set":
        fact = await conv.set_fact(scope, key, _required(args, "value", operation))
        return {"key": fact.key, "value": fact.value}
    await conv.unset_fact(scope, key)
    return {"key": key, "unset": True}


async def _manage_topic_memory(
    conv: Conversations, args: Mapping[str, Any], session_id: str
) -> dict[str, Any]:
    session = conv.session(session_id)
    topic_id = args.get("topic_id", session.active_topic_id)
    try:
        topic = conv.topic(topic_id)
    except UnknownTopicError:
        raise UnknownTopicError(f"unknown topic {topic_id!r}") from None
    if topic.scope != session.scope:
        raise UnknownTopicError(f"unknown topic {topic_id!r}")  # never leak another scope's
    topic = await conv.agent_curate(topic_id, args["action"])
    return {"topic_id": topic_id, "state": topic.state.value}
