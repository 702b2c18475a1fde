"""Shared set-up for fact-memory tests: a FactMemory on a temporary home.

A manual clock (``clock.t``) so tests move time explicitly; the hashing embedder
(deterministic, no model) unless a test asks for MiniLM.
"""

from __future__ import annotations

import dataclasses
import io
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from solace.config.schema import Config, StoreConfig
from solace.facts import FactMemory, open_fact_memory
from solace.home import Home
from solace.models import HashingEmbedder, WordPieceTokenizer
from solace.offload import Offloader
from solace.runtime import extra_kinds
from substrate import KeySource
from substrate.aio import open_trio_substrate
from substrate.cli import cmd_dump

T0 = 1_790_000_000.0  # 2026-09-21


class ManualClock:
    def __init__(self, t: float = T0) -> None:
        self.t = t

    def now(self) -> float:
        return self.t


def config_with(**store: Any) -> Config:
    """The default config with the default store's knobs replaced."""
    return dataclasses.replace(Config(), stores={"default": StoreConfig(**store)})


@asynccontextmanager
async def fact_memory(root: Path, config: Config | None = None, clock: ManualClock | None = None,
                      embedder: Any = None, **kwargs: Any) -> AsyncIterator[FactMemory]:
    config = config or Config()
    home = Home.at(root, config)
    keys = KeySource(key_file=home.key_file)
    sub = await open_trio_substrate(home.substrate_dir, key_source=keys,
                                    extra_kinds=extra_kinds(config), fsync="never")
    async with sub:
        yield await open_fact_memory(
            facts_dir=home.facts_dir, substrate=sub, config=config,
            embedder=embedder or HashingEmbedder(), tokenizer=WordPieceTokenizer(),
            offloader=Offloader(1), clock=clock or ManualClock(), **kwargs)


def home_bytes(root: Path) -> dict[str, bytes]:
    """Every file under the home, path -> bytes."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


def decrypted_dump(root: Path) -> str:
    """The whole substrate, decrypted with its key, as XML text."""
    home = Home.at(root, Config())
    out = io.StringIO()
    assert cmd_dump(home.substrate_dir, out=out,
                    key_source=KeySource(key_file=home.key_file)) == 0
    return out.getvalue()
