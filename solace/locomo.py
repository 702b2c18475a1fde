"""LoCoMo-format conversations: loading them, and replaying them into a runtime.

LoCoMo (``locomo10.json``) holds long multi-session conversations between two
people, each session dated ("1:56 pm on 8 May, 2023"), each turn with a ``dia_id``
("D1:3"), and questions whose evidence names those ids. ``solace import locomo``
and ``benchmarks/locomo_recall.py`` share this module: the first to fill a home
with a real conversation, the second to measure recall over it.

Turns of one session are given times ``TURN_SPACING`` apart from the session's
start, so the order of events is the order of turns and a replay is deterministic.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from solace.importing import IMPORT_KEY, ImportFormatError, ImportItem
from solace.validation import InvalidObservationError, check_observation

__all__ = [
    "TURN_SPACING",
    "Conversation",
    "Question",
    "Turn",
    "import_key",
    "load_locomo",
    "normalise_evidence",
    "parse_session_date",
    "replay",
    "session_items",
]

TURN_SPACING = timedelta(seconds=30)


@dataclass(frozen=True, slots=True)
class Turn:
    """One utterance: its ``dia_id``, speaker, text and the time it is replayed at."""

    dia_id: str
    speaker: str
    text: str
    at: datetime


@dataclass(frozen=True, slots=True)
class Question:
    """One question; ``answer`` is None for adversarial ones; evidence is normalised."""

    question: str
    answer: str | None
    evidence: frozenset[str]
    category: int


@dataclass(frozen=True, slots=True)
class Conversation:
    """One conversation: its sessions (turns in order) and its questions."""

    sample_id: str
    sessions: tuple[tuple[Turn, ...], ...]
    questions: tuple[Question, ...]

    @property
    def turns(self) -> list[Turn]:
        """Every turn, in order."""
        return [t for s in self.sessions for t in s]


def parse_session_date(text: str) -> datetime:
    """``"1:56 pm on 8 May, 2023"`` -> an aware UTC datetime.

    Raises:
        ValueError: naming the text that is not in this format.
    """
    try:
        parsed = datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y")
    except ValueError:
        raise ValueError(f"not a LoCoMo session date: {text!r}") from None
    return parsed.replace(tzinfo=UTC)


_EVIDENCE_RE = re.compile(r"D\s*:?\s*(\d+)\s*:\s*0*(\d+)")


def normalise_evidence(raw: Sequence[Any], known: set[str]) -> frozenset[str]:
    """Evidence ids in canonical ``D<session>:<turn>`` form; ids naming no turn dropped.

    Handles the malformed ids of the data set: several ids in one string
    ("D8:6; D9:17", "D9:1 D4:4"), a stray colon ("D:11:26"), a leading zero
    ("D30:05"). An id that names no turn of the conversation ("D", or "D10:19" where
    session 10 has no turn 19) can be recalled by nothing, so it is dropped.
    """
    out = set()
    for item in raw:
        for session, turn in _EVIDENCE_RE.findall(str(item)):
            dia = f"D{int(session)}:{int(turn)}"
            if dia in known:
                out.add(dia)
    return frozenset(out)


def _get(obj: Any, key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if not isinstance(obj, dict):
        raise ImportFormatError(f"{where}: expected an object, got {type(obj).__name__}")
    if key not in obj:
        raise ImportFormatError(f"{where}: no {key!r}")
    value = obj[key]
    if not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise ImportFormatError(f"{where}: {key!r} should be {names}, got {value!r:.60}")
    return value


def _conversation(item: Any, where: str) -> Conversation:
    sample_id = str(_get(item, "sample_id", (str, int), where))
    where = f"{where} ({sample_id})"
    conv = _get(item, "conversation", dict, where)
    numbers = sorted(
        int(k.split("_")[1]) for k in conv if re.fullmatch(r"session_\d+", k) and conv[k]
    )
    if not numbers:
        raise ImportFormatError(f"{where}: no session_<n> lists in its 'conversation'")
    sessions = []
    for n in numbers:
        turns = _get(conv, f"session_{n}", list, where)
        try:
            start = parse_session_date(_get(conv, f"session_{n}_date_time", str, where))
        except ValueError as exc:
            raise ImportFormatError(f"{where} session {n}: {exc}") from None
        session = []
        for i, t in enumerate(turns):
            at = f"{where} session {n} turn {i + 1}"
            session.append(Turn(_get(t, "dia_id", str, at), _get(t, "speaker", str, at),
                                _get(t, "text", str, at), start + i * TURN_SPACING))
        sessions.append(tuple(session))
    known = {t.dia_id for s in sessions for t in s}
    questions = []
    for i, q in enumerate(item.get("qa", []) if isinstance(item.get("qa"), list) else []):
        at = f"{where} question {i + 1}"
        try:
            questions.append(Question(
                str(_get(q, "question", str, at)),
                None if q.get("answer") is None else str(q["answer"]),
                normalise_evidence(q.get("evidence", []), known),
                int(_get(q, "category", (int, str), at)),
            ))
        except ValueError as exc:
            raise ImportFormatError(f"{at}: {exc}") from None
    return Conversation(sample_id, tuple(sessions), tuple(questions))


def load_locomo(path: str | Path, limit: int | None = None) -> list[Conversation]:
    """The conversations of a LoCoMo-format JSON file, in file order.

    Args:
        path: the file.
        limit: only the first ``limit`` conversations.

    Raises:
        ImportFormatError: the file is not JSON, or not LoCoMo (the message names the
            file, the conversation and the field).
        OSError: the file cannot be read (FileNotFoundError: no such file).
    """
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise ImportFormatError(f"{p}: not UTF-8 text, so not LoCoMo JSON ({exc.reason} "
                                f"at byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise ImportFormatError(f"{p}: not JSON ({exc.msg} at line {exc.lineno} column "
                                f"{exc.colno}); a LoCoMo file is one JSON list") from None
    if not isinstance(data, list):
        raise ImportFormatError(f"{p}: not LoCoMo: expected a JSON list of conversations, "
                                f"got {type(data).__name__}")
    items = data[:limit] if limit else data
    return [_conversation(item, f"{p}: not LoCoMo: conversation #{i + 1}")
            for i, item in enumerate(items)]


def import_key(sample_id: str, dia_id: str) -> str:
    """The import key of one LoCoMo turn: ``locomo:<sample_id>:<dia_id>``."""
    return f"locomo:{sample_id}:{dia_id}"


def session_items(conversation: Conversation) -> list[list[ImportItem]]:
    """The conversation's turns as keyed import items, one batch per session.

    Raises:
        ImportFormatError: a turn ``observe`` would refuse (blank text, a bad speaker),
            named by conversation and ``dia_id``, so an import stops before it starts.
    """
    batches = []
    for session in conversation.sessions:
        batch = []
        for t in session:
            try:
                check_observation(t.text, speaker=t.speaker, kind="message", at=t.at,
                                  attrs=None, emotional_weight=None, tags=(),
                                  kinds=("message",))
            except InvalidObservationError as exc:
                raise ImportFormatError(
                    f"conversation {conversation.sample_id} turn {t.dia_id}: {exc}") from None
            batch.append(ImportItem(import_key(conversation.sample_id, t.dia_id), t.speaker,
                                    t.text, t.at.timestamp(), (("dia_id", t.dia_id),)))
        batches.append(batch)
    return batches


async def replay(runtime: Any, conversation: Conversation) -> dict[str, int]:
    """Observe every turn at its real date, settling the fade at each session's end.

    Each turn becomes a ``message`` event by its speaker with ``attrs={"dia_id": ...,
    "import_key": ...}`` (:func:`import_key`, so ``solace import locomo`` later skips it;
    this function itself does not skip anything already imported; the runtime's clock
    should be a :class:`~solace.clock.ReplayClock`, which follows
    the dates). Returns ``{dia_id: entry_id}``.
    """
    from solace.runtime import Observation

    ids: dict[str, int] = {}
    sample = conversation.sample_id
    for session in conversation.sessions:
        items = [
            Observation(t.text, t.speaker, "message", t.at,
                        {"dia_id": t.dia_id, IMPORT_KEY: import_key(sample, t.dia_id)})
            for t in session
        ]
        for turn, entry_id in zip(session, await runtime.observe_many(items), strict=True):
            ids[turn.dia_id] = entry_id
        await runtime.settle()
    return ids
