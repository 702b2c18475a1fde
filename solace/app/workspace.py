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

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from solace.app.api import AppError, Solace
from solace.workspace.files import exported, listing, read_file

log = logging.getLogger(__name__)

__all__ = ["EditCount", "ExportedFile", "Reloaded", "Synthesis", "WorkspaceCalls",
           "WorkspaceDisabledError", "WorkspaceFile", "WorkspaceFiles"]


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


@dataclass(frozen=True, slots=True)
class EditCount:
    """One recorded edit of a workspace file: lines added, removed and changed."""

    file: str
    added: int
    removed: int
    changed: int


@dataclass(frozen=True, slots=True)
class Reloaded:
    """What a reload recorded, and what Main's session context now loads ("" when no
    session runs)."""

    root: str
    edits: tuple[EditCount, ...]
    context: str

    @property
    def text(self) -> str:
        """The lines a surface prints."""
        lines = ([f"{len(self.edits)} edited file(s) recorded:"]
                 + [f"  {e.file}: +{e.added} -{e.removed} ~{e.changed}" for e in self.edits]
                 if self.edits else [f"no new edits in {self.root}"])
        return "\n".join([*lines, self.context] if self.context else lines)


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

    @property
    def root(self) -> str:
        """The workspace's directory."""
        return str(self._workspace().root)

    async def files(self) -> WorkspaceFiles:
        root = self._workspace().root
        found = await self.app.runtime.offloader.run(listing, root)
        return WorkspaceFiles(str(root), tuple(WorkspaceFile(p, n) for p, n in found))

    async def file(self, path: str) -> ExportedFile:
        """One file's text (``path`` relative to the workspace; ``.md`` optional)."""
        text = await self.app.runtime.offloader.run(read_file, self._workspace().root, path)
        return ExportedFile(path, text)

    async def reload(self, recorded: Sequence[Any] = ()) -> Reloaded:
        """Record the human's edits of the workspace files; with a running session,
        Main's session context is rebuilt from them (SOUL/USER/AGENTS, MEMORY.md in main
        sessions, today's and yesterday's logs). ``recorded``: edits already recorded
        as the workspace opened (a surface that opened it alone), reported too. A
        human's broken file is reported in the result, never raised."""
        ws = self._workspace()
        try:
            edits = [*recorded, *await ws.reload()]
        except Exception as exc:
            log.warning("workspace reload failed: %s", exc, exc_info=True)
            return Reloaded(str(ws.root), (), f"the workspace could not be reloaded "
                                              f"({type(exc).__name__}: {exc})")
        counts = tuple(EditCount(str(e.file), len(e.added), len(e.removed), len(e.changed))
                       for e in edits)
        session = getattr(self.app.runtime, "session", None)
        if session is None:
            return Reloaded(str(ws.root), counts, "")
        ctx = await session.load_workspace()
        if ctx is None:
            return Reloaded(str(ws.root), counts,
                            "the workspace could not be loaded (see the log); nothing changed")
        return Reloaded(str(ws.root), counts,
                        f"{self.app.runtime.session_type} session context: "
                        f"{', '.join(ctx.files)} ({ctx.tokens} tokens)")

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
