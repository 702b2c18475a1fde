"""The ASGI application of ``solace serve``: Starlette routes over :class:`solace.app.Solace`.

Every JSON route comes from :data:`~solace.surfaces.http.routes.ENDPOINTS` (the
web console's three static files are served by
:class:`~solace.surfaces.http.console_pages.ConsolePages`, outside the API), and every
request passes the same steps before its handler runs: the bearer token (401 missing
or unknown), the token's reach (403 for an admin route with a scoped token), the body
size (413 past ``max_body_bytes``, by ``Content-Length`` or while reading), the body
as JSON and its schema (400 naming the field), then the memory id's scope (403).

Guarantees: every response that is not a success is a JSON body ``{"error", "detail"}``
naming the problem; no traceback reaches a client (an unexpected exception is logged
with its traceback and answered 500 with a generic body).
"""

from __future__ import annotations

import functools
import json
import logging
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import asdict, fields
from typing import Any

import trio
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from solace.app import AppError, NotFoundError, Solace
from solace.app.importing import ImportCalls
from solace.app.workspace import WorkspaceDisabledError
from solace.facts import FactsDisabledError
from solace.models.schema import SchemaError
from solace.offload import Offloader
from solace.surfaces.http.console_api import console_handlers
from solace.surfaces.http.console_pages import ConsolePages
from solace.surfaces.http.memory import memory_handlers
from solace.surfaces.http.metrics import CONTENT_TYPE, Histogram, render
from solace.surfaces.http.routes import (
    ENDPOINTS,
    Endpoint,
    check,
    openapi_document,
    path_schema,
)
from solace.surfaces.http.tokens import Grant, TokenStore
from solace.surfaces.http.workspace_api import workspace_handlers

__all__ = ["MAX_BODY_BYTES", "HttpError", "build_app"]

log = logging.getLogger("solace.http")

MAX_BODY_BYTES = 1 << 20
"""Default request body limit (1 MiB); larger bodies are refused with 413."""
CHAT_TIMEOUT = 300.0
"""Seconds a chat turn may take before the request is answered 504."""
DRAIN_FACTOR = 8
"""An oversized body is read (and dropped) up to this many times the limit before the 413."""

Handler = Callable[["Call"], Awaitable[Any]]


class HttpError(Exception):
    """A request refused with ``status``; ``error`` is a short code, ``detail`` says why."""

    def __init__(self, status: int, error: str, detail: str) -> None:
        super().__init__(f"{status} {error}: {detail}")
        self.status, self.error, self.detail = status, error, detail


def json_response(status: int, body: Any,
                  headers: Mapping[str, str] | None = None) -> Response:
    """``body`` as a JSON response (non-JSON values rendered with ``str``)."""
    data = json.dumps(body, ensure_ascii=False, default=str).encode()
    return Response(data, status, headers=headers, media_type="application/json")


def flat(view: Any) -> dict[str, Any]:
    """A flat dataclass (fields of JSON scalars and tuples of them: the application API's
    views) as a dict, without ``asdict``'s deep copy of every tuple (a recall's hits cite
    hundreds of events, and the copy cost more than the recall's scoring)."""
    return {name: getattr(view, name) for name in _field_names(view.__class__)}


@functools.cache
def _field_names(cls: type[Any]) -> tuple[str, ...]:
    return tuple(f.name for f in fields(cls))


def error_response(status: int, error: str, detail: str,
                   headers: Mapping[str, str] | None = None) -> Response:
    """The one error shape: ``{"error": error, "detail": detail}``."""
    return json_response(status, {"error": error, "detail": detail}, headers)


class Call:
    """One validated request as a handler sees it: path parameters, query, body, grant."""

    def __init__(self, request: Request, params: dict[str, str], query: dict[str, Any],
                 body: dict[str, Any], grant: Grant | None) -> None:
        self.request, self.params, self.query, self.body, self.grant = (
            request, params, query, body, grant)


