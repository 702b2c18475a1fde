"""Each actor brings its retriever's indexes in line with its tiers once they have
been still for ``runtime.index_refresh_seconds``, with no recall asking: a recall after
a burst of observes finds them in line instead of indexing the burst. Nothing follows
while the tiers keep changing, an observe is under way or an agent fades; a change made
during a refresh is followed too, idle tiers wake nothing and 0 leaves it to recall.
One refresh follows a retriever's tiers at a time (a second caller waits, then has
nothing left to build), and agents refreshing together derive each unit they share
once."""

from __future__ import annotations

import dataclasses
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing
from runtime_support import LINES, START, fill

import solace.memory.derived_forms
from solace import ReplayClock, open_runtime
from solace.config import (
    AgentConfig,
    Config,
    MemoryConfig,
    ModelsConfig,
    RuntimeConfig,
    SubstrateConfig,
)
from solace.memory.form_parts import derive_in_parts
from solace.memory.tier_view import versions_of


def config(every: float) -> Config:
    small = AgentConfig(budget_tokens=40)
    return Config(models=ModelsConfig(embedder="hashing", llm_backend="none"),
                  substrate=SubstrateConfig(fsync="never"),
                  agents={"Main": small},
                  runtime=RuntimeConfig(index_refresh_seconds=every,  # Time's heartbeat
                                        time_heartbeat_seconds=86400.0))  # (an event): daily


def in_line(retriever: Any) -> bool:
    memory = retriever.memory
    held = retriever.indexes.indexed  # the indexes, not only the view
    in_line = held is not None and held[0] == versions_of(memory.working, memory.longterm)
    assert in_line == retriever.in_line
    return in_line


