"""remember / recall are tools of every actor (seed 004): in Main's tool list and
dispatched like seed 000's tools (call and result in the thread); an actor's remember
is classified like any write, attributed to it, under the turn's memory id; the
result names the class and the reason; with memory off the tools say so."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import trio

from solace import TrioClock, open_runtime
from solace.actors.fact_tools import FACTS_OFF
from solace.app import Solace
from solace.config import Config, ModelsConfig, SubstrateConfig
from solace.config.schema import FactsConfig
from solace.facts import FACT_KIND


def config(*, enabled: bool = True) -> Config:
    return Config(models=ModelsConfig(embedder="hashing", llm_backend="none"),
                  substrate=SubstrateConfig(fsync="never"), facts=FactsConfig(enabled=enabled))


class ScriptedLLM:
    """A capable model whose replies are given in advance (tool calls among them)."""

    name = "scripted"

    def __init__(self, replies: list[str]) -> None:
        self.replies = replies
        self.prompts: list[Sequence[Any]] = []

    def complete(self, messages: Sequence[Any], *, max_tokens: int = 256,
                 temperature: float = 0.0) -> str:
        self.prompts.append(messages)
        return self.replies.pop(0)

    def complete_json(self, messages: Sequence[Any], schema: Any, *,
                      max_tokens: int = 512) -> dict[str, Any]:
        raise NotImplementedError


def call(tool: str, **arguments: Any) -> str:
    return json.dumps({"tool": tool, "arguments": arguments})


async def test_mains_remember_and_recall_tool_calls_are_dispatched_and_classified(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with open_runtime(tmp_path, config(), clock=TrioClock()) as rt:
        app = Solace(rt)
        main = rt.agent("Main")
        main.compact_prompt = False
        main.llm = ScriptedLLM([
            call("remember", text="The user lives in Lisbon.", importance=0.9),
            call("remember", text="The user lives in Porto."),
            call("recall", query="Where does the user live?", k=3),
        ])
        first = json.loads((await app.chat("Hello there", memory="ada")).text)
        assert first["ok"] and first["class"] == "ADD" and first["memory_id"] == "ada"
        await trio.sleep(60)  # the next turn is later (one instant would be a CONFLICT)
        second = json.loads((await app.chat("Anything new?", memory="ada")).text)
        old_id = first["fact_id"]
        assert second["class"] == "UPDATE"
        assert second["result"] == f"UPDATE: {second['reason']}"
        assert second["reason"].startswith(f"newer value for {old_id}")
        found = json.loads((await app.chat("What do you know?", memory="ada")).text)
        assert [f["text"] for f in found["facts"]] == ["The user lives in Porto."]
        (live,) = [f for f in app.memory_facts("ada") if f.source == "remember"]
        assert live.text == "The user lives in Porto."
        stable = rt.session.last_stack.stable
        assert "- remember: " in stable and "- recall: " in stable  # in Main's tool list
        session = await rt.session.session()
        conv = rt.conversations
        items = [i for t in conv.topics(session) for i in conv.thread(t.topic_id)]
        calls = [i for i in items if i.kind == "tool_call"]
        results = [i for i in items if i.kind == "tool_result"]
        assert len(calls) == len(results) == 3  # recorded like seed 000's tools


async def test_an_actors_remember_is_classified_under_the_turns_memory_id(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with open_runtime(tmp_path, config(), clock=TrioClock()) as rt:
        app = Solace(rt)
        await app.chat("Good morning", memory="proj-7")
        mood = rt.agent("Mood")
        first = await mood.remember("The team prefers standups at 9am.", importance=0.8)
        again = await mood.remember("The team prefers standups at 9am.")
        assert first["class"] == "ADD" and first["memory_id"] == "proj-7"
        assert again["class"] == "NOOP" and again["result"].startswith("NOOP: restates")
        assert again["fact_id"] == first["fact_id"]
        written = [e for e in await rt.substrate.scan(kind=FACT_KIND)
                   if e.attrs.get("fact_id") == first["fact_id"]]
        assert written and all(e.agent == "Mood" for e in written)
        found = await rt.agent("Time").recall_facts("When are standups?")
        assert found["ok"] and found["memory_id"] == "proj-7"
        assert [f["id"] for f in found["facts"]] == [first["fact_id"]]
        refused = await mood.remember("   ")
        assert refused["ok"] is False and "remember" in refused["error"]


async def test_with_memory_off_the_tools_answer_that_memory_is_off(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with open_runtime(tmp_path, config(enabled=False), clock=TrioClock()) as rt:
        assert rt.facts is None
        assert await rt.agent("Mood").remember("The user likes tea.") == {
            "ok": False, "error": FACTS_OFF}
        assert (await rt.agent("Supervisor").recall_facts("tea"))["error"] == FACTS_OFF
        main = rt.agent("Main")
        main.compact_prompt = False
        main.llm = ScriptedLLM([call("remember", text="The user likes tea.")])
        said = await Solace(rt).chat("I like tea.", memory="ada")
        assert json.loads(said.text) == {"ok": False, "error": FACTS_OFF}
        assert await rt.substrate.scan(kind=FACT_KIND) == []
