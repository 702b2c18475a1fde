"""The evaluation pipeline: drift detection, then a silent fork or an in-place refresh.

One evaluation looks at a session's active topic. If the topic has drifted (see
:mod:`solace.conversation.drift`), the messages of the new subject (within the
scan-back window) move to a new topic, the old topic is summarised from what remains
and its notes, its notes are archived, and only then does the new topic become
active: five events in one atomic batch, in that order. Otherwise the topic's title,
summary and ``keep_in_memory`` are refreshed in place if it changed since its last
summary. The user is never interrupted: slow work (embedding, the LLM) runs off the
event loop and outside any lock, and if the topic changed meanwhile (a new message,
a note) the plan is made again from the new state.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from solace.conversation import events
from solace.conversation.curation import keep_after_summary
from solace.conversation.drift import DriftResult, DriftSettings, detect_drift, message_weights
from solace.conversation.events import Appended, Draft
from solace.conversation.model import SummaryMode, ThreadItem, Topic, Trigger
from solace.conversation.notes import archive_notes
from solace.conversation.projection import Projection
from solace.conversation.summarise import Summariser, SummaryResult
from solace.models.embedder import Embedder
from solace.offload import Offloader

__all__ = ["EvaluationReport", "Evaluator", "Stale", "closing_drafts"]

log = logging.getLogger(__name__)

Outcome = Literal["skipped", "empty", "unchanged", "refreshed", "forked", "stale"]
Writer = Callable[[Callable[[], list[Draft]]], Awaitable[list[Appended]]]

#: How many times a plan is re-made when the topic changes under it.
ATTEMPTS = 3
#: Embeddings kept for drift checks (only a topic's last window is ever needed).
VECTOR_CACHE = 4096


class Stale(Exception):
    """Raised inside a write when the topic changed since the plan was made."""


@dataclass(frozen=True, slots=True)
class EvaluationReport:
    """What one evaluation did.

    Attributes:
        outcome: ``skipped`` (hasEvaluated), ``empty`` (no messages), ``unchanged``
            (no drift, summary already current), ``refreshed``, ``forked``, ``stale``
            (the topic kept changing; a later trigger will retry).
        topic_id: the topic evaluated (the old one on a fork).
        new_topic_id: the topic created by a fork.
        relocated: thread items a fork moved.
    """

    session_id: str
    trigger: Trigger
    outcome: Outcome
    topic_id: str = ""
    drift: DriftResult | None = None
    new_topic_id: str = ""
    summary_mode: SummaryMode | None = None
    relocated: int = 0


@dataclass(frozen=True, slots=True)
class _Snapshot:
    topic_id: str
    items: tuple[int, ...]
    notes_version: int


def closing_drafts(
    projection: Projection, topic: Topic, result: SummaryResult, *, count: int, min_turns: int
) -> list[Draft]:
    """The summary of a topic being left behind, then its notes' archive (that order)."""
    keep = keep_after_summary(
        topic, include=result.include_in_memory, mode=result.mode, message_count=count,
        min_turns=min_turns,
    )
    drafts = [
        events.summary(
            topic.scope, topic.session_id, topic.topic_id, title=result.title,
            text=result.summary, mode=result.mode, include=result.include_in_memory,
            keep=keep, count=count, close=True,
        )
    ]
    archived = archive_notes(topic, projection.notes_of(topic.topic_id))
    if archived is not None:
        drafts.append(archived)
    return drafts


