"""LLM fact extraction: one JSON call per exchange, every fact through the guard.

Used when a store's ``extraction_mode`` is ``llm``. The model is shown the exchange
with its relative dates already resolved (``resolve_relative_dates`` at the turn's
time, as the deterministic extractor and the ladder do), so it never has to do date
arithmetic, and asked for at most ``limit`` short third-person facts as JSON.

The contract with the caller:

* one ``llm.complete_json`` call, synchronous (the caller runs it off the trio loop
  through its offloader);
* each returned fact is judged by ``guard.check`` against the exchange text: a fact
  that introduces a name, number or date absent from the exchange (``invented``), or
  is empty, is dropped. The guard's other reasons (length, kept share) are about
  rewrites of a whole source and do not apply to one fact drawn from it;
* ``None`` means "use the rules extractor instead": the LLM is unavailable
  (``LLMUnavailableError``), its output is not the expected JSON
  (``LLMOutputError`` or a schema failure), or the guard dropped every fact it
  proposed. An empty list means the model found nothing worth keeping (accepted).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from solace.facts.extract_rules import IMPORTANCE, KINDS
from solace.facts.model import Candidate, Exchange
from solace.memory.ladder.dates import format_date, resolve_relative_dates
from solace.models.guard import Guard
from solace.models.llm import LLM, ChatMessage, LLMOutputError, LLMUnavailableError
from solace.models.schema import SchemaError, validate

__all__ = ["MAX_FACT_CHARS", "extract_with_llm", "facts_schema", "source_text"]

#: The longest fact text the schema admits.
MAX_FACT_CHARS = 200
_SLOT_RE = re.compile(r"[^a-z0-9:_-]+")

_SYSTEM = (
    "You extract durable facts about the user from one exchange, for a long-term memory. "
    "Write each fact as one short third-person sentence that stands on its own "
    "(\"{subject} prefers invoices summarised in French\"). Keep names, numbers and dates "
    "exactly as written; never add any. Facts are preferences, identity (name, job, age, "
    "home), relationships, plans, possessions, obligations and deadlines, notable events, "
    "and corrections of something said earlier. Greetings, questions, thanks and small "
    "talk are not facts: answer with an empty list for them. The slot names what the fact "
    "is about, the same for a later fact about the same thing (\"residence\", \"job\", "
    "\"preference:coffee\", \"relationship:sister\")."
)


def facts_schema(limit: int) -> dict[str, Any]:
    """The JSON schema of an answer with at most ``limit`` facts."""
    return {
        "type": "object",
        "properties": {
            "facts": {
                "type": "array",
                "maxItems": limit,
                "items": {
                    "type": "object",
                    "properties": {
                        "text": {"type": "string", "minLength": 1, "maxLength": MAX_FACT_CHARS},
                        "kind": {"type": "string", "enum": list(KINDS)},
                        "slot": {"type": "string", "maxLength": 80},
                        "importance": {"type": "number", "minimum": 0, "maximum": 1},
                        "correction": {"type": "boolean"},
                    },
                    "required": ["text", "kind"],
                    "additionalProperties": False,
                },
            }
        },
        "required": ["facts"],
        "additionalProperties": False,
    }


def _subject(exchange: Exchange) -> str:
    return exchange.speaker.strip() or "The user"


def source_text(exchange: Exchange) -> str:
    """The exchange as the model reads it and the guard judges against: one line per
    part, relative dates resolved at the turn's time."""
    lines = [f"{_subject(exchange)}: {resolve_relative_dates(exchange.user, exchange.ts)}"]
    if exchange.reply:
        lines.append(f"Assistant: {resolve_relative_dates(exchange.reply, exchange.ts)}")
    lines.extend(f"Tool result: {resolve_relative_dates(t, exchange.ts)}"
                 for t in exchange.tool_results)
    return "\n".join(lines)


def _messages(exchange: Exchange, source: str, limit: int) -> list[ChatMessage]:
    system = _SYSTEM.replace("{subject}", _subject(exchange))
    when = ""
    if exchange.ts > 0:
        day = format_date(datetime.fromtimestamp(exchange.ts, UTC).date())
        when = f"The exchange happened on {day}.\n"
    user = (
        f"{when}Extract at most {limit} facts about {_subject(exchange)}. Answer with JSON: "
        '{"facts": [{"text": "...", "kind": "preference|identity|relationship|plan|'
        'possession|obligation|correction|event", "slot": "...", "importance": 0.0-1.0, '
        '"correction": true|false}]}\n\n' + source
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def _candidate(item: dict[str, Any]) -> Candidate:
    correction = bool(item.get("correction", False)) or item["kind"] == "correction"
    kind = "correction" if correction else str(item["kind"])
    importance = item.get("importance")
    if not isinstance(importance, (int, float)) or isinstance(importance, bool):
        importance = IMPORTANCE.get(kind, 0.5)
    slot = _SLOT_RE.sub("_", str(item.get("slot", "")).casefold()).strip("_")
    text = " ".join(str(item["text"]).split()).rstrip(".")
    return Candidate(text=text, importance=round(min(1.0, max(0.0, float(importance))), 3),
                     slot=slot, kind=kind, correction=correction)


def extract_with_llm(
    exchange: Exchange, *, llm: LLM, guard: Guard, limit: int
) -> list[Candidate] | None:
    """Distil one exchange into at most ``limit`` facts with one LLM call.

    Args:
        exchange: the turn (user message, reply, tool results, time, speaker).
        llm: the model; called once, synchronously, through ``complete_json``.
        guard: judges each fact against the exchange text (counts its verdicts).
        limit: the store's ``max_extractions_per_turn``; 0 gives ``[]`` without a call.

    Returns:
        The facts that passed the guard, most important first (at most ``limit``);
        ``[]`` when the model found none; ``None`` when the caller must fall back to
        the rules extractor: the LLM is unavailable, its output is not the expected
        JSON, or the guard dropped every fact it proposed.

    Raises:
        ValueError: ``limit`` is negative.
    """
    if limit < 0:
        raise ValueError(f"limit must be >= 0, got {limit!r}")
    if limit == 0:
        return []
    source = source_text(exchange)
    schema = facts_schema(limit)
    try:
        answer = llm.complete_json(_messages(exchange, source, limit), schema)
        validate(answer, schema)  # whatever the backend promised, memory checks for itself
    except (LLMUnavailableError, LLMOutputError, SchemaError):
        return None
    proposed = [_candidate(item) for item in answer["facts"]]
    kept = [c for c in proposed
            if not (verdict := guard.check(source, c.text)).invented
            and "empty" not in verdict.reasons]
    if proposed and not kept:
        return None
    unique: dict[str, Candidate] = {}
    for c in kept:
        unique.setdefault(c.text.casefold(), c)
    return sorted(unique.values(), key=lambda c: -c.importance)[:limit]
