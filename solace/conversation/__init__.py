"""The conversation layer (seed 000): sessions, topics, curation, facts, notes, context.

Sessions hold topics, exactly one active; topics hold their thread, summary and memory
flags; every change is an event in the substrate and the query side is a projection
rebuilt from it. The runtime opens it with :func:`open_conversations` and starts
:meth:`Conversations.run` in its nursery. Public names are re-exported here.
"""

from __future__ import annotations

from typing import Any

from solace.conversation.context import ContextStack as ContextStack
from solace.conversation.curation import DEPRECATED_MANUAL_MESSAGE as DEPRECATED_MANUAL_MESSAGE
from solace.conversation.curation import KEEP_MANUAL_MESSAGE as KEEP_MANUAL_MESSAGE
from solace.conversation.curation import UNDEPRECATE_MESSAGE as UNDEPRECATE_MESSAGE
from solace.conversation.drift import DriftResult as DriftResult
from solace.conversation.drift import DriftSettings as DriftSettings
from solace.conversation.drift import detect_drift as detect_drift
from solace.conversation.errors import ConversationError as ConversationError
from solace.conversation.errors import CurationRejected as CurationRejected
from solace.conversation.errors import InvalidArgumentError as InvalidArgumentError
from solace.conversation.errors import ProjectionError as ProjectionError
from solace.conversation.errors import UnknownFactError as UnknownFactError
from solace.conversation.errors import UnknownSessionError as UnknownSessionError
from solace.conversation.errors import UnknownTopicError as UnknownTopicError
from solace.conversation.evaluation import EvaluationReport as EvaluationReport
from solace.conversation.events import CONVERSATION_KINDS as CONVERSATION_KINDS
from solace.conversation.memory import MemoryBlock as MemoryBlock
from solace.conversation.model import DEFAULT_SCOPE as DEFAULT_SCOPE
from solace.conversation.model import EXIT_TRIGGERS as EXIT_TRIGGERS
from solace.conversation.model import MIN_MEMORY_TURNS as MIN_MEMORY_TURNS
from solace.conversation.model import CurationState as CurationState
from solace.conversation.model import Fact as Fact
from solace.conversation.model import Notes as Notes
from solace.conversation.model import Scope as Scope
from solace.conversation.model import Session as Session
from solace.conversation.model import ThreadItem as ThreadItem
from solace.conversation.model import Topic as Topic
from solace.conversation.model import Trigger as Trigger
from solace.conversation.projection import Projection as Projection
from solace.conversation.service import Conversations as Conversations
from solace.conversation.service import open_conversations as open_conversations
from solace.conversation.summarise import SUMMARY_PROMPT as SUMMARY_PROMPT
from solace.conversation.summarise import Summariser as Summariser
from solace.conversation.summarise import SummaryResult as SummaryResult
from solace.conversation.tools import BUILTIN_TOOLS as BUILTIN_TOOLS
from solace.conversation.tools import ToolOutcome as ToolOutcome
from solace.conversation.tools import ToolSpec as ToolSpec


def __getattr__(name: str) -> Any:
    """``REPL_COMMANDS`` and ``handle_repl_line`` live in :mod:`solace.surfaces.repl`
    (which imports this package); they are still found here, imported on first use."""
    if name in ("REPL_COMMANDS", "handle_repl_line"):
        from solace.surfaces import repl

        return getattr(repl, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "BUILTIN_TOOLS",
    "CONVERSATION_KINDS",
    "DEFAULT_SCOPE",
    "DEPRECATED_MANUAL_MESSAGE",
    "EXIT_TRIGGERS",
    "KEEP_MANUAL_MESSAGE",
    "MIN_MEMORY_TURNS",
    "REPL_COMMANDS",
    "SUMMARY_PROMPT",
    "UNDEPRECATE_MESSAGE",
    "ContextStack",
    "ConversationError",
    "Conversations",
    "CurationRejected",
    "CurationState",
    "DriftResult",
    "DriftSettings",
    "EvaluationReport",
    "Fact",
    "InvalidArgumentError",
    "MemoryBlock",
    "Notes",
    "Projection",
    "ProjectionError",
    "Scope",
    "Session",
    "Summariser",
    "SummaryResult",
    "ThreadItem",
    "ToolOutcome",
    "ToolSpec",
    "Topic",
    "Trigger",
    "UnknownFactError",
    "UnknownSessionError",
    "UnknownTopicError",
    "detect_drift",
    "handle_repl_line",
    "open_conversations",
]
