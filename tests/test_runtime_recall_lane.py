"""Recall runs on a worker lane of its own: blocking work (compression, bulk embedding)
filling the runtime's offloader never holds a recall up; and while a recall runs, that
offloader starts no new call (solace.offload.Foreground), the recall's own calls aside."""

from __future__ import annotations

import threading
from pathlib import Path

import trio
import trio.testing

from solace import TrioClock, open_runtime
from solace.config import Config, ModelsConfig, SubstrateConfig


def config() -> Config:
    return Config(models=ModelsConfig(embedder="hashing", llm_backend="none"),
                  substrate=SubstrateConfig(fsync="never"))


async def test_a_recall_does_not_queue_behind_blocking_work(tmp_path: Path) -> None:
    async with open_runtime(tmp_path, config(), clock=TrioClock()) as rt:
        await rt.observe("I adopted a grey whippet called Fig", author="Caroline")
        await rt.settle()
        gate = threading.Event()
        busy = 0

        async def hold() -> None:
            nonlocal busy
            busy += 1
            await rt.offloader.run(gate.wait, 15)

        try:
            async with trio.open_nursery() as nursery:
                for _ in range(rt.offloader.threads):  # every bulk worker taken
                    nursery.start_soon(hold)
                await trio.testing.wait_all_tasks_blocked()
                assert busy == rt.offloader.threads
                with trio.fail_after(10):  # a fresh query: embedded, searched, read
                    hits = await rt.recall("Main", "what is the whippet called?", 5)
                assert any("Fig" in h.text for h in hits)
                gate.set()
        finally:
            gate.set()


async def test_a_recall_holds_background_work_back_and_never_its_own(tmp_path: Path) -> None:
    async with open_runtime(tmp_path, config(), clock=TrioClock()) as rt:
        await rt.observe("I adopted a grey whippet called Fig", author="Caroline")
        await rt.settle()
        foreground, seen = rt.models.foreground, []
        embed_query = rt.embed_query

        async def embed_and_look(query: str):  # type: ignore[no-untyped-def]
            seen.append(foreground.active)
            return await embed_query(query)

        rt.embed_query = embed_and_look  # type: ignore[method-assign]
        waits = foreground.waits
        hits = await rt.recall("Main", "what is the whippet called?", 5)
        assert any("Fig" in h.text for h in hits)
        assert seen == [1] and foreground.active == 0  # held for the recall, then cleared
        assert foreground.waits == waits  # the recall's own thread calls went first
        assert rt.offloader.defers_to is foreground
