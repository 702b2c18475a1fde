"""``solace mcp [--home H] [--memory ID]``: the MCP server on stdio (relayed to the
serving process's ``/mcp`` while ``solace serve`` holds the home:
:mod:`solace.surfaces.mcp.bridge`).

Registered by :mod:`solace.surfaces.cli.main`; the server is imported only when the command runs.
stdout is the protocol: logs go to ``HOME/solace.log`` (and stderr with ``--verbose``).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import trio

from solace.surfaces.cli.errors import UsageError, guarded
from solace.surfaces.cli.options import add_common, config_of, usable_home
from solace.surfaces.cli.remote import Remote, local_or_remote
from solace.surfaces.mcp.tools import DEFAULT_MEMORY_ID, MemoryIdError, check_memory_id

__all__ = ["register"]


def register(subparsers: Any) -> None:
    """Add ``mcp`` to the ``solace`` command."""
    mcp = subparsers.add_parser(
        "mcp", help="serve memory as MCP tools over stdio (for an MCP client's config)")
    mcp.add_argument("--memory", default=DEFAULT_MEMORY_ID, metavar="ID",
                     help="the memory id the tools act for by default: 1 to 128 letters, digits, "
                          f"'-' or '_' (default {DEFAULT_MEMORY_ID})")
    add_common(mcp)
    mcp.set_defaults(func=guarded(cmd_mcp))


def cmd_mcp(args: argparse.Namespace) -> int:
    """Serve MCP on stdio until stdin closes; 0 after a clean stop."""
    try:
        memory_id = check_memory_id(args.memory)
    except MemoryIdError as exc:
        raise UsageError(f"--memory: {exc}") from exc
    config = config_of(args)
    home = usable_home(args.home)

    from solace.surfaces.repl import LOG_FILE, setup_logging

    setup_logging(Path(home).expanduser() / LOG_FILE, verbose=args.verbose)

    async def local() -> None:
        from solace.surfaces.mcp.server import serve_stdio

        await serve_stdio(home, config, memory_id=memory_id)

    def relayed(server: Remote) -> None:
        from solace.surfaces.mcp.bridge import relay_stdio

        trio.run(relay_stdio, server.info.url, server.info.admin_token, memory_id)

    local_or_remote(Path(home), lambda: trio.run(local), relayed)
    return 0
