"""The application API: exactly one active topic, and a restart continues the session."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from solace import TrioClock, open_runtime
from solace.app import AppError, NotFoundError, Solace, UnknownAgentError
from solace.config import Config, ModelsConfig, SubstrateConfig


def config() -> Config:
    return Config(models=ModelsConfig(embedder="hashing", llm_backend="none"),
                  substrate=SubstrateConfig(fsync="never"))


async def test_restarts_continue_the_session_with_exactly_one_active_topic(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    for line in ("My dog is called Rex.", "I live in Lisbon."):
        async with open_runtime(tmp_path, config(), clock=TrioClock()) as rt:
            await Solace(rt).chat(line)
    async with open_runtime(tmp_path, config(), clock=TrioClock()) as rt:
        app = Solace(rt)
        topics = app.topics()
        assert [t.active for t in topics].count(True) == 1
        assert len(rt.conversations.sessions(app.scope)) == 1
        assert all(t.messages for t in topics)  # no empty topic per restart


async def test_recall_hits_cite_date_speaker_and_dia_id(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with open_runtime(tmp_path, config(), clock=TrioClock()) as rt:
        app = Solace(rt)
        eid = await app.observe("I started a pottery class with Jolene.", speaker="Caroline",
                                at=1_683_550_800.0, attrs={"dia_id": "D1:3"})
        (hit, *_) = await app.recall("pottery class", k=3)
        assert hit.entry_ids == (eid,)
        assert hit.speakers == ("Caroline",) and hit.dia_ids == ("D1:3",)
        assert hit.date == "2023-05-08T13:00:00+00:00"


async def test_bad_calls_are_refused_naming_the_value(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with open_runtime(tmp_path, config(), clock=TrioClock()) as rt:
        app = Solace(rt)
        with pytest.raises(UnknownAgentError, match="'Bob'"):
            await app.recall("dog", agent="Bob")
        with pytest.raises(AppError, match="k must be"):
            await app.recall("dog", k=0)
        with pytest.raises(NotFoundError, match="'t99'"):
            await app.curate("t99", "promote")
        with pytest.raises(AppError, match="'explode'"):
            await app.curate("t1", "explode")
        with pytest.raises(NotFoundError, match="'nope'"):
            await app.unset_fact("nope")
        assert rt.substrate.last_id == 0
