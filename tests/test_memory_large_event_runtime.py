"""A huge paste through the runtime: bounded records citing its one event, the working
budget kept, recall reading only the chunks it hits, and a rebuild equal to live."""

from __future__ import annotations

import random
from datetime import timedelta
from pathlib import Path
from typing import Any

from runtime_support import LINES, START

from solace import ReplayClock, open_runtime
from solace.config import AgentConfig, Config, MemoryConfig, ModelsConfig, SubstrateConfig
from solace.memory.chunks import chunk_limit, split_rung0

WORDS = ("harbour lantern gravel orchard kettle ribbon copper meadow ferry quilt "
         "the a of to and was with").split()
MARKER = "The lighthouse keeper Sigrid counted 47 crimson herons at Vik."


def config() -> Config:
    small = AgentConfig(budget_tokens=300)
    return Config(
        models=ModelsConfig(embedder="hashing", llm_backend="none"),
        substrate=SubstrateConfig(fsync="never"),
        memory=MemoryConfig(warmup_records=0),
        agents={"Main": small, "Supervisor": small},
    )


def paste(chars: int, seed: int = 3) -> str:
    """Paragraphs of random sentences (about ``chars`` characters), the MARKER in the middle."""
    rng = random.Random(seed)
    paragraphs: list[str] = []
    size = 0
    while size < chars:
        paragraph = " ".join(
            " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 20))).capitalize() + "."
            for _ in range(rng.randint(1, 5)))
        paragraphs.append(paragraph)
        size += len(paragraph) + 2
    paragraphs.insert(len(paragraphs) // 2, MARKER)
    return "\n\n".join(paragraphs)


def holding(rt: Any, entry_id: int) -> dict[str, list[Any]]:
    """Each agent's records (both tiers) standing for ``entry_id``."""
    return {
        name: [r for tier in (memory.working, memory.longterm) for r in tier.records()
               if entry_id in r.entry_ids]
        for name, memory in rt.memories.items()
    }


async def observe_paste(rt: Any, content: str) -> int:
    main = rt.agent("Main")
    for i, (speaker, text) in enumerate(LINES[:3]):
        await main.observe(text, speaker=speaker, at=START + timedelta(minutes=i))
    eid: int = await main.observe(content, speaker="Caroline", at=START + timedelta(minutes=5))
    for i, (speaker, text) in enumerate(LINES[3:]):
        await main.observe(text, speaker=speaker, at=START + timedelta(minutes=10 + i))
    await rt.settle()
    return eid


async def test_a_huge_paste_becomes_bounded_records_citing_its_one_event(
        tmp_path: Path) -> None:
    content = paste(120_000)
    async with open_runtime(tmp_path, config(), clock=ReplayClock(START)) as rt:
        eid = await observe_paste(rt, content)
        chunks = split_rung0("Caroline", content, rt.memories["Main"].tokenizer)
        assert chunks is not None
        limit = chunk_limit("Caroline", rt.memories["Main"].tokenizer)
        held = holding(rt, eid)
        assert held["Main"], "Main keeps the paste"
        for records in held.values():
            if not records:
                continue
            # one record per chunk, however far each has faded; none merged away
            assert sorted(r.span for r in records) == [c.span for c in chunks]
            for record in records:
                assert record.entry_ids == (eid,)
                assert record.tokens <= limit
        assert rt.event(eid).content == content  # the event itself is whole


async def test_the_working_budget_holds_after_a_huge_paste(tmp_path: Path) -> None:
    async with open_runtime(tmp_path, config(), clock=ReplayClock(START)) as rt:
        eid = await observe_paste(rt, paste(150_000))
        for memory in rt.memories.values():
            assert memory.working.total_tokens <= memory.working.budget_tokens
        main = rt.memories["Main"]
        in_longterm = [r for r in main.longterm.records() if eid in r.entry_ids]
        assert len(in_longterm) > 100  # what did not fit went down the ladder


async def test_recall_after_a_huge_paste_reads_no_more_than_the_chunks_it_hits(
        tmp_path: Path) -> None:
    content = paste(150_000)
    async with open_runtime(tmp_path, config(), clock=ReplayClock(START)) as rt:
        eid = await observe_paste(rt, content)
        rt.clock.observe((START + timedelta(days=30)).timestamp())
        await rt.settle()  # long-term summaries fade to rung 3: hits are rehydrated
        assert any(r.rung == 3 and r.span for r in rt.memories["Main"].longterm.records())
        tokenizer = rt.memories["Main"].tokenizer
        chunks = split_rung0("Caroline", content, tokenizer)
        assert chunks is not None
        longest = max(e - s for s, e in (c.span for c in chunks))
        retriever = rt.actors["Main"].retriever
        read: list[int] = []
        rehydrate = retriever.rehydrate

        def counting(events: Any, rung: int) -> str:
            read.append(sum(len(e.content) for e in events))
            return str(rehydrate(events, rung))

        retriever.rehydrate = counting
        hits = await rt.agent("Main").recall("Sigrid crimson herons lighthouse", k=5)
        assert read and max(read) <= longest  # a chunk's part, never the whole event
        of_paste = [h for h in hits if eid in h.entry_ids]
        assert of_paste
        for hit in of_paste:
            assert hit.entry_ids == (eid,)  # a chunk's hit cites the one event
            assert hit.tokens <= chunk_limit("Caroline", tokenizer)


async def test_a_used_cue_from_a_chunk_comes_back_as_its_part_only(tmp_path: Path) -> None:
    content = paste(60_000)
    cfg = config()
    cfg = Config(models=cfg.models, substrate=cfg.substrate, agents=cfg.agents,
                 memory=MemoryConfig(warmup_records=0, rehydrate_threshold=0.0))
    async with open_runtime(tmp_path, cfg, clock=ReplayClock(START)) as rt:
        eid = await observe_paste(rt, content)
        rt.clock.observe((START + timedelta(days=30)).timestamp())
        await rt.settle()
        tokenizer = rt.memories["Main"].tokenizer
        chunks = split_rung0("Caroline", content, tokenizer)
        assert chunks is not None
        longest = max(e - s for s, e in (c.span for c in chunks))
        retriever = rt.actors["Main"].retriever
        read: list[int] = []
        rehydrate = retriever.rehydrate

        def counting(events: Any, rung: int) -> str:
            read.append(sum(len(e.content) for e in events))
            return str(rehydrate(events, rung))

        retriever.rehydrate = counting
        async with rt.agent("Main").reasoning_step("copper ferry orchard meadow") as step:
            cues = [c for c in step.cues if c.entry_ids == (eid,)]
            assert cues, "a long-term chunk of the paste is offered as a cue"
            step.mark_used(cues[0])
        back = rt.memories["Main"].working.get(cues[0].record_id)
        assert back is not None and back.span and back.entry_ids == (eid,)
        assert back.tokens <= chunk_limit("Caroline", tokenizer)
        assert read and max(read) <= longest


def tiers(rt: Any) -> dict[tuple[str, str, int], tuple[Any, ...]]:
    return {
        (name, tier, r.record_id): (r.rung, r.text, r.tokens, r.entry_ids, r.span)
        for name, memory in rt.memories.items()
        for tier in ("working", "longterm")
        for r in getattr(memory, tier).records()
    }


async def state(rt: Any) -> dict[str, Any]:
    recalls = {}
    for query in ("Sigrid crimson herons", "pottery class", "copper ferry"):
        hits = await rt.agent("Main").recall(query, k=5)
        recalls[query] = [(h.record_id, h.rung, h.text, h.entry_ids, round(h.score, 4))
                          for h in hits]
    return {"tiers": tiers(rt), "recall": recalls}


async def test_a_rebuilt_huge_paste_equals_the_live_one(tmp_path: Path) -> None:
    clock = ReplayClock(START)
    async with open_runtime(tmp_path, config(), clock=clock) as rt:
        await observe_paste(rt, paste(100_000))
        live = await state(rt)
    async with open_runtime(tmp_path, config(), clock=clock, warm_up=False) as rt:
        await rt.settle()
        assert await state(rt) == live  # from the snapshots
    for path in (tmp_path / "memory").rglob("*"):
        if path.is_file():
            path.unlink()  # the substrate alone
    async with open_runtime(tmp_path, config(), clock=clock, warm_up=False) as rt:
        await rt.settle()
        assert await state(rt) == live


async def test_a_paste_still_in_working_is_recalled_by_its_chunk_and_rebuilds_the_same(
        tmp_path: Path) -> None:
    roomy = config()
    roomy = Config(models=roomy.models, substrate=roomy.substrate, memory=roomy.memory,
                   agents={"Main": AgentConfig(budget_tokens=100_000)})
    clock = ReplayClock(START)
    async with open_runtime(tmp_path, roomy, clock=clock) as rt:
        eid = await rt.agent("Main").observe(paste(30_000), speaker="Caroline", at=START)
        live = tiers(rt)
        assert sum(1 for (name, tier, _), v in live.items()
                   if name == "Main" and tier == "working" and v[3] == (eid,)) > 10
        (top, *_) = await rt.agent("Main").recall("Sigrid crimson herons", k=3)
        assert (top.entry_ids, top.rung, top.tier) == ((eid,), 0, "working")
        assert MARKER in top.text
        assert top.tokens <= chunk_limit("Caroline", rt.memories["Main"].tokenizer)
    for path in (tmp_path / "memory").rglob("*"):
        if path.is_file():
            path.unlink()
    async with open_runtime(tmp_path, roomy, clock=clock, warm_up=False) as rt:
        assert tiers(rt) == live
