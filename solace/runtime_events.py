"""The runtime's way in for events: observe, observe_many, delivery to the agents.

:class:`EventWriting` is the part of :class:`~solace.runtime.Runtime` that appends
events (every argument checked first, so a refused call changes nothing), delivers
each to the agents that perceive it, and reads events back (:meth:`EventWriting.event`).
It holds no state of its own; the attributes it uses are the runtime's, declared
below. :func:`observable_kinds` and :func:`extra_kinds` say which kinds the public
``observe`` and the substrate accept.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from solace.actors.base import Actor
from solace.actors.mood import MoodActor
from solace.actors.routing import ACTOR_KINDS, MOOD_KIND, Annotation, annotation_attrs, perceive
from solace.clock import Clock
from solace.config import Config
from solace.event_reader import EventReader
from solace.memory.event_vectors import EventVectorStore
from solace.memory.holdings import Holdings
from solace.memory.rebuild import FADE_KIND
from solace.runtime_workspace import WorkspaceLink
from solace.sealed import StorageFullError, is_storage_full, storage_full
from solace.validation import (
    CheckedObservation,
    InvalidObservationError,
    check_observation,
    check_speaker,
    public_kinds,
)

__all__ = ["EventWriting", "Observation", "extra_kinds", "observable_kinds", "storage_errors"]


@dataclass(frozen=True, slots=True)
class Observation:
    """One event for :meth:`Runtime.observe_many` (fields as in ``Actor.observe``)."""

    text: str
    speaker: str
    kind: str = "message"
    at: float | datetime | None = None
    attrs: Mapping[str, str] | None = None



class EventWriting:
    """Appending, delivering and reading events, mixed into ``Runtime`` (which sets
    every attribute declared here)."""

    config: Config
    clock: Clock
    substrate: Any
    memories: dict[str, Any]
    actors: dict[str, Actor]
    events: EventReader
    event_vectors: EventVectorStore
    holdings: Holdings
    observing: int
    last_event_ts: float | None
    workspace_link: WorkspaceLink

    def event(self, entry_id: int) -> Any:
        """The substrate event ``entry_id`` (attrs exactly as given to ``observe``).

        A single authenticated read (or a recently read event); fine on the event loop.
        """
        return self.events.get(entry_id)

    async def observe(
        self,
        text: str,
        *,
        author: str,
        kind: str = "message",
        at: float | datetime | None = None,
        attrs: Mapping[str, str] | None = None,
        emotional_weight: float | None = None,
        tags: tuple[str, ...] = (),
    ) -> int:
        """Append one event and deliver it (see ``Actor.observe``); returns its id.

        Every argument is checked first (:func:`solace.validation.check_observation`;
        ``author`` by the speaker rules), so a refused call changes nothing: not the
        clock, not the substrate, not a tier. ``kind`` must be a public kind (see
        :func:`observable_kinds`); Solace's own writers (Main's private drafts) use
        :meth:`observe_internal`.

        Raises:
            solace.validation.InvalidObservationError: a refused value (a
                ``ValueError``; ``ObservationTypeError``, also a ``TypeError``, for a
                wrong type), naming the field and the value.
        """
        return await self._observe(text, author, kind, at, attrs, emotional_weight, tags,
                                   internal=False)

    async def observe_internal(
        self,
        text: str,
        *,
        author: str,
        kind: str,
        at: float | datetime | None = None,
        attrs: Mapping[str, str] | None = None,
        emotional_weight: float | None = None,
        tags: tuple[str, ...] = (),
    ) -> int:
        """:meth:`observe` for Solace's own writers: any substrate kind (an actor's
        ``draft``) is accepted; every other check stands."""
        return await self._observe(text, author, kind, at, attrs, emotional_weight, tags,
                                   internal=True)

    async def _observe(self, text: object, author: object, kind: object, at: object,
                       attrs: object, emotional_weight: object, tags: object, *,
                       internal: bool) -> int:
        checked, who = self._check(text, author, kind, at, attrs, emotional_weight, tags,
                                   internal=internal)
        weight, marks = checked.emotional_weight, checked.tags
        ts = self._timestamp(checked.ts)
        attrs_copy = dict(checked.attrs) if checked.attrs is not None else None
        row = (who, checked.kind, checked.text, attrs_copy, ts)
        annotation = None
        with self._observing():
            with storage_errors(f"a {checked.kind} event by {who}"):
                if weight is None and not marks:
                    entry_id = await self.substrate.append(*row[:3], attrs=attrs_copy, ts=ts)
                else:
                    # The override goes in the same atomic write, right after its event.
                    annotation = Annotation(weight, marks)
                    entry_id, _ = await self.substrate.append_many([
                        row, ("Mood", MOOD_KIND, "", annotation_attrs(weight, marks), ts),
                    ])
            event = self._event(entry_id, ts, *row[:4])
            await self.deliver(event, annotation)
        return int(entry_id)

    async def observe_many(self, items: Sequence[Observation]) -> list[int]:
        """Append many events with one write and deliver them in batches per agent.

        Equivalent to calling :meth:`observe` for each item in order (same events, same
        records), but with one substrate write and one embedding call per agent. For
        replays and imports. Every item is checked before any is written: one refused
        item refuses the call, and nothing (clock, substrate, tiers) has changed.

        Raises:
            solace.validation.InvalidObservationError: as :meth:`observe`; the message
                names the item's index.
        """
        checked = []
        for index, item in enumerate(items):
            try:
                checked.append(self._check(item.text, item.speaker, item.kind, item.at,
                                           item.attrs, None, (), internal=False))
            except InvalidObservationError as exc:  # the same error, naming the item
                raise type(exc)(f"item {index}: {exc}") from None
        rows = [
            (who, item.kind, item.text, dict(item.attrs) if item.attrs else None,
             self._timestamp(item.ts))
            for item, who in checked
        ]
        with self._observing():
            return await self._append_and_deliver(rows)

    async def _append_and_deliver(self, rows: list[tuple[Any, ...]]) -> list[int]:
        with storage_errors(f"{len(rows)} events"):
            ids = await self.substrate.append_many(rows)
        events = [self._event(eid, row[4], *row[:4]) for eid, row in zip(ids, rows, strict=True)]
        per_agent: dict[str, list[tuple[Any, Any]]] = {}
        for event in events:
            for p in perceive(event):
                per_agent.setdefault(p.agent, []).append((event, p))
            self._note(event)
        with self._in_flight(ids):
            for agent, batch in per_agent.items():
                records = await self.memories[agent].ingest_many(
                    [e for e, _ in batch],
                    speakers=[p.speaker for _, p in batch],
                    emotional_weights=[p.emotional_weight for _, p in batch],
                    tags=[p.tags for _, p in batch],
                    private=[p.private for _, p in batch],
                )
                self._keep_vectors(records)
        return [int(i) for i in ids]

    async def deliver_all(self, events: Sequence[Any]) -> None:
        """:meth:`deliver` each of ``events`` in order (the conversation layer's hook),
        then fold the batch into the workspace (topics closed, notes, curation, durable
        facts reach the daily log)."""
        for event in events:
            await self.deliver(event)
        await self.workspace_link.events(events)

    async def deliver(self, event: Any, annotation: Annotation | None = None) -> None:
        """Give ``event`` to every agent that perceives it (one record each)."""
        with self._observing(), self._in_flight([event.entry_id]):
            for p in perceive(event, annotation):
                record = await self.memories[p.agent].ingest(
                    event, speaker=p.speaker, emotional_weight=p.emotional_weight,
                    tags=p.tags, private=p.private,
                )
                self._keep_vectors([record])
        self._note(event)

    @contextmanager
    def _observing(self) -> Iterator[None]:
        """Count an observe under way from its append to its last delivery, or a
        delivery of events appended elsewhere (while any is, the agents' index keepers
        wait: ``runtime.index_refresh_seconds``)."""
        self.observing += 1
        try:
            yield
        finally:
            self.observing -= 1

    @contextmanager
    def _in_flight(self, entry_ids: Sequence[int]) -> Iterator[None]:
        """Mark ``entry_ids`` as being delivered (read-through tells a peer's record of
        one from an event the asker lacks: :class:`~solace.memory.holdings.Holdings`)."""
        flying = self.holdings.in_flight
        flying.update(entry_ids)
        try:
            yield
        finally:
            flying.difference_update(entry_ids)

    def _keep_vectors(self, records: Sequence[Any]) -> None:
        # A rung-0 record's embedding is its event's: kept so retrieval can rank the
        # events of a faded episode without embedding them again.
        for record in records:
            if record.embedding is not None:
                self.event_vectors.setdefault(record.record_id, record.embedding)

    def _note(self, event: Any) -> None:
        if event.agent != "Time":
            self.last_event_ts = event.ts
        mood = self.actors.get("Mood")
        if isinstance(mood, MoodActor) and event.kind in ("message", "speech") and event.content:
            mood.notice(event.entry_id, event.content)

    def _check(self, text: object, author: object, kind: object, at: object, attrs: object,
               emotional_weight: object, tags: object, *, internal: bool
               ) -> tuple[CheckedObservation, str]:
        """The checked observation and its author (which must be named here)."""
        checked = check_observation(
            text, speaker=author, kind=kind, at=at, attrs=attrs,
            emotional_weight=emotional_weight, tags=tags,
            kinds=observable_kinds(self.config, internal=internal),
        )
        return checked, checked.speaker if checked.speaker is not None else check_speaker(author)

    def _timestamp(self, ts: float | None) -> float:
        """``ts`` (already checked), or the clock's now; a ReplayClock moves to it."""
        if ts is None:
            return self.clock.now()
        observe = getattr(self.clock, "observe", None)
        if observe is not None:
            observe(ts)  # a ReplayClock follows the replayed dates
        return ts

    @staticmethod
    def _event(entry_id: int, ts: float, agent: str, kind: str, content: str,
               attrs: Mapping[str, str] | None) -> Any:
        from substrate import Event

        return Event(entry_id, ts, agent, kind, content, dict(attrs or {}))


@contextmanager
def storage_errors(what: str) -> Iterator[None]:
    """A full or failing disk under an append surfaces as :class:`StorageFullError`
    naming what could not be written (nothing was written: the substrate's append is
    all or nothing)."""
    try:
        yield
    except OSError as exc:
        if is_storage_full(exc) and not isinstance(exc, StorageFullError):
            raise storage_full(exc, what) from exc
        raise


def observable_kinds(config: Config, *, internal: bool = False) -> frozenset[str]:
    """The kinds ``observe`` accepts: every kind of the substrate but the internal ones
    (``fade``, the actors' ``draft`` and ``mood``, the conversation layer's kinds,
    fact memory's ``memfact``, the workspace's ``workspace``),
    which only their own writers (``Runtime.observe_internal``) may append."""
    from solace.conversation.events import CONVERSATION_KINDS
    from solace.facts.events import FACT_KIND
    from solace.workspace import WORKSPACE_KIND
    from substrate import BUILTIN_KINDS

    every = BUILTIN_KINDS | set(extra_kinds(config))
    if internal:
        return frozenset(every)
    return public_kinds(every, (FADE_KIND, *ACTOR_KINDS, *CONVERSATION_KINDS, FACT_KIND,
                                WORKSPACE_KIND))


def extra_kinds(config: Config) -> tuple[str, ...]:
    """Every event kind the runtime's substrate must accept beyond the built-in eight."""
    from solace.conversation.events import CONVERSATION_KINDS
    from solace.facts.events import FACT_KIND
    from solace.workspace import WORKSPACE_KINDS

    kinds = [*config.substrate.extra_kinds, FADE_KIND, *ACTOR_KINDS, *CONVERSATION_KINDS,
             FACT_KIND, *WORKSPACE_KINDS]
    return tuple(dict.fromkeys(kinds))
