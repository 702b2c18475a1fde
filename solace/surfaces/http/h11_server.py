"""An ASGI server for HTTP/1.1 on trio and h11, with few scheduling points a request.

``solace serve`` first ran under hypercorn's trio worker. Under load every request
passed through about twenty trio task steps there (a task per request, an idle-timer
task restarted after each one, two socket writes per response, each behind a lock);
every step waits for the event loop's current batch of steps, which under load holds
recalls and ingests, so a recall's wait grew with the step count, not its own work.
Here a connection's own task reads a request, runs the app and writes the response: a
whole response goes out in one write. ``benchmarks/http_load.py`` runs both servers
in one run: with 10 clients on 2 cores, recall p50 15.3 ms here against 30.8 ms under
hypercorn.

What it does: HTTP/1.1 with keep-alive (h11 parses and checks the protocol); request
bodies read whole before the app runs, refused with 413 above ``max_body_bytes``;
``Expect: 100-continue``; a response sent whole in one write, or streamed chunked when
the app sends it in parts (server-sent events), with a disconnect noticed while it
streams; the ASGI lifespan; a malformed request, a head over ``max_head_bytes`` or a
request slower than ``read_timeout`` answered 400 / 431 / 408 with a JSON body, then
the connection closed; idle keep-alive connections closed after
``keep_alive_timeout``; on stop, no new connection, idle ones closed, requests in
flight given ``grace`` seconds. Not here: HTTP/2, TLS, websockets (the API uses none).
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import Any
from urllib.parse import unquote

import h11
import trio

__all__ = ["Limits", "serve_asgi"]

log = logging.getLogger("solace.http.server")

Message = MutableMapping[str, Any]
ASGIApp = Callable[[Message, Callable[[], Awaitable[Message]],
                    Callable[[Message], Awaitable[None]]], Awaitable[None]]

#: Bytes asked of the socket per read.
READ_BYTES = 65536


@dataclass(frozen=True, slots=True)
class Limits:
    """What one connection may cost the server.

    Attributes:
        max_body_bytes: a larger request body is refused with 413.
        max_head_bytes: a larger request line plus headers is refused with 431.
        read_timeout: seconds a request's head and body have to arrive once it starts.
        keep_alive_timeout: seconds an idle connection is kept for its next request.
    """

    max_body_bytes: int
    max_head_bytes: int = 16 * 1024
    read_timeout: float = 30.0
    keep_alive_timeout: float = 5.0


class _Refused(Exception):
    """A request answered by the server itself (status, error code, detail)."""

    def __init__(self, status: int, error: str, detail: str) -> None:
        super().__init__(detail)
        self.status, self.error, self.detail = status, error, detail


@dataclass(eq=False)
class _Connections:
    app: ASGIApp
    limits: Limits
    state: dict[str, Any]
    draining: bool = False
    idle: set[trio.CancelScope] = field(default_factory=set)

    def drain(self) -> None:
        """Finish the requests in flight, close idle connections, take no new one."""
        self.draining = True
        for scope in list(self.idle):
            scope.cancel()

    async def handle(self, stream: trio.SocketStream) -> None:
        conn = h11.Connection(h11.SERVER, max_incomplete_event_size=self.limits.max_head_bytes)
        peers = (_address(stream.socket.getpeername()), _address(stream.socket.getsockname()))
        try:
            async with trio.open_nursery() as watchers:  # for streamed responses
                while not self.draining:
                    try:
                        request = await self._request_head(conn, stream)
                        if request is None:
                            break
                        body = await self._body(conn, stream, request)
                    except _Refused as refused:
                        await _send_refusal(conn, stream, refused)
                        break
                    await self._respond(_Exchange(conn, stream, request, watchers), body,
                                        peers)
                    if conn.our_state is not h11.DONE or conn.their_state is not h11.DONE:
                        break
                    conn.start_next_cycle()
        except (trio.BrokenResourceError, trio.ClosedResourceError, h11.LocalProtocolError):
            pass
        finally:
            await trio.aclose_forcefully(stream)

    async def _read(self, conn: h11.Connection, stream: trio.SocketStream,
                    deadline: float) -> Any:
        """The connection's next h11 event, reading until ``deadline``."""
        while True:
            event = _next_event(conn)
            if event is not h11.NEED_DATA:
                return event
            with trio.move_on_at(deadline) as timer:
                data = await stream.receive_some(READ_BYTES)
            if timer.cancelled_caught:
                raise _Refused(408, "request_timeout",
                               f"the request did not arrive within {self.limits.read_timeout} s")
            conn.receive_data(data)

    async def _request_head(self, conn: h11.Connection, stream: trio.SocketStream
                            ) -> h11.Request | None:
        """The next request's head, or None when the client closes or stays idle too long
        (or the server drains while it waits)."""
        event = _next_event(conn)  # a request already buffered (pipelined) comes first
        if event is h11.NEED_DATA:  # wait, idle, for its first bytes
            with trio.CancelScope(deadline=trio.current_time()
                                  + self.limits.keep_alive_timeout) as idle:
                self.idle.add(idle)
                try:
                    data = await stream.receive_some(READ_BYTES)
                finally:
                    self.idle.discard(idle)
            if idle.cancelled_caught:
                return None
            conn.receive_data(data)
            event = await self._read(conn, stream,
                                     trio.current_time() + self.limits.read_timeout)
        if not isinstance(event, h11.Request):
            return None
        size = len(event.target) + sum(len(k) + len(v) + 4 for k, v in event.headers)
        if size > self.limits.max_head_bytes:  # (h11 checks only a head still arriving)
            raise _Refused(431, "request_header_too_large",
                           f"the request line and headers are {size} bytes; the limit is "
                           f"{self.limits.max_head_bytes}")
        return event

    async def _body(self, conn: h11.Connection, stream: trio.SocketStream,
                    request: h11.Request) -> bytes:
        limit = self.limits.max_body_bytes
        for name, value in request.headers:
            if name == b"content-length" and int(value) > limit:
                raise _Refused(413, "payload_too_large",
                               f"the body is {int(value)} bytes; the limit is {limit} bytes")
        if conn.they_are_waiting_for_100_continue:
            await stream.send_all(conn.send(h11.InformationalResponse(status_code=100,
                                                                      headers=[])))
        deadline = trio.current_time() + self.limits.read_timeout
        parts: list[bytes] = []
        size = 0
        while True:
            event = await self._read(conn, stream, deadline)
            if isinstance(event, h11.EndOfMessage):
                return b"".join(parts)
            if isinstance(event, h11.ConnectionClosed):
                raise trio.ClosedResourceError("the client closed mid-request")
            if isinstance(event, h11.Data):
                size += len(event.data)
                if size > limit:
                    raise _Refused(413, "payload_too_large",
                                   f"the body is over the limit of {limit} bytes")
                parts.append(bytes(event.data))

    async def _respond(self, exchange: _Exchange, body: bytes,
                       peers: tuple[tuple[str, int] | None, tuple[str, int] | None]) -> None:
        conn, stream, request = exchange.conn, exchange.stream, exchange.request
        sent_body = False

        async def receive() -> Message:
            nonlocal sent_body
            if not sent_body:
                sent_body = True
                return {"type": "http.request", "body": body, "more_body": False}
            await exchange.disconnected.wait()
            return {"type": "http.disconnect"}

        try:
            await self.app(_scope(request, peers, self.state), receive, exchange.send)
        except Exception:
            log.exception("unexpected error serving %s %s", request.method.decode(),
                          request.target.decode("latin-1"))
            if exchange.started:
                raise trio.BrokenResourceError("the response was cut short") from None
            await _send_refusal(conn, stream, _Refused(
                500, "internal_error", "an unexpected error; the server's log has the details"))
            return
        finally:
            await exchange.finish()
        if not exchange.started:
            await _send_refusal(conn, stream, _Refused(
                500, "internal_error", "the application sent no response"))


