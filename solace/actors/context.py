"""What an actor may do outside itself: the narrow context the runtime hands it.

An actor never holds the runtime. It gets an :class:`ActorContext`: append an event
(``observe``, or ``observe_internal`` for its own private kinds), recall over the
tiers (``recall``), send a message to a peer's inbox
(``send``), hand speech to listeners (``publish``), read the clock and the config,
the time of the newest event not written by Time, and fact memory's ``remember``
and ``recall_facts`` tools (seed 004) under the turn's memory id. The runtime builds one per
process; tests can build one from plain functions. So the dependency runs one way:
the runtime imports the actors, never the reverse.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from solace.clock import Clock
from solace.config import Config
from solace.memory.record import Hit

if TYPE_CHECKING:
    from solace.actors.base import Message
    from solace.actors.mouth import Speech

__all__ = ["ActorContext", "Observe", "Recall", "RecallFacts", "Remember"]


class Observe(Protocol):
    """Append one event and deliver it to every agent that perceives it; its id."""

    def __call__(
        self,
        text: str,
        *,
        author: str,
        kind: str = ...,
        at: float | datetime | None = ...,
        attrs: Mapping[str, str] | None = ...,
        emotional_weight: float | None = ...,
        tags: tuple[str, ...] = ...,
    ) -> Awaitable[int]: ...


class Recall(Protocol):
    """The ``k`` best hits for ``query`` from agent ``asker``'s point of view."""

    def __call__(
        self,
        asker: str,
        query: str,
        k: int,
        *,
        read_through: bool | None = ...,
        tags: Sequence[str] = ...,
    ) -> Awaitable[list[Hit]]: ...


class Remember(Protocol):
    """Fact memory's ``remember`` for actor ``agent`` under the turn's memory id: the
    write is classified (ADD/UPDATE/NOOP/CONFLICT); the result says the class and
    the reason, or ``ok: false`` with why (``fact memory is off``)."""

    def __call__(self, agent: str, text: str,
                 importance: float | None = ...) -> Awaitable[dict[str, Any]]: ...


class RecallFacts(Protocol):
    """Fact memory's ``recall`` for actor ``agent`` under the turn's memory id."""

    def __call__(self, agent: str, query: str,
                 k: int | None = ...) -> Awaitable[dict[str, Any]]: ...


async def _facts_off(*_args: object, **_kwargs: object) -> dict[str, Any]:
    from solace.actors.fact_tools import FACTS_OFF

    return {"ok": False, "error": FACTS_OFF}


async def _no_workspace() -> bool:
    return False


def _never() -> bool:
    return False


@dataclass(frozen=True, slots=True)
class ActorContext:
    """Everything an actor may reach outside itself.

    Attributes:
        config: the runtime's config (read-only).
        clock: the runtime's clock.
        observe: append and deliver an event of a public kind (validated by the runtime).
        observe_internal: the same for the internal kinds an actor writes itself (a
            private ``draft``); every other check stands.
        recall: recall from an agent's point of view.
        send: put a message in a peer's inbox (``send("Mouth", draft)``); raises
            ``KeyError`` naming the known agents for an unknown peer.
        publish: hand a :class:`~solace.actors.mouth.Speech` to every listener.
        last_event_ts: the time of the newest event not written by Time (None before any).
        remember: fact memory's ``remember`` tool (default: answers "fact memory is off").
        recall_facts: fact memory's ``recall`` tool (same default).
        workspace_heartbeat: one workspace cycle (NOW.md; MEMORY.md and the roll-ups
            when due), run by Time on each beat; never raises (default: nothing).
        busy: whether the runtime is doing what an index keeper should not compete
            with: an observe under way (append to last delivery) or a fade step in
            any agent (default: never).
    """

    config: Config
    clock: Clock
    observe: Observe
    observe_internal: Observe
    recall: Recall
    send: Callable[[str, Message], Awaitable[None]]
    publish: Callable[[Speech], Awaitable[None]]
    last_event_ts: Callable[[], float | None]
    remember: Remember = _facts_off
    recall_facts: RecallFacts = _facts_off
    workspace_heartbeat: Callable[[], Awaitable[bool]] = _no_workspace
    busy: Callable[[], bool] = _never
