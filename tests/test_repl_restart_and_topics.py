"""The REPL continues the scope's session across restarts (no empty topic, exactly one
active topic), lists topics with their summaries, and shows the user's standing
decision only while it holds."""

from __future__ import annotations

import io
from pathlib import Path

import trio
import trio.testing

from solace import TrioClock, open_runtime
from solace.config import Config, ModelsConfig, SubstrateConfig
from solace.conversation.model import DEFAULT_SCOPE
from solace.surfaces.repl import Repl


def config() -> Config:
    return Config(
        models=ModelsConfig(embedder="hashing", llm_backend="none"),
        substrate=SubstrateConfig(fsync="never"),
    )


async def _session(home: Path, lines: list[str]) -> list[str | None]:
    async with open_runtime(home, config(), clock=TrioClock()) as rt:
        repl = Repl(rt, io.StringIO())
        await repl.start()
        replies = [await repl.handle(line) for line in lines]
        repl.trigger("quit")
        await repl.finish()  # what `solace run` does on /quit
        return replies


async def test_repl_restarts_continue_one_session_with_exactly_one_active_topic(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    await _session(tmp_path, ["My dog's name is Rex.", "He likes the beach."])
    await _session(tmp_path, ["/topics"])
    (listing,) = await _session(tmp_path, ["/topics"])
    assert listing is not None
    lines = [ln for ln in listing.splitlines() if not ln.startswith("        ")]
    assert len(lines) == 1 and lines[0].startswith("* ")  # one topic, and it is active
    assert "untitled" not in listing
    async with open_runtime(tmp_path, config(), clock=TrioClock()) as rt:
        conv = rt.conversations
        assert len(conv.sessions(DEFAULT_SCOPE)) == 1
        assert [t.message_count for t in conv.topics_of(DEFAULT_SCOPE)] == [4]


async def test_repl_topics_show_summaries_and_the_user_decision_only_while_it_holds(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with open_runtime(tmp_path, config(), clock=TrioClock()) as rt:
        repl = Repl(rt, io.StringIO())
        await repl.start()
        for line in ["I'm planning a trip to Lisbon in June.", "I prefer window seats.",
                     "Book the TAP flight for June 3."]:
            await repl.handle(line)
        first = rt.conversations.session(repl.session_id).active_topic_id
        assert await repl.handle("/newtopic Taxes") is not None  # summarises the trip topic
        listing = await repl.handle("/topics")
        assert listing is not None
        trip_line, summary_line = listing.splitlines()[:2]
        assert trip_line.startswith(f"  {first}") and "Lisbon" in trip_line
        assert summary_line.startswith("        ") and "window seats" in summary_line
        assert (await repl.handle("/topics")).splitlines()[-1].startswith("* ")
        await repl.handle(f"/deprecate {first}")
        assert "[you: deprecated]" in (await repl.handle("/topics") or "")
        await repl.handle(f"/undeprecate {first}")
        after = await repl.handle("/topics") or ""
        assert "[you:" not in after and "user-set" not in after and "DEPRECATED" not in after
        await repl.handle(f"/promote {first}")
        assert "[you: kept]" in (await repl.handle("/topics") or "")


async def test_without_a_model_a_question_about_the_user_is_still_answered_from_memory(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    replies = await _session(tmp_path, ["My dog is called Rex.", "What is my dog called?",
                                        "/facts get dog_name"])
    assert replies[1] == "Solace: From memory: dog name: Rex."
    assert replies[2] == "dog_name: Rex"
    (after_restart,) = await _session(tmp_path, ["What's my dog's name?"])
    assert after_restart is not None and "Rex" in after_restart
