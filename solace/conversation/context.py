"""The context stack, assembled each turn in cache order.

1. Stable prefix (cached, never compacted): identity (SOUL), skills, tools list,
   persistent memory (promoted topic summaries across sessions, ``[DEPRECATED]``
   titles, then the fact-memory recall block of the turn, seeds 001 and 004),
   durable facts, drift result (the active topic and what it forked from).
2. Semi-stable prefix (fetched per turn): the workspace's daily logs (today and
   yesterday, loaded at session start within their budget, seed 003), notes of the
   current topic, summaries of this session's prior topics (capped at a token budget,
   oldest dropped first, so a long session cannot grow the stack).
3. Volatile suffix (changes every turn): the current topic's thread, trailing
   ``trailing_requests`` user requests at most, active tool results (those since the
   last user message), working memory from the agent's working tier.

Stable first maximises provider cache hits. Rendering is deterministic (sorted facts,
ordered topics, no timestamps), so a layer whose inputs did not change is
byte-identical to the last turn's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from solace.conversation.facts import render_facts
from solace.conversation.memory import MemoryBlock, fifo_fit
from solace.conversation.model import Fact, Notes, ThreadItem, Topic
from solace.conversation.tools import ToolSpec
from solace.models.llm import ChatMessage
from solace.models.tokenizer import Tokenizer

__all__ = [
    "THREAD_RESULT_CHARS",
    "ContextStack",
    "assemble",
    "fifo_fit",
    "prior_entry",
    "trailing_window",
]

#: Tool results in the thread are shown cut to this many characters; the active ones
#: (since the last user message) are shown in full in their own section.
THREAD_RESULT_CHARS = 200


@dataclass(frozen=True, slots=True)
class ContextStack:
    """One turn's context, layer by layer.

    Attributes:
        stable: the stable prefix.
        semi_stable: the semi-stable prefix ('' if empty).
        volatile: the volatile suffix.
        thread: the trailing window of the current topic's thread.
        memory: the memory block used (for inspection: shown and dropped topics).
        recall: the fact-memory recall block placed in the memory section ('' if none).
        recall_tokens: its token count (as fact memory counted it).
    """

    stable: str
    semi_stable: str
    volatile: str
    thread: tuple[ThreadItem, ...]
    memory: MemoryBlock
    active_results: tuple[ThreadItem, ...] = ()
    working_memory: str = ""
    recall: str = ""
    recall_tokens: int = 0

    @property
    def text(self) -> str:
        """The whole stack as one prompt text, layers in cache order."""
        return "\n\n".join(part for part in (self.stable, self.semi_stable, self.volatile) if part)

    def tokens(self, tokenizer: Tokenizer) -> dict[str, int]:
        """Token counts per layer and in total (the runtime's one counter)."""
        layers = [self.stable, self.semi_stable, self.volatile]
        stable, semi, volatile = tokenizer.count_many(layers)
        return {
            "stable": stable,
            "semi_stable": semi,
            "volatile": volatile,
            "total": stable + semi + volatile,
        }

    def messages(self) -> list[ChatMessage]:
        """The stack as chat messages: the prefixes as system messages, then the
        thread (tool traffic as assistant lines), then the volatile extras."""
        out: list[ChatMessage] = [{"role": "system", "content": self.stable}]
        if self.semi_stable:
            out.append({"role": "system", "content": self.semi_stable})
        for item in self.thread:
            if item.kind == "message":
                out.append({"role": item.role, "content": item.content})
            else:
                out.append({"role": "assistant", "content": _thread_line(item)})
        extras = _join(
            _section("Active tool results", "\n".join(i.render() for i in self.active_results)),
            _section("Working memory", self.working_memory.strip()),
        )
        if extras:
            out.append({"role": "system", "content": extras})
        return out


def trailing_window(items: Sequence[ThreadItem], requests: int) -> tuple[ThreadItem, ...]:
    """The items from the ``requests``-th last user message on (all if fewer)."""
    seen = 0
    for index in range(len(items) - 1, -1, -1):
        item = items[index]
        if item.kind == "message" and item.role == "user":
            seen += 1
            if seen == requests:
                return tuple(items[index:])
    return tuple(items)


def _thread_line(item: ThreadItem) -> str:
    line = item.render()
    if item.kind == "tool_result" and len(line) > THREAD_RESULT_CHARS:
        line = line[:THREAD_RESULT_CHARS] + "…"
    return line


def prior_entry(topic: Topic) -> str:
    """One line of the prior-topics block: ``- <title>: <summary>``."""
    return f"- {topic.label}: {' '.join(topic.summary.split())}"


def _section(title: str, body: str) -> str:
    return f"# {title}\n{body}" if body else ""


def _join(*sections: str) -> str:
    return "\n\n".join(s for s in sections if s)


def _drift_line(active: Topic, parent: Topic | None) -> str:
    line = f"Active topic: {active.label}"
    if active.origin == "fork" and parent is not None:
        line += f" (the conversation moved on from: {parent.label})"
    return line


def assemble(
    *,
    identity: str,
    skills: Sequence[str],
    tools: Sequence[ToolSpec],
    memory: MemoryBlock,
    facts: Mapping[str, Fact],
    active: Topic,
    parent: Topic | None,
    notes: Notes,
    prior: Sequence[Topic],
    thread: Sequence[ThreadItem],
    trailing_requests: int,
    working_memory: str,
    recall: str = "",
    recall_tokens: int = 0,
    daily: str = "",
) -> ContextStack:
    """Assemble one turn's stack from its parts (pure: same parts, same bytes).

    Args:
        identity: the SOUL / identity text.
        skills: skill descriptions, in the caller's order.
        tools: the tools the agent may call (built-in first).
        memory: the scope's memory block (from the memory cache).
        facts: the scope's durable facts.
        active: the session's active topic.
        parent: the topic ``active`` forked from, if any.
        notes: the active topic's notes.
        prior: this session's earlier topics to list by summary, oldest first (the
            caller has already fitted them to their budget, see :func:`fifo_fit`).
        thread: the active topic's full thread.
        trailing_requests: how many user requests the volatile layer keeps.
        working_memory: text from the agent's working tier ('' if none).
        recall: the turn's fact-memory recall block (``RecallBlock.text``), placed in
            the memory section after the promoted topics: persistent memory, seed 000's
            place for it. '' leaves the stack byte-identical to one without it.
        recall_tokens: its token count, carried on the stack.
        daily: the workspace's recent daily logs (``SessionContext.semi_stable``),
            first in the semi-stable layer. '' leaves the stack as without it. A
            shared session passes ``facts={}`` and no ``recall``: neither is loaded.
    """
    stable = _join(
        _section("Identity", identity.strip()),
        _section("Skills", "\n".join(f"- {s.strip()}" for s in skills if s.strip())),
        _section("Tools", "\n".join(f"- {t.name}: {t.description}" for t in tools)),
        _section("Memory", _join(memory.text, recall.strip())),
        _section("Durable facts", render_facts(facts)),
        _section("Topic", _drift_line(active, parent)),
    )
    prior_lines = "\n".join(prior_entry(t) for t in prior if t.summary)
    semi = _join(
        _section("Recent days", daily.strip()),
        _section("Notes for the current topic", notes.active),
        _section("Earlier topics in this session", prior_lines),
    )
    window = trailing_window(thread, trailing_requests)
    last_user = max(
        (i for i, it in enumerate(window) if it.kind == "message" and it.role == "user"),
        default=-1,
    )
    active_results = [it for it in window[last_user + 1 :] if it.kind == "tool_result"]
    volatile = _join(
        _section("Conversation", "\n".join(_thread_line(i) for i in window)),
        _section("Active tool results", "\n".join(i.render() for i in active_results)),
        _section("Working memory", working_memory.strip()),
    )
    return ContextStack(
        stable, semi, volatile, window, memory, tuple(active_results), working_memory,
        recall.strip(), recall_tokens if recall.strip() else 0,
    )
