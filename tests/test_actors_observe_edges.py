"""An actor's observe passes the caller's speaker and tags as given: an empty speaker
is refused (not turned into the actor's name), a bare string is not a list of tags,
and a public caller cannot write an actor's private draft."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from solace import TrioClock, open_runtime
from solace.config import Config, ModelsConfig, SubstrateConfig
from solace.validation import InvalidObservationError


def config() -> Config:
    return Config(models=ModelsConfig(embedder="hashing", llm_backend="none"),
                  substrate=SubstrateConfig(fsync="never"))


async def test_empty_speaker_through_an_actor_is_refused_not_renamed(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with open_runtime(tmp_path, config(), clock=TrioClock()) as rt:
        with pytest.raises(InvalidObservationError, match="speaker"):
            await rt.agent("Main").observe("hello", speaker="")
        assert rt.substrate.last_id == 0


async def test_a_string_of_tags_is_refused_not_split_into_letters(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with open_runtime(tmp_path, config(), clock=TrioClock()) as rt:
        with pytest.raises(TypeError, match="family"):
            await rt.agent("Main").observe("hello", speaker="Ana", tags="family")
        assert rt.substrate.last_id == 0


async def test_a_public_draft_is_refused_but_mains_own_drafts_are_written(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with open_runtime(tmp_path, config(), clock=TrioClock()) as rt:
        with pytest.raises(InvalidObservationError, match="kind"):
            await rt.agent("Main").observe("a private thought", kind="draft")
        await rt.ask("hello there")
        assert len(await rt.substrate.scan(kind="draft")) == 1


async def test_a_chat_line_the_substrate_cannot_carry_is_refused_and_chat_goes_on(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with open_runtime(tmp_path, config(), clock=TrioClock()) as rt:
        with pytest.raises(InvalidObservationError, match="text"):
            await rt.ask("bell \x13 here")
        with trio.fail_after(10**6):
            speech = await rt.ask("hello there")
        assert speech.text
