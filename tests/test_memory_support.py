"""Shared set-up for the memory tests (no tests here): a real substrate, the real
ladder with the deterministic hashing embedder, and an agent memory on a TrioClock."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import trio

from solace.clock import TrioClock
from solace.config import AgentConfig, MemoryConfig
from solace.memory import AgentMemory, MemoryRecord
from solace.memory.ladder import Ladder
from solace.models import HashingEmbedder, WordPieceTokenizer
from solace.offload import Offloader
from substrate.aio import TrioSubstrate, open_trio_substrate

EPOCH = 1_700_000_000.0
HOUR = 3600.0
DAY = 24 * HOUR
KEY = bytes(range(32))

LINES = [
    "I went to the support group yesterday and it was so powerful.",
    "Melanie painted a lake sunrise last year, it is special to her.",
    "We ran a charity race for mental health last Saturday with 40 people.",
    "The transgender stories were inspiring and I felt accepted there.",
    "I am keen on counseling or working in mental health next year.",
    "My kids loved the camping trip to the mountains in June.",
    "Caroline adopted two cats from the shelter on Tuesday.",
    "The pottery class made a bowl and a cup for my mother.",
]


@dataclass(frozen=True, slots=True)
class Seen:
    """The tests' perception of an event (what the runtime's routing would give)."""

    speaker: str
    emotional_weight: float
    tags: tuple[str, ...]
    private: bool


def perceive_messages(events: Sequence[Any]) -> Iterable[tuple[Any, Seen]]:
    """Every ``message`` event, with weight and tags read from its attrs."""
    for event in events:
        if event.kind == "message":
            yield event, Seen(
                event.agent,
                float(event.attrs.get("emo", "0")),
                tuple(json.loads(event.attrs.get("tags", "[]"))),
                event.attrs.get("private") == "1",
            )


_shared: dict[str, Any] = {}


def tokenizer() -> WordPieceTokenizer:
    if "tok" not in _shared:
        _shared["tok"] = WordPieceTokenizer()
    return _shared["tok"]  # type: ignore[no-any-return]


class Env:
    """One agent's memory over a substrate in ``root``, with the means to restart it."""

    def __init__(self, root: Path, config: AgentConfig, memory_config: MemoryConfig,
                 ladder: Any = None, perceive: Any = perceive_messages) -> None:
        self.root = root
        self.config = config
        self.memory_config = memory_config
        self.clock = TrioClock(EPOCH)
        self.embedder = HashingEmbedder(384)
        self.tokenizer = tokenizer()
        self.offloader = Offloader(2)
        self.ladder = ladder or Ladder(tokenizer=self.tokenizer, embedder=self.embedder,
                                       config=memory_config)
        self.perceive = perceive
        self.substrate: TrioSubstrate | None = None
        self.memory: AgentMemory | None = None
        self.spoken: list[int] = []

    @property
    def mem(self) -> AgentMemory:
        assert self.memory is not None
        return self.memory

    @property
    def sub(self) -> TrioSubstrate:
        assert self.substrate is not None
        return self.substrate

    async def open(self, agent: str = "Main") -> AgentMemory:
        if self.substrate is None:
            self.substrate = await open_trio_substrate(
                self.root / "substrate", KEY, fsync="never", extra_kinds=("fade",))
        self.memory = await AgentMemory.open(
            agent, config=self.config, memory_config=self.memory_config,
            directory=self.root / "memory" / agent, substrate=self.substrate,
            ladder=self.ladder, embedder=self.embedder, tokenizer=self.tokenizer,
            offloader=self.offloader, clock=self.clock, perceive=self.perceive)
        return self.memory

    async def restart(self, *, snapshot: bool) -> AgentMemory:
        """Drop the memory (snapshotting first, or not: a crash) and reopen everything."""
        if snapshot:
            await self.mem.snapshot()
        await self.sub.aclose()
        self.substrate = None
        return await self.open(self.mem.agent)

    async def say(self, text: str, *, speaker: str = "Caroline", emo: float = 0.0,
                  tags: Sequence[str] = (), private: bool = False) -> MemoryRecord:
        """Append a message event and ingest it as the runtime would."""
        attrs = {"emo": repr(emo), "tags": json.dumps(list(tags))}
        if private:
            attrs["private"] = "1"
        eid = await self.sub.append(speaker, "message", text, attrs=attrs, ts=self.clock.now())
        event = await self.sub.get(eid)
        ((_, seen),) = list(perceive_messages([event]))
        self.spoken.append(eid)
        return await self.mem.ingest(event, speaker=seen.speaker,
                                     emotional_weight=seen.emotional_weight, tags=seen.tags,
                                     private=seen.private)

    async def sleep_until(self, offset_seconds: float) -> None:
        """Move virtual time to ``EPOCH + offset_seconds``."""
        await trio.sleep_until(offset_seconds)

    async def fade_events(self) -> list[Any]:
        return await self.sub.scan(agent=self.mem.agent, kind="fade")


def where(memory: AgentMemory, record_id: int) -> tuple[str, int] | None:
    """``(tier, rung)`` of a record, or None."""
    record = memory.working.get(record_id)
    if record is not None:
        return "working", record.rung
    record = memory.longterm.get(record_id)
    if record is not None:
        return "longterm", record.rung
    return None


def holder_of(memory: AgentMemory, entry_id: int) -> list[tuple[str, int]]:
    """Every (tier, record id) whose record stands for ``entry_id``."""
    out = [("working", r.record_id) for r in memory.working.records() if entry_id in r.entry_ids]
    out += [("longterm", r.record_id) for r in memory.longterm.records()
            if entry_id in r.entry_ids]
    return out


def state_of(memory: AgentMemory) -> dict[int, tuple[Any, ...]]:
    """Everything that must survive a restart, per record id."""
    out = {}
    for tier, records in (("working", memory.working.records()),
                          ("longterm", list(memory.longterm.records()))):
        for r in records:
            out[r.record_id] = (tier, r.rung, r.text, r.tokens, r.entry_ids, r.tags,
                                r.emotional_weight, r.created, r.private, r.speakers)
    return out
