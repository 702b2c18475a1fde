"""The workspace's REPL commands (``/reload``, ``/workspace``, ``/now``) and the listing
``solace workspace show`` prints too.

``/reload`` records the human's edits of the workspace files and rebuilds Main's
session context from them; ``/workspace`` lists the files with their sizes (``/workspace
FILE`` prints one, a path relative to the workspace); ``/now`` rewrites NOW.md and
prints it. Every error is a line of text, never a traceback; a path that leaves the
workspace is refused by name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["WORKSPACE_COMMANDS", "list_files", "show_file", "workspace_command"]

#: The commands handled here.
WORKSPACE_COMMANDS = ("/reload", "/workspace", "/now")

_OFF = "the workspace is off ([workspace] enabled = false, or it failed to open: see the log)"


class WorkspacePathError(ValueError):
    """A file name that is not a file of the workspace (named in the message)."""


def list_files(root: Path) -> str:
    """Every file under ``root`` with its size, one per line, sorted by path."""
    files = sorted(p for p in root.rglob("*") if p.is_file())
    if not files:
        return f"{root}: no files yet"
    rels = [str(p.relative_to(root)) for p in files]
    width = max(len(r) for r in rels)
    lines = [f"  {rel:<{width}}  {p.stat().st_size:>8,} bytes" for rel, p in zip(rels, files,
                                                                                  strict=True)]
    return f"{root} ({len(files)} files)\n" + "\n".join(lines)


def show_file(root: Path, name: str) -> str:
    """The text of workspace file ``name`` (relative to ``root``; ``.md`` may be left off).

    Raises:
        WorkspacePathError: ``name`` leaves the workspace or names no file, with the
            files that do exist when it names none.
    """
    base = root.resolve()
    for candidate in (name, f"{name}.md"):
        path = (base / candidate).resolve()
        if not path.is_relative_to(base):
            raise WorkspacePathError(f"{name!r} is outside the workspace {root}")
        if path.is_file():
            return path.read_text(encoding="utf-8", errors="replace")
    known = ", ".join(sorted(str(p.relative_to(base)) for p in base.glob("*.md")))
    raise WorkspacePathError(f"no workspace file {name!r} in {root} (top level: {known})")


async def workspace_command(rt: Any, command: str, rest: str) -> str | None:
    """Run ``/reload``, ``/workspace [FILE]`` or ``/now`` against runtime ``rt``; None if
    ``command`` is none of them."""
    if command not in WORKSPACE_COMMANDS:
        return None
    if command == "/reload":
        return str(await rt.reload_workspace())
    ws = getattr(rt, "workspace", None)
    if ws is None:
        return _OFF
    if command == "/now":
        try:
            return str(await ws.write_now()).rstrip()
        except Exception as exc:  # a full disk, say: a line, not a traceback
            return f"NOW.md could not be written ({type(exc).__name__}: {exc})"
    if not rest:
        return list_files(ws.root)
    try:
        return show_file(ws.root, rest).rstrip()
    except WorkspacePathError as exc:
        return str(exc)