class Evaluator:
    """Runs the pipeline for one session at a time (the queue serialises calls).

    Args:
        projection: the live projection (read only here).
        write: the service's serialised ``write(make_drafts)``; ``make_drafts`` runs
            under the write lock and may raise :class:`Stale`.
        new_topic_id: allocates a topic id (called under the write lock).
    """

    def __init__(
        self,
        *,
        projection: Projection,
        write: Writer,
        new_topic_id: Callable[[], str],
        offloader: Offloader,
        embedder: Embedder,
        summariser: Summariser,
        drift: DriftSettings,
        min_turns: int,
    ) -> None:
        self.projection = projection
        self._write = write
        self._new_topic_id = new_topic_id
        self._offloader = offloader
        self._embedder = embedder
        self.summariser = summariser
        self.drift = drift
        self.min_turns = min_turns
        self._vectors: OrderedDict[int, np.ndarray] = OrderedDict()
        self.last_drift: dict[str, DriftResult] = {}

    def snapshot(self, session_id: str) -> _Snapshot:
        topic = self.projection.active_topic(session_id)
        notes = self.projection.notes_of(topic.topic_id)
        return _Snapshot(topic.topic_id, topic.items, notes.version)

    def check(self, session_id: str, snap: _Snapshot) -> Topic:
        """The active topic, if it is still as ``snap`` saw it; :class:`Stale` otherwise."""
        if self.snapshot(session_id) != snap:
            raise Stale(session_id)
        return self.projection.topic(snap.topic_id)

    async def summarise(self, items: Sequence[ThreadItem], notes: str) -> SummaryResult:
        """The summariser, off the event loop."""
        return await self._offloader.run(self.summariser.summarise, list(items), notes)

    async def _embed(self, items: Sequence[ThreadItem]) -> np.ndarray:
        missing = [i for i in items if i.entry_id not in self._vectors]
        if missing:
            vectors = await self._offloader.run(self._embedder.embed, [i.content for i in missing])
            for item, vector in zip(missing, vectors, strict=True):
                self._vectors[item.entry_id] = vector
        for item in items:
            self._vectors.move_to_end(item.entry_id)
        while len(self._vectors) > VECTOR_CACHE:
            self._vectors.popitem(last=False)
        return np.stack([self._vectors[i.entry_id] for i in items])

    async def check_drift(self, topic: Topic) -> DriftResult | None:
        """Drift over the topic's last messages; None if it is too short to split."""
        messages = [i for i in self.projection.thread(topic.topic_id) if i.kind == "message"]
        if len(messages) < 2 * self.drift.min_segment:
            return None
        # Splits are at most scan_back from the end, each sees context messages before.
        offset = max(0, len(messages) - self.drift.scan_back - self.drift.context)
        window = messages[offset:]
        result = detect_drift(
            await self._embed(window), [m.role for m in window], self.drift,
            message_weights([m.content for m in window]),
        )
        if result.split is not None:
            result = DriftResult(result.drifted, result.split + offset, result.similarity,
                                 result.candidates)
        return result

    async def evaluate(self, session_id: str, trigger: Trigger) -> EvaluationReport:
        """Run the pipeline once on the session's active topic.

        Raises:
            Whatever the embedder, a buggy LLM backend or the substrate raises; the
            service logs and swallows it (evaluation is fire-and-forget).
        """
        for _ in range(ATTEMPTS):
            snap = self.snapshot(session_id)
            topic = self.projection.topic(snap.topic_id)
            if topic.message_count == 0:
                return EvaluationReport(session_id, trigger, "empty", topic.topic_id)
            drift = await self.check_drift(topic)
            if drift is not None:
                self.last_drift[session_id] = drift
            try:
                if drift is not None and drift.drifted and drift.split is not None:
                    return await self._fork(session_id, trigger, snap, topic, drift)
                return await self._refresh(session_id, trigger, snap, topic, drift)
            except Stale:
                continue
        log.info("evaluation of session %s gave up: its topic kept changing", session_id)
        return EvaluationReport(session_id, trigger, "stale", snap.topic_id)

    async def _refresh(
        self, session_id: str, trigger: Trigger, snap: _Snapshot, topic: Topic,
        drift: DriftResult | None,
    ) -> EvaluationReport:
        if topic.summary_count == topic.message_count:
            return EvaluationReport(session_id, trigger, "unchanged", topic.topic_id, drift)
        notes = self.projection.notes_of(topic.topic_id).active
        result = await self.summarise(self.projection.thread(topic.topic_id), notes)

        def make() -> list[Draft]:
            current = self.check(session_id, snap)
            keep = keep_after_summary(
                current, include=result.include_in_memory, mode=result.mode,
                message_count=current.message_count, min_turns=self.min_turns,
            )
            return [events.summary(
                current.scope, session_id, current.topic_id, title=result.title,
                text=result.summary, mode=result.mode, include=result.include_in_memory,
                keep=keep, count=current.message_count, close=False,
            )]

        await self._write(make)
        return EvaluationReport(
            session_id, trigger, "refreshed", topic.topic_id, drift, summary_mode=result.mode
        )

    async def _fork(
        self, session_id: str, trigger: Trigger, snap: _Snapshot, topic: Topic,
        drift: DriftResult,
    ) -> EvaluationReport:
        thread = self.projection.thread(topic.topic_id)
        messages = [i for i in thread if i.kind == "message"]
        first_moved = messages[drift.split or 0].entry_id
        kept = [i for i in thread if i.entry_id < first_moved]
        kept_count = sum(i.kind == "message" for i in kept)
        notes = self.projection.notes_of(topic.topic_id).active
        result = await self.summarise(kept, notes)
        moved = [i.entry_id for i in thread if i.entry_id >= first_moved]
        new_id = ""

        def make() -> list[Draft]:
            nonlocal new_id
            current = self.check(session_id, snap)
            new_id = self._new_topic_id()
            scope = current.scope
            return [
                events.open_topic(
                    scope, session_id, new_id, origin="fork", parent=current.topic_id
                ),
                events.relocate(scope, session_id, current.topic_id, new_id, moved),
                *closing_drafts(
                    self.projection, current, result, count=kept_count, min_turns=self.min_turns
                ),
                events.activate_topic(scope, session_id, new_id),
            ]

        await self._write(make)
        log.info(
            "session %s: drift at similarity %.3f; %d items moved from topic %s to %s",
            session_id, drift.similarity, len(moved), topic.topic_id, new_id,
        )
        return EvaluationReport(
            session_id, trigger, "forked", topic.topic_id, drift, new_id, result.mode, len(moved)
        )