class _Exchange:
    """One request's response as the app sends it: held until whole (one write), or
    streamed if the app sends it in parts."""

    def __init__(self, conn: h11.Connection, stream: trio.SocketStream,
                 request: h11.Request, watchers: trio.Nursery) -> None:
        self.conn, self.stream, self.request = conn, stream, request
        self.head = request.method == b"HEAD"
        self.start: Message | None = None
        self.started = False  # bytes of the response went out
        self.ended = False
        self.finished = False  # the app returned
        self.disconnected = trio.Event()
        self.watchers = watchers
        self.watch: tuple[trio.CancelScope, trio.Event] | None = None

    async def send(self, message: Message) -> None:
        kind = message["type"]
        if kind == "http.response.start":
            if self.start is not None:
                raise RuntimeError("http.response.start sent twice")
            self.start = message
            return
        if kind != "http.response.body":
            return  # (trailers, push, early hints: not used)
        if self.start is None:
            raise RuntimeError("http.response.body before http.response.start")
        if self.ended:
            raise RuntimeError("http.response.body after the response ended")
        if self.disconnected.is_set():
            return  # the client has gone: the app learns it from receive()
        data = bytes(message.get("body", b""))
        more = bool(message.get("more_body", False))
        out = []
        if not self.started:
            out.append(self.conn.send(_response(self.start, None if more else len(data))))
        if self.head:
            data = b""
        if data:
            out.append(self.conn.send(h11.Data(data=data)))
        if not more:
            out.append(self.conn.send(h11.EndOfMessage()))
            self.ended = True
        first = not self.started
        self.started = True
        try:
            await self.stream.send_all(b"".join(o for o in out if o))
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            self.disconnected.set()
            return
        if more and first:
            self.watch = (trio.CancelScope(), trio.Event())
            self.watchers.start_soon(self._watch, *self.watch)

    async def _watch(self, scope: trio.CancelScope, done: trio.Event) -> None:
        """While a response streams: notice the client going (its EOF), and keep any
        bytes it sends for the next request."""
        try:
            with scope:
                while not self.finished:
                    data = await self.stream.receive_some(READ_BYTES)
                    if not data:
                        break
                    self.conn.receive_data(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass
        finally:
            self.disconnected.set()
            done.set()

    async def finish(self) -> None:
        """The app returned: stop the watcher, if the response streamed, before the
        connection reads again (one reader at a time)."""
        self.finished = True
        self.disconnected.set()
        if self.watch is not None:
            scope, done = self.watch
            scope.cancel()
            await done.wait()


def _next_event(conn: h11.Connection) -> Any:
    try:
        return conn.next_event()
    except h11.RemoteProtocolError as exc:
        status = exc.error_status_hint
        raise _Refused(status, "request_header_too_large" if status == 431 else "bad_request",
                       f"malformed HTTP request: {exc}") from None


def _response(start: Message, length: int | None) -> h11.Response:
    status = int(start["status"])
    headers = [(bytes(k).lower(), bytes(v)) for k, v in start.get("headers", [])]
    names = {k for k, _ in headers}
    bodiless = status in (204, 304) or status < 200  # (a HEAD's says what a GET's is)
    if length is not None and b"content-length" not in names and not bodiless:
        headers.append((b"content-length", str(length).encode()))
    return h11.Response(status_code=status, headers=headers)


async def _send_refusal(conn: h11.Connection, stream: trio.SocketStream,
                        refused: _Refused) -> None:
    """Answer with the server's own JSON error and close, if a response can still go."""
    if conn.our_state not in (h11.IDLE, h11.SEND_RESPONSE):
        return
    body = json.dumps({"error": refused.error, "detail": refused.detail}).encode()
    try:
        data = conn.send(h11.Response(status_code=refused.status, headers=[
            (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
            (b"connection", b"close")]))
        await stream.send_all((data or b"") + (conn.send(h11.Data(data=body)) or b"")
                              + (conn.send(h11.EndOfMessage()) or b""))
    except (h11.LocalProtocolError, trio.BrokenResourceError, trio.ClosedResourceError):
        pass


def _scope(request: h11.Request,
           peers: tuple[tuple[str, int] | None, tuple[str, int] | None],
           state: dict[str, Any]) -> Message:
    raw_path, _, query = bytes(request.target).partition(b"?")  # h11: visible ASCII only
    path = unquote(raw_path.decode("ascii"))
    return {
        "type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": request.http_version.decode(), "method": request.method.decode(),
        "scheme": "http", "path": path, "raw_path": raw_path, "query_string": query,
        "root_path": "", "headers": [(bytes(k), bytes(v)) for k, v in request.headers],
        "client": peers[0], "server": peers[1], "state": dict(state),
    }


def _address(address: Any) -> tuple[str, int] | None:
    return (str(address[0]), int(address[1])) if isinstance(address, tuple) else None


@asynccontextmanager
async def _lifespan(app: ASGIApp) -> AsyncIterator[dict[str, Any]]:
    """Run the app's lifespan: startup before serving, shutdown after. Yields the state
    it shares with every request's scope."""
    state: dict[str, Any] = {}
    to_app: trio.MemorySendChannel[Message]
    app_in: trio.MemoryReceiveChannel[Message]
    app_out: trio.MemorySendChannel[Message]
    from_app: trio.MemoryReceiveChannel[Message]
    to_app, app_in = trio.open_memory_channel(2)
    app_out, from_app = trio.open_memory_channel(2)
    failure: list[BaseException] = []

    async def run() -> None:
        try:
            await app({"type": "lifespan", "asgi": {"version": "3.0", "spec_version": "2.0"},
                       "state": state}, app_in.receive, app_out.send)
        except Exception as exc:  # told to the server below, as a failed startup
            failure.append(exc)
        finally:
            await app_out.aclose()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(run)
        await to_app.send({"type": "lifespan.startup"})
        try:
            reply = await from_app.receive()
        except trio.EndOfChannel:
            raise RuntimeError(f"the application failed to start: {failure!r}") from None
        if reply["type"] != "lifespan.startup.complete":
            raise RuntimeError(f"the application failed to start: {reply.get('message')}")
        try:
            yield state
        finally:
            with trio.CancelScope(shield=True):
                with trio.move_on_after(10):
                    await to_app.send({"type": "lifespan.shutdown"})
                    async for _ in from_app:  # until the app's lifespan returns
                        pass
                nursery.cancel_scope.cancel()


async def serve_asgi(
    app: ASGIApp,
    host: str,
    port: int,
    *,
    limits: Limits,
    stop: trio.Event,
    grace: float,
    task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve ``app`` on ``host:port`` (0: a free port) until ``stop`` is set.

    ``task_status`` receives the bound port once the listener is open and the app's
    lifespan has started. On ``stop``: the listener closes, idle connections close,
    requests in flight get ``grace`` seconds, then are cancelled; the lifespan shuts
    down last.
    """
    async with _lifespan(app) as state:
        listeners = await trio.open_tcp_listeners(port, host=host)
        bound = int(listeners[0].socket.getsockname()[1])
        connections = _Connections(app, limits, state)
        async with trio.open_nursery() as handlers:
            async with trio.open_nursery() as accepting:
                accepting.start_soon(partial(trio.serve_listeners, connections.handle,
                                             listeners, handler_nursery=handlers))
                task_status.started(bound)
                await stop.wait()
                accepting.cancel_scope.cancel()
            for listener in listeners:
                await listener.aclose()
            connections.drain()
            handlers.cancel_scope.deadline = trio.current_time() + grace
