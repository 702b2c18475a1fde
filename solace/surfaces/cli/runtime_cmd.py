"""``solace run`` and ``solace recall``.

``solace run`` is the long-lived process: all five actors on a home directory and
the REPL of :mod:`solace.surfaces.repl` on stdin. With stdin closed it keeps
running unattended, logging status every ``runtime.status_interval_seconds``,
until SIGINT or SIGTERM; either way it exits by flushing the substrate and
snapshotting every memory. It creates the home if there is none. With ``--serve`` it
also serves the HTTP API of ``solace serve`` on the same runtime (``HOME/serve.json``
while it does), so other ``solace`` commands reach it.

``solace recall`` is read-only: it refuses a home that does not exist rather than
creating an empty one, and checks its agent, ``-k`` and ``--tag`` before loading any
model; ``--tag`` (repeatable) narrows long-term search to records carrying any of them.
While a serving process holds the home, it asks that process (:mod:`solace.surfaces.cli.remote`:
``GET /recall``, or ``POST /recall`` when there are tags).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import trio

from solace.surfaces.cli.errors import UsageError, guarded
from solace.surfaces.cli.options import add_common, config_of, existing_home, usable_home
from solace.surfaces.http.cli import DEFAULT_HOST, DEFAULT_PORT

__all__ = ["register"]


def register(subparsers: Any) -> None:
    """Add ``run`` and ``recall`` to the ``solace`` command."""
    run = subparsers.add_parser("run", help="start the five actors and a REPL on stdin")
    run.add_argument("--exit-on-eof", action="store_true",
                     help="exit when stdin closes (default: keep running unattended)")
    run.add_argument("--serve", action="store_true",
                     help="also serve the HTTP API of `solace serve` on the same runtime")
    run.add_argument("--host", default=None,
                     help=f"with --serve: address to listen on (default {DEFAULT_HOST})")
    run.add_argument("--port", type=int, default=None,
                     help=f"with --serve: port, 0 for a free one (default {DEFAULT_PORT})")
    add_common(run)
    run.set_defaults(func=guarded(cmd_run))

    recall = subparsers.add_parser("recall", help="one recall query against a home's memory")
    recall.add_argument("query")
    recall.add_argument("--agent", default="Main", metavar="AGENT",
                        help="whose memory: Supervisor, Main, Mood, Time or Mouth (default Main)")
    recall.add_argument("-k", type=int, default=10, metavar="N",
                        help="number of hits, 1..1000 (default 10)")
    recall.add_argument("--tag", action="append", default=[], metavar="TAG", dest="tags",
                        help="narrow long-term search to records carrying TAG (repeatable: "
                             "any of them)")
    add_common(recall)
    recall.set_defaults(func=guarded(cmd_recall))


def cmd_run(args: argparse.Namespace) -> int:
    from solace.surfaces.repl import run_process

    serve_at = None
    if args.serve:
        port = DEFAULT_PORT if args.port is None else args.port
        if not 0 <= port <= 65535:
            raise UsageError(f"--port must be within 0..65535, got {port}")
        serve_at = (args.host or DEFAULT_HOST, port)
    elif args.host is not None or args.port is not None:
        raise UsageError("--host and --port need --serve")
    config = config_of(args)
    home = usable_home(args.home)
    trio.run(lambda: run_process(home, config, stdin=sys.stdin, stdout=sys.stdout,
                                 exit_on_eof=args.exit_on_eof, verbose=args.verbose,
                                 serve_at=serve_at))
    return 0


def cmd_recall(args: argparse.Namespace) -> int:
    from solace.actors.routing import ACTORS

    if args.agent not in ACTORS:
        raise UsageError(f"unknown agent {args.agent!r} for --agent (one of {', '.join(ACTORS)})")
    if not 1 <= args.k <= 1000:
        raise UsageError(f"-k must be within 1..1000, got {args.k}")
    if not args.query.strip():
        raise UsageError("the recall QUERY is empty")
    from solace.app.api import MAX_RECALL_TAGS

    if len(args.tags) > MAX_RECALL_TAGS:
        raise UsageError(f"at most {MAX_RECALL_TAGS} --tag, got {len(args.tags)}")
    if any(not tag.strip() for tag in args.tags):
        raise UsageError(f"a --tag is blank: {args.tags!r}")
    config = config_of(args)
    home = existing_home(args.home, config)

    from solace.surfaces.cli.remote import Remote, local_or_remote
    from solace.surfaces.cli.views import hits_from_json
    from solace.surfaces.repl import LOG_FILE, format_hits, setup_logging

    async def main() -> list[Any]:
        from solace.app import Solace
        from solace.runtime import open_runtime

        setup_logging(Path(home) / LOG_FILE, verbose=args.verbose)
        async with open_runtime(home, config, warm_up=False) as rt:
            return await Solace(rt).recall(args.query, agent=args.agent, k=args.k,
                                           tags=args.tags)

    def remote(server: Remote) -> list[Any]:
        if args.tags:  # a list: only the body carries one
            answer = server.call("POST", "/recall", body={
                "query": args.query, "agent": args.agent, "k": args.k, "tags": args.tags})
        else:
            answer = server.call("GET", "/recall", params={
                "query": args.query, "agent": args.agent, "k": args.k})
        return hits_from_json(answer["hits"])

    hits = local_or_remote(home, lambda: trio.run(main), remote)
    print(format_hits(hits), flush=True)
    return 0
