"""The web console's static files, served by ``solace serve`` without a token.

``GET /`` is the console page; ``GET /console/console.js`` and ``/console/console.css``
its script and style. Only these three files are served (no directory is exposed),
read once when the app is built. They hold no data: the page asks the JSON API with
the admin token the user gives it (a ``#token=`` fragment or the paste box, kept in
the tab's ``sessionStorage``). Every response carries a Content-Security-Policy that
allows only this origin's script, style and API (no inline script, no CDN) and
``Referrer-Policy: no-referrer``.

This is a plain Starlette route, not an :class:`~solace.surfaces.http.routes.Endpoint`:
the pages are not part of the JSON API, so they are not in the OpenAPI document.
"""

from __future__ import annotations

from pathlib import Path

from starlette.datastructures import URLPath
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Match, NoMatchFound
from starlette.types import Receive, Scope, Send

__all__ = ["CONSOLE_DIR", "CONSOLE_FILES", "ConsolePages"]

CONSOLE_DIR = Path(__file__).parent / "console"
"""Where the console's files live (package data)."""

CONSOLE_FILES = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/console/console.js": ("console.js", "text/javascript; charset=utf-8"),
    "/console/console.css": ("console.css", "text/css; charset=utf-8"),
}
"""URL path -> (file in :data:`CONSOLE_DIR`, media type)."""

HEADERS = {
    "Content-Security-Policy": ("default-src 'none'; script-src 'self'; style-src 'self'; "
                                "connect-src 'self'; img-src 'self' data:; "
                                "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"),
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-cache",
}


class ConsolePages(BaseRoute):
    """A route answering GET and HEAD of the console's three paths with their files.

    Other methods on those paths fall through to the app's 405/404 handling.
    """

    def __init__(self, directory: Path = CONSOLE_DIR) -> None:
        self.pages = {path: ((directory / name).read_bytes(), media)
                      for path, (name, media) in CONSOLE_FILES.items()}

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if (scope["type"] == "http" and scope["path"] in self.pages
                and scope["method"] in ("GET", "HEAD")):
            return Match.FULL, {}
        return Match.NONE, {}

    def url_path_for(self, name: str, /, **path_params: object) -> URLPath:
        raise NoMatchFound(name, dict(path_params))

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        body, media = self.pages[Request(scope).url.path]
        await Response(body, 200, headers=HEADERS, media_type=media)(scope, receive, send)
