"""``solace serve``: the long-lived process, an ASGI server on trio over one running
runtime: Solace's own HTTP/1.1 server on h11 (:mod:`~solace.surfaces.http.h11_server`,
the default), or hypercorn's trio worker (``--http-server hypercorn``, the server
``benchmarks/http_load.py`` compares it with).

The process holds the home (the substrate's lock) for its lifetime. Once it listens it
writes ``HOME/serve.json`` (0600: host, port, pid, admin token); SIGINT or SIGTERM
stop it gracefully: the listener closes, requests in flight finish (up to
``GRACE_SECONDS``), ``serve.json`` is removed, evaluations the exit triggers scheduled
run, and the runtime closes (every memory snapshotted, the substrate flushed).
:func:`serve_app` is the server alone, on a runtime already open (``solace run --serve``).
"""

from __future__ import annotations

import logging
import os
import signal
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import trio

from solace.app import Solace
from solace.clock import Clock
from solace.config import Config
from solace.offload import Offloader
from solace.surfaces.http.app import DRAIN_FACTOR, MAX_BODY_BYTES, build_app
from solace.surfaces.http.h11_server import Limits, serve_asgi
from solace.surfaces.http.tokens import (
    SERVE_FILE,
    TOKENS_FILE,
    TokenStore,
    admin_token,
    remove_serve_file,
    write_serve_file,
)

__all__ = [
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "GRACE_SECONDS",
    "HTTP_SERVERS",
    "SERVE_FILE",
    "Serving",
    "serve",
    "serve_app",
]

log = logging.getLogger("solace.serve")

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
GRACE_SECONDS = 5.0
"""How long a graceful stop waits for requests in flight."""
HTTP_SERVERS = ("solace", "hypercorn")
"""The ASGI servers ``solace serve`` can run the API on; the first is the default."""
FLUSH_SECONDS = 30.0
"""How long a stop waits for scheduled evaluations before closing the runtime."""


@dataclass(frozen=True, slots=True)
class Serving:
    """What a started server reports (``await nursery.start(serve, ...)``).

    Attributes:
        url: ``http://host:port`` it listens on (the real port when 0 was asked).
        port: the bound port.
        admin_token: this process's admin token (also in ``serve_file``).
        serve_file: ``HOME/serve.json``.
        stop: call to stop the server gracefully, as SIGTERM does.
    """

    url: str
    port: int
    admin_token: str
    serve_file: Path
    stop: Callable[[], None]


async def _watch_signals(stop: trio.Event) -> None:
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for signum in signals:
            log.info("%s received; stopping the server", signal.Signals(signum).name)
            stop.set()
            return


