"""Shared set-up for the fact-memory surface tests (CLI, HTTP, MCP).

:class:`FactApp` is the application API's own fact-memory calls over one
:class:`FactMemory`, so the HTTP and MCP surfaces are tested against the real calls
and real fact memory without a whole runtime.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

from facts_fixtures import ManualClock

from solace.app.memory import MemoryCalls
from solace.facts import FactMemory

#: A CLI config: the hashing embedder (no model load), no LLM, a recall-only store.
CLI_CONFIG = """\
[models]
embedder = "hashing"
llm_backend = "none"
[substrate]
fsync = "never"
[stores.crm]
extraction_mode = "none"
"""


def cli_config(tmp_path: Path) -> str:
    path = tmp_path / "solace.toml"
    path.write_text(CLI_CONFIG)
    return str(path)


class FactApp(MemoryCalls):
    """The application API's fact-memory calls (:class:`MemoryCalls`, the mixin of
    :class:`solace.app.Solace`) over ``memory``, without the rest of a runtime."""

    def __init__(self, memory: FactMemory | None, clock: ManualClock) -> None:
        self.runtime = SimpleNamespace(facts=memory, clock=clock)  # type: ignore[assignment]

    def counters(self) -> dict[str, Any]:
        return {}


def DisabledApp() -> FactApp:  # noqa: N802 - reads as a class at the call sites
    """The calls with fact memory switched off (the runtime's ``facts`` is None)."""
    return FactApp(None, ManualClock())
