"""The REPL of ``solace run``: a prompt, replies, commands, and seed 000's exit triggers.

A plain line goes to Main and what Mouth says comes back after ``Solace:``; while
Main works a ``thinking…`` indicator runs (on a terminal). Commands are listed by
``/help`` (:data:`~solace.surfaces.repl_commands.COMMANDS`). The log goes to
``HOME/solace.log`` (and to stderr with ``--verbose``), never into the chat.

The REPL talks in the scope's current session, continued across restarts
(:func:`~solace.conversation.sessions.resume_session`): a restart adds no empty
topic and the scope keeps exactly one active topic. Seed 000's exit triggers are
wired: ``/quit``, Ctrl-C (or SIGTERM), the end of input and ``idle_seconds``
without input each fire the debounced evaluation of the active topic; on the way
out pending evaluations are run (not dropped) before the runtime closes.
"""

from __future__ import annotations

import logging
import os
import shlex
import signal
import sys
from pathlib import Path
from typing import Any, TextIO

import trio

from solace.app import AppError, Solace
from solace.config import Config
from solace.conversation.model import DEFAULT_SCOPE, Trigger
from solace.conversation.sessions import resume_session
from solace.surfaces.repl_commands import (
    COMMANDS,
    REPL_COMMANDS,
    handle_repl_line,
    help_text,
)
from solace.surfaces.repl_format import cite_hits, format_hits, format_inspect, format_recall
from solace.surfaces.repl_workspace import workspace_command

__all__ = [
    "COMMANDS",
    "IDLE_SECONDS",
    "LOG_FILE",
    "REPL_COMMANDS",
    "Repl",
    "format_hits",
    "handle_repl_line",
    "run_process",
    "setup_logging",
]

log = logging.getLogger("solace.run")

LOG_FILE = "solace.log"
"""The log's name inside the runtime home."""
IDLE_SECONDS = 300.0
"""No input for this long fires the ``idle`` exit trigger (once per quiet spell)."""
PROMPT = "you> "
THINKING = "thinking…"
RECALL_K = 5


class Repl:
    """One REPL over an open runtime.

    Args:
        rt: the runtime (``ask``, ``recall``, ``inspect``, ``hyperfocus``, ``event``,
            ``conversations``, ``session``).
        stdout: where replies go.
        interactive: show the prompt and the thinking indicator (a terminal).
    """

    def __init__(self, rt: Any, stdout: TextIO, *, interactive: bool = False) -> None:
        self.rt = rt
        self.app = Solace(rt)
        self.stdout = stdout
        self.interactive = interactive
        self.session_id: str | None = None
        self.last_line = ""
        self._activity = trio.Event()

    async def start(self) -> None:
        """Continue the scope's current session (or open the first one) and make it
        Main's, so a restart adds no topic."""
        conv = getattr(self.rt, "conversations", None)
        if conv is None:
            return
        session = await resume_session(conv, DEFAULT_SCOPE)
        self.session_id = session.session_id
        main_session = getattr(self.rt, "session", None)
        if main_session is not None and getattr(main_session, "session_id", None) is None:
            main_session.session_id = session.session_id

    # -- one line ------------------------------------------------------------------

    async def handle(self, line: str) -> str | None:
        """Handle one line; returns the text to print, or None to quit."""
        line = line.strip()
        if not line:
            return ""
        if not line.startswith("/"):
            self.last_line = line
            reply = await self._thinking(self.app.chat(line))
            return f"Solace: {reply.text}" if reply.text else "Solace: (nothing said)"
        command, _, rest = line.partition(" ")
        rest = rest.strip()
        if command in ("/quit", "/exit"):
            return None
        if command == "/help":
            return help_text(rest)
        if command == "/recall":
            return await self._recall(rest)
        if command == "/inspect":
            try:
                return format_inspect(self.app.inspect(rest or None), details=bool(rest))
            except AppError as exc:
                return str(exc)
        if command == "/hyperfocus":
            if rest not in ("on", "off"):
                return "usage: /hyperfocus on|off"
            self.app.hyperfocus(rest == "on")
            return f"hyperfocus {rest}"
        answer = await workspace_command(self.app, command, rest)
        if answer is not None:
            return answer
        conv = getattr(self.rt, "conversations", None)
        if command in REPL_COMMANDS:
            if conv is None or self.session_id is None:
                return f"{command} needs the conversation layer, which this runtime lacks"
            reply = await handle_repl_line(conv, self.session_id, line)
            if reply is not None:
                return reply
        return f"unknown command {command!r}; /help lists them"

    async def _recall(self, rest: str) -> str:
        usage = "usage: /recall [-k N] QUERY"
        try:
            words = shlex.split(rest)
        except ValueError:
            words = rest.split()
        k = RECALL_K
        if words[:1] == ["-k"]:
            if len(words) < 2 or not words[1].isdigit() or not 1 <= int(words[1]) <= 100:
                return f"{usage} (N within 1..100, got {words[1] if len(words) > 1 else ''!r})"
            k, words = int(words[1]), words[2:]
        query = " ".join(words)
        if not query:
            return usage
        hits = await self.app.recall(query, k=k * 3 + 4)
        rows = cite_hits(hits, exclude=[query, self.last_line] if self.last_line else [query],
                         k=k)
        return format_recall(rows)

    async def _thinking(self, work: Any) -> Any:
        """Await ``work`` with the indicator on screen (erased before the reply)."""
        if not self.interactive:
            return await work
        result: list[Any] = []
        async with trio.open_nursery() as nursery:

            async def run() -> None:
                result.append(await work)
                nursery.cancel_scope.cancel()

            nursery.start_soon(run)
            await trio.sleep(0.2)
            dots = 0
            while True:
                self.stdout.write("\r" + THINKING + "." * dots + " " * (3 - dots))
                self.stdout.flush()
                dots = (dots + 1) % 4
                try:
                    await trio.sleep(0.5)
                finally:
                    self.stdout.write("\r\033[K")
                    self.stdout.flush()
        return result[0]

    # -- exit triggers ---------------------------------------------------------------

    def trigger(self, trigger: Trigger) -> None:
        """Fire a seed-000 exit trigger for the REPL's session (debounced there)."""
        conv = getattr(self.rt, "conversations", None)
        if conv is None or self.session_id is None:
            return
        log.info("exit trigger %s for session %s", trigger, self.session_id)
        conv.exit_trigger(self.session_id, trigger)

    async def finish(self) -> None:
        """Run what the exit triggers scheduled, before the runtime closes."""
        conv = getattr(self.rt, "conversations", None)
        if conv is None:
            return
        with trio.CancelScope(shield=True):
            await conv.lifecycle.flush()

    async def watch_idle(self, idle_seconds: float) -> None:
        """Fire ``idle`` after ``idle_seconds`` without input, once per quiet spell."""
        while True:
            with trio.move_on_after(idle_seconds) as quiet:
                await self._activity.wait()
            if quiet.cancelled_caught:
                self.trigger("idle")
                await self._activity.wait()  # the next spell starts with the next line
            self._activity = trio.Event()

    # -- the loop ----------------------------------------------------------------------

    async def serve(self, stdin: TextIO, *, exit_on_eof: bool, cancel: trio.CancelScope) -> None:
        """Read and answer lines until ``/quit`` or the end of input."""
        send, receive = trio.open_memory_channel[str | None](0)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_read_lines, stdin, send)
            async with receive:
                self._prompt()
                async for line in receive:
                    self._activity = trio.Event()
                    if line is None:
                        self.trigger("end_of_input")
                        if exit_on_eof:
                            cancel.cancel()
                            return
                        log.info("stdin closed; running unattended (SIGINT or SIGTERM to stop)")
                        return
                    reply = await self.handle(line)
                    if reply is None:
                        self.trigger("quit")
                        cancel.cancel()
                        return
                    if reply:
                        print(reply, file=self.stdout, flush=True)
                    self._prompt()

    def _prompt(self) -> None:
        if self.interactive:
            self.stdout.write(PROMPT)
            self.stdout.flush()


