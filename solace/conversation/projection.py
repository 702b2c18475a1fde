"""The query side: sessions, topics, threads, notes and facts, folded from events.

The substrate is the truth; this is a view of it. :meth:`Projection.apply` folds one
event of this layer into the state and is the only code that changes it, so the live
state of a running service and a projection rebuilt by replaying the substrate are
equal by construction (a test checks it). It is pure: no I/O, no clock.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from solace.conversation.errors import ProjectionError, UnknownSessionError, UnknownTopicError
from solace.conversation.events import LAYER, REPLAYED_KINDS, LoggedEvent, scope_of
from solace.conversation.model import Fact, Notes, Scope, Session, ThreadItem, Topic

__all__ = ["Projection", "is_conversation_event"]


def is_conversation_event(event: LoggedEvent) -> bool:
    """True for events written by this layer (others share the built-in kinds)."""
    return event.kind in REPLAYED_KINDS and event.attrs.get("layer") == LAYER


def _number(ident: str) -> int:
    digits = ident[1:]
    return int(digits) if digits.isdigit() else 0


class Projection:
    """The current state of every session, topic, thread, notes document and fact.

    Read through the accessor methods; the returned objects are frozen snapshots.
    """

    def __init__(self) -> None:
        self.sessions: dict[str, Session] = {}
        self.topics: dict[str, Topic] = {}
        self.items: dict[int, ThreadItem] = {}
        self.notes: dict[str, Notes] = {}
        self.facts: dict[Scope, dict[str, Fact]] = {}
        self.scope_topics: dict[Scope, list[str]] = {}
        self.last_entry_id = 0
        self.max_session_no = 0
        self.max_topic_no = 0

    # -- folding -------------------------------------------------------------

    def apply(self, event: LoggedEvent) -> Scope | None:
        """Fold one event in; events must come in ascending entry-id order.

        Returns:
            The scope whose memory block (promoted and deprecated topics) changed,
            so the caller can invalidate its memory cache; None otherwise.

        Raises:
            ProjectionError: the event names an unknown session or topic, or its
                payload is malformed.
        """
        if not is_conversation_event(event):
            return None
        try:
            handler = getattr(self, f"_on_{event.kind}")
            changed: Scope | None = handler(event)
        except (KeyError, ValueError, TypeError) as exc:
            if isinstance(exc, ProjectionError):
                raise
            raise ProjectionError(
                f"substrate entry {event.entry_id} ({event.kind} "
                f"{dict(event.attrs)!r}) does not apply: {exc!r}"
            ) from exc
        self.last_entry_id = max(self.last_entry_id, event.entry_id)
        return changed

    def apply_all(self, events: Iterable[LoggedEvent]) -> set[Scope]:
        """Fold many events; returns every scope whose memory block changed."""
        changed: set[Scope] = set()
        for event in events:
            scope = self.apply(event)
            if scope is not None:
                changed.add(scope)
        return changed

    def _session(self, event: LoggedEvent) -> Session:
        sid = str(event.attrs["session"])
        if sid not in self.sessions:
            raise ProjectionError(f"substrate entry {event.entry_id}: unknown session {sid!r}")
        return self.sessions[sid]

    def _topic(self, event: LoggedEvent, key: str = "topic") -> Topic:
        tid = str(event.attrs[key])
        if tid not in self.topics:
            raise ProjectionError(f"substrate entry {event.entry_id}: unknown topic {tid!r}")
        return self.topics[tid]

    def _put(self, topic: Topic) -> None:
        self.topics[topic.topic_id] = topic

    def _on_session(self, event: LoggedEvent) -> None:
        sid = str(event.attrs["session"])
        if sid in self.sessions:
            raise ProjectionError(f"substrate entry {event.entry_id}: session {sid!r} exists")
        self.sessions[sid] = Session(sid, scope_of(event), event.ts)
        self.max_session_no = max(self.max_session_no, _number(sid))

    def _on_topic(self, event: LoggedEvent) -> Scope | None:
        op = event.attrs["op"]
        if op == "open":
            self._open_topic(event)
            return None
        topic = self._topic(event)
        if op == "activate":
            session = self._session(event)
            self.sessions[session.session_id] = dataclasses.replace(
                session, active_topic_id=topic.topic_id
            )
            return None
        if op == "relocate":
            self._relocate(event, self._topic(event, "source"), topic)
            return None
        if op == "summary":
            return self._summary(event, topic)
        raise ProjectionError(f"substrate entry {event.entry_id}: unknown topic op {op!r}")

    def _open_topic(self, event: LoggedEvent) -> None:
        session = self._session(event)
        tid = str(event.attrs["topic"])
        if tid in self.topics:
            raise ProjectionError(f"substrate entry {event.entry_id}: topic {tid!r} exists")
        origin = str(event.attrs.get("origin", "initial"))
        if origin not in ("initial", "manual", "fork"):
            raise ProjectionError(f"substrate entry {event.entry_id}: bad origin {origin!r}")
        self.topics[tid] = Topic(
            tid, session.session_id, session.scope, event.ts, origin,  # type: ignore[arg-type]
            str(event.attrs.get("parent", "")), title=event.content,
        )
        self.scope_topics.setdefault(session.scope, []).append(tid)
        self.sessions[session.session_id] = dataclasses.replace(
            session, topic_ids=(*session.topic_ids, tid)
        )
        self.max_topic_no = max(self.max_topic_no, _number(tid))

    def _relocate(self, event: LoggedEvent, source: Topic, target: Topic) -> None:
        moved = {int(i) for i in json.loads(event.content)}
        missing = moved - set(source.items)
        if missing:
            raise ProjectionError(
                f"substrate entry {event.entry_id}: items {sorted(missing)} are not in "
                f"topic {source.topic_id!r}"
            )
        n_messages = 0
        for entry_id in moved:
            item = self.items[entry_id]
            n_messages += item.kind == "message"
            self.items[entry_id] = dataclasses.replace(item, topic_id=target.topic_id)
        self._put(dataclasses.replace(
            source,
            items=tuple(i for i in source.items if i not in moved),
            message_count=source.message_count - n_messages,
        ))
        self._put(dataclasses.replace(
            target,
            items=tuple(sorted((*target.items, *moved))),
            message_count=target.message_count + n_messages,
        ))

    def _summary(self, event: LoggedEvent, topic: Topic) -> Scope | None:
        payload = json.loads(event.content)
        mode = str(event.attrs["mode"])
        if mode not in ("llm", "deterministic", "fallback"):
            raise ProjectionError(f"substrate entry {event.entry_id}: bad summary mode {mode!r}")
        updated = dataclasses.replace(
            topic,
            title=str(payload["title"]),
            summary=str(payload["summary"]),
            summary_mode=mode,  # type: ignore[arg-type]
            summary_count=int(event.attrs["count"]),
            # The user's manual keep setting persists across summarisation cycles.
            keep_in_memory=(
                topic.keep_in_memory
                if topic.keep_in_memory_manually_set
                else event.attrs["keep"] == "true"
            ),
            closed=topic.closed or event.attrs.get("close") == "true",
        )
        return self._replace_curated(event, topic, updated)

    def _replace_curated(self, event: LoggedEvent, old: Topic, new: Topic) -> Scope | None:
        """Store ``new``; report its scope if what the memory block shows changed."""
        if new.in_memory_block and not old.in_memory_block:
            new = dataclasses.replace(new, memory_since=event.entry_id)
        self._put(new)
        if not (old.in_memory_block or new.in_memory_block):
            return None
        shown = ("keep_in_memory", "deprecated", "title", "summary", "memory_since")
        if all(getattr(old, name) == getattr(new, name) for name in shown):
            return None
        return new.scope

    def _thread_item(self, event: LoggedEvent, kind: str) -> None:
        topic = self._topic(event)
        attrs = event.attrs
        role = str(attrs.get("role", "assistant" if kind != "message" else "user"))
        if role not in ("user", "assistant", "system"):
            raise ProjectionError(f"substrate entry {event.entry_id}: bad role {role!r}")
        self.items[event.entry_id] = ThreadItem(
            event.entry_id, event.ts, kind, role, event.content,  # type: ignore[arg-type]
            topic.topic_id, str(attrs.get("tool", "")), str(attrs.get("call", "")),
            attrs.get("ok", "true") == "true",
        )
        self._put(dataclasses.replace(
            topic,
            items=(*topic.items, event.entry_id),
            message_count=topic.message_count + (kind == "message"),
        ))

    def _on_message(self, event: LoggedEvent) -> None:
        self._thread_item(event, "message")

    def _on_tool_call(self, event: LoggedEvent) -> None:
        self._thread_item(event, "tool_call")

    def _on_tool_result(self, event: LoggedEvent) -> None:
        self._thread_item(event, "tool_result")

    def _on_curation(self, event: LoggedEvent) -> Scope | None:
        topic = self._topic(event)
        op, by = event.attrs["op"], event.attrs["by"]
        if by not in ("user", "agent"):
            raise ProjectionError(f"substrate entry {event.entry_id}: bad curator {by!r}")
        manual = by == "user"
        if not manual and (
            op == "undeprecate"
            or (op in ("promote", "demote") and topic.keep_in_memory_manually_set)
            or (op == "deprecate" and topic.deprecated_manually_set)
        ):
            # The guard refuses these before they are written; if one was written anyway
            # (another process raced the user), the user's decision still wins on replay.
            return None
        if op in ("promote", "demote"):
            updated = dataclasses.replace(
                topic,
                keep_in_memory=op == "promote",
                keep_in_memory_manually_set=topic.keep_in_memory_manually_set or manual,
            )
        elif op in ("deprecate", "undeprecate"):
            updated = dataclasses.replace(
                topic,
                deprecated=op == "deprecate",
                deprecated_manually_set=topic.deprecated_manually_set or manual,
            )
        else:
            raise ProjectionError(f"substrate entry {event.entry_id}: unknown curation {op!r}")
        return self._replace_curated(event, topic, updated)

    def _on_note(self, event: LoggedEvent) -> None:
        topic = self._topic(event)
        notes = self.notes.get(topic.topic_id, Notes(topic.topic_id))
        op = event.attrs["op"]
        if op == "$set":
            active = f"{notes.active}\n{event.content}" if notes.active else event.content
            notes = dataclasses.replace(notes, active=active)
        elif op == "update":
            notes = dataclasses.replace(notes, active=event.content)
        elif op == "archive":
            archived = (*notes.archived, notes.active) if notes.active else notes.archived
            notes = dataclasses.replace(notes, active="", archived=archived)
        else:
            raise ProjectionError(f"substrate entry {event.entry_id}: unknown notes op {op!r}")
        self.notes[topic.topic_id] = dataclasses.replace(notes, version=notes.version + 1)

    def _on_fact(self, event: LoggedEvent) -> None:
        facts = self.facts.setdefault(scope_of(event), {})
        key, op = str(event.attrs["key"]), event.attrs["op"]
        if op == "$set":
            facts[key] = Fact(key, event.content, event.entry_id, event.ts)
        elif op == "$unset":
            facts.pop(key, None)
        else:
            raise ProjectionError(f"substrate entry {event.entry_id}: unknown fact op {op!r}")

    # -- reading -------------------------------------------------------------

    def session(self, session_id: str) -> Session:
        """The session ``session_id``; :class:`UnknownSessionError` naming it otherwise."""
        try:
            return self.sessions[session_id]
        except KeyError:
            raise UnknownSessionError(f"unknown session {session_id!r}") from None

    def topic(self, topic_id: str) -> Topic:
        """The topic ``topic_id``; :class:`UnknownTopicError` naming it otherwise."""
        try:
            return self.topics[topic_id]
        except KeyError:
            raise UnknownTopicError(f"unknown topic {topic_id!r}") from None

    def active_topic(self, session_id: str) -> Topic:
        """The session's active topic."""
        return self.topic(self.session(session_id).active_topic_id)

    def thread(self, topic_id: str) -> list[ThreadItem]:
        """The topic's thread items in entry-id order."""
        return [self.items[i] for i in self.topic(topic_id).items]

    def topics_of(self, scope: Scope) -> Iterator[Topic]:
        """Every topic of ``scope``, in creation order, across its sessions."""
        for tid in self.scope_topics.get(scope, ()):
            yield self.topics[tid]

    def sessions_of(self, scope: Scope) -> list[Session]:
        """Every session of ``scope`` in creation order."""
        return [s for s in self.sessions.values() if s.scope == scope]

    def facts_of(self, scope: Scope) -> Mapping[str, Fact]:
        """The durable facts of ``scope`` (a read-only view)."""
        return dict(self.facts.get(scope, {}))

    def notes_of(self, topic_id: str) -> Notes:
        """The topic's notes (empty if none were written)."""
        self.topic(topic_id)
        return self.notes.get(topic_id, Notes(topic_id))

    def state(self) -> dict[str, Any]:
        """Everything the projection holds, for comparing two projections."""
        return {
            "sessions": dict(self.sessions),
            "topics": dict(self.topics),
            "items": dict(self.items),
            "notes": dict(self.notes),
            "facts": {s: dict(f) for s, f in self.facts.items() if f},
            "scope_topics": {s: list(t) for s, t in self.scope_topics.items()},
        }
