"""``solace run``, ``solace recall`` and ``solace import locomo``.

``solace run`` is the long-lived process: all five actors on a home directory and a
line-oriented REPL on stdin — a plain line goes to Main and what Mouth says comes
back; ``/recall QUERY``, ``/inspect [AGENT]``, ``/hyperfocus on|off``, ``/help``,
``/quit``, plus the conversation layer's commands. With stdin closed it keeps
running unattended, logging status every ``runtime.status_interval_seconds``,
until SIGINT or SIGTERM; either way it exits by flushing the substrate and
snapshotting every memory.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TextIO

import trio

from solace.config import Config, load_config
from solace.home import DEFAULT_HOME

__all__ = ["register", "handle_command"]

log = logging.getLogger("solace.run")

HELP = """commands:
  a plain line           talk to Main (Mouth speaks the answer)
  /recall QUERY          what Main's memory brings back for QUERY
  /inspect [AGENT]       tiers, rungs, budgets and counters (all agents by default)
  /hyperfocus on|off     Supervisor's hyperfocus (bigger budget, Time paused)
  /help                  this text
  /quit                  snapshot, flush and exit"""


def register(subparsers: Any) -> None:
    """Add ``run``, ``recall`` and ``import`` to the ``solace`` command."""
    run = subparsers.add_parser("run", help="start the five actors and a REPL on stdin")
    _home(run)
    run.add_argument("--exit-on-eof", action="store_true",
                     help="exit when stdin closes (default: keep running unattended)")
    run.set_defaults(func=cmd_run)

    recall = subparsers.add_parser("recall", help="one recall query against a home's memory")
    recall.add_argument("query")
    recall.add_argument("--agent", default="Main", help="whose memory (default Main)")
    recall.add_argument("-k", type=int, default=10, help="number of hits (default 10)")
    _home(recall)
    recall.set_defaults(func=cmd_recall)

    imp = subparsers.add_parser("import", help="replay an external conversation into a home")
    fmt = imp.add_subparsers(dest="format", metavar="FORMAT", required=True)
    locomo = fmt.add_parser("locomo", help="a LoCoMo-format JSON file, at its real dates")
    locomo.add_argument("file")
    locomo.add_argument("--conversation", metavar="ID", default=None,
                        help="sample_id of one conversation (default: all)")
    _home(locomo)
    locomo.set_defaults(func=cmd_import_locomo)


def _home(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--home", default=str(DEFAULT_HOME),
                        help=f"runtime home directory (default {DEFAULT_HOME})")


def _config(args: argparse.Namespace) -> Config:
    return load_config(getattr(args, "config", None))


def _logging() -> None:
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")


# ----------------------------------------------------------------- the REPL


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
    out = []
    for agent, values in stats.items():
        out.append(f"{agent}:")
        for key, value in values.items():
            out.append(f"  {key}: {value}")
    return "\n".join(out)


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


async def _watch_signals(cancel: trio.CancelScope) -> None:
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for signum in signals:
            log.info("%s received; snapshotting and exiting", signal.Signals(signum).name)
            cancel.cancel()
            return


async def run_process(
    home: str | Path, config: Config, *, stdin: TextIO, stdout: TextIO, exit_on_eof: bool
) -> None:
    """The body of ``solace run``: open the runtime, serve the REPL, stop on a signal."""
    from solace.runtime import open_runtime

    async with open_runtime(home, config) as rt:
        log.info("Solace is running on %s; %s", rt.home.root, rt.status())
        print("Solace is listening. Type a line to talk to Main; /help for commands.",
              file=stdout, flush=True)
        with trio.CancelScope() as cancel:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(_watch_signals, cancel)
                await _repl(rt, stdin, stdout, exit_on_eof, cancel)
                await trio.sleep_forever()  # unattended until a signal or /quit


def cmd_run(args: argparse.Namespace) -> int:
    _logging()
    trio.run(lambda: run_process(args.home, _config(args), stdin=sys.stdin, stdout=sys.stdout,
                                 exit_on_eof=args.exit_on_eof))
    return 0


# ------------------------------------------------------------ one-off commands


def cmd_recall(args: argparse.Namespace) -> int:
    from solace.runtime import open_runtime

    if args.k < 1:
        print(f"solace recall: -k must be >= 1, got {args.k}", file=sys.stderr)
        return 2

    async def main() -> None:
        async with open_runtime(args.home, _config(args), warm_up=False) as rt:
            hits = await rt.agent(args.agent).recall(args.query, k=args.k)
            print(format_hits(hits), flush=True)

    try:
        trio.run(main)
    except KeyError as exc:
        print(f"solace recall: {exc.args[0]}", file=sys.stderr)
        return 2
    return 0


def cmd_import_locomo(args: argparse.Namespace) -> int:
    from solace.clock import ReplayClock
    from solace.locomo import load_locomo, replay
    from solace.runtime import open_runtime

    _logging()
    path = Path(args.file)
    if not path.is_file():
        print(f"solace import locomo: no such file {path}", file=sys.stderr)
        return 2
    conversations = load_locomo(path)
    if args.conversation is not None:
        conversations = [c for c in conversations if c.sample_id == args.conversation]
        if not conversations:
            print(f"solace import locomo: no conversation {args.conversation!r} in {path}",
                  file=sys.stderr)
            return 2

    async def main() -> None:
        clock = ReplayClock()
        async with open_runtime(args.home, _config(args), clock=clock, warm_up=False) as rt:
            for conv in conversations:
                ids = await replay(rt, conv)
                print(f"{conv.sample_id}: {len(ids)} turns in {len(conv.sessions)} sessions "
                      f"(entries {min(ids.values())}..{max(ids.values())})", flush=True)
            print(rt.status(), flush=True)

    trio.run(main)
    return 0
