"""The MCP server over the application API, on stdio (``solace mcp``) and on streamable
HTTP (``/mcp`` of ``solace serve``).

The memory id a call acts for comes from the client's configuration: on stdio from
``solace mcp --memory ID`` (fixed for the process); over HTTP from the request (a
``memory`` query parameter or ``X-Solace-Memory`` header), else from the scoped
token's one memory id, else :data:`DEFAULT_MEMORY_ID` for the admin token. A
``remember`` or ``recall`` call may name another memory id: on stdio any, over HTTP one
the token covers. The ``/mcp`` route requires the same bearer token as every other
endpoint.

Guarantees: a tool call that fails (a bad argument, an unknown tool, a refused move) is
answered as a tool result with ``isError`` and a message naming the bad value; no
traceback reaches the client. On stdio nothing but the protocol is written to stdout
(the ``mcp`` package diverts fd 1 to stderr while it serves; logs go to the home's
log file).
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import mcp_types as types
import trio
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from solace.app import AppError, Solace
from solace.config import Config
from solace.facts import FactMemoryError
from solace.models.schema import SchemaError
from solace.surfaces.http.tokens import Grant
from solace.surfaces.mcp.tools import (
    DEFAULT_MEMORY_ID,
    MCP_TOOLS,
    McpSurfaceError,
    ToolCaller,
    check_memory_id,
)

__all__ = ["MEMORY_HEADER", "McpHttp", "build_server", "serve_stdio"]

log = logging.getLogger("solace.mcp")

MEMORY_HEADER = "x-solace-memory"
"""The HTTP header (or ``memory`` query parameter) naming the memory id of a request."""
_SCOPE_KEY = "solace.memory_id"
FLUSH_SECONDS = 30.0
"""How long a clean stdio stop waits for scheduled evaluations."""

MemoryOf = Callable[[Any], str]
"""Maps a request context to the memory id it acts for."""
ReachOf = Callable[[Any], Callable[[str], bool] | None]
"""Maps a request context to whether it may name a memory id (None: any id)."""
_GRANT_KEY = "solace.grant"


def _result(ok: bool, body: dict[str, Any]) -> types.CallToolResult:
    text = json.dumps(body, ensure_ascii=False, sort_keys=True)
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                structured_content=body, is_error=not ok)


def build_server(app: Solace, memory_of: MemoryOf, *, reach_of: ReachOf | None = None,
                 version: str = "0.1.0") -> Server[Any]:
    """The MCP server listing :data:`MCP_TOOLS` and running them over ``app``.

    Args:
        app: the application API over a running runtime.
        memory_of: the memory id a call acts for, from its request context.
        reach_of: which memory ids a call may name instead (None: any; stdio).
        version: the server version the client is told.
    """
    caller = ToolCaller(app)
    tools = [types.Tool(name=t.name, description=t.description,
                        input_schema=dict(t.parameters)) for t in MCP_TOOLS]

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            ok, body = await caller.call(params.name, params.arguments, memory_of(ctx),
                                         reach=None if reach_of is None else reach_of(ctx))
        except SchemaError as exc:
            ok, body = False, {"ok": False, "error": str(exc)}
        except (AppError, FactMemoryError, McpSurfaceError, LookupError, ValueError,
                TypeError) as exc:
            ok, body = False, {"ok": False, "error": str(exc.args[0]) if exc.args else str(exc)}
        except Exception:
            log.exception("unexpected error in the MCP tool %r", params.name)
            ok, body = False, {"ok": False, "error": "an unexpected error; the server's "
                                                     "log has the details"}
        log.info("mcp tool %s: %s", params.name, "ok" if ok else "refused")
        return _result(ok, body)

    return Server("solace", version=version,
                  instructions="Solace: long-lasting memory. 'remember' stores a fact under a "
                               "memory id, 'recall' finds that id's facts; "
                               "recall_conversation searches what was said, with "
                               "citations; notes, important_info and "
                               "manage_topic_memory act on the current conversation.",
                  on_list_tools=list_tools, on_call_tool=call_tool)


async def serve_stdio(home: str | Path, config: Config, *, memory_id: str = DEFAULT_MEMORY_ID,
                      clock: Any = None) -> None:
    """Open the runtime on ``home`` and serve MCP over stdin/stdout until stdin closes.

    The runtime then closes as after ``solace run`` (scheduled evaluations run,
    memories snapshotted, the substrate flushed).

    Raises:
        MemoryIdError: ``memory_id`` breaks seed 001's rule (before the home is opened).
    """
    from mcp.server.stdio import stdio_server

    from solace.runtime import open_runtime

    memory_id = check_memory_id(memory_id)
    async with open_runtime(home, config, clock=clock) as rt:
        app = Solace(rt)
        server = build_server(app, lambda ctx: memory_id)
        log.info("serving MCP on stdio for %s (memory id %s)", rt.home.root, memory_id)
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
        with trio.move_on_after(FLUSH_SECONDS):
            await app.flush()
    log.info("MCP on stdio stopped")


def _error(status: int, error: str, detail: str) -> Response:
    return JSONResponse({"error": error, "detail": detail}, status)


def _request_memory(request: Request, grant: Grant) -> str:
    """The memory id a request acts for (see the module's docstring)."""
    named = request.query_params.get("memory") or request.headers.get(MEMORY_HEADER)
    if named is None:
        if grant.admin:
            return DEFAULT_MEMORY_ID
        if len(grant.memory_ids) == 1:
            return next(iter(grant.memory_ids))
        raise PermissionError(
            f"this token covers memory ids {sorted(grant.memory_ids)}; name one with "
            f"?memory=ID or the {MEMORY_HEADER} header")
    check_memory_id(named)
    if not grant.covers(named):
        raise PermissionError(f"memory id {named!r} is outside this token's scope (memory "
                              f"ids {sorted(grant.memory_ids)})")
    return named


def _ctx_scope(ctx: Any) -> Any:
    request = getattr(ctx, "request", None)
    return getattr(request, "scope", None) or {}


def _ctx_reach(ctx: Any) -> Callable[[str], bool]:
    grant = _ctx_scope(ctx).get(_GRANT_KEY)
    if not isinstance(grant, Grant):
        return lambda _memory_id: False
    return grant.covers


def _ctx_memory(ctx: Any) -> str:
    memory = _ctx_scope(ctx).get(_SCOPE_KEY)
    if not isinstance(memory, str):
        raise McpSurfaceError("this MCP request came without a memory id")
    return memory


class McpHttp:
    """``/mcp``: MCP over streamable HTTP (stateless, JSON responses), behind the
    server's bearer token.

    Args:
        app: the application API.
        authorize: the server's token check for a request: the token's grant, or the
            error response to send (401 missing or unknown token, as every endpoint);
            None (no grant) is refused with 401 too.
    """

    path = "/mcp"

    def __init__(self, app: Solace,
                 authorize: Callable[[Request], Awaitable[Grant | Response | None]]) -> None:
        self.authorize = authorize
        self.server = build_server(app, _ctx_memory, reach_of=_ctx_reach)
        self.manager = StreamableHTTPSessionManager(app=self.server, json_response=True,
                                                    stateless=True)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        granted = await self.authorize(request)
        if isinstance(granted, Response):
            await granted(scope, receive, send)
            return
        if granted is None:
            await _error(401, "unauthorized", "/mcp needs a bearer token")(scope, receive, send)
            return
        try:
            scope[_SCOPE_KEY] = _request_memory(request, granted)
            scope[_GRANT_KEY] = granted
        except McpSurfaceError as exc:
            await _error(400, "invalid_request", str(exc))(scope, receive, send)
            return
        except PermissionError as exc:
            await _error(403, "forbidden", str(exc))(scope, receive, send)
            return
        await self.manager.handle_request(scope, receive, send)

    def route(self) -> Route:
        """The Starlette route serving ``/mcp`` (every method the transport uses)."""
        return Route(self.path, self, name="mcp")

    def lifespan(self, _asgi: Any) -> AbstractAsyncContextManager[None]:
        """The Starlette lifespan: the session manager runs while the app is served."""
        return self._run()

    @asynccontextmanager
    async def _run(self) -> AsyncIterator[None]:
        async with self.manager.run():
            yield
