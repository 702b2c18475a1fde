"""Shared set-up for workspace tests: a home with a substrate (opened with the
``workspace`` kind explicitly until the runtime includes it), fact memory, the
conversation layer's event builders, and a Workspace on top."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from solace.config.schema import Config
from solace.conversation import events as cev
from solace.conversation.model import Scope
from solace.conversation.store import EventStore
from solace.facts import FactMemory, open_fact_memory
from solace.home import Home
from solace.models import HashingEmbedder, WordPieceTokenizer
from solace.offload import Offloader
from solace.runtime import extra_kinds
from solace.workspace import WORKSPACE_KINDS, Workspace
from substrate import KeySource
from substrate.aio import open_trio_substrate

T0 = 1_790_000_000.0  # 2026-09-21 14:13:20 UTC, a Monday
DAY = 86_400.0
SCOPE = Scope("user", "Main", "org")


class ManualClock:
    def __init__(self, t: float = T0) -> None:
        self.t = t

    def now(self) -> float:
        return self.t


@dataclass
class Bench:
    """Everything a workspace test drives."""

    root: Path
    ws: Workspace
    facts: FactMemory
    store: EventStore
    clock: Any
    substrate: Any

    @property
    def files(self) -> Path:
        return self.ws.root

    async def conversation(self, *drafts: cev.Draft) -> None:
        """Append conversation-layer events now and let the workspace read them."""
        await self.store.append(list(drafts), self.clock.now())
        await self.ws.catch_up()

    async def remember(self, text: str, memory_id: str = "user", slot: str = "") -> str:
        result = await self.facts.remember(memory_id, text, slot=slot)
        await self.ws.catch_up()
        return result.fact.fact_id


def every_file(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (the whole home), relative path -> bytes."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


@asynccontextmanager
async def workspace_home(root: Path, clock: Any, config: Config | None = None,
                         **kwargs: Any) -> AsyncIterator[Bench]:
    config = config or Config()
    home = Home.at(root, config)
    sub = await open_trio_substrate(
        home.substrate_dir, key_source=KeySource(key_file=home.key_file),
        extra_kinds=(*extra_kinds(config), *WORKSPACE_KINDS), fsync="never")
    async with sub:
        offloader = Offloader(1)
        tokenizer = WordPieceTokenizer()
        embedder = HashingEmbedder()
        fm = await open_fact_memory(facts_dir=home.facts_dir, substrate=sub, config=config,
                                    embedder=embedder, tokenizer=tokenizer,
                                    offloader=offloader, clock=clock)
        ws = await Workspace.open(home.root, config, sub, clock, facts=fm, embedder=embedder,
                                  tokenizer=tokenizer, offloader=offloader, **kwargs)
        yield Bench(home.root, ws, fm, EventStore(sub), clock, sub)


def topic_events(n: int, title: str, summary: str, *, note: str = "",
                 decision: tuple[str, str] | None = None) -> list[cev.Draft]:
    """A topic opened and activated, a note, its summary on close, a promotion, and
    optionally a durable fact (a decision)."""
    session, topic = f"s{n}", f"t{n}"
    drafts = [cev.open_topic(SCOPE, session, topic, origin="new", title=title),
              cev.activate_topic(SCOPE, session, topic),
              cev.message(SCOPE, session, topic, "user", f"RAW TRANSCRIPT LINE {n}")]
    if note:
        drafts.append(cev.note(SCOPE, session, topic, "$set", note))
    drafts += [cev.summary(SCOPE, session, topic, title=title, text=summary, mode="llm",
                           include=True, keep=True, count=6, close=True),
               cev.curation(SCOPE, session, topic, "promote", by="user")]
    if decision:
        drafts.append(cev.fact_set(SCOPE, *decision))
    return drafts
