"""The JSON endpoints the web console reads (:mod:`solace.app.console` over HTTP).

- ``GET /context/memory`` -> ``{"text", "topic_ids", "dropped", "tokens"}``
- ``POST /topics/{id}/agent-curate`` ``{"action"}`` -> ``{"ok", "message", "topic"}``
- ``GET /events/{entry_id}`` -> ``{"entry_id", "date", "ts", "agent", "speaker",
  "kind", "text", "attrs"}``
- ``GET /substrate/verify`` -> ``{"ok", "error", "detail", "frames", ...}``

The request has passed the server's checks (admin token, body schema, path rules)
before a handler runs; errors map as every endpoint's do (404 an unknown topic or
entry id).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from solace.app import Solace
from solace.app.console import ConsoleCalls
from solace.app.topics import TopicCalls

if TYPE_CHECKING:
    from solace.surfaces.http.app import Call

__all__ = ["console_handlers"]


def console_handlers(app: Solace) -> dict[str, Callable[[Call], Awaitable[Any]]]:
    """The handlers of the console's endpoints (and the topic calls of ``topics show``
    and ``notes replace``) over ``app``, by operation name."""
    calls = ConsoleCalls(app)
    topics = TopicCalls(app)

    async def topic(call: Call) -> Any:
        return asdict(topics.topic(call.params["topic_id"]))

    async def notes(call: Call) -> Any:
        return topics.notes(call.params["topic_id"]).as_json()

    async def add_note(call: Call) -> Any:
        await app.add_note(call.params["topic_id"], call.body["text"])
        return topics.notes(call.params["topic_id"]).as_json()

    async def replace_notes(call: Call) -> Any:
        return (await topics.replace_notes(call.params["topic_id"], call.body["text"])).as_json()

    async def memory_prefix(call: Call) -> Any:
        return asdict(await calls.memory_prefix())

    async def agent_curate(call: Call) -> Any:
        return asdict(await calls.agent_curate(call.params["topic_id"], call.body["action"]))

    async def event(call: Call) -> Any:
        return asdict(await calls.source_event(int(call.params["entry_id"])))

    async def substrate_verify(call: Call) -> Any:
        return asdict(await calls.verify())

    return {"memory_prefix": memory_prefix, "agent_curate": agent_curate, "event": event,
            "substrate_verify": substrate_verify, "topic": topic, "notes": notes,
            "add_note": add_note, "replace_notes": replace_notes}
