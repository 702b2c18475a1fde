"""Which session a long-lived surface talks in: the scope's current one, continued.

A REPL restart is not a new conversation: reopening a session per process left an
empty "untitled topic" behind on every restart and one "active" topic per old
session. :func:`resume_session` continues the scope's newest session (its active
topic stays active) and opens one only for a scope that has none.
"""

from __future__ import annotations

from solace.conversation.model import Scope, Session
from solace.conversation.service import Conversations

__all__ = ["current_session", "resume_session"]


def current_session(conv: Conversations, scope: Scope) -> Session | None:
    """The scope's newest session (its active topic is the scope's one active topic)."""
    sessions = conv.sessions(scope)
    return sessions[-1] if sessions else None


async def resume_session(conv: Conversations, scope: Scope) -> Session:
    """The scope's newest session, or a new one if the scope has none.

    Idempotent: called again (another restart) it returns the same session and
    writes nothing.
    """
    session = current_session(conv, scope)
    if session is not None:
        return session
    return await conv.open_session(scope)
