"""The runtime's side of the workspace (seed 003, issue 10): one guarded link.

The runtime opens the home's :class:`~solace.workspace.Workspace` after fact memory
(:func:`open_workspace_or_none`) and reaches it only through one
:class:`WorkspaceLink`: each batch of events the conversation layer appends
(:meth:`WorkspaceLink.events`), every batch fact memory appends (writes, deletes,
forgets: the same call, as ``FactMemory.on_appended``), the
Time actor's heartbeat (:meth:`WorkspaceLink.heartbeat`: NOW.md each cycle,
MEMORY.md and the roll-ups every ``synthesize_every_hours``), a session's start and
``/reload`` (:meth:`WorkspaceLink.session_context`), and an import's batches
(:meth:`WorkspaceLink.after_import`: a heartbeat each replayed day).

Guarantees: the workspace never fails the runtime. Switched off (``[workspace]
enabled = false``) or failing to open, the link is inert and Main's hard-coded
system prompt is used; a call that raises is logged once per operation (later
failures are counted in :attr:`WorkspaceLink.failures`), and the substrate keeps
every event, so the next open renders what was missed.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from datetime import date
from typing import TYPE_CHECKING, Any

from solace.clock import Clock, WallClock
from solace.config import Config
from solace.home import Home

if TYPE_CHECKING:
    from solace.assembly import Models
    from solace.workspace import SessionContext, Workspace

__all__ = ["WorkspaceLink", "check_session_type", "following_workspace",
           "open_workspace_or_none"]

log = logging.getLogger(__name__)


class SessionTypeError(ValueError):
    """A session type that is unknown, or wider than the process serves."""


def check_session_type(session_type: object) -> str:
    """``session_type`` if it is ``main`` or ``shared``.

    Raises:
        SessionTypeError: naming the bad value.
    """
    from solace.workspace import SESSION_TYPES

    if session_type not in SESSION_TYPES:
        raise SessionTypeError(
            f"session_type must be 'main' or 'shared', got {session_type!r}")
    return str(session_type)


def check_turn_type(turn_type: object, served: str) -> str | None:
    """The session type a turn asks for (None: the process's own, ``served``).

    A turn may narrow what it sees (``shared`` in a process serving ``main``), never
    widen it: a process serving shared sessions never loads the user's private memory.

    Raises:
        SessionTypeError: an unknown type, or ``main`` asked of a shared process.
    """
    if turn_type is None:
        return None
    checked = check_session_type(turn_type)
    if checked == "main" and served == "shared":
        raise SessionTypeError("session_type 'main' refused: this process serves shared "
                               "sessions, and a turn may narrow what it sees, never widen it")
    return checked


async def open_workspace_or_none(home: Home, config: Config, models: Models, substrate: Any,
                                 clock: Clock, facts: Any, *,
                                 replayed: bool = True) -> Workspace | None:
    """The home's workspace on the runtime's substrate, models and fact memory, or None:
    when ``[workspace] enabled = false`` (logged at INFO) or when it cannot be opened
    (logged once at ERROR; the runtime runs on without it). ``replayed`` as
    :meth:`~solace.workspace.Workspace.open`'s."""
    from solace.workspace import Workspace, WorkspaceDisabledError

    try:
        return await Workspace.open(
            home.root, config, substrate, clock, facts=facts, embedder=models.embedder,
            tokenizer=models.tokenizer, offloader=models.offloader,
            llm=None if config.models.llm_backend == "none" else models.llm,
            guard=models.guard, replayed=replayed, snapshot=home.workspace_snapshot)
    except WorkspaceDisabledError:
        log.info("the workspace is switched off ([workspace] enabled = false): Main uses "
                 "its built-in system prompt")
    except Exception as exc:  # the workspace must never stop the runtime
        log.error("the workspace could not be opened (%s: %s); running without it",
                  type(exc).__name__, exc)
    return None


#: The ``solace memory`` actions that change fact memory (the workspace follows them).
CHANGING_ACTIONS = frozenset({"remember", "import", "delete", "forget", "consolidate"})


@asynccontextmanager
async def following_workspace(home: Home, substrate: Any, facts: Any, *, action: str,
                              embedder: Any, tokenizer: Any, offloader: Any
                              ) -> AsyncIterator[None]:
    """For a command that changes fact memory without a runtime (``solace memory
    delete`` ...): when ``action`` is one of :data:`CHANGING_ACTIONS` and the home has
    a workspace, open it before the block and catch it up after, so a deleted fact
    leaves every workspace file (daily logs, roll-ups, MEMORY.md) at once, and a
    remembered one reaches its day's log. A home without a workspace gets none; a
    failure is logged, never raised (the next runtime open renders the logs again)."""
    from solace.workspace import Workspace

    ws = None
    if action in CHANGING_ACTIONS and home.config.workspace.enabled \
            and home.workspace_dir.is_dir():
        try:
            ws = await Workspace.open(home.root, home.config, substrate, WallClock(), facts=facts,
                                      embedder=embedder, tokenizer=tokenizer,
                                      offloader=offloader, render_all=False)
        except Exception as exc:
            log.error("the workspace could not be opened (%s: %s); it catches up at the "
                      "next open", type(exc).__name__, exc)
    try:
        yield
    finally:  # a forget cut short has deleted some facts already
        if ws is not None:
            try:
                await ws.catch_up()
            except Exception as exc:
                log.error("the workspace could not catch up (%s: %s); it does at the next "
                          "open", type(exc).__name__, exc)


class WorkspaceLink:
    """Every call the runtime makes into the workspace, each guarded (see the module).

    Args:
        workspace: returns the runtime's workspace, or None while it is off.
        clock: the runtime's clock (an import's heartbeats follow its replayed days).

    Attributes:
        failures: failed calls by operation (``events``, ``heartbeat``,
            ``session``).
        beats: heartbeats run (the Time actor's and an import's).
    """

    def __init__(self, workspace: Callable[[], Workspace | None], clock: Clock) -> None:
        self._workspace = workspace
        self._clock = clock
        self._import_day: date | None = None
        self.failures: Counter[str] = Counter()
        self.beats = 0
        self._logged: set[str] = set()

    @property
    def workspace(self) -> Workspace | None:
        """The workspace, or None while it is off."""
        return self._workspace()

    async def events(self, events: Iterable[Any]) -> None:
        """Fold a batch of appended substrate events into the workspace (a repeat and a
        kind it does not read are ignored)."""
        ws = self.workspace
        if ws is None:
            return
        try:
            await ws.on_events(list(events))
        except Exception as exc:
            self._failed("events", exc)

    async def heartbeat(self) -> bool:
        """One workspace cycle: catch up, rewrite NOW.md (from the substrate: the active
        topic, open notes and tasks, the last decisions) and, when due, synthesise
        MEMORY.md and the roll-ups. Returns True if it synthesised."""
        ws = self.workspace
        if ws is None:
            return False
        try:
            synthesised = await ws.heartbeat()
        except Exception as exc:
            self._failed("heartbeat", exc)
            return False
        self.beats += 1
        return synthesised

    async def session_context(self, session_type: str) -> SessionContext | None:
        """What a session of ``session_type`` loads: human edits recorded first
        (``reload``), then :meth:`Workspace.session_context`. None while off or failing."""
        ws = self.workspace
        if ws is None:
            return None
        try:
            await ws.reload()
            return await ws.session_context(None, session_type)
        except Exception as exc:
            self._failed("session", exc)
            return None

    async def after_import(self, *, final: bool = False) -> None:
        """After an imported batch: when the replay clock has entered a new day (in the
        workspace's time zone), or its first batch, or with ``final`` its end, run one
        heartbeat (catch up, NOW.md, MEMORY.md and the roll-ups when
        ``synthesize_every_hours`` of replayed time have passed). Within one replayed
        day the Time actor's beats would only rewrite NOW.md, so they are folded into
        the next: each day's log is rendered once, not once a batch, and syntheses
        still follow the replayed dates."""
        ws = self.workspace
        if ws is None:
            return
        day = ws.ledger.day_of(self._clock.now())
        if final or self._import_day is None or day != self._import_day:
            self._import_day = day
            await self.heartbeat()
    def _failed(self, what: str, exc: Exception) -> None:
        self.failures[what] += 1
        if what in self._logged:
            log.debug("workspace: %s failed again (%s)", what, exc)
            return
        self._logged.add(what)
        log.error("workspace: %s failed (%s: %s); the runtime goes on (later failures are "
                  "counted, not logged)", what, type(exc).__name__, exc)
