"""The conversation layer's errors: few, flat, each raised for one reason."""

from __future__ import annotations

__all__ = [
    "ConversationError",
    "CurationRejected",
    "InvalidArgumentError",
    "ProjectionError",
    "UnknownFactError",
    "UnknownSessionError",
    "UnknownTopicError",
]


class ConversationError(Exception):
    """Base of every error this layer raises on purpose."""


class UnknownSessionError(ConversationError, KeyError):
    """Raised for a session id that no event created; the message names it."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class UnknownTopicError(ConversationError, KeyError):
    """Raised for a topic id that no event created (or of another scope or session)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class UnknownFactError(ConversationError, KeyError):
    """Raised by ``$unset`` or ``read`` of a durable fact key that is not set."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class InvalidArgumentError(ConversationError, ValueError):
    """Raised for a bad argument to a tool, a fact, a note or a curation call."""


class CurationRejected(ConversationError, ValueError):
    """Raised when the agent's curation move is refused by the user-decision guard
    (or the agent tried what is the user's alone); the message is the seed's."""


class ProjectionError(ConversationError, ValueError):
    """Raised when an event of this layer contradicts the projection (an unknown
    session or topic, a malformed payload): the log and the code disagree."""