class _Server:
    def __init__(self, app: Solace, tokens: TokenStore, offloader: Offloader,
                 max_body_bytes: int, version: str, chat_timeout: float) -> None:
        self.app, self.tokens, self.offloader = app, tokens, offloader
        self.chat_timeout = chat_timeout
        self.max_body_bytes = max_body_bytes
        self.document = openapi_document(version=version, max_body_bytes=max_body_bytes)
        self.requests: Counter[tuple[str, str, int]] = Counter()
        self.recall_latency = Histogram()
        self.token_lock = trio.Lock()

    # -- the steps every request passes ----------------------------------------------

    def _grant(self, request: Request, ep: Endpoint) -> Grant | None:
        if ep.access == "public":
            return None
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        if not header:
            raise HttpError(401, "unauthorized",
                            "missing bearer token: send 'Authorization: Bearer TOKEN'")
        if scheme.lower() != "bearer" or not token.strip():
            raise HttpError(401, "unauthorized",
                            f"the Authorization header must be 'Bearer TOKEN', got scheme "
                            f"{scheme[:20]!r}")
        grant = self.tokens.grant(token.strip())
        if grant is None:
            raise HttpError(401, "unauthorized", "unknown bearer token")
        if ep.access == "admin" and not grant.admin:
            raise HttpError(403, "forbidden",
                            f"{ep.method} {ep.path} needs the admin token; this token is "
                            f"scoped to memory ids {sorted(grant.memory_ids)}")
        return grant

    async def _body(self, request: Request, ep: Endpoint) -> dict[str, Any]:
        limit = self.max_body_bytes
        declared = request.headers.get("content-length")
        chunks: list[bytes] = []
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                # Read on (discarding) up to DRAIN_FACTOR x the limit, so a client still
                # uploading sees the 413 instead of a reset connection; past that, stop.
                if size > DRAIN_FACTOR * limit:
                    break
                chunks.clear()
                continue
            chunks.append(chunk)
        if size > limit:
            what = f"{declared} bytes" if declared and declared.isdigit() else "over the limit"
            raise HttpError(413, "payload_too_large",
                            f"the body is {what}; the limit is {limit} bytes")
        if ep.body is None:
            return {}
        raw = b"".join(chunks)
        if not raw.strip():
            raise HttpError(400, "invalid_request",
                            f"{ep.method} {ep.path} needs a JSON object body")
        try:
            body = json.loads(raw)
        except (ValueError, UnicodeDecodeError) as exc:
            raise HttpError(400, "invalid_json", f"the body is not JSON: {exc}") from None
        check(body, ep.body)
        return dict(body)

    @staticmethod
    def _query(request: Request, ep: Endpoint) -> dict[str, Any]:
        if ep.query is None:
            if request.query_params:
                raise HttpError(400, "invalid_request",
                                f"{ep.method} {ep.path} takes no query parameters, got "
                                f"{sorted(request.query_params)}")
            return {}
        props = ep.query["properties"]
        query: dict[str, Any] = {}
        for name, value in request.query_params.items():
            if props.get(name, {}).get("type") == "integer":
                try:
                    query[name] = int(value)
                    continue
                except ValueError:
                    pass
            query[name] = value
        check(query, ep.query, "query")
        return query

    @staticmethod
    def _scope(call: Call, ep: Endpoint) -> None:
        grant = call.grant
        if ep.access != "memory" or grant is None or grant.admin:
            return
        memory = call.params.get("memory_id", call.body.get("memory"))
        if memory is None:
            raise HttpError(403, "forbidden",
                            f"this token is scoped to memory ids {sorted(grant.memory_ids)}; "
                            "name one of them in \"memory\"")
        if not grant.covers(memory):
            raise HttpError(403, "forbidden",
                            f"memory {memory!r} is outside this token's scope "
                            f"(memory ids {sorted(grant.memory_ids)})")

    async def dispatch(self, ep: Endpoint, handler: Handler, request: Request) -> Response:
        try:
            grant = self._grant(request, ep)
            if ep.params:
                check(dict(request.path_params), path_schema(ep), "path")
            query = self._query(request, ep)
            body = await self._body(request, ep)
            call = Call(request, dict(request.path_params), query, body, grant)
            self._scope(call, ep)
            result = await handler(call)
            response = (result if isinstance(result, Response)
                        else json_response(ep.ok, result))
        except HttpError as exc:
            headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
            response = error_response(exc.status, exc.error, exc.detail, headers)
        except FactsDisabledError as exc:
            response = error_response(503, "facts_disabled", _message(exc))
        except WorkspaceDisabledError as exc:
            response = error_response(503, "workspace_disabled", _message(exc))
        except SchemaError as exc:
            response = error_response(400, "invalid_request", str(exc))
        except (NotFoundError, LookupError) as exc:
            response = error_response(404, "not_found", _message(exc))
        except (AppError, ValueError, TypeError) as exc:
            response = error_response(400, "invalid_request", _message(exc))
        except Exception:
            log.exception("unexpected error in %s %s", ep.method, ep.path)
            response = error_response(500, "internal_error",
                                      "an unexpected error; the server's log has the details")
        self.requests[(ep.method, ep.path, response.status_code)] += 1
        return response


