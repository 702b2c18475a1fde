"""The application calls of the markdown workspace (seed 003), over a
:class:`~solace.app.Solace`: what ``solace workspace`` and the REPL's ``/workspace``,
``/reload`` and ``/now`` do, for every surface.

- :meth:`WorkspaceCalls.files`: every file with its size; :meth:`WorkspaceCalls.file`:
  one file's text (a path relative to the workspace, ``.md`` optional);
- :meth:`WorkspaceCalls.reload`: record the human's edits and rebuild Main's session
  context from them; :meth:`WorkspaceCalls.now`: rewrite NOW.md;
- :meth:`WorkspaceCalls.synthesize`: MEMORY.md from the daily logs, then the roll-ups;
- :meth:`WorkspaceCalls.export`: every markdown file, lines that look like a secret
  left out (the caller writes them where it wants: the server never writes a path a
  client names).

Errors: with the workspace off (``[workspace] enabled = false``, or failed to open)
every call raises :class:`WorkspaceDisabledError` (the surfaces answer 503); a path
outside the workspace raises :class:`~solace.workspace.files.WorkspacePathError` and one
naming no file :class:`~solace.workspace.files.NoWorkspaceFileError` (a ``LookupError``:
404), each naming the path. Views are frozen dataclasses of plain values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from solace.app.api import AppError, Solace
from solace.workspace.files import exported, listing, read_file

__all__ = ["ExportedFile", "Synthesis", "WorkspaceCalls", "WorkspaceDisabledError",
           "WorkspaceFile", "WorkspaceFiles"]


class WorkspaceDisabledError(AppError):
    """The workspace is off: switched off in the config, or it failed to open."""


@dataclass(frozen=True, slots=True)
class WorkspaceFile:
    """One file: its path relative to the workspace, and its size in bytes."""

    path: str
    bytes: int


@dataclass(frozen=True, slots=True)
class WorkspaceFiles:
    """The workspace's directory and every file in it, sorted by path."""

    root: str
    files: tuple[WorkspaceFile, ...]


@dataclass(frozen=True, slots=True)
class ExportedFile:
    """One exported file: its relative path and its text (secret-looking lines out)."""

    path: str
    text: str


@dataclass(frozen=True, slots=True)
class Synthesis:
    """What a synthesis did with the daily bullets it read, and the roll-up files it
    wrote (relative paths)."""

    read: int
    added: int
    noop: int
    updated: int
    conflicts: int
    clashes: int
    rollups: tuple[str, ...]


class WorkspaceCalls:
    """The workspace's calls over ``app`` (see the module docstring)."""

    def __init__(self, app: Solace) -> None:
        self.app = app

    def _workspace(self) -> Any:
        ws = getattr(self.app.runtime, "workspace", None)
        if ws is None:
            raise WorkspaceDisabledError(
                "the workspace is off ([workspace] enabled = false, or it failed to open: "
                "see the server's log)")
        return ws

    async def files(self) -> WorkspaceFiles:
        root = self._workspace().root
        found = await self.app.runtime.offloader.run(listing, root)
        return WorkspaceFiles(str(root), tuple(WorkspaceFile(p, n) for p, n in found))

    async def file(self, path: str) -> ExportedFile:
        """One file's text (``path`` relative to the workspace; ``.md`` optional)."""
        text = await self.app.runtime.offloader.run(read_file, self._workspace().root, path)
        return ExportedFile(path, text)

    async def reload(self) -> str:
        """Record the human's edits; Main's session context is rebuilt from the files.
        Returns one line saying what was loaded."""
        self._workspace()
        return str(await self.app.runtime.reload_workspace())

    async def now(self) -> str:
        """Rewrite NOW.md from the current state; returns its text."""
        return str(await self._workspace().write_now())

    async def synthesize(self) -> Synthesis:
        ws = self._workspace()
        counts = await ws.synthesize()
        written = await ws.rollup()
        return Synthesis(counts.read, counts.added, counts.noop, counts.updated,
                         counts.conflicts, counts.clashes, tuple(str(w) for w in written))

    async def export(self) -> tuple[ExportedFile, ...]:
        root = self._workspace().root
        files = await self.app.runtime.offloader.run(exported, root)
        return tuple(ExportedFile(p, t) for p, t in files)
