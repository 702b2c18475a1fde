"""The MCP surface: Solace's memory as MCP tools, over stdio (``solace mcp``) and
streamable HTTP (``/mcp`` on ``solace serve``).

Only :mod:`solace.surfaces.mcp.tools` is imported here; the server (and the ``mcp``
package) load when a surface runs.
"""

from __future__ import annotations

from solace.surfaces.mcp.tools import (
    DEFAULT_MEMORY_ID,
    MCP_TOOLS,
    McpSurfaceError,
    MemoryIdError,
    ToolCaller,
    check_memory_id,
)

__all__ = [
    "DEFAULT_MEMORY_ID",
    "MCP_TOOLS",
    "McpSurfaceError",
    "MemoryIdError",
    "ToolCaller",
    "check_memory_id",
]
