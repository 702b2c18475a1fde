"""The context stack: cache order, byte-identical stable prefix, FIFO truncation of the
memory block at its budget, memory cache invalidation, the trailing window."""

from __future__ import annotations

from pathlib import Path

import trio
import trio.testing

from solace.config import ConversationConfig
from solace.conversation import ContextStack, Conversations, Scope
from solace.conversation.context import trailing_window
from solace.conversation.model import ThreadItem
from solace.conversation.testing import open_harness
from solace.conversation.tools import ToolSpec
from solace.models import WordPieceTokenizer

SCOPE = Scope("ada", "Main", "acme")
CONFIG = ConversationConfig(drift_interval=100, drift_threshold=-1.0)
TOK = WordPieceTokenizer()


async def _closed_topics(conv: Conversations, sid: str, subjects: list[str]) -> list[str]:
    ids = []
    for subject in subjects:
        ids.append(conv.active_topic(sid).topic_id)
        for i in range(3):
            await conv.add_message(sid, "user", f"I prefer {subject} option {i}.")
            await conv.add_message(sid, "assistant", f"Noted {subject} {i}.")
        await conv.new_topic(sid)
    return ids


async def test_stack_layers_come_in_cache_order(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with open_harness(tmp_path / "sub", config=CONFIG,
                            working_memory=lambda: "Main is drafting a reply.") as h:
        conv = h.conv
        s = await conv.open_session(SCOPE)
        sid = s.session_id
        (old,) = await _closed_topics(conv, sid, ["trains"])
        await conv.curate(old, "demote")
        await conv.set_fact(SCOPE, "city", "Porto")
        await conv.add_message(sid, "user", "Search flights to Oslo.")
        await conv.dispatch_tool("notes", {"operation": "$set", "content": "Oslo in March."},
                                 session=sid)
        stack = await conv.build_context(
            sid, identity="You are Solace.", skills=["travel planning"],
            tools=[ToolSpec("web_search", "search the web")],
        )
        text = stack.text
        order = ["# Identity", "# Skills", "# Tools", "# Durable facts", "# Topic",
                 "# Notes for the current topic", "# Earlier topics in this session",
                 "# Conversation", "# Active tool results", "# Working memory"]
        positions = [text.index(header) for header in order]
        assert positions == sorted(positions)
        assert "# Memory" not in text  # nothing promoted: no empty section either
        assert "- notes:" in stack.stable and "- web_search: search the web" in stack.stable
        assert stack.stable.index("- notes:") < stack.stable.index("- web_search")
        assert "# Earlier topics" in stack.semi_stable and "# Conversation" in stack.volatile
        assert "Main is drafting a reply." in stack.volatile
        assert "tool result notes" in stack.volatile.split("# Active tool results")[1]
        messages = stack.messages()
        assert messages[0] == {"role": "system", "content": stack.stable}
        assert messages[2] == {"role": "user", "content": "Search flights to Oslo."}
        tokens = stack.tokens(TOK)
        assert tokens["total"] == tokens["stable"] + tokens["semi_stable"] + tokens["volatile"]


async def test_stable_prefix_byte_identical_across_turns_when_unchanged(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with open_harness(tmp_path / "sub", config=CONFIG) as h:
        conv = h.conv
        s = await conv.open_session(SCOPE)
        (old,) = await _closed_topics(conv, s.session_id, ["trains"])
        await conv.curate(old, "promote")
        await conv.set_fact(SCOPE, "city", "Porto")
        previous: ContextStack | None = None
        for turn in range(5):
            await conv.add_message(s.session_id, "user", f"turn {turn}")
            stack = await conv.build_context(s.session_id, identity="You are Solace.")
            if previous is not None:
                assert stack.stable.encode() == previous.stable.encode()
                assert stack.semi_stable == previous.semi_stable
                assert stack.volatile != previous.volatile
            previous = stack
        assert conv.stable_reused == 4
        await conv.set_fact(SCOPE, "city", "Lisbon")  # a change shows on the next turn
        stack = await conv.build_context(s.session_id, identity="You are Solace.")
        assert previous is not None and stack.stable != previous.stable
        assert "city: Lisbon" in stack.stable


async def test_memory_cache_invalidated_on_promote_and_demote(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async with open_harness(tmp_path / "sub", config=CONFIG) as h:
        conv = h.conv
        s = await conv.open_session(SCOPE)
        (tid,) = await _closed_topics(conv, s.session_id, ["trains"])
        await conv.curate(tid, "demote")
        title = conv.topic(tid).title
        cache = conv.memory_cache
        assert title not in (await conv.build_context(s.session_id)).stable
        await conv.build_context(s.session_id)
        assert (cache.misses, cache.hits) == (1, 1)
        await conv.curate(tid, "promote")
        assert cache.invalidations == 1
        assert f"- {title}:" in (await conv.build_context(s.session_id)).stable
        await conv.curate(tid, "demote")
        assert cache.invalidations == 2
        assert title not in (await conv.build_context(s.session_id)).stable
        assert cache.misses == 3


async def test_memory_block_fifo_truncation_at_token_budget(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    config = ConversationConfig(drift_interval=100, drift_threshold=-1.0,
                                memory_budget_tokens=60)
    async with open_harness(tmp_path / "sub", config=config) as h:
        conv = h.conv
        s = await conv.open_session(SCOPE)
        ids = await _closed_topics(conv, s.session_id, ["trains", "tea", "vim", "rust", "jazz"])
        for tid in ids:
            await conv.curate(tid, "promote")
        block = await conv.memory_block(SCOPE)
        assert block.tokens <= 60 < sum(TOK.count(conv.topic(t).summary) for t in ids)
        assert block.dropped and block.topic_ids
        assert block.dropped + block.topic_ids == tuple(ids)  # the oldest went first
        assert conv.topic(ids[-1]).summary in block.text
        assert conv.topic(ids[0]).summary not in block.text


def _item(n: int, role: str, kind: str = "message") -> ThreadItem:
    return ThreadItem(n, 0.0, kind, role, f"m{n}", "t1")  # type: ignore[arg-type]


def test_volatile_window_keeps_the_trailing_20_requests() -> None:
    assert ConversationConfig().trailing_requests == 20
    items = []
    for i in range(30):
        items += [_item(3 * i, "user"), _item(3 * i + 1, "assistant", "tool_call"),
                  _item(3 * i + 2, "assistant")]
    window = trailing_window(items, 20)
    assert sum(1 for it in window if it.role == "user") == 20
    assert window[0] == items[30] and window[-1] == items[-1]
    assert trailing_window(items[:9], 20) == tuple(items[:9])


async def test_prior_topic_summaries_are_capped_fifo_so_a_long_session_stays_bounded(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    config = ConversationConfig(drift_interval=100, drift_threshold=-1.0,
                                prior_topics_budget_tokens=50)
    async with open_harness(tmp_path / "sub", config=config) as h:
        conv = h.conv
        s = await conv.open_session(SCOPE)
        ids = await _closed_topics(conv, s.session_id, ["trains", "tea", "vim", "rust", "jazz"])
        for tid in ids:
            await conv.curate(tid, "demote")  # session-scoped only
        semi = (await conv.build_context(s.session_id)).semi_stable
        section = semi.split("# Earlier topics in this session\n", 1)[1]
        assert TOK.count(section) <= 50
        assert conv.topic(ids[-1]).summary in section
        assert conv.topic(ids[0]).summary not in section
