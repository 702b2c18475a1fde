"""The REPL of ``solace run``: read lines, dispatch them, print what comes back.

A plain line goes to Main and what Mouth says comes back; ``/recall QUERY``,
``/inspect [AGENT]``, ``/hyperfocus on|off``, ``/help``, ``/quit``, plus the
conversation layer's commands (:data:`REPL_COMMANDS`, run by
:func:`handle_repl_line` against the REPL's session). With stdin closed the
process keeps running unattended until a signal, unless ``exit_on_eof``.
"""

from __future__ import annotations

import logging
import signal
import sys
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, TextIO

import trio

from solace.config import Config
from solace.conversation.errors import ConversationError
from solace.conversation.model import Scope
from solace.conversation.repl import format_facts, format_notes, format_topics
from solace.conversation.service import Conversations

__all__ = [
    "HELP",
    "REPL_COMMANDS",
    "format_hits",
    "format_inspect",
    "handle_command",
    "handle_repl_line",
    "run_process",
    "setup_logging",
]

log = logging.getLogger("solace.run")

LOG_FILE = "solace.log"
"""The log's name inside the runtime home."""

HELP = """commands:
  a plain line           talk to Main (Mouth speaks the answer)
  /recall QUERY          what Main's memory brings back for QUERY
  /inspect [AGENT]       tiers, rungs, budgets and counters (all agents by default)
  /hyperfocus on|off     Supervisor's hyperfocus (bigger budget, Time paused)
  /help                  this text
  /quit                  snapshot, flush and exit"""

REPL_COMMANDS: Mapping[str, str] = {
    "/topics": "list this scope's topics (* marks the active one)",
    "/promote": "/promote ID: keep a topic in memory (your decision sticks)",
    "/demote": "/demote ID: take a topic out of memory",
    "/deprecate": "/deprecate ID: mark a topic's decision reversed (title only in memory)",
    "/undeprecate": "/undeprecate ID: lift a deprecation",
    "/newtopic": "/newtopic [TITLE]: close the current topic and start a new one",
    "/facts": "/facts | /facts set KEY VALUE | /facts unset KEY",
    "/notes": "/notes [ID]: the notes of the active topic or of topic ID",
}


# ------------------------------------------------------------ formatting


def format_hits(hits: list[Any]) -> str:
    """Hits as lines: score, tier/rung, attribution, text."""
    if not hits:
        return "(nothing recalled)"
    lines = []
    for i, hit in enumerate(hits, 1):
        owner = f" from {hit.owner}" if hit.owner else ""
        text = " ".join(hit.text.split())
        lines.append(f"{i:2}. [{hit.score:.3f} {hit.tier} r{hit.rung}{owner}] {text}")
    return "\n".join(lines)


def format_inspect(stats: dict[str, dict[str, object]]) -> str:
    """Stats per agent as indented ``key: value`` lines."""
    out = []
    for agent, values in stats.items():
        out.append(f"{agent}:")
        for key, value in values.items():
            out.append(f"  {key}: {value}")
    return "\n".join(out)


# ------------------------------------------------ conversation commands


