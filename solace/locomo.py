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

__all__ = [
    "TURN_SPACING",
    "Conversation",
    "Question",
    "Turn",
    "load_locomo",
    "normalise_evidence",
    "parse_session_date",
    "replay",
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


def load_locomo(path: str | Path, limit: int | None = None) -> list[Conversation]:
    """The conversations of a LoCoMo-format JSON file, in file order.

    Args:
        path: the file.
        limit: only the first ``limit`` conversations.

    Raises:
        FileNotFoundError: no such file. ValueError: a malformed session date.
    """
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    out = []
    for item in data[:limit] if limit else data:
        conv = item["conversation"]
        numbers = sorted(
            int(k.split("_")[1]) for k in conv if re.fullmatch(r"session_\d+", k) and conv[k]
        )
        sessions = []
        for n in numbers:
            start = parse_session_date(conv[f"session_{n}_date_time"])
            sessions.append(
                tuple(
                    Turn(t["dia_id"], t["speaker"], t["text"], start + i * TURN_SPACING)
                    for i, t in enumerate(conv[f"session_{n}"])
                )
            )
        known = {t.dia_id for s in sessions for t in s}
        questions = tuple(
            Question(
                q["question"],
                None if q.get("answer") is None else str(q["answer"]),
                normalise_evidence(q.get("evidence", []), known),
                int(q["category"]),
            )
            for q in item["qa"]
        )
        out.append(Conversation(str(item["sample_id"]), tuple(sessions), questions))
    return out


async def replay(runtime: Any, conversation: Conversation) -> dict[str, int]:
    """Observe every turn at its real date, settling the fade at each session's end.

    Each turn becomes a ``message`` event by its speaker with ``attrs={"dia_id": ...}``
    (the runtime's clock should be a :class:`~solace.clock.ReplayClock`, which follows
    the dates). Returns ``{dia_id: entry_id}``.
    """
    from solace.runtime import Observation

    ids: dict[str, int] = {}
    for session in conversation.sessions:
        items = [
            Observation(t.text, t.speaker, "message", t.at, {"dia_id": t.dia_id}) for t in session
        ]
        for turn, entry_id in zip(session, await runtime.observe_many(items), strict=True):
            ids[turn.dia_id] = entry_id
        await runtime.settle()
    return ids
