"""One replay of the substrate feeds every projection.

The substrate is the truth; every memory Solace keeps (each agent's tiers, the
conversation layer, fact memory, the markdown workspace) is a *projection* of it: a
view folded from the events it owns, in entry-id order. A :class:`Projection` says
which event kinds it reads and the entry id up to which it already holds everything
(its checkpoint: 0 for a projection rebuilt from nothing, a snapshot's covered id
otherwise), and folds one event at a time with :meth:`Projection.apply`;
:meth:`Projection.finish` does, once per replay, the work that is cheaper in bulk
(embedding, decrypting, rendering).

:func:`replay` opens any set of projections with **one** read of the log: from the
smallest checkpoint, only the union of their kinds, each kind from the oldest
checkpoint of the projections reading it (filtered on the substrate's index before
anything is decrypted), each event handed to every projection that reads its kind and
does not hold it yet. A restart whose projections load snapshots decrypts only the
tail after their checkpoints.

Guarantees: each projection sees exactly the events of its kinds with ids above its
checkpoint, up to the log's head at the time of the read, in ascending id order, each
once; ``finish`` runs after the last ``apply``, in the order the projections were
given (a projection that reads another's state in ``finish`` is listed after it).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from substrate import Event

__all__ = ["Batched", "Projection", "ProjectionSource", "ReplayReport", "replay"]

log = logging.getLogger(__name__)


class Projection(Protocol):
    """A view of the substrate rebuilt by folding its events (see the module doc)."""

    @property
    def name(self) -> str:
        """Names the projection in logs and in :attr:`ReplayReport.applied`."""
        ...

    @property
    def kinds(self) -> frozenset[str] | None:
        """The event kinds it reads (None: every kind)."""
        ...

    @property
    def checkpoint(self) -> int:
        """Every event it reads with an id up to this one is already folded in."""
        ...

    def apply(self, event: Event) -> None:
        """Fold ``event`` in (its kind is one of :attr:`kinds`, its id above
        :attr:`checkpoint` and above every event applied before it)."""
        ...

    async def finish(self, head: int) -> None:
        """Complete the replay: every event of its kinds up to ``head`` (the log's
        last id when it was read) has been applied."""
        ...


class Batched:
    """A :class:`Projection` that folds its events in one batch: ``apply`` keeps each
    event (those ``keep`` accepts, default all), ``finish`` hands them, in id order,
    with the head to ``fold`` (where decrypting, embedding or rendering them together
    is cheaper than one by one)."""

    def __init__(self, name: str, kinds: frozenset[str] | None, checkpoint: int,
                 fold: Callable[[list[Event], int], Awaitable[None]], *,
                 keep: Callable[[Event], bool] | None = None) -> None:
        self.name, self.kinds, self.checkpoint = name, kinds, int(checkpoint)
        self._fold, self._keep = fold, keep
        self._events: list[Event] = []

    def apply(self, event: Event) -> None:
        if self._keep is None or self._keep(event):
            self._events.append(event)

    async def finish(self, head: int) -> None:
        events, self._events = self._events, []
        await self._fold(events, head)


class ProjectionSource(Protocol):
    """What :func:`replay` reads of ``substrate.aio.TrioSubstrate``."""

    @property
    def last_id(self) -> int: ...

    async def scan(self, agent: str | None = None, kind: str | None = None,
                   since_id: int | None = None, until_ts: float | None = None, *,
                   kinds: Iterable[str] | Mapping[str, int] | None = None,
                   ) -> list[Event]: ...


@dataclass(slots=True)
class ReplayReport:
    """What one :func:`replay` did.

    Attributes:
        since: the smallest checkpoint: events after it were read.
        head: the log's last id when it was read.
        read: events read (and decrypted) from the substrate.
        applied: projection name -> events applied to it.
        failed: projection name -> the error that dropped it (optional ones only).
    """

    since: int
    head: int
    read: int = 0
    applied: dict[str, int] = field(default_factory=dict)
    failed: dict[str, Exception] = field(default_factory=dict)


async def replay(source: ProjectionSource, projections: Sequence[Projection], *,
                 optional: Collection[str] = ()) -> ReplayReport:
    """Bring every projection up to the log's head with one read of the substrate.

    Args:
        source: the substrate (the trio wrapper).
        projections: what to replay into; ``finish`` runs in this order.
        optional: names of projections whose failure must not stop the others (fact
            memory, the workspace): such a projection's error is logged, recorded in
            :attr:`ReplayReport.failed`, and it gets no further events. Any other
            projection's error propagates at once.

    Returns:
        A :class:`ReplayReport`.
    """
    marks = [int(p.checkpoint) for p in projections]
    since = min(marks, default=0)
    head = int(source.last_id)
    report = ReplayReport(since=since, head=head)
    live = list(zip(projections, marks, strict=True))
    if not live:
        return report
    events = await source.scan(since_id=since or None, kinds=_kinds_since(live))
    report.read = len(events)
    applied = dict.fromkeys((p.name for p in projections), 0)
    feeding = tuple(live)  # copied again only when a projection is dropped
    for event in events:
        eid, kind = event.entry_id, event.kind
        for projection, mark in feeding:
            reads = projection.kinds
            if eid <= mark or (reads is not None and kind not in reads):
                continue
            try:
                projection.apply(event)
            except Exception as exc:
                _drop(report, live, projection, mark, exc, optional, f"entry {eid}")
                continue
            applied[projection.name] += 1
        if len(feeding) != len(live):
            feeding = tuple(live)
    for projection, mark in list(live):
        try:
            await projection.finish(head)
        except Exception as exc:
            _drop(report, live, projection, mark, exc, optional, "finish")
    report.applied = applied
    return report


def _kinds_since(live: Sequence[tuple[Projection, int]]) -> dict[str, int] | None:
    """Each kind read, with the oldest checkpoint of the projections reading it (None
    when one of them reads every kind: then every kind from the oldest of all)."""
    after: dict[str, int] = {}
    for projection, mark in live:
        if projection.kinds is None:
            return None
        for kind in projection.kinds:
            after[kind] = min(after.get(kind, mark), mark)
    return after


def _drop(report: ReplayReport, live: list[tuple[Projection, int]], projection: Projection,
          mark: int, exc: Exception, optional: Collection[str], where: str) -> None:
    """Record an optional projection's failure and stop feeding it; re-raise others."""
    if projection.name not in optional:
        raise exc
    log.error("%s could not be replayed (%s at %s: %s); running without it",
              projection.name, type(exc).__name__, where, exc)
    report.failed[projection.name] = exc
    live.remove((projection, mark))