async def _read_lines(stdin: TextIO, send: trio.MemorySendChannel[str | None]) -> None:
    async with send:
        while True:
            line = await trio.to_thread.run_sync(stdin.readline, abandon_on_cancel=True)
            if not line:
                await send.send(None)  # EOF
                return
            await send.send(line)


def setup_logging(path: Path, *, verbose: bool) -> logging.Handler:
    """Send the process's log to ``path`` (appended) and, if ``verbose``, to stderr.

    Never to stdout: the chat is printed there and logs never go into it.

    Returns:
        The file handler installed on the root logger.
    """
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    # Plaintext beside sealed memory: owner-only, like every file under the home. Log
    # lines name what happened (counts, ids, reasons), never what was said.
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600))
    os.chmod(path, 0o600)
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
    logging.captureWarnings(True)
    return handler


async def _start_serving(nursery: trio.Nursery, rt: Any, serve_at: tuple[str, int],
                         stdout: TextIO) -> None:
    from functools import partial

    from solace.surfaces.http.server import serve_app

    host, port = serve_at
    serving = await nursery.start(partial(serve_app, Solace(rt), rt.home.root,
                                          host=host, port=port))
    print(f"Solace is serving on {serving.url} (admin token in {serving.serve_file})",
          file=stdout, flush=True)


async def _watch_signals(cancel: trio.CancelScope, repl: Repl) -> None:
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for signum in signals:
            log.info("%s received; snapshotting and exiting", signal.Signals(signum).name)
            repl.trigger("interrupt")
            cancel.cancel()
            return


async def run_process(
    home: str | Path, config: Config, *, stdin: TextIO, stdout: TextIO, exit_on_eof: bool,
    verbose: bool = False, idle_seconds: float = IDLE_SECONDS,
    serve_at: tuple[str, int] | None = None,
) -> None:
    """The body of ``solace run``: open the runtime, serve the REPL, stop on a signal.

    Args:
        home: the runtime home.
        config: the loaded configuration.
        stdin: where lines are read.
        stdout: where replies are printed (logs never go there).
        exit_on_eof: exit when ``stdin`` closes instead of running unattended.
        verbose: also show the log on stderr.
        idle_seconds: quiet time before the ``idle`` exit trigger fires.
        serve_at: ``(host, port)`` to also serve the HTTP API on this runtime
            (``solace run --serve``; ``HOME/serve.json`` while it serves, removed on exit).
    """
    from solace.runtime import open_runtime

    setup_logging(Path(home).expanduser() / LOG_FILE, verbose=verbose)
    async with open_runtime(home, config) as rt:
        log.info("Solace is running on %s; %s", rt.home.root, rt.status())
        interactive = bool(getattr(stdin, "isatty", lambda: False)()
                           and getattr(stdout, "isatty", lambda: False)())
        repl = Repl(rt, stdout, interactive=interactive)
        await repl.start()
        print("Solace is listening. Type a line to talk to Main; /help for commands.",
              file=stdout, flush=True)
        with trio.CancelScope() as cancel:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(_watch_signals, cancel, repl)
                nursery.start_soon(repl.watch_idle, idle_seconds)
                if serve_at is not None:
                    await _start_serving(nursery, rt, serve_at, stdout)
                await repl.serve(stdin, exit_on_eof=exit_on_eof, cancel=cancel)
                await trio.sleep_forever()  # unattended until a signal or /quit
        await repl.finish()
        if interactive:
            print("", file=stdout, flush=True)
