"""``solace run``, ``solace recall`` and ``solace import locomo``.

``solace run`` is the long-lived process: all five actors on a home directory and
the REPL of :mod:`solace.surfaces.repl` on stdin. With stdin closed it keeps
running unattended, logging status every ``runtime.status_interval_seconds``,
until SIGINT or SIGTERM; either way it exits by flushing the substrate and
snapshotting every memory.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Any

import trio

from solace.config import Config, load_config
from solace.home import DEFAULT_HOME

__all__ = ["register"]


def register(subparsers: Any) -> None:
    """Add ``run``, ``recall`` and ``import`` to the ``solace`` command."""
    run = subparsers.add_parser("run", help="start the five actors and a REPL on stdin")
    _home(run)
    run.add_argument("--exit-on-eof", action="store_true",
                     help="exit when stdin closes (default: keep running unattended)")
    run.add_argument("--verbose", action="store_true",
                     help="also show the log on stderr (it always goes to HOME/solace.log)")
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


def cmd_run(args: argparse.Namespace) -> int:
    from solace.surfaces.repl import run_process

    trio.run(lambda: run_process(args.home, _config(args), stdin=sys.stdin, stdout=sys.stdout,
                                 exit_on_eof=args.exit_on_eof, verbose=args.verbose))
    return 0


# ------------------------------------------------------------ one-off commands


def cmd_recall(args: argparse.Namespace) -> int:
    from solace.runtime import open_runtime
    from solace.surfaces.repl import format_hits

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