def _message(exc: BaseException) -> str:
    return str(exc.args[0]) if len(exc.args) == 1 else str(exc)


def _handlers(s: _Server) -> dict[str, Handler]:
    app = s.app

    async def healthz(call: Call) -> Any:
        return {"status": "ok"}

    async def openapi(call: Call) -> Any:
        return s.document

    async def metrics(call: Call) -> Any:
        text = render(app.counters(), s.requests, s.recall_latency)
        return Response(text, 200, media_type=CONTENT_TYPE)

    async def chat(call: Call) -> Any:
        message = call.body["message"]  # XML-safe: the runtime would fail inside Main
        memory = {k: call.body[k] for k in ("memory", "memory_store", "session_type")
                  if k in call.body}
        with trio.move_on_after(s.chat_timeout) as waited:
            reply = await app.chat(message, **memory)
        if waited.cancelled_caught:
            raise HttpError(504, "timeout", f"no reply within {s.chat_timeout:g} s")
        return {**asdict(reply), "memory": call.body.get("memory"),
                "memory_store": call.body.get("memory_store"),
                "session_type": call.body.get("session_type", app.runtime.session_type)}

    async def observe(call: Call) -> Any:
        b = call.body
        entry_id = await app.observe(
            b["text"], speaker=b["speaker"], kind=b.get("kind", "message"), at=b.get("at"),
            attrs=b.get("attrs"), emotional_weight=b.get("emotional_weight"),
            tags=b.get("tags", ()),
        )
        return {"entry_id": entry_id}

    async def _recall(args: dict[str, Any]) -> Any:
        start = trio.current_time()
        try:
            hits = await app.recall(args["query"], agent=args.get("agent", "Main"),
                                    k=args.get("k", 10), tags=args.get("tags", ()))
        finally:
            s.recall_latency.observe(trio.current_time() - start)
        return {"query": args["query"], "hits": [flat(h) for h in hits]}

    async def recall_get(call: Call) -> Any:
        return await _recall(call.query)

    async def recall(call: Call) -> Any:
        return await _recall(call.body)

    async def topics(call: Call) -> Any:
        return {"topics": [flat(t) for t in app.topics()]}

    async def curate(call: Call) -> Any:
        return asdict(await app.curate(call.params["topic_id"], call.body["action"]))

    async def facts(call: Call) -> Any:
        return {"facts": [flat(f) for f in app.facts()]}

    async def fact(call: Call) -> Any:
        key = call.params["key"]
        for f in app.facts():
            if f.key == key:
                return asdict(f)
        raise NotFoundError(f"no durable fact {key!r}")

    async def set_fact(call: Call) -> Any:
        return asdict(await app.set_fact(call.params["key"], call.body["value"]))

    async def unset_fact(call: Call) -> Any:
        await app.unset_fact(call.params["key"])
        return {"deleted": call.params["key"]}

    async def inspect(call: Call) -> Any:
        return app.inspect(call.query.get("agent"))

    async def stats(call: Call) -> Any:
        return app.stats()

    async def evaluate(call: Call) -> Any:
        session_id, trigger = call.params["session_id"], call.body["trigger"]
        await app.evaluate(session_id, trigger)
        return {"session_id": session_id, "trigger": trigger, "accepted": True}

    async def create_token(call: Call) -> Any:
        memory_ids = sorted(set(call.body["memory_ids"]))
        async with s.token_lock:
            token, content = s.tokens.issue(memory_ids)
            await s.offloader.run(s.tokens.save, content)
        log.info("scoped token issued for memory ids %s", memory_ids)
        return {"token": token, "memory_ids": memory_ids}

    async def import_batches(call: Call) -> Any:
        return asdict(await ImportCalls(app).import_batches(call.body["batches"]))

    own = {name: fn for name, fn in locals().items() if callable(fn) and name != "_recall"}
    return {**own, **memory_handlers(app), **console_handlers(app),
            **workspace_handlers(app)}


