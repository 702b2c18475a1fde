"""The human-readable workspace (seed 003): SOUL/USER/AGENTS.md, daily logs, MEMORY.md
with weekly and monthly roll-ups, NOW.md; privacy by session type; human edits that
stick. See ``docs/workspace.md`` for the layout and how the runtime wires it.
"""

from __future__ import annotations

from solace.workspace.errors import (
    WorkspaceDisabledError,
    WorkspaceError,
    WorkspaceStateError,
)
from solace.workspace.events import WORKSPACE_KIND, WORKSPACE_KINDS
from solace.workspace.model import (
    SESSION_TYPES,
    Edit,
    NowState,
    SessionContext,
    SessionType,
)
from solace.workspace.service import SOURCE_KINDS, Workspace
from solace.workspace.synthesis import SynthesisCounts

__all__ = [
    "SESSION_TYPES",
    "SOURCE_KINDS",
    "WORKSPACE_KIND",
    "WORKSPACE_KINDS",
    "Edit",
    "NowState",
    "SessionContext",
    "SessionType",
    "SynthesisCounts",
    "Workspace",
    "WorkspaceDisabledError",
    "WorkspaceError",
    "WorkspaceStateError",
]
