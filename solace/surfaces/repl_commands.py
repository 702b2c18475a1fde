"""The REPL's commands: the one table ``/help`` prints, and the conversation ones.

:data:`COMMANDS` lists every command with its usage and a one-line description;
``/help`` prints all of it and ``/help NAME`` one entry (``/help inspect`` also
explains ``/inspect``'s columns). :func:`handle_repl_line` runs the conversation
commands (topics, curation, facts, notes) through the application API in the REPL's
session's scope; the
runtime's (talk, recall, inspect, hyperfocus, quit) are in :mod:`solace.surfaces.repl`.
User-side curation from here sets the manual flags, like the CLI.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from solace.app import AppError, Layers, NotFoundError, Solace
from solace.app.topics import TopicCalls
from solace.conversation.errors import ConversationError
from solace.conversation.formatting import format_notes
from solace.conversation.service import Conversations
from solace.surfaces.cli.views import format_fact_views, format_topic_views
from solace.surfaces.repl_format import inspect_help

__all__ = ["COMMANDS", "REPL_COMMANDS", "Command", "handle_repl_line", "help_text"]


@dataclass(frozen=True, slots=True)
class Command:
    """One REPL command: its name, how it is typed, what it does."""

    name: str
    usage: str
    text: str


COMMANDS: tuple[Command, ...] = (
    Command("", "a plain line", "talk to Main; what Mouth says is printed after 'Solace:'"),
    Command("/recall", "/recall [-k N] QUERY",
            "what Main's memory brings back for QUERY (N hits, default 5): date, speaker, "
            "rung, source"),
    Command("/inspect", "/inspect [AGENT]",
            "a table of each agent's memory (budget, use, records per rung); "
            "/help inspect explains it"),
    Command("/hyperfocus", "/hyperfocus on|off",
            "Supervisor's hyperfocus: a bigger budget, the Time actor paused"),
    Command("/topics", "/topics", "this conversation's topics with their summaries "
            "(* marks the active one)"),
    Command("/newtopic", "/newtopic [TITLE]",
            "close the current topic (it is summarised) and start a new one"),
    Command("/promote", "/promote ID", "keep topic ID in memory across sessions "
            "(your decision sticks)"),
    Command("/demote", "/demote ID", "take topic ID out of memory (your decision sticks)"),
    Command("/deprecate", "/deprecate ID",
            "mark topic ID's decision reversed (only its title stays in memory)"),
    Command("/undeprecate", "/undeprecate ID", "lift your deprecation of topic ID"),
    Command("/facts", "/facts [get KEY | set KEY VALUE | unset KEY]",
            "durable facts (never summarised): list, read, set or delete one"),
    Command("/notes", "/notes [ID] | /notes add TEXT",
            "the notes of the active topic (or topic ID), or add a line to them"),
    Command("/reload", "/reload",
            "re-read the workspace (SOUL/USER/AGENTS.md, MEMORY.md, daily logs): your "
            "edits are recorded and take effect now"),
    Command("/workspace", "/workspace [FILE]",
            "the workspace's files and sizes, or print one (e.g. /workspace MEMORY.md)"),
    Command("/now", "/now", "rewrite NOW.md (the current state) and print it"),
    Command("/help", "/help [COMMAND]", "this list, or one command (/help inspect)"),
    Command("/quit", "/quit (or Ctrl-D, Ctrl-C)",
            "summarise the open topic, snapshot every memory, flush and exit"),
)

_CONVERSATION = ("/topics", "/newtopic", "/promote", "/demote", "/deprecate", "/undeprecate",
                 "/facts", "/notes")

#: The conversation layer's commands with their usage and text (the REPL's other
#: commands need the runtime).
REPL_COMMANDS: Mapping[str, str] = {
    c.name: f"{c.usage}: {c.text}" for c in COMMANDS if c.name in _CONVERSATION
}


def help_text(topic: str = "") -> str:
    """``/help``: every command, one line each; ``/help NAME``: that command."""
    name = topic.strip()
    if name:
        wanted = name if name.startswith("/") else f"/{name}"
        command = next((c for c in COMMANDS if c.name == wanted), None)
        if command is None:
            return f"no command {name!r}; /help lists them"
        text = f"{command.usage}\n  {command.text}"
        return inspect_help() if wanted == "/inspect" else text
    width = max(len(c.usage) for c in COMMANDS)
    return "commands:\n" + "\n".join(f"  {c.usage:<{width}}  {c.text}" for c in COMMANDS)


async def handle_repl_line(conv: Conversations, session_id: str, line: str) -> str | None:
    """Run one REPL line if it is a conversation command, through the application API
    (:class:`~solace.app.Solace` over ``conv``, in the session's scope).

    Args:
        conv: the runtime's conversation layer.
        session_id: the REPL's session.
        line: the line as typed.

    Returns:
        The text to print, or None if the line is not one of :data:`REPL_COMMANDS`.
        Errors (unknown topic, bad arguments) are returned as text, not raised.
    """
    words = line.strip().split(maxsplit=1)
    if not words or words[0] not in REPL_COMMANDS:
        return None
    command, rest = words[0], (words[1].strip() if len(words) > 1 else "")
    app = Solace(Layers(conversations=conv), conv.session(session_id).scope)
    try:
        if command == "/topics":
            return format_topic_views(app.topics())
        if command in ("/promote", "/demote", "/deprecate", "/undeprecate"):
            if not rest:
                return f"usage: {REPL_COMMANDS[command]}"
            try:
                topic = await app.curate(rest, command[1:])
            except NotFoundError:
                return f"error: unknown topic {rest!r}"
            return f"{topic.topic_id}: {topic.state}"
        if command == "/newtopic":
            topic = await app.new_topic(session_id, title=rest)
            return f"new topic {topic.topic_id} is active"
        if command == "/facts":
            return await _facts(app, rest)
        return await _notes(app, rest)
    except (ConversationError, AppError) as exc:
        return f"error: {exc}"


async def _facts(app: Solace, rest: str) -> str:
    if not rest:
        return format_fact_views(app.facts())
    parts = rest.split(maxsplit=2)
    if parts[0] == "get" and len(parts) == 2:
        known = {f.key: f for f in app.facts()}
        if parts[1] not in known:
            keys = ", ".join(sorted(known)) or "none"
            return f"no durable fact {parts[1]!r} (known keys: {keys})"
        return format_fact_views([known[parts[1]]])
    if parts[0] == "set" and len(parts) == 3:
        fact = await app.set_fact(parts[1], parts[2])
        return f"{fact.key}: {fact.value}"
    if parts[0] == "unset" and len(parts) == 2:
        await app.unset_fact(parts[1])
        return f"{parts[1]} unset"
    return f"usage: {REPL_COMMANDS['/facts']}"


async def _notes(app: Solace, rest: str) -> str:
    adding = rest == "add" or rest.startswith("add ")
    if rest and not adding:
        topic_id = rest
    else:  # the session's active topic (only then are the topics listed)
        topic_id = next((t.topic_id for t in app.topics() if t.active), "")
    if adding:
        text = rest[3:].strip()
        if not text or not topic_id:
            return f"usage: {REPL_COMMANDS['/notes']}"
        await app.add_note(topic_id, text)
    try:
        return format_notes(TopicCalls(app).notes(topic_id))
    except NotFoundError:
        return f"unknown topic {topic_id!r}"