async def _http_error(request: Request, exc: Exception) -> Response:
    if isinstance(exc, HTTPException):
        detail = {404: f"no route {request.method} {request.url.path}",
                  405: f"{request.method} is not allowed on {request.url.path}"}
        return error_response(exc.status_code, "not_found" if exc.status_code == 404 else
                              "method_not_allowed" if exc.status_code == 405 else "http_error",
                              detail.get(exc.status_code, str(exc.detail)), exc.headers)
    log.error("unexpected error outside a route: %r", exc, exc_info=exc)
    return error_response(500, "internal_error",
                          "an unexpected error; the server's log has the details")


_MCP = Endpoint("POST", "/mcp", "mcp", "MCP over streamable HTTP", "memory")
"""``/mcp`` for the token check: any valid token (admin or scoped) may call it."""


def build_app(app: Solace, tokens: TokenStore, *, offloader: Offloader | None = None,
              max_body_bytes: int = MAX_BODY_BYTES, version: str = "0.1.0",
              chat_timeout: float = CHAT_TIMEOUT) -> Starlette:
    """The ASGI application serving ``app`` over HTTP.

    Args:
        app: the application API over a running runtime.
        tokens: the admin and scoped tokens.
        offloader: where token-file writes run (default: a one-thread offloader).
        max_body_bytes: request bodies larger than this are refused with 413.
        version: the ``info.version`` of the OpenAPI document.
        chat_timeout: seconds a chat turn may take before it is answered 504.
    """
    server = _Server(app, tokens, offloader or Offloader(1), max_body_bytes, version,
                     chat_timeout)
    handlers = _handlers(server)

    def route(ep: Endpoint) -> Route:
        handler = handlers[ep.name]

        async def endpoint(request: Request) -> Response:
            return await server.dispatch(ep, handler, request)

        return Route(ep.path, endpoint, methods=[ep.method], name=ep.name)

    from solace.surfaces.mcp.server import McpHttp

    async def authorize(request: Request) -> Grant | Response | None:  # /mcp: the same token check
        try:
            return server._grant(request, _MCP)
        except HttpError as exc:
            return error_response(exc.status, exc.error, exc.detail, {"WWW-Authenticate": "Bearer"})

    mcp = McpHttp(app, authorize)
    asgi = Starlette(routes=[*(route(ep) for ep in ENDPOINTS), mcp.route(), ConsolePages()],
                     lifespan=mcp.lifespan,
                     exception_handlers={HTTPException: _http_error, Exception: _http_error})
    asgi.state.server = server
    return asgi
