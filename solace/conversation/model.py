"""Sessions, topics, thread items, notes and durable facts: the conversation's nouns.

Every object here is frozen. The projection (:mod:`solace.conversation.projection`)
owns the current version of each and replaces it when an event changes it, so a
caller holding a :class:`Topic` holds a consistent snapshot that nothing mutates
under it.

Words follow the seed: a *session* holds many *topics*, exactly one *active*; a topic
owns its thread, its summary and its memory flags (``keep_in_memory``,
``deprecated`` and the two ``*_manually_set`` guards).
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "DEFAULT_SCOPE",
    "EXIT_TRIGGERS",
    "MIN_MEMORY_TURNS",
    "CurationState",
    "Fact",
    "ItemKind",
    "Notes",
    "Role",
    "Scope",
    "Session",
    "SummaryMode",
    "ThreadItem",
    "Topic",
    "Trigger",
]

#: Topics with fewer than this many messages are forced to keepInMemory: false
#: regardless of the LLM's include_in_memory response. Short conversations are either
#: trivial or important enough that key facts would already be in important_info.
MIN_MEMORY_TURNS = 5

Role = Literal["user", "assistant", "system"]
ItemKind = Literal["message", "tool_call", "tool_result"]
SummaryMode = Literal["llm", "deterministic", "fallback"]
#: What started an evaluation (see :mod:`solace.conversation.lifecycle`).
Trigger = Literal[
    "interval", "topic_creation", "navigation", "visibility_hidden", "disconnect", "manual",
    "quit", "interrupt", "end_of_input", "idle",
]
#: The exit triggers, routed through one trailing-edge debounce: the seed's web ones
#: (page navigation, tab hidden, socket disconnect) and the REPL's (``/quit``, Ctrl-C
#: or SIGTERM, end of input, no input for a while).
EXIT_TRIGGERS: tuple[Trigger, ...] = (
    "navigation", "visibility_hidden", "disconnect", "quit", "interrupt", "end_of_input", "idle",
)

_SCOPE_PART = re.compile(r"[^\s:]+")


@dataclass(frozen=True, slots=True, order=True)
class Scope:
    """The (user, agent, org) triple that isolates memory, facts and topics.

    Parts are non-empty and contain no whitespace or ``:`` (the cache key joins them
    with ``:``, as the seed's ``agentId:userId:orgId``).
    """

    user: str
    agent: str
    org: str

    def __post_init__(self) -> None:
        for name in ("user", "agent", "org"):
            value = getattr(self, name)
            if not isinstance(value, str) or not _SCOPE_PART.fullmatch(value):
                raise ValueError(
                    f"scope {name} must be a non-empty string without spaces or ':', "
                    f"got {value!r}"
                )

    @property
    def key(self) -> str:
        """``agent:user:org``, the memory cache key."""
        return f"{self.agent}:{self.user}:{self.org}"


class CurationState(enum.Enum):
    """The tri-state of a topic: the seed's gray / teal / red brain toggle."""

    NOT_IN_MEMORY = "not-in-memory"
    PROMOTED = "promoted"
    DEPRECATED = "deprecated"


#: The scope of a single-user installation: ``solace run``'s REPL session and the
#: CLI's default ``--user/--agent/--org``.
DEFAULT_SCOPE = Scope("user", "Main", "local")


@dataclass(frozen=True, slots=True)
class ThreadItem:
    """One entry of a topic's thread: a message, a tool call or a tool result.

    ``entry_id`` is the substrate event it was recorded as; it never changes, even
    when a fork relocates the item to another topic.
    """

    entry_id: int
    ts: float
    kind: ItemKind
    role: Role
    content: str
    topic_id: str
    tool: str = ""
    call_id: str = ""
    ok: bool = True

    def render(self) -> str:
        """One line for prompts and summaries: ``role: text`` or the tool exchange."""
        if self.kind == "tool_call":
            return f"tool call {self.tool}({self.content})"
        if self.kind == "tool_result":
            status = "" if self.ok else " (error)"
            return f"tool result {self.tool}{status}: {self.content}"
        return f"{self.role}: {self.content}"


@dataclass(frozen=True, slots=True)
class Topic:
    """A coherent line of work within a session, with its own thread and flags.

    Attributes:
        items: entry ids of its thread, ascending (messages and tool traffic).
        message_count: user/assistant/system messages in ``items`` (tool traffic
            excluded); what ``MIN_MEMORY_TURNS`` and the drift interval count.
        summary_count: ``message_count`` when the summary was last generated
            (-1: never summarised).
        memory_since: entry id of the event that last made the topic visible in the
            memory block (promoted or deprecated); orders FIFO truncation.
        closed: summarised and left behind by a fork or a new topic.
    """

    topic_id: str
    session_id: str
    scope: Scope
    created: float
    origin: Literal["initial", "manual", "fork"] = "initial"
    parent: str = ""
    title: str = ""
    summary: str = ""
    summary_mode: SummaryMode | None = None
    summary_count: int = -1
    keep_in_memory: bool = False
    deprecated: bool = False
    keep_in_memory_manually_set: bool = False
    deprecated_manually_set: bool = False
    items: tuple[int, ...] = ()
    message_count: int = 0
    memory_since: int = 0
    closed: bool = False

    @property
    def state(self) -> CurationState:
        """Deprecation wins over promotion; otherwise ``keep_in_memory`` decides."""
        if self.deprecated:
            return CurationState.DEPRECATED
        return CurationState.PROMOTED if self.keep_in_memory else CurationState.NOT_IN_MEMORY

    @property
    def in_memory_block(self) -> bool:
        """True if the topic appears in the memory prefix (promoted or deprecated)."""
        return self.deprecated or self.keep_in_memory

    @property
    def label(self) -> str:
        """The title, or a placeholder naming the id while it has none."""
        return self.title or f"untitled topic {self.topic_id}"


@dataclass(frozen=True, slots=True)
class Session:
    """A conversation: its topics in creation order and the one that is active."""

    session_id: str
    scope: Scope
    created: float
    topic_ids: tuple[str, ...] = ()
    active_topic_id: str = ""


@dataclass(frozen=True, slots=True)
class Notes:
    """A topic's notes: the one active document and the archived ones, oldest first."""

    topic_id: str
    active: str = ""
    archived: tuple[str, ...] = ()
    version: int = 0  # bumps on every change; lets a summary tell which notes it read


@dataclass(frozen=True, slots=True)
class Fact:
    """One durable fact: a key, its value, and the event that last set it."""

    key: str
    value: str
    entry_id: int
    ts: float
