"""``solace mcp`` while a process serves the home: MCP on stdio, answered by that
process's ``/mcp`` (streamable HTTP) with the admin token from ``HOME/serve.json``.

An MCP client configured with ``solace mcp --home H`` keeps working whether or not
``solace serve`` holds ``H``: the home's lock cannot be shared, so instead of opening
the runtime this process relays each request (the tool list, each call) to the
serving one, for the memory id given with ``--memory``. The tools, their arguments,
their answers and their refusals are the serving process's own.
"""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import quote

import mcp_types as types
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared._httpx_utils import create_mcp_http_client

__all__ = ["relay_stdio"]

log = logging.getLogger("solace.mcp")


async def relay_stdio(url: str, token: str, memory_id: str, *, version: str = "0.1.0") -> None:
    """Serve MCP on stdin/stdout until stdin closes, relaying to ``url``'s ``/mcp``.

    Args:
        url: the serving process (``serve.json``'s ``url``).
        token: its admin token.
        memory_id: the memory id the tools act for by default (already checked).
    """
    headers = {"Authorization": f"Bearer {token}"}
    target = f"{url}/mcp?memory={quote(memory_id, safe='')}"
    async with (create_mcp_http_client(headers=headers) as http,
                streamable_http_client(target, http_client=http) as (read, write),
                ClientSession(read, write) as upstream):
        init = await upstream.initialize()

        async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
            return await upstream.list_tools()

        async def call_tool(ctx: Any, params: types.CallToolRequestParams
                            ) -> types.CallToolResult:
            return await upstream.call_tool(params.name, params.arguments or {})

        server: Server[Any] = Server("solace", version=version,
                                     instructions=init.instructions,
                                     on_list_tools=list_tools, on_call_tool=call_tool)
        log.info("serving MCP on stdio, relayed to %s (memory id %s)", url, memory_id)
        async with stdio_server() as (stdin, stdout):
            await server.run(stdin, stdout, server.create_initialization_options())
    log.info("MCP on stdio (relayed) stopped")
