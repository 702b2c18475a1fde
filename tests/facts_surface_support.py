"""Shared set-up for the fact-memory surface tests (CLI, HTTP, MCP).

:class:`FactApp` exposes the application API's fact-memory methods (the names
:class:`solace.app.Solace` gives them) over one :class:`FactMemory`, so the HTTP and
MCP surfaces are tested against real fact memory without a whole runtime.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from facts_fixtures import ManualClock

from solace.facts import Compaction, Fact, FactMemory, FactsDisabledError, RecallBlock, WriteResult
from solace.facts.transfer import import_rows

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


class FactApp:
    """The Solace app's fact-memory methods over ``memory`` (see the module docstring)."""

    def __init__(self, memory: FactMemory, clock: ManualClock) -> None:
        self.memory, self.clock = memory, clock

    async def remember(self, memory_id: str, text: str, store: str | None = None,
                       importance: float | None = None) -> WriteResult:
        return await self.memory.remember(memory_id, text, store=store, importance=importance)

    async def recall_facts(self, query: str, memory_id: str, store: str | None = None,
                           k: int | None = None) -> RecallBlock:
        return await self.memory.recall(query, memory_id, store=store, k=k)

    def memory_ids(self, store: str | None = None) -> list[str]:
        return self.memory.memory_ids(store)

    def memory_facts(self, memory_id: str, all: bool = False) -> list[Fact]:
        return self.memory.facts(memory_id, include_history=all)

    async def delete_fact(self, memory_id: str, fact_id: str) -> Fact:
        return await self.memory.delete(memory_id, fact_id)

    async def forget(self, memory_id: str) -> int:
        return await self.memory.forget(memory_id)

    async def consolidate(self, memory_id: str) -> list[Compaction]:
        return await self.memory.consolidate(memory_id)

    def export_facts(self, memory_id: str) -> list[dict[str, Any]]:
        return self.memory.export(memory_id)

    async def import_facts(self, rows: Sequence[Any], store: str) -> Any:
        return await import_rows(self.memory, rows, store=store, now=self.clock.now())

    def counters(self) -> dict[str, Any]:
        return {}


class DisabledApp:
    """An app whose fact memory is switched off: every fact method raises."""

    def __getattr__(self, name: str) -> Any:
        def off(*args: Any, **kwargs: Any) -> Any:
            raise FactsDisabledError("fact memory is switched off ([facts] enabled = false)")
        return off
