"""Memory never fails a turn (seed 001, issue 9 §10): with ``[facts] enabled = false``
a chat carrying a memory id proceeds, writes nothing and is logged once; a fact
memory that cannot be opened leaves ``rt.facts`` None with one log line; a fact store
that raises during turns leaves the turns answered, each failure logged once."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
import trio

import solace.facts
from solace import TrioClock, open_runtime
from solace.app import Solace
from solace.config import Config, ModelsConfig, SubstrateConfig
from solace.config.schema import FactsConfig
from solace.facts import FACT_KIND, FactVaultError


def config(*, enabled: bool = True) -> Config:
    return Config(models=ModelsConfig(embedder="hashing", llm_backend="none"),
                  substrate=SubstrateConfig(fsync="never"), facts=FactsConfig(enabled=enabled))


def _lines(caplog: pytest.LogCaptureFixture, needle: str) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.levelno >= logging.INFO and needle in r.getMessage()]


async def test_with_memory_off_a_chat_with_a_memory_id_proceeds_writes_nothing_logged_once(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    async with open_runtime(tmp_path, config(enabled=False), clock=TrioClock()) as rt:
        assert rt.facts is None
        app = Solace(rt)
        first = await app.chat("I moved to Lisbon last month.", memory="ana")
        second = await app.chat("I bought a red bike.", memory="not a valid id!",
                                memory_store="nowhere")
        assert first.text and second.text
        assert await rt.substrate.scan(kind=FACT_KIND) == []
        assert rt.agent("Main").last_recall is None
        assert rt.session.last_stack is not None and rt.session.last_stack.recall == ""
        assert rt.fact_tools.failures["off"] == 2  # counted, not logged per turn
    assert len(_lines(caplog, "without memory")) == 1  # one line, at open
    assert len(_lines(caplog, "switched off")) == 1


async def test_a_fact_memory_that_cannot_open_leaves_the_runtime_running_without_it(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    caplog.set_level(logging.INFO)

    async def broken(**kwargs: Any) -> Any:
        raise FactVaultError("the vault under facts/ cannot be read")

    monkeypatch.setattr(solace.facts, "open_fact_memory", broken)
    async with open_runtime(tmp_path, config(), clock=TrioClock()) as rt:
        assert rt.facts is None
        assert (await Solace(rt).chat("I moved to Lisbon.", memory="ana")).text
        assert (await Solace(rt).chat("I bought a bike.", memory="ana")).text
    (line,) = _lines(caplog, "fact memory")  # one line in all
    assert "could not be opened" in line and "FactVaultError" in line
    assert "cannot be read" in line


async def test_a_fact_store_that_raises_during_turns_never_fails_them(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    async with open_runtime(tmp_path, config(), clock=TrioClock()) as rt:
        assert rt.facts is not None

        async def fails(*args: Any, **kwargs: Any) -> Any:
            raise OSError(28, "No space left on device")

        rt.facts.recall = fails  # type: ignore[method-assign]
        rt.facts.extract_turn = fails  # type: ignore[method-assign]
        app = Solace(rt)
        replies = [await app.chat(line, memory="ana")
                   for line in ("I moved to Lisbon last month.", "I bought a red bike.",
                                "What did I buy?")]
        assert all(r.text for r in replies)
        main = rt.agent("Main")
        assert main.answered == 3 and main.failed_turns == 0
        failures = main.stats()["fact_failures"]
        assert failures == {"recall": 3, "extract": 2} or failures == {"recall": 3, "extract": 3}
    assert len(_lines(caplog, "recall failed")) == 1
    assert len(_lines(caplog, "extract failed")) == 1
