"""``solace serve [--home H] [--host 127.0.0.1] [--port 8765] [--new-admin-token]
[--http-server solace|hypercorn]``: the HTTP API.

Registered by :mod:`solace.surfaces.cli.main`; the server is imported only when the command runs.
"""

from __future__ import annotations

import argparse
import sys
from functools import partial
from pathlib import Path
from typing import Any

import trio

from solace.surfaces.cli.errors import UsageError, guarded
from solace.surfaces.cli.options import add_common, config_of, usable_home

__all__ = ["register"]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765


def register(subparsers: Any) -> None:
    """Add ``serve`` to the ``solace`` command."""
    serve = subparsers.add_parser(
        "serve", help="serve the application API over HTTP (JSON, OpenAPI at /openapi.json)")
    serve.add_argument("--host", default=DEFAULT_HOST,
                       help=f"address to listen on (default {DEFAULT_HOST})")
    serve.add_argument("--port", type=int, default=DEFAULT_PORT,
                       help=f"port to listen on, 0 for a free one (default {DEFAULT_PORT})")
    serve.add_argument("--new-admin-token", action="store_true",
                       help="replace the home's admin token (kept in HOME/serve-admin-token "
                            "from the first serve on); the old one stops working")
    serve.add_argument("--http-server", choices=("solace", "hypercorn"), default="solace",
                       help="the ASGI server: Solace's own on h11 (default), or hypercorn's "
                            "trio worker")
    add_common(serve)
    serve.set_defaults(func=guarded(cmd_serve))


def cmd_serve(args: argparse.Namespace) -> int:
    """Run the server until SIGINT or SIGTERM; 0 after a clean stop."""
    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port must be within 0..65535, got {args.port}")
    config = config_of(args)
    home = usable_home(args.home)

    async def main() -> None:
        from solace.surfaces.http.server import serve
        from solace.surfaces.repl import LOG_FILE, setup_logging

        setup_logging(Path(home).expanduser() / LOG_FILE, verbose=args.verbose)
        async with trio.open_nursery() as nursery:
            serving = await nursery.start(partial(
                serve, home, config, host=args.host, port=args.port, handle_signals=True,
                new_admin_token=args.new_admin_token, http_server=args.http_server))
            print(f"Solace is serving on {serving.url} (admin token in {serving.serve_file}; "
                  "SIGINT or SIGTERM to stop)", file=sys.stdout, flush=True)

    trio.run(main)
    return 0