async def serve_app(
    app: Solace,
    root: Path,
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    max_body_bytes: int = MAX_BODY_BYTES,
    handle_signals: bool = False,
    new_admin_token: bool = False,
    http_server: str = HTTP_SERVERS[0],
    task_status: trio.TaskStatus[Serving] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve ``app``'s HTTP API on a runtime already open.

    ``solace serve`` runs it alone (:func:`serve`); ``solace run --serve`` runs it in the
    REPL's nursery, on the REPL's runtime.

    Args:
        app: the application API over the open runtime.
        root: the runtime's home (``serve.json`` and the token file go there).
        host, port: where to listen (port 0: a free port, reported in :class:`Serving`).
        max_body_bytes: request bodies larger than this are refused with 413.
        handle_signals: stop on SIGINT or SIGTERM (must run in the main thread).
        new_admin_token: replace the home's admin token (``HOME/serve-admin-token``,
            made on the first serve and kept) with a new one; the old stops working.
        http_server: one of :data:`HTTP_SERVERS`.
        task_status: receives a :class:`Serving` once the server listens and
            ``serve.json`` is written.

    Returns when stopped (``Serving.stop``, a signal): the listener closes and requests
    in flight get ``GRACE_SECONDS``. ``serve.json`` is removed however it ends
    (stopped, cancelled, failed); the runtime is the caller's to close.
    """
    if http_server not in HTTP_SERVERS:
        raise ValueError(f"http_server must be one of {', '.join(HTTP_SERVERS)}, "
                         f"got {http_server!r}")
    stop = trio.Event()
    offloader = Offloader(1)
    admin = await offloader.run(partial(admin_token, root, rotate=new_admin_token))
    tokens = await offloader.run(TokenStore, root / TOKENS_FILE, admin)
    asgi = build_app(app, tokens, offloader=offloader, max_body_bytes=max_body_bytes)
    try:
        async with trio.open_nursery() as nursery:
            if handle_signals:
                nursery.start_soon(_watch_signals, stop)
            if http_server == "solace":
                bound = await nursery.start(partial(
                    serve_asgi, asgi, host, port, stop=stop, grace=GRACE_SECONDS,
                    # the app answers 413 itself up to the bytes it drains
                    limits=Limits(max_body_bytes=DRAIN_FACTOR * max_body_bytes)))
            else:
                bound = await nursery.start(_hypercorn, asgi, host, port, stop)
            url = f"http://[{host}]:{bound}" if ":" in host else f"http://{host}:{bound}"
            path = await offloader.run(partial(
                write_serve_file, root, host=host, port=bound, pid=os.getpid(),
                admin_token=admin))
            log.info("serving %s on %s (admin token in %s)", root, url, path)
            task_status.started(Serving(url, bound, admin, path, stop.set))
            await stop.wait()
            nursery.cancel_scope.deadline = trio.current_time() + GRACE_SECONDS + 1
    finally:
        remove_serve_file(root)


async def _hypercorn(asgi: Any, host: str, port: int, stop: trio.Event,
                     task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED) -> None:
    """hypercorn's trio worker serving ``asgi`` until ``stop``; reports the bound port."""
    from hypercorn.config import Config as HyperConfig
    from hypercorn.trio import serve as hyper_serve

    hyper = HyperConfig()
    hyper.bind = [f"[{host}]:{port}" if ":" in host else f"{host}:{port}"]
    hyper.accesslog = None
    hyper.errorlog = logging.getLogger("solace.http.server")
    hyper.graceful_timeout = GRACE_SECONDS
    hyper.include_server_header = False

    async def serving(task_status: trio.TaskStatus[list[str]]) -> None:
        await hyper_serve(asgi, hyper, shutdown_trigger=stop.wait, task_status=task_status)

    async with trio.open_nursery() as nursery:
        binds = await nursery.start(serving)
        task_status.started(int(binds[0].rsplit(":", 1)[1]))


async def serve(
    home: str | Path,
    config: Config,
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    clock: Clock | None = None,
    max_body_bytes: int = MAX_BODY_BYTES,
    handle_signals: bool = False,
    new_admin_token: bool = False,
    http_server: str = HTTP_SERVERS[0],
    task_status: trio.TaskStatus[Serving] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Open the runtime on ``home`` and serve the HTTP API until stopped.

    Args:
        home: the runtime home (created if missing, as ``solace run`` does).
        config: the loaded configuration.
        host, port: where to listen (port 0: a free port, reported in :class:`Serving`).
        clock: None for the wall clock.
        max_body_bytes: request bodies larger than this are refused with 413.
        handle_signals: stop on SIGINT or SIGTERM (the CLI; must run in the main thread).
        new_admin_token: replace the home's kept admin token (see :func:`serve_app`).
        http_server: one of :data:`HTTP_SERVERS`.
        task_status: receives a :class:`Serving` once the server listens and
            ``serve.json`` is written.

    Returns when stopped (``Serving.stop``, a signal): the listener closes, requests in
    flight get ``GRACE_SECONDS``, ``serve.json`` is removed, scheduled evaluations run
    and the runtime closes (snapshots, flush). On cancellation the runtime closes the
    same way (its own guarantee) and ``serve.json`` is removed, without the grace period
    or the scheduled evaluations.
    """
    from solace.runtime import open_runtime

    async with open_runtime(home, config, clock=clock) as rt:
        root = rt.home.root
        app = Solace(rt)
        await serve_app(app, root, host=host, port=port, max_body_bytes=max_body_bytes,
                        handle_signals=handle_signals, new_admin_token=new_admin_token,
                        http_server=http_server, task_status=task_status)
        with trio.move_on_after(FLUSH_SECONDS):  # a clean stop: run what was scheduled
            await app.flush()
    log.info("stopped serving %s; memories snapshotted, substrate flushed", root)
