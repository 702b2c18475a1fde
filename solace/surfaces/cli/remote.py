"""Client mode: a command whose home is held by a serving process asks that process.

While ``solace serve`` (or ``solace run --serve``) holds a home, ``HOME/serve.json``
gives its url, pid and admin token. A CLI command that finds the home locked
(:class:`substrate.SubstrateLockedError`) and that file present with a live pid sends
its request there over HTTP (:func:`local_or_remote`); with no such file, or a stale
one (its pid gone), the lock error stands and is reported as today.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

from solace.surfaces.cli.errors import CliError, unwrap

__all__ = ["TIMEOUT_SECONDS", "Remote", "ServeInfo", "live_server", "local_or_remote", "quoted"]

T = TypeVar("T")

SERVE_FILE = "serve.json"  # solace.surfaces.http.tokens.SERVE_FILE, without importing the server
TIMEOUT_SECONDS = 60.0
"""Per request; a recall on a cold server may embed and search for a while."""


@dataclass(frozen=True, slots=True)
class ServeInfo:
    """What ``HOME/serve.json`` says: where the server listens and its admin token."""

    url: str
    pid: int
    admin_token: str


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # alive, owned by someone else
    return True


def live_server(home: Path) -> ServeInfo | None:
    """The server ``home/serve.json`` names, or None: no file, an unreadable or malformed
    one, or one whose pid is not alive (a server that died without removing it)."""
    try:
        data = json.loads((home / SERVE_FILE).read_text("utf-8"))
        info = ServeInfo(str(data["url"]), int(data["pid"]), str(data["admin_token"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return info if _pid_alive(info.pid) else None


def quoted(segment: str) -> str:
    """``segment`` escaped for one URL path segment (a topic id or fact key)."""
    return quote(segment, safe="")


class Remote:
    """Requests to one serving process with its admin token (sync httpx).

    Args:
        info: the server, from :func:`live_server`.
        timeout: seconds per request.
    """

    def __init__(self, info: ServeInfo, *, timeout: float = TIMEOUT_SECONDS) -> None:
        self.info = info
        self.timeout = timeout

    def call(self, method: str, path: str, *, params: Mapping[str, Any] | None = None,
             body: Mapping[str, Any] | None = None) -> Any:
        """Send one request; the decoded JSON answer.

        Raises:
            CliError: the server cannot be reached or did not answer in time (naming the
                url), or it answered with an error (its detail, which names the bad value).
        """
        import httpx  # only a command that talks to a server pays for it

        url = self.info.url + path
        headers = {"Authorization": f"Bearer {self.info.admin_token}"}
        try:
            r = httpx.request(method, url, params=params, json=body, headers=headers,
                              timeout=self.timeout)
        except httpx.HTTPError as exc:
            raise CliError(f"the home is served by pid {self.info.pid} at {self.info.url}, but "
                           f"{method} {url} failed ({type(exc).__name__}: {exc}); is it "
                           "still running?") from exc
        try:
            answer = r.json()
        except ValueError:
            answer = None
        if r.status_code >= 400:
            detail = answer.get("detail") if isinstance(answer, dict) else None
            raise CliError(str(detail) if detail else
                           f"{method} {url} answered {r.status_code}: {r.text[:200]}")
        return answer


def _locked(exc: BaseException) -> bool:
    from substrate import SubstrateLockedError

    return isinstance(unwrap(exc), SubstrateLockedError)


def local_or_remote(home: Path, local: Callable[[], T],
                    remote: Callable[[Remote], T] | None) -> T:
    """``local()``; if it finds the home locked and a live server holds it, ``remote``
    with a client for that server instead.

    Raises:
        Whatever ``local`` raised, when it is not the lock, when there is no live server
        (``serve.json`` missing or stale), or when ``remote`` is None.
    """
    try:
        return local()
    except (Exception, BaseExceptionGroup) as exc:
        if remote is None or not _locked(exc):
            raise
        info = live_server(Path(home).expanduser())
        if info is None:
            raise
    return remote(Remote(info))
