"""The workspace's errors: one hierarchy, each raised by one part for one reason."""

from __future__ import annotations

__all__ = ["WorkspaceDisabledError", "WorkspaceError", "WorkspaceStateError"]


class WorkspaceError(Exception):
    """Base of every error the workspace raises."""


class WorkspaceDisabledError(WorkspaceError):
    """Raised by :meth:`Workspace.open` when ``[workspace] enabled = false``."""


class WorkspaceStateError(WorkspaceError):
    """Raised when the sealed state file exists but cannot be opened (wrong key, edited,
    truncated): the workspace cannot tell a human's edit from its own writes."""
