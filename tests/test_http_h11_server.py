"""Solace's own ASGI server (h11 on trio): HTTP/1.1 as a client on a raw socket sees it.

Every test runs the server on 127.0.0.1 with a small ASGI app and talks to it byte by
byte, so keep-alive, pipelining, the server's own refusals, streaming and a graceful
stop are checked on the wire, not through a client library that might paper over them.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import trio

from solace.surfaces.http.h11_server import Limits, serve_asgi

LIMITS = Limits(max_body_bytes=1000, max_head_bytes=2000, read_timeout=0.3,
                keep_alive_timeout=0.3)


class App:
    """An ASGI app that echoes, streams, fails and waits, and logs its lifespan."""

    def __init__(self) -> None:
        self.lifespan: list[str] = []
        self.disconnects = 0
        self.finished: list[str] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                self.lifespan.append(message["type"])
                await send({"type": message["type"] + ".complete"})
                if message["type"] == "lifespan.shutdown":
                    return
        path = scope["path"]
        if path == "/boom":
            raise RuntimeError("secret internals")
        if path == "/stream":
            await send({"type": "http.response.start", "status": 200,
                        "headers": [(b"content-type", b"text/event-stream")]})
            for part in (b"one\n", b"two\n", b"three\n"):
                await send({"type": "http.response.body", "body": part, "more_body": True})
            if scope["query_string"] == b"hold":  # until the client goes
                assert (await receive())["type"] == "http.request"
                assert (await receive())["type"] == "http.disconnect"
                self.disconnects += 1
                return
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            return
        if path == "/slow":
            await trio.sleep(0.5)
        body, more = b"", True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        echo = json.dumps({"method": scope["method"], "path": path,
                           "query": scope["query_string"].decode(),
                           "body": body.decode()}).encode()
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": echo})
        self.finished.append(path)


@asynccontextmanager
async def serving(app: App, limits: Limits = LIMITS, grace: float = 2.0
                  ) -> AsyncIterator[tuple[int, trio.Event]]:
    stop = trio.Event()
    async with trio.open_nursery() as nursery:
        port = await nursery.start(partial(serve_asgi, app, "127.0.0.1", 0, limits=limits,
                                           stop=stop, grace=grace))
        yield port, stop
        stop.set()


class Wire:
    """A raw client connection that reads HTTP/1.1 responses off the socket."""

    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream, self.buffer = stream, b""

    async def _more(self) -> bool:
        data = await self.stream.receive_some(65536)
        self.buffer += data
        return bool(data)

    async def _until(self, marker: bytes) -> bytes:
        while marker not in self.buffer:
            if not await self._more():
                raise EOFError(f"closed before {marker!r}; got {self.buffer!r}")
        head, self.buffer = self.buffer.split(marker, 1)
        return head

    async def _take(self, n: int) -> bytes:
        while len(self.buffer) < n:
            if not await self._more():
                raise EOFError(f"closed with {len(self.buffer)} of {n} bytes")
        out, self.buffer = self.buffer[:n], self.buffer[n:]
        return out

    async def response(self, head_only: bool = False
                       ) -> tuple[int, dict[str, str], bytes]:
        head = (await self._until(b"\r\n\r\n")).decode()
        status_line, *lines = head.split("\r\n")
        headers = {k.lower(): v.strip() for k, v in (line.split(":", 1) for line in lines)}
        status = int(status_line.split()[1])
        if head_only or status == 100:
            return status, headers, b""
        if headers.get("transfer-encoding") == "chunked":
            body = b""
            while size := int(await self._until(b"\r\n"), 16):
                body += await self._take(size)
                await self._take(2)
            await self._take(2)
            return status, headers, body
        return status, headers, await self._take(int(headers.get("content-length", 0)))

    async def closed(self) -> bool:
        """Whether the server closes the connection (within a second)."""
        with trio.move_on_after(1):
            while await self._more():
                pass
            return True
        return False


@asynccontextmanager
async def wire(port: int) -> AsyncIterator[Wire]:
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    async with stream:
        yield Wire(stream)


def request(path: str, body: bytes = b"", method: str = "POST", extra: str = "") -> bytes:
    return (f"{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n"
            f"{extra}\r\n").encode() + body


async def test_keep_alive_serves_requests_one_after_another_on_one_connection() -> None:
    async with serving(App()) as (port, _), wire(port) as w:
        for n in range(3):
            await w.stream.send_all(request(f"/echo?n={n}", b'{"a": 1}'))
            status, headers, body = await w.response()
            assert status == 200 and headers["content-length"] == str(len(body))
            assert json.loads(body) == {"method": "POST", "path": "/echo", "query": f"n={n}",
                                        "body": '{"a": 1}'}


async def test_pipelined_requests_are_answered_in_order() -> None:
    async with serving(App()) as (port, _), wire(port) as w:
        await w.stream.send_all(request("/a", b"1") + request("/b", b"2"))
        assert json.loads((await w.response())[2])["path"] == "/a"
        assert json.loads((await w.response())[2])["path"] == "/b"


async def test_a_malformed_request_gets_400_json_and_the_connection_closes() -> None:
    async with serving(App()) as (port, _), wire(port) as w:
        await w.stream.send_all(b"GARBAGE\r\n\r\n")
        status, headers, body = await w.response()
        assert status == 400 and headers["content-type"] == "application/json"
        assert json.loads(body)["error"] == "bad_request"
        assert await w.closed()


async def test_a_head_over_the_limit_gets_431_json() -> None:
    async with serving(App()) as (port, _), wire(port) as w:
        await w.stream.send_all(request("/echo", extra="X-Big: " + "y" * 3000 + "\r\n"))
        status, _, body = await w.response()
        assert status == 431 and json.loads(body)["error"] == "request_header_too_large"


async def test_a_declared_body_over_the_limit_gets_413_json_before_it_is_sent() -> None:
    app = App()
    async with serving(app) as (port, _), wire(port) as w:
        await w.stream.send_all(b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n")
        status, _, body = await w.response()
        assert status == 413 and "5000 bytes" in json.loads(body)["detail"]
        assert await w.closed() and app.finished == []


async def test_a_chunked_body_over_the_limit_gets_413_json() -> None:
    async with serving(App()) as (port, _), wire(port) as w:
        await w.stream.send_all(b"POST /echo HTTP/1.1\r\nHost: x\r\n"
                                b"Transfer-Encoding: chunked\r\n\r\n"
                                + b"".join(b"200\r\n" + b"z" * 0x200 + b"\r\n" for _ in range(3)))
        status, _, body = await w.response()
        assert status == 413 and json.loads(body)["error"] == "payload_too_large"


async def test_a_request_slower_than_the_read_timeout_gets_408_json() -> None:
    async with serving(App()) as (port, _), wire(port) as w:
        await w.stream.send_all(b"POST /echo HTTP/1.1\r\nHost: x\r\n")  # and no more
        status, _, body = await w.response()
        assert status == 408 and json.loads(body)["error"] == "request_timeout"
        assert await w.closed()


async def test_an_idle_connection_is_closed_after_the_keep_alive_timeout() -> None:
    async with serving(App()) as (port, _), wire(port) as w:
        await w.stream.send_all(request("/echo"))
        assert (await w.response())[0] == 200
        assert await w.closed()  # 0.3 s idle, then closed without a response


async def test_a_streamed_response_arrives_chunked_in_order() -> None:
    async with serving(App()) as (port, _), wire(port) as w:
        await w.stream.send_all(request("/stream", method="GET"))
        status, headers, body = await w.response()
        assert status == 200 and headers["transfer-encoding"] == "chunked"
        assert body == b"one\ntwo\nthree\n"


async def test_a_client_leaving_a_streamed_response_is_told_to_the_app() -> None:
    app = App()
    async with serving(app) as (port, _):
        async with wire(port) as w:
            await w.stream.send_all(request("/stream?hold", method="GET"))
            assert (await w.response(head_only=True))[0] == 200
        with trio.fail_after(2):
            while not app.disconnects:
                await trio.sleep(0.01)


async def test_an_app_error_is_a_500_json_without_internals_and_serving_goes_on() -> None:
    async with serving(App()) as (port, _):
        async with wire(port) as w:
            await w.stream.send_all(request("/boom"))
            status, _, body = await w.response()
            assert status == 500 and json.loads(body)["error"] == "internal_error"
            assert b"secret" not in body and b"Traceback" not in body
        async with wire(port) as w:
            await w.stream.send_all(request("/echo"))
            assert (await w.response())[0] == 200


async def test_a_head_request_gets_headers_and_no_body() -> None:
    async with serving(App()) as (port, _), wire(port) as w:
        await w.stream.send_all(request("/echo", method="HEAD") + request("/after"))
        status, headers, _ = await w.response(head_only=True)
        assert status == 200 and "content-length" in headers
        assert json.loads((await w.response())[2])["path"] == "/after"  # no stray body


async def test_expect_100_continue_is_answered_before_the_body_is_sent() -> None:
    async with serving(App()) as (port, _), wire(port) as w:
        await w.stream.send_all(b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n"
                                b"Expect: 100-continue\r\n\r\n")
        assert (await w.response())[0] == 100
        await w.stream.send_all(b"hi")
        assert json.loads((await w.response())[2])["body"] == "hi"


async def test_stop_finishes_requests_in_flight_and_takes_no_new_connection() -> None:
    app = App()
    async with serving(app, grace=5.0) as (port, stop), wire(port) as w:
        await w.stream.send_all(request("/slow"))
        await trio.sleep(0.1)  # the request is in the app
        stop.set()
        assert (await w.response())[0] == 200  # finished within the grace
        await trio.sleep(0.1)
        try:
            await trio.open_tcp_stream("127.0.0.1", port)
        except OSError:
            pass
        else:
            raise AssertionError("a new connection was accepted after stop")
    assert app.finished == ["/slow"]


async def test_the_lifespan_starts_before_serving_and_shuts_down_after() -> None:
    app = App()
    async with serving(app) as (port, _):
        assert app.lifespan == ["lifespan.startup"]
        async with wire(port) as w:
            await w.stream.send_all(request("/echo"))
            assert (await w.response())[0] == 200
    assert app.lifespan == ["lifespan.startup", "lifespan.shutdown"]