def count_follows(retriever: Any, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    follow = retriever._follow

    async def counted() -> Any:
        calls.append(1)
        return await follow()

    monkeypatch.setattr(retriever, "_follow", counted)
    return calls


@pytest.mark.parametrize("every", [1.0, 0.0])
async def test_indexes_follow_the_tiers_once_still_for_the_interval_unless_it_is_zero(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, monkeypatch: pytest.MonkeyPatch,
    every: float,
) -> None:
    async with open_runtime(tmp_path, config(every), clock=ReplayClock()) as rt:
        retriever = rt.agent("Main").retriever
        follows = count_follows(retriever, monkeypatch)
        for i, (speaker, text) in enumerate(LINES):  # an observe every half interval
            await rt.agent("Main").observe(text, speaker=speaker,
                                           at=START + timedelta(minutes=5 * i))
            await trio.sleep(every / 2)
        assert follows == []  # never still for the interval: nothing followed yet
        await rt.settle()
        await trio.sleep(every + 0.5)
        assert in_line(retriever) == bool(every)
        assert len(follows) == (1 if every else 0)
        await trio.sleep(3600)  # an hour with nothing observed: nothing followed
        assert len(follows) == (1 if every else 0)
        await rt.agent("Main").recall("pottery", k=3, read_through=False)
        assert in_line(retriever)
        assert len(follows) == 1  # by the keeper, or else by the recall


@pytest.mark.parametrize("slow_step", ["append", "embedding", "fade"])
async def test_an_observe_or_a_fade_under_way_is_not_still_however_long_it_takes(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, monkeypatch: pytest.MonkeyPatch,
    slow_step: str,
) -> None:
    async with open_runtime(tmp_path, config(1.0), clock=ReplayClock()) as rt:
        main = rt.agent("Main")
        follows = count_follows(main.retriever, monkeypatch)
        await main.observe(*LINES[0][1:], speaker=LINES[0][0], at=START)  # a change...
        if slow_step == "embedding":
            embed = main.memory._embed_and_count

            def slow_embed(texts: Any) -> Any:  # the test's clock jumps past 1 s meanwhile
                time.sleep(0.3)
                return embed(texts)

            monkeypatch.setattr(main.memory, "_embed_and_count", slow_embed)
        elif slow_step == "fade":
            demote = main.memory.ladder.demote

            def slow_demote(*args: Any, **kwargs: Any) -> Any:  # the same
                time.sleep(0.3)
                return demote(*args, **kwargs)

            monkeypatch.setattr(main.memory.ladder, "demote", slow_demote)
        else:
            append = rt.substrate.append

            async def slow_append(*args: Any, **kwargs: Any) -> Any:
                await trio.to_thread.run_sync(time.sleep, 0.3)  # the same
                return await append(*args, **kwargs)

            monkeypatch.setattr(rt.substrate, "append", slow_append)
        await main.observe(*LINES[1][1:], speaker=LINES[1][0],  # ...then a slow observe
                           at=START + timedelta(hours=5))  # (and its fade)
        await rt.settle()
        assert follows == []
        await trio.sleep(1.5)
        assert len(follows) == 1 and in_line(main.retriever)


async def test_a_change_made_while_the_keeper_indexes_is_followed_too(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with open_runtime(tmp_path, config(1.0), clock=ReplayClock()) as rt:
        main = rt.agent("Main")
        build = main.retriever._derived.build
        observed: list[int] = []

        async def build_then_observe(records: Any, units: Any) -> Any:
            forms = await build(records, units)
            if not observed:  # the tiers change, for the last time, before it ends
                speaker, text = LINES[-1]
                observed.append(await main.observe(text, speaker=speaker,
                                                   at=START + timedelta(hours=1)))
                await rt.settle()  # its fade too: nothing changes after this refresh
            return forms

        monkeypatch.setattr(main.retriever._derived, "build", build_then_observe)
        await fill(rt, LINES[:-1])
        await trio.sleep(5)
        assert observed and in_line(main.retriever)


async def test_a_refresh_waits_for_the_one_under_way_and_builds_nothing_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with open_runtime(tmp_path, config(0.0), clock=ReplayClock()) as rt:
        retriever = rt.agent("Main").retriever
        await fill(rt)
        built: list[int] = []
        build = retriever._derived.build

        async def slow_build(records: Any, units: Any) -> Any:
            built.append(len(records))
            await trio.sleep(0.01)  # the second refresh arrives while this one awaits
            return await build(records, units)

        monkeypatch.setattr(retriever._derived, "build", slow_build)
        views: list[Any] = []

        async def refresh() -> None:
            views.append(await retriever.refresh())

        async with trio.open_nursery() as nursery:
            nursery.start_soon(refresh)
            nursery.start_soon(refresh)
        assert len(built) == 1 and built[0] > 0
        assert views[0] is views[1] and in_line(retriever)


async def test_agents_refreshing_together_derive_each_shared_unit_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    derived: list[int] = []

    async def counted(offloader: Any, records: Any, units: Any, *args: Any, **kw: Any) -> Any:
        derived.extend(units)
        return await derive_in_parts(offloader, records, units, *args, **kw)

    monkeypatch.setattr(solace.memory.derived_forms, "derive_in_parts", counted)
    small = AgentConfig(budget_tokens=40)
    async with open_runtime(tmp_path, dataclasses.replace(
            config(0.0), agents={"Main": small, "Supervisor": small},
            memory=MemoryConfig(episode_min_similarity=-1.0)),  # every turn in an episode
            clock=ReplayClock()) as rt:
        await fill(rt)  # both hold every turn, in episodes: their units are the same
        async with trio.open_nursery() as nursery:
            for name in rt.actors:
                nursery.start_soon(rt.agent(name).retriever.refresh)
    assert derived and len(derived) == len(set(derived))


def test_a_negative_interval_is_refused_naming_the_key() -> None:
    with pytest.raises(ValueError, match="index_refresh_seconds must be >= 0"):
        dataclasses.replace(RuntimeConfig(), index_refresh_seconds=-1.0)
