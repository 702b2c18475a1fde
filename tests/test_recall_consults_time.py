"""A question asking when is also put to Time's own memory: its hits, owned by Time,
are interleaved with the asker's, nothing twice, nothing private; other questions and
``runtime.consult_time = false`` leave recall as it was."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from runtime_support import START, fill

from solace import ReplayClock, open_runtime
from solace.config import Config, ModelsConfig, RuntimeConfig, SubstrateConfig

WHEN = "When did Caroline run the charity race?"


def config(consult_time: bool = True) -> Config:
    return Config(models=ModelsConfig(embedder="hashing", llm_backend="none"),
                  substrate=SubstrateConfig(fsync="never"),
                  runtime=dataclasses.replace(RuntimeConfig(), consult_time=consult_time))


async def test_a_when_question_gets_times_records_first_and_each_text_once(
    tmp_path: Path,
) -> None:
    async with open_runtime(tmp_path, config(), clock=ReplayClock(START)) as rt:
        await fill(rt)
        hits = await rt.agent("Main").recall(WHEN, k=6)
        assert hits[0].owner == "Time" and "charity race" in hits[0].text
        assert hits[0].agent == "Main"
        assert {h.owner for h in hits} == {"Time", None}  # Main's own hits follow
        assert len({h.text for h in hits}) == len(hits)
        # Time holds only the dated turns; Main's own hits are the rest.
        dated = {r.text for r in rt.memories["Time"].working.records()}
        assert all(h.text in dated for h in hits if h.owner == "Time")


async def test_other_questions_and_the_switch_off_leave_recall_to_the_asker(
    tmp_path: Path,
) -> None:
    async with open_runtime(tmp_path, config(), clock=ReplayClock(START)) as rt:
        await fill(rt)
        plain = await rt.agent("Main").recall("Who ran the charity race?", k=6)
        assert {h.owner for h in plain} == {None}
    async with open_runtime(tmp_path, config(consult_time=False),
                            clock=ReplayClock(START)) as rt:
        hits = await rt.agent("Main").recall(WHEN, k=6)
        assert {h.owner for h in hits} == {None}
        assert "charity race" in hits[0].text


async def test_times_private_drafts_are_never_consulted(tmp_path: Path) -> None:
    async with open_runtime(tmp_path, config(), clock=ReplayClock(START)) as rt:
        await fill(rt)
        await rt.agent("Time").ctx.observe_internal(
            "When the charity race is over, draft a cue.", author="Time", kind="draft")
        await rt.settle()
        own = await rt.agent("Time").recall(WHEN, k=20, read_through=False)
        assert any("draft a cue" in h.text for h in own)  # Time sees its own draft
        hits = await rt.agent("Main").recall(WHEN, k=20)
        assert not any("draft a cue" in h.text for h in hits)


async def test_own_memory_only_consults_nobody(tmp_path: Path) -> None:
    async with open_runtime(tmp_path, config(), clock=ReplayClock(START)) as rt:
        await fill(rt)
        hits = await rt.agent("Main").recall(WHEN, k=6, read_through=False)
        assert {h.owner for h in hits} == {None}
