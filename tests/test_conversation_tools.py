"""The built-in tools are dispatched ahead of external ones, and tool calls and their
results are part of the topic's thread."""

from __future__ import annotations

import json
from pathlib import Path

import trio
import trio.testing

from solace.conversation import BUILTIN_TOOLS, Scope
from solace.conversation.testing import open_harness
from solace.models import validate

SCOPE = Scope("ada", "Main", "acme")


def test_builtin_tools_have_valid_schemas_and_openai_form() -> None:
    assert [t.name for t in BUILTIN_TOOLS] == ["notes", "important_info", "manage_topic_memory"]
    for tool in BUILTIN_TOOLS:
        entry = tool.as_openai()
        assert entry["function"]["name"] == tool.name
        validate({"operation": "read"} if tool.name != "manage_topic_memory"
                 else {"action": "promote"}, tool.parameters)


async def test_builtin_tools_are_dispatched_ahead_of_external_ones(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with open_harness(tmp_path / "sub") as h:
        s = await h.conv.open_session(SCOPE)
        assert await h.conv.dispatch_tool("web_search", {"q": "x"}, session=s.session_id) is None
        assert h.conv.thread(s.active_topic_id) == []  # not ours: nothing recorded
        outcome = await h.conv.dispatch_tool("notes", {"operation": "read"}, session=s.session_id)
        assert outcome is not None and outcome.ok


async def test_tool_calls_and_results_are_part_of_the_thread(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with open_harness(tmp_path / "sub") as h:
        s = await h.conv.open_session(SCOPE)
        sid = s.session_id
        await h.conv.add_message(sid, "user", "Remember that my timezone is CET.")
        outcome = await h.conv.dispatch_tool(
            "important_info", {"operation": "$set", "key": "timezone", "value": "CET"},
            session=sid,
        )
        assert outcome is not None
        call_id = await h.conv.record_tool_call(sid, "web_search", {"q": "CET offset"})
        await h.conv.record_tool_result(sid, call_id, "web_search", "UTC+1")
        thread = h.conv.thread(s.active_topic_id)
        assert [(i.kind, i.tool) for i in thread] == [
            ("message", ""), ("tool_call", "important_info"), ("tool_result", "important_info"),
            ("tool_call", "web_search"), ("tool_result", "web_search"),
        ]
        assert thread[1].call_id == thread[2].call_id == outcome.call_id
        assert json.loads(thread[2].content) == dict(outcome.result)
        assert json.loads(thread[1].content) == {"key": "timezone", "operation": "$set",
                                                 "value": "CET"}
        stack = await h.conv.build_context(sid)
        assert "tool result web_search: UTC+1" in stack.volatile.split("# Active tool results")[1]
        assert h.conv.topic(s.active_topic_id).message_count == 1  # tools are not messages


async def test_invalid_tool_arguments_come_back_as_results_naming_the_problem(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with open_harness(tmp_path / "sub") as h:
        s = await h.conv.open_session(SCOPE)
        cases: list[tuple[str, dict[str, object], str]] = [
            ("notes", {"operation": "delete"}, "'delete' is not one of"),
            ("notes", {"operation": "$set"}, "needs 'content'"),
            ("important_info", {"operation": "$set", "value": "x"}, "needs 'key'"),
            ("manage_topic_memory", {"action": "promote", "topic_id": "t99"}, "unknown topic"),
            ("notes", {"operation": "read", "extra": 1}, "not allowed"),
        ]
        for name, args, message in cases:
            outcome = await h.conv.dispatch_tool(name, args, session=s.session_id)
            assert outcome is not None and not outcome.ok
            assert message in outcome.result["error"]
            assert h.conv.thread(s.active_topic_id)[-1].ok is False
