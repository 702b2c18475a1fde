"""Bearer tokens of ``solace serve`` and the files that hold them.

Two kinds of token:

- the **admin token**, made on the first ``solace serve`` of a home and kept in
  ``HOME/serve-admin-token`` (0600, written atomically), so a client configured with
  it (an MCP client, a script) keeps working across restarts; ``solace serve
  --new-admin-token`` replaces it (the old one stops working). A serving process also
  writes it, with the port, to ``HOME/serve.json`` (0600; removed on a clean exit):
  whoever can read the home can administer the server, nobody else;
- **scoped tokens**, made by the admin (``POST /tokens``) and bound to a set of memory
  ids. Only their SHA-256 is kept, in ``HOME/serve-tokens.json`` (0600, written
  atomically), so they outlive restarts and a copy of the home does not leak them.

Tokens are 32 random bytes (URL-safe base64). Lookups compare hashes, never the
tokens themselves.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import secrets
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from solace.sealed import write_private

__all__ = [
    "ADMIN_TOKEN_FILE",
    "SERVE_FILE",
    "TOKENS_FILE",
    "Grant",
    "TokenFileError",
    "TokenStore",
    "admin_token",
    "remove_serve_file",
    "write_serve_file",
]

log = logging.getLogger(__name__)

ADMIN_TOKEN_FILE = "serve-admin-token"
"""In the home from the first serve on: the admin token (0600)."""
SERVE_FILE = "serve.json"
"""In the home while ``solace serve`` runs: host, port, pid and the admin token."""
TOKENS_FILE = "serve-tokens.json"
"""In the home: the SHA-256 of every scoped token, with its memory ids."""


class TokenFileError(ValueError):
    """``HOME/serve-tokens.json`` is not what :class:`TokenStore` writes (names the file)."""


@dataclass(frozen=True, slots=True)
class Grant:
    """What a presented token may do: everything (``admin``), or the requests naming
    one of ``memory_ids``."""

    admin: bool
    memory_ids: frozenset[str] = frozenset()

    def covers(self, memory_id: str) -> bool:
        """Whether a request naming ``memory_id`` is in this token's scope."""
        return self.admin or memory_id in self.memory_ids


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def new_token() -> str:
    """A fresh random token (256 bits)."""
    return secrets.token_urlsafe(32)


_TOKEN_SHAPE = re.compile(r"[A-Za-z0-9_-]{43}")


def admin_token(home: Path, *, rotate: bool = False) -> str:
    """The home's admin token: read from ``HOME/serve-admin-token``, or made and written
    there (0600, atomically) on the first serve, or when ``rotate`` asks for a new one.

    A file readable by others is narrowed to 0600, with a warning (as ssh would refuse,
    but nothing is lost by fixing it: the token is only as secret as the home).

    Raises:
        TokenFileError: the file is not a token Solace wrote (names it, and what to do).
        OSError: it cannot be read or written.
    """
    path = home / ADMIN_TOKEN_FILE
    if not rotate and path.exists():
        try:
            token = path.read_text("ascii").strip()
        except (UnicodeDecodeError, IsADirectoryError) as exc:
            raise TokenFileError(f"{path}: not a Solace admin token ({exc}); remove it, or "
                                 "run solace serve --new-admin-token") from None
        if not _TOKEN_SHAPE.fullmatch(token):
            raise TokenFileError(f"{path}: not a Solace admin token (expected 43 URL-safe "
                                 "characters); remove it, or run solace serve "
                                 "--new-admin-token")
        mode = stat.S_IMODE(path.stat().st_mode)
        if mode & 0o077:
            os.chmod(path, 0o600)
            log.warning("%s had mode %o; narrowed to 0600", path, mode)
        return token
    token = new_token()
    write_private(path, token.encode("ascii") + b"\n", what=f"the admin token {path}")
    log.info("%s admin token in %s", "a new" if rotate else "the home's first", path)
    return token


def write_serve_file(home: Path, *, host: str, port: int, pid: int, admin_token: str) -> Path:
    """Write ``HOME/serve.json`` (0600) so local clients find the server and its admin
    token; returns its path."""
    path = home / SERVE_FILE
    info = {"host": host, "port": port, "pid": pid, "url": f"http://{host}:{port}",
            "admin_token": admin_token}
    write_private(path, json.dumps(info, indent=2).encode() + b"\n", what="serve.json")
    return path


def remove_serve_file(home: Path) -> None:
    """Remove ``HOME/serve.json`` (a clean exit); absent is fine."""
    (home / SERVE_FILE).unlink(missing_ok=True)


class TokenStore:
    """The admin token and the scoped tokens of one server.

    Args:
        path: the scoped tokens' file (``HOME/serve-tokens.json``); read now if present.
        admin_token: this process's admin token.

    Raises:
        TokenFileError: the file is not valid (names the file and what is wrong).
    """

    def __init__(self, path: Path, admin_token: str) -> None:
        self.path = path
        self._admin = _digest(admin_token)
        self._scoped: dict[str, frozenset[str]] = {}
        if path.exists():
            self._scoped = self._load(path)

    @staticmethod
    def _load(path: Path) -> dict[str, frozenset[str]]:
        try:
            data: Any = json.loads(path.read_text("utf-8"))
            entries = data["tokens"]
            return {str(e["sha256"]): frozenset(str(m) for m in e["memory_ids"])
                    for e in entries}
        except (ValueError, KeyError, TypeError) as exc:
            raise TokenFileError(f"{path}: not a Solace token file ({exc}); move it "
                                 "away to start with no scoped tokens") from exc

    def grant(self, token: str) -> Grant | None:
        """The grant of a presented token, or None for an unknown one."""
        digest = _digest(token)
        if secrets.compare_digest(digest, self._admin):
            return Grant(admin=True)
        scope = self._scoped.get(digest)
        return Grant(admin=False, memory_ids=scope) if scope is not None else None

    def issue(self, memory_ids: Iterable[str]) -> tuple[str, Mapping[str, Any]]:
        """A new scoped token for ``memory_ids``, and the file content that records it.

        The caller writes the content with :meth:`save` (off the event loop) before it
        hands the token out; until then the token is not known.
        """
        token = new_token()
        scoped = dict(self._scoped)
        scoped[_digest(token)] = frozenset(memory_ids)
        return token, {"tokens": [{"sha256": d, "memory_ids": sorted(m)}
                                  for d, m in scoped.items()]}

    def save(self, content: Mapping[str, Any]) -> None:
        """Write ``content`` (from :meth:`issue`) atomically 0600, then adopt it."""
        write_private(self.path, json.dumps(content, indent=1).encode() + b"\n",
                      what=f"the token file {self.path}")
        self._scoped = {str(e["sha256"]): frozenset(e["memory_ids"])
                        for e in content["tokens"]}
