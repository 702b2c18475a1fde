"""Main's session: the bridge between Main and the conversation layer.

When the runtime has the conversation layer, Main's user lines go through one
session of it (scope ``DEFAULT_SCOPE``, opened on the first line of a process):
the message is recorded in the active topic (the conversation layer hands every
batch it appends to the runtime, which delivers it to the agents that perceive it,
like any event), the context stack is built around it with what Main recalled as
its working memory, a built-in tool call in the reply is dispatched, and what Mouth
said aloud (never Main's draft) is recorded in the thread. The REPL's conversation
commands (``/topics``, ``/promote ID`` ...) run against the same session.
"""

from __future__ import annotations

import json
from typing import Any

from solace.models.llm import ChatMessage

__all__ = ["MainSession", "parse_tool_call"]


def parse_tool_call(reply: str) -> tuple[str, dict[str, Any]] | None:
    """``(name, arguments)`` if ``reply`` is exactly one JSON tool call, else None.

    Accepted shape: ``{"tool": NAME, "arguments": {...}}`` (``"args"`` also accepted).
    """
    text = reply.strip()
    if not (text.startswith("{") and text.endswith("}")):
        return None
    try:
        obj = json.loads(text)
    except ValueError:
        return None
    if not isinstance(obj, dict) or not isinstance(obj.get("tool"), str):
        return None
    args = obj.get("arguments", obj.get("args", {}))
    if not isinstance(args, dict):
        return None
    return obj["tool"], args


class MainSession:
    """Main's one session of the conversation layer in this process.

    Args:
        conversations: the runtime's ``Conversations``.
        identity: the SOUL text placed first in the context stack.
    """

    def __init__(self, conversations: Any, identity: str) -> None:
        self.conversations = conversations
        self.identity = identity
        self.session_id: str | None = None
        self.working_memory = ""  # what Main recalled for the current turn
        self.tool_calls = 0

    async def session(self) -> str:
        """The session id: the scope's current session, continued across restarts
        (one is opened only for a scope that has none)."""
        if self.session_id is None:
            from solace.conversation import DEFAULT_SCOPE
            from solace.conversation.sessions import resume_session

            session = await resume_session(self.conversations, DEFAULT_SCOPE)
            self.session_id = str(session.session_id)
        return self.session_id

    async def record_user(self, text: str) -> int:
        """Record a user line in the active topic (delivered to the agents by the
        runtime's hook on the conversation layer); returns its entry id."""
        item = await self.conversations.add_message(await self.session(), "user", text)
        return int(item.entry_id)

    async def context(self, memory_text: str) -> list[ChatMessage]:
        """The turn's context stack as chat messages, ``memory_text`` as working memory.

        The stack's system layers (stable prefix, semi-stable prefix, working memory)
        are joined into one leading system message, in cache order: small chat models
        (SmolLM2's template) read one system message and lose the thread otherwise.
        """
        self.working_memory = memory_text
        stack = await self.conversations.build_context(
            await self.session(), identity=self.identity
        )
        messages = list(stack.messages())
        system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
        rest = [m for m in messages if m["role"] != "system"]
        return [{"role": "system", "content": system}, *rest]

    async def dispatch(self, reply: str) -> str:
        """If ``reply`` is a tool call, run it (built-in tools only) and return what to
        say instead; otherwise return ``reply`` unchanged."""
        call = parse_tool_call(reply)
        if call is None:
            return reply
        name, args = call
        self.tool_calls += 1
        outcome = await self.conversations.dispatch_tool(name, args, session=await self.session())
        if outcome is None:
            return f"I can't run the tool {name!r} here."
        return str(outcome.content)

    async def record_reply(self, text: str) -> None:
        """Record what Mouth said in the thread (its ``speech`` event is what agents
        perceive; this copy is the thread's). Never called with a raw draft."""
        await self.conversations.add_message(await self.session(), "assistant", text)

    async def command(self, line: str) -> str | None:
        """Run a REPL conversation command; None if ``line`` is not one."""
        from solace.conversation import REPL_COMMANDS, handle_repl_line

        words = line.split()
        if not words or words[0] not in REPL_COMMANDS:
            return None
        return await handle_repl_line(self.conversations, await self.session(), line)

    @staticmethod
    def help() -> str:
        """Help lines for the conversation commands."""
        from solace.conversation import REPL_COMMANDS

        return "\n".join(f"  {name:<22} {text}" for name, text in REPL_COMMANDS.items())