async def handle_repl_line(conv: Conversations, session_id: str, line: str) -> str | None:
    """Run one REPL line if it is a conversation command.

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
    session = conv.session(session_id)
    try:
        if command == "/topics":
            return format_topics(conv.topics_of(session.scope), [session.active_topic_id])
        if command in ("/promote", "/demote", "/deprecate", "/undeprecate"):
            if not rest:
                return f"usage: {REPL_COMMANDS[command]}"
            topic = conv.topic(rest)
            if topic.scope != session.scope:
                return f"unknown topic {rest!r}"
            topic = await conv.curate(rest, command[1:])
            return f"{topic.topic_id}: {topic.state.value}"
        if command == "/newtopic":
            topic = await conv.new_topic(session_id, title=rest)
            return f"new topic {topic.topic_id} is active"
        if command == "/facts":
            return await _facts(conv, session.scope, rest)
        topic_id = rest or session.active_topic_id
        if conv.topic(topic_id).scope != session.scope:
            return f"unknown topic {topic_id!r}"
        return format_notes(conv.notes(topic_id))
    except ConversationError as exc:
        return f"error: {exc}"


async def _facts(conv: Conversations, scope: Scope, rest: str) -> str:
    if not rest:
        return format_facts(conv.facts(scope))
    parts = rest.split(maxsplit=2)
    if parts[0] == "set" and len(parts) == 3:
        fact = await conv.set_fact(scope, parts[1], parts[2])
        return f"{fact.key} = {fact.value}"
    if parts[0] == "unset" and len(parts) == 2:
        await conv.unset_fact(scope, parts[1])
        return f"{parts[1]} unset"
    return f"usage: {REPL_COMMANDS['/facts']}"


# ------------------------------------------------------------ dispatch


async def handle_command(rt: Any, line: str) -> str | None:
    """Handle one REPL line; returns the text to print, or None to quit.

    Plain lines go to Main and return what Mouth said.
    """
    line = line.strip()
    if not line:
        return ""
    if not line.startswith("/"):
        speech = await rt.ask(line)
        return f"Solace: {speech.text}" if speech.text else "Solace: (nothing said)"
    command, _, rest = line.partition(" ")
    rest = rest.strip()
    if command in ("/quit", "/exit"):
        return None
    if command == "/help":
        extra = getattr(rt, "conversation_help", None)
        return HELP + (f"\n{extra}" if extra else "")
    if command == "/recall":
        if not rest:
            return "usage: /recall QUERY"
        return format_hits(await rt.agent("Main").recall(rest, k=5))
    if command == "/inspect":
        try:
            return format_inspect(rt.inspect(rest or None))
        except KeyError as exc:
            return str(exc.args[0])
    if command == "/hyperfocus":
        if rest not in ("on", "off"):
            return "usage: /hyperfocus on|off"
        rt.hyperfocus(rest == "on")
        return f"hyperfocus {rest}"
    handler: Callable[[str], Awaitable[str | None]] | None = getattr(
        rt, "conversation_command", None
    )
    if handler is not None:
        reply = await handler(line)
        if reply is not None:
            return reply
    return f"unknown command {command!r}; /help lists them"


# ------------------------------------------------------------ the loop


async def _read_lines(stdin: TextIO, send: trio.MemorySendChannel[str | None]) -> None:
    async with send:
        while True:
            line = await trio.to_thread.run_sync(stdin.readline, abandon_on_cancel=True)
            if not line:
                await send.send(None)  # EOF
                return
            await send.send(line)


async def _repl(rt: Any, stdin: TextIO, stdout: TextIO, exit_on_eof: bool,
                cancel: trio.CancelScope) -> None:
    send, receive = trio.open_memory_channel[str | None](0)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_read_lines, stdin, send)
        async with receive:
            async for line in receive:
                if line is None:
                    if exit_on_eof:
                        cancel.cancel()
                        return
                    log.info("stdin closed; running unattended (SIGINT or SIGTERM to stop)")
                    return
                reply = await handle_command(rt, line)
                if reply is None:
                    cancel.cancel()
                    return
                if reply:
                    print(reply, file=stdout, flush=True)


def setup_logging(path: Path, *, verbose: bool) -> logging.Handler:
    """Send the process's log to ``path`` (appended) and, if ``verbose``, to stderr.

    Never to stdout: the chat is printed there and logs never go into it.

    Returns:
        The file handler installed on the root logger.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    root = logging.getLogger()
    fmt = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(fmt)
    root.addHandler(handler)
    if verbose:
        screen = logging.StreamHandler(sys.stderr)
        screen.setFormatter(fmt)
        root.addHandler(screen)
    root.setLevel(logging.INFO)
    return handler


async def _watch_signals(cancel: trio.CancelScope) -> None:
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for signum in signals:
            log.info("%s received; snapshotting and exiting", signal.Signals(signum).name)
            cancel.cancel()
            return


async def run_process(
    home: str | Path, config: Config, *, stdin: TextIO, stdout: TextIO, exit_on_eof: bool,
    verbose: bool = False,
) -> None:
    """The body of ``solace run``: open the runtime, serve the REPL, stop on a signal.

    Args:
        home: the runtime home.
        config: the loaded configuration.
        stdin: where lines are read.
        stdout: where replies are printed (logs never go there).
        exit_on_eof: exit when ``stdin`` closes instead of running unattended.
        verbose: also show the log on stderr.
    """
    from solace.runtime import open_runtime

    setup_logging(Path(home).expanduser() / LOG_FILE, verbose=verbose)
    async with open_runtime(home, config) as rt:
        log.info("Solace is running on %s; %s", rt.home.root, rt.status())
        print("Solace is listening. Type a line to talk to Main; /help for commands.",
              file=stdout, flush=True)
        with trio.CancelScope() as cancel:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(_watch_signals, cancel)
                await _repl(rt, stdin, stdout, exit_on_eof, cancel)
                await trio.sleep_forever()  # unattended until a signal or /quit
