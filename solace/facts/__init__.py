"""Fact memory (seeds 001 and 004): caller-chosen memory ids, store policies,
classified writes, scored recall, the compactor and the operator surface.

Event-sourced like the rest of Solace: every write, supersession, conflict,
eviction, deletion and compaction is a ``memfact`` substrate event, and the fact
store is a projection rebuilt from them. Fact texts are sealed under per-fact keys
kept outside the log (:mod:`solace.facts.vault`), so a delete is a crypto-shred.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from solace.facts.errors import (
    FactMemoryError,
    FactsDisabledError,
    FactVaultError,
    InvalidFactError,
    InvalidMemoryIdError,
    UnknownFactIdError,
    UnknownStoreError,
)
from solace.facts.events import FACT_KIND
from solace.facts.model import (
    MEMORY_ID_RULE,
    Candidate,
    Compaction,
    Exchange,
    Fact,
    FactStatus,
    RecallBlock,
    ScoredFact,
    WriteClass,
    WriteResult,
    is_memory_id,
)
from solace.facts.service import FactMemory, check_memory_id, fact_record
from solace.facts.vault import KeyVault

__all__ = [
    "FACT_KIND",
    "MEMORY_ID_RULE",
    "Candidate",
    "Compaction",
    "Exchange",
    "Fact",
    "FactMemory",
    "FactMemoryError",
    "FactStatus",
    "FactVaultError",
    "FactsDisabledError",
    "InvalidFactError",
    "InvalidMemoryIdError",
    "KeyVault",
    "RecallBlock",
    "ScoredFact",
    "UnknownFactIdError",
    "UnknownStoreError",
    "WriteClass",
    "WriteResult",
    "check_memory_id",
    "fact_record",
    "is_memory_id",
    "open_fact_memory",
]


async def open_fact_memory(*, facts_dir: str | Path, substrate: Any, replayed: bool = True,
                           **kwargs: Any) -> FactMemory:
    """Open the fact memory of a home: its key vault in ``facts_dir`` (the home's
    ``facts/``), its projection replayed from ``substrate`` (opened with the
    ``memfact`` kind) unless ``replayed`` is False (the caller then passes
    :meth:`FactMemory.replaying` to :func:`solace.projections.replay` with the other
    projections it opens). ``kwargs`` are :class:`FactMemory`'s other arguments (with
    ``snapshot``, the projection starts from the snapshot kept there, if usable).

    Raises:
        FactsDisabledError: ``[facts] enabled = false`` in ``kwargs["config"]``.
    """
    config = kwargs["config"]
    if not config.facts.enabled:
        raise FactsDisabledError("fact memory is switched off ([facts] enabled = false)")
    vault = KeyVault(facts_dir, substrate.key_ring)
    if not replayed:
        memory = FactMemory(substrate=substrate, vault=vault, **kwargs)
        await memory.load_snapshot()
        return memory
    return await FactMemory.open(substrate=substrate, vault=vault, **kwargs)
