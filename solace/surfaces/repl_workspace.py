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

from solace.app import Solace
from solace.app.workspace import WorkspaceCalls, WorkspaceDisabledError
from solace.workspace.files import WorkspacePathError, listing, read_file

__all__ = ["WORKSPACE_COMMANDS", "WorkspacePathError", "list_files", "show_file",
           "workspace_command"]

#: The commands handled here.
WORKSPACE_COMMANDS = ("/reload", "/workspace", "/now")

_OFF = "the workspace is off ([workspace] enabled = false, or it failed to open: see the log)"
_RELOAD_OFF = "the workspace is off: Main uses its built-in system prompt"


def list_files(root: Path) -> str:
    """Every file under ``root`` with its size, one per line, sorted by path."""
    return _listed(root, listing(root))


def _listed(root: Path | str, files: list[tuple[str, int]]) -> str:
    if not files:
        return f"{root}: no files yet"
    width = max(len(rel) for rel, _ in files)
    lines = [f"  {rel:<{width}}  {size:>8,} bytes" for rel, size in files]
    return f"{root} ({len(files)} files)\n" + "\n".join(lines)


def show_file(root: Path, name: str) -> str:
    """The text of workspace file ``name`` (:func:`~solace.workspace.files.read_file`)."""
    return read_file(root, name)


async def workspace_command(app: Solace, command: str, rest: str) -> str | None:
    """Run ``/reload``, ``/workspace [FILE]`` or ``/now`` through ``app``'s workspace
    calls; None if ``command`` is none of them."""
    if command not in WORKSPACE_COMMANDS:
        return None
    calls = WorkspaceCalls(app)
    try:
        if command == "/reload":
            return (await calls.reload()).text
        if command == "/now":
            return await _now(calls)
        if not rest:
            found = await calls.files()
            return _listed(found.root, [(f.path, f.bytes) for f in found.files])
        return (await calls.file(rest)).text.rstrip()
    except WorkspaceDisabledError:
        return _RELOAD_OFF if command == "/reload" else _OFF
    except WorkspacePathError as exc:
        return str(exc)


async def _now(calls: WorkspaceCalls) -> str:
    try:
        return (await calls.now()).rstrip()
    except WorkspaceDisabledError:
        return _OFF
    except Exception as exc:  # a full disk, say: a line, not a traceback
        return f"NOW.md could not be written ({type(exc).__name__}: {exc})"
