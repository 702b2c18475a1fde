"""The one application API every surface calls (see :mod:`solace.app.api`)."""

from __future__ import annotations

from solace.app.api import AppError as AppError
from solace.app.api import ChatReply as ChatReply
from solace.app.api import FactView as FactView
from solace.app.api import Layers as Layers
from solace.app.api import NotFoundError as NotFoundError
from solace.app.api import RecallHit as RecallHit
from solace.app.api import Solace as Solace
from solace.app.api import TopicView as TopicView
from solace.app.api import UnknownAgentError as UnknownAgentError
from solace.app.memory import ImportResult as ImportResult
from solace.facts import FactsDisabledError as FactsDisabledError

__all__ = [
    "AppError",
    "ChatReply",
    "Layers",
    "FactView",
    "FactsDisabledError",
    "ImportResult",
    "NotFoundError",
    "RecallHit",
    "Solace",
    "TopicView",
    "UnknownAgentError",
]
