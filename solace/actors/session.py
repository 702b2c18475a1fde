"""Main's session: the bridge between Main and the conversation layer.

When the runtime has the conversation layer, Main's user lines go through one
session of it (scope ``DEFAULT_SCOPE``, opened on the first line of a process):
the message is recorded in the active topic (the conversation layer hands every
batch it appends to the runtime, which delivers it to the agents that perceive it,
like any event), the context stack is built around it with what Main recalled as
its working memory and the turn's fact-memory recall block, a built-in tool call in
the reply is dispatched (fact memory's ``remember`` / ``recall`` by the runtime's
:class:`~solace.actors.fact_tools.FactTools`, the others by the conversation layer;
both recorded in the thread), and what Mouth said aloud (never Main's draft) is
recorded in the thread. The REPL's conversation
commands (``/topics``, ``/promote ID`` ...) run against the same session.

The workspace (seed 003): at the session's start and on ``/reload``
(:meth:`MainSession.load_workspace`) the session loads SOUL.md, USER.md, AGENTS.md
and, in a ``main`` session only, MEMORY.md as its identity (the stable prefix, in
place of the built-in system prompt, which stays the fallback while the workspace is
off), and today's and yesterday's daily logs into the semi-stable layer. A
``shared`` session (a group or channel) also leaves the durable facts and the
fact-memory recall block out of its context.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from solace.models.llm import ChatMessage
from solace.runtime_workspace import SessionTypeError

if TYPE_CHECKING:
    from solace.actors.fact_tools import FactTools
    from solace.conversation.context import ContextStack
    from solace.facts import RecallBlock
    from solace.runtime_workspace import WorkspaceLink
    from solace.workspace import SessionContext

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
        identity: the built-in SOUL text placed first in the context stack while the
            workspace is off (or has no identity text).
        fact_tools: fact memory's tools (``remember``, ``recall``), listed in the stack
            and dispatched here; None leaves them out.
        workspace: the runtime's link to the workspace (None: no workspace).
        session_type: ``main`` or ``shared`` (see the module).

    Attributes:
        identity: the stable prefix's identity text in use (the workspace's, else the
            built-in one).
        short_identity: the identity for a small model's short prompt: the identity
            files' text without headings (never MEMORY.md: a 2k-token model cannot
            hold it), else the built-in one.
        daily: today's and yesterday's daily logs, for the semi-stable layer.
        loaded: the workspace's session context last loaded (None before or without).
        last_stack: the context stack of the latest turn that built one.
        turn_results: the tool results of the turn in progress (for extraction).
    """

    def __init__(self, conversations: Any, identity: str,
                 fact_tools: FactTools | None = None, *,
                 workspace: WorkspaceLink | None = None, session_type: str = "main") -> None:
        self.conversations = conversations
        self.builtin_identity = identity
        self.identity = identity
        self.short_identity = identity
        self.daily = ""
        self.loaded: SessionContext | None = None
        self.workspace = workspace
        self.session_type = session_type
        self.fact_tools = fact_tools
        self.session_id: str | None = None
        self.working_memory = ""  # what Main recalled for the current turn
        self.tool_calls = 0
        self.last_stack: ContextStack | None = None
        self.turn_results: list[str] = []

    @property
    def private(self) -> bool:
        """True in a ``main`` session: MEMORY.md, durable facts and fact recall load."""
        return self.session_type == "main"

    @asynccontextmanager
    async def as_type(self, session_type: str | None) -> AsyncIterator[None]:
        """Run a turn as a session of ``session_type`` (None: this session's own type):
        a ``shared`` turn in a ``main`` session loads the shared session context (no
        MEMORY.md, no durable facts, no fact recall) for the turn's length.

        Raises:
            SessionTypeError: ``main`` asked of a shared session (a turn may narrow
                what it sees, never widen it), or an unknown type.
        """
        if session_type is None or session_type == self.session_type:
            yield
            return
        if session_type != "shared":
            raise SessionTypeError(
                f"session_type {session_type!r}: this process serves "
                f"{self.session_type!r} sessions; a turn may ask for 'shared' only")
        saved = (self.session_type, self.identity, self.short_identity, self.daily,
                 self.loaded)
        self.session_type = session_type
        try:
            await self.load_workspace()
            yield
        finally:
            (self.session_type, self.identity, self.short_identity, self.daily,
             self.loaded) = saved

    async def load_workspace(self) -> SessionContext | None:
        """Load the session context from the workspace (human edits recorded first):
        the identity files (and MEMORY.md in a main session) as :attr:`identity`,
        the daily logs as :attr:`daily`. Without a workspace, or when it fails, the
        built-in identity stays and None is returned."""
        ctx = None
        if self.workspace is not None:
            ctx = await self.workspace.session_context(self.session_type)
        self.loaded = ctx
        if ctx is None:
            self.identity = self.short_identity = self.builtin_identity
            self.daily = ""
            return None
        self.identity = ctx.stable.strip() or self.builtin_identity
        self.daily = ctx.semi_stable.strip()
        short = ctx.stable
        if self.private and self.workspace is not None:  # identity files only
            shared = await self.workspace.session_context("shared")
            short = shared.stable if shared is not None else ""
        lines = [ln for ln in short.splitlines() if ln.strip() and not ln.startswith("#")]
        self.short_identity = "\n".join(lines) or self.builtin_identity
        return ctx

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
        self.turn_results = []
        item = await self.conversations.add_message(await self.session(), "user", text)
        return int(item.entry_id)

    async def stack(self, memory_text: str, recall: RecallBlock | None = None) -> ContextStack:
        """The turn's context stack: ``memory_text`` as working memory, ``recall``'s
        block (with its token count) in the stable prefix's memory section, fact
        memory's tools listed after the built-in ones. Kept as :attr:`last_stack`."""
        from solace.conversation.tools import FACT_TOOLS

        self.working_memory = memory_text
        if not self.private:
            recall = None  # a shared session never sees fact memory's recall block
        self.last_stack = await self.conversations.build_context(
            await self.session(), identity=self.identity,
            tools=FACT_TOOLS if self.fact_tools is not None else (),
            recall=recall.text if recall is not None else "",
            recall_tokens=recall.tokens if recall is not None else 0,
            daily=self.daily, durable_facts=self.private,
        )
        return self.last_stack

    async def context(self, memory_text: str,
                      recall: RecallBlock | None = None) -> list[ChatMessage]:
        """The turn's context stack (:meth:`stack`) as chat messages.

        The stack's system layers (stable prefix, semi-stable prefix, working memory)
        are joined into one leading system message, in cache order: small chat models
        (SmolLM2's template) read one system message and lose the thread otherwise.
        """
        stack = await self.stack(memory_text, recall)
        messages = list(stack.messages())
        system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
        rest = [m for m in messages if m["role"] != "system"]
        return [{"role": "system", "content": system}, *rest]

    async def dispatch(self, reply: str, agent: str = "Main") -> str:
        """If ``reply`` is a tool call, run it (built-in tools only) and return what to
        say instead; otherwise return ``reply`` unchanged. Fact memory's tools run
        for ``agent`` under the turn's memory id; the call and its result are
        recorded in the thread like the conversation layer's tools."""
        call = parse_tool_call(reply)
        if call is None:
            return reply
        name, args = call
        self.tool_calls += 1
        session = await self.session()
        if self.fact_tools is not None and self.fact_tools.owns(name):
            call_id = await self.conversations.record_tool_call(session, name, args)
            if name == "recall" and not self.private:
                result = {"ok": False, "error": "recall is not available in a shared "
                          "session: the user's facts stay private"}
            else:
                result = await self.fact_tools.run(agent, name, args)
            content = json.dumps(result, ensure_ascii=False, sort_keys=True)
            await self.conversations.record_tool_result(session, call_id, name, content,
                                                        ok=bool(result.get("ok")))
            self.turn_results.append(content)
            return content
        outcome = await self.conversations.dispatch_tool(name, args, session=session)
        if outcome is None:
            return f"I can't run the tool {name!r} here."
        self.turn_results.append(outcome.content)
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
