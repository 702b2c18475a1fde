"""The workspace's endpoints (:mod:`solace.app.workspace` over HTTP), admin only.

- ``GET /workspace`` -> ``{"root", "files": [{"path", "bytes"}]}``
- ``GET /workspace/file?path=`` -> ``{"path", "text"}`` (404 naming no file, 400 outside)
- ``POST /workspace/reload`` -> ``{"root", "edits": [{"file", "added", "removed",
  "changed"}], "context", "message"}``; ``POST /workspace/now`` -> ``{"text"}``
- ``POST /workspace/synthesize`` -> ``{"read", "added", "noop", "updated", "conflicts",
  "clashes", "rollups"}``
- ``GET /workspace/export`` -> ``{"files": [{"path", "text"}]}`` (secret-looking lines
  left out; the client writes them where it wants)

With the workspace off every one answers 503 ``workspace_disabled``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from solace.app import Solace
from solace.app.workspace import WorkspaceCalls

if TYPE_CHECKING:
    from solace.surfaces.http.app import Call

__all__ = ["workspace_handlers"]


def workspace_handlers(app: Solace) -> dict[str, Callable[[Call], Awaitable[Any]]]:
    """The handlers of the workspace's endpoints over ``app``, by operation name."""
    calls = WorkspaceCalls(app)

    async def workspace_files(call: Call) -> Any:
        return asdict(await calls.files())

    async def workspace_file(call: Call) -> Any:
        return asdict(await calls.file(call.query["path"]))

    async def workspace_reload(call: Call) -> Any:
        done = await calls.reload()
        return {**asdict(done), "message": done.text}

    async def workspace_now(call: Call) -> Any:
        return {"text": await calls.now()}

    async def workspace_synthesize(call: Call) -> Any:
        return asdict(await calls.synthesize())

    async def workspace_export(call: Call) -> Any:
        return {"files": [asdict(f) for f in await calls.export()]}

    return {"workspace_files": workspace_files, "workspace_file": workspace_file,
            "workspace_reload": workspace_reload, "workspace_now": workspace_now,
            "workspace_synthesize": workspace_synthesize,
            "workspace_export": workspace_export}
