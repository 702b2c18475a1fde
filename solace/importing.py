"""Importing conversations into a runtime: idempotent, resumable, in keyed batches.

Every imported event carries an ``import_key`` attribute naming its source (a LoCoMo
turn is ``locomo:<sample_id>:<dia_id>``; a JSONL line is ``jsonl:`` plus a digest of its
speaker, time and text and which repeat of that triple it is, or ``jsonl:id:<id>`` when
the line gives an ``id``). Before writing, :func:`import_batches` reads the keys the
substrate already holds and skips those items, so importing a file twice adds nothing
the second time, and an import cut short (Ctrl-C, a crash) is finished by running it
again: each batch is one atomic substrate write, so a batch is either wholly kept or
wholly absent.

The JSONL format (:func:`load_jsonl`) is one JSON object per line::

    {"speaker": "Ana", "text": "I adopted a greyhound.", "at": "2023-05-08T13:56:00Z"}

``at`` is ISO 8601 (naive means UTC) or epoch seconds; ``id`` (optional) is the line's
own stable key. Blank lines are skipped; a bad line is refused with its line number
before anything is written.

Replayed history counts as lived (seed 003): each written batch is distilled as a
live turn is, at the items' dates (the runtime's :class:`~solace.clock.ReplayClock`
follows them): every line goes through fact memory's extractor under the runtime's
default memory id (the speaker names the person), then the workspace records a
``digest`` for each replayed day the batch touches (a deterministic extractive
summary of that day's imported lines, secrets dropped, at the day's last imported
event's time; see :mod:`solace.workspace.digest`; a line the rules extractor finds a
fact in is left to that fact, so deleting the fact still takes it out of every
file), so each day with events gets its
daily log (facts learned and a ``Conversation`` summary, never the transcript), and
the workspace's heartbeat runs as each replayed day begins and once at the end
(MEMORY.md and the roll-ups every ``[workspace] synthesize_every_hours`` of replayed
time). A digest is keyed by the day and the import keys it covers, so a re-import that
skips every item adds none; a day that gains lines gets one that supersedes the old.
A batch cut short after its write and before its distillation is not distilled again
by a re-run (its events are skipped as imported).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from solace.validation import InvalidObservationError, check_observation

__all__ = [
    "IMPORT_KEY",
    "ImportFormatError",
    "ImportHistory",
    "ImportItem",
    "imported_keys",
    "import_batches",
    "load_jsonl",
]

#: The event attribute that names an imported event's source.
IMPORT_KEY = "import_key"

log = logging.getLogger(__name__)


class ImportFormatError(ValueError):
    """Raised when a file to import is not in the expected format; the message names
    the file, and the line or item, and what is wrong with it."""


@dataclass(frozen=True, slots=True)
class ImportItem:
    """One event to import: its source key, who said it, what, when, extra attrs.

    ``attrs`` never holds :data:`IMPORT_KEY`; :func:`import_batches` adds it.
    """

    key: str
    speaker: str
    text: str
    at: float
    attrs: tuple[tuple[str, str], ...] = ()


def _instant(value: object, where: str) -> float:
    if isinstance(value, bool):
        raise ImportFormatError(f"{where}: \"at\" must be ISO 8601 text or epoch seconds, "
                                f"got {value!r}")
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        text = value.strip()
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError:
            raise ImportFormatError(f"{where}: \"at\" is not an ISO 8601 date-time: "
                                    f"{value!r}") from None
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=UTC)
        return parsed.timestamp()
    raise ImportFormatError(f"{where}: \"at\" must be ISO 8601 text or epoch seconds, "
                            f"got {value!r}")


def _jsonl_item(line: str, where: str, number: int, seen: dict[str, int]) -> ImportItem:
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ImportFormatError(f"{where}: not JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(obj, dict):
        raise ImportFormatError(f"{where}: expected an object "
                                f"{{\"speaker\", \"text\", \"at\"}}, got {obj!r:.60}")
    missing = [k for k in ("speaker", "text", "at") if k not in obj]
    if missing:
        raise ImportFormatError(f"{where}: missing {', '.join(repr(k) for k in missing)}")
    at = _instant(obj["at"], where)
    try:
        checked = check_observation(
            obj["text"], speaker=obj["speaker"], kind="message", at=at, attrs=None,
            emotional_weight=None, tags=(), kinds=("message",),
        )
    except InvalidObservationError as exc:
        raise ImportFormatError(f"{where}: {exc}") from None
    assert checked.speaker is not None and checked.ts is not None
    if "id" in obj:
        if not isinstance(obj["id"], str | int) or isinstance(obj["id"], bool) or obj["id"] == "":
            raise ImportFormatError(f"{where}: \"id\" must be a non-empty string or an "
                                    f"integer, got {obj['id']!r}")
        key = f"jsonl:id:{obj['id']}"
        if key in seen:
            raise ImportFormatError(f"{where}: \"id\" {obj['id']!r} already used on line "
                                    f"{seen[key]}")
        seen[key] = number
        return ImportItem(key, checked.speaker, checked.text, checked.ts)
    digest = hashlib.sha256(
        json.dumps([checked.speaker, checked.ts, checked.text]).encode("utf-8")
    ).hexdigest()[:24]
    repeat = seen.get(digest, 0)
    seen[digest] = repeat + 1
    return ImportItem(f"jsonl:{digest}:{repeat}", checked.speaker, checked.text, checked.ts)


def load_jsonl(path: str | Path) -> list[ImportItem]:
    """The events of a JSONL file of ``{speaker, text, at}`` lines, in file order.

    Guarantees: the same file always yields the same keys (a line's key depends on
    its content, or its ``id``, never on its position), so re-importing it is a no-op;
    every line is checked before anything is returned.

    Raises:
        ImportFormatError: naming the file and the first bad line's number, and how many
            lines are bad in all.
        OSError: the file cannot be read.
    """
    p = Path(path)
    items: list[ImportItem] = []
    seen: dict[str, int] = {}
    errors: list[str] = []
    with p.open(encoding="utf-8", errors="strict") as f:
        try:
            for number, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    items.append(_jsonl_item(line, f"{p} line {number}", number, seen))
                except ImportFormatError as exc:
                    errors.append(str(exc))
        except UnicodeDecodeError as exc:
            raise ImportFormatError(f"{p}: not UTF-8 text ({exc.reason} at byte "
                                    f"{exc.start} of a read block)") from None
    if errors:
        more = f" (and {len(errors) - 1} more bad lines)" if len(errors) > 1 else ""
        raise ImportFormatError(errors[0] + more)
    if not items:
        raise ImportFormatError(f"{p}: no events (expected one JSON object per line)")
    return items


async def imported_keys(substrate: Any) -> set[str]:
    """The import keys of every ``message`` event ``substrate`` (a trio substrate) holds."""
    events = await substrate.scan(kind="message")
    return {e.attrs[IMPORT_KEY] for e in events if IMPORT_KEY in e.attrs}


async def import_batches(
    runtime: Any,
    batches: Sequence[Sequence[ImportItem]],
    *,
    on_skipped: Callable[[int], None] = lambda n: None,
) -> AsyncGenerator[int, None]:
    """Observe the items of each batch not already imported, one atomic write a batch.

    An async generator: yields the number of events written for each batch, after the
    batch is written and delivered and the fade has settled.

    Args:
        runtime: an open :class:`~solace.runtime.Runtime` (a
            :class:`~solace.clock.ReplayClock` follows the items' dates).
        batches: items in order; a batch is written with one substrate write.
        on_skipped: called once, before anything is written, with how many items are
            already in the substrate (and so skipped).

    Guarantees: an item whose key the substrate holds is never written again, so a
    batch cut short is either wholly in the substrate or wholly absent.
    """
    from solace.runtime import Observation

    held = [e for e in await runtime.substrate.scan(kind="message") if IMPORT_KEY in e.attrs]
    done = {e.attrs[IMPORT_KEY] for e in held}
    history = ImportHistory(ImportItem(e.attrs[IMPORT_KEY], e.agent, e.content, e.ts)
                            for e in held)
    on_skipped(sum(1 for batch in batches for item in batch if item.key in done))
    for batch in batches:
        todo = [item for item in batch if item.key not in done]
        if todo:
            observations = [
                Observation(item.text, item.speaker, "message", item.at,
                            {**dict(item.attrs), IMPORT_KEY: item.key})
                for item in todo
            ]
            await runtime.observe_many(observations)
            done.update(item.key for item in todo)
            await runtime.settle()
            await distil(runtime, todo, history)
        yield len(todo)
    link = getattr(runtime, "workspace_link", None)
    if link is not None:
        await link.after_import(final=True)


class ImportHistory:
    """Every imported line the home holds (and this import adds), by import key, and
    indexed by calendar day once a day function is given (:meth:`of_days`)."""

    def __init__(self, items: Any = ()) -> None:
        self._items: dict[str, ImportItem] = {}
        self._days: dict[date, dict[str, ImportItem]] | None = None
        self._day_of: Callable[[float], date] | None = None
        self._teaches: dict[str, bool] = {}
        self.add(items)

    def add(self, items: Any) -> None:
        """Remember ``items`` (an item already held by key is kept as it was)."""
        for item in items:
            if item.key in self._items:
                continue
            self._items[item.key] = item
            if self._days is not None and self._day_of is not None:
                self._days.setdefault(self._day_of(item.at), {})[item.key] = item

    def of_days(self, days: set[date], day_of: Callable[[float], date]) -> list[ImportItem]:
        """Every held line whose ``day_of`` its time is in ``days``, except a line that
        teaches a fact (:meth:`teaches`): the daily log has it as that fact, which
        leaves every file when it is deleted; a digest must not keep it."""
        if self._days is None or self._day_of is not day_of:
            self._day_of, self._days = day_of, {}
            for item in self._items.values():
                self._days.setdefault(day_of(item.at), {})[item.key] = item
        return [item for d in sorted(days) for item in self._days.get(d, {}).values()
                if not self.teaches(item)]

    def teaches(self, item: ImportItem) -> bool:
        """True if the rules extractor finds a fact in ``item`` (deterministic, so a
        re-run or a later import decides the same; remembered by key)."""
        found = self._teaches.get(item.key)
        if found is None:
            from solace.facts import Exchange
            from solace.facts.extract_rules import extract_facts

            exchange = Exchange(item.text, ts=item.at, speaker=item.speaker)
            found = self._teaches[item.key] = bool(extract_facts(exchange, limit=1))
        return found


async def distil(runtime: Any, items: Sequence[ImportItem],
                 history: ImportHistory | None = None) -> int:
    """Distil imported ``items`` as lived turns: each through fact memory's extractor
    (under the runtime's default memory id, stated at the item's date, the speaker
    naming the person; with the ``rules`` extractor, the batch's facts are classified
    and written as one batch), then the workspace's digest of each day the items touch
    (over that day's imported lines ``history`` holds, ``items`` included, but those
    that teach a fact: :meth:`ImportHistory.of_days`; see
    :meth:`~solace.workspace.Workspace.digest_import`), then its import step (a
    heartbeat as each replayed day begins). Without fact memory or a workspace, that
    part is skipped. Never raises for a failing fact store (logged once, counted in
    ``runtime.fact_tools.failures["import"]``) or a failing digest (logged, counted in
    ``runtime.workspace_link.failures["digest"]``). Returns the facts written."""
    facts = getattr(runtime, "facts", None)
    written = 0
    if facts is not None:
        try:
            written = await _extract(facts, runtime.fact_tools.default_id, items)
        except Exception as exc:  # an import is not failed by memory (seed 001)
            runtime.fact_tools.note_failure("import", exc)
    link = getattr(runtime, "workspace_link", None)
    if link is not None:
        await _digest(link, items, history if history is not None else ImportHistory())
        await link.after_import()
    return written


async def _digest(link: Any, items: Sequence[ImportItem], history: ImportHistory) -> None:
    history.add(items)
    ws = link.workspace
    if ws is None:
        return
    try:
        day_of = ws.ledger.day_of
        await ws.digest_import(history.of_days({day_of(i.at) for i in items}, day_of))
    except Exception as exc:  # an import is not failed by the workspace
        link.failures["digest"] += 1
        log.error("workspace: an imported day's digest failed (%s: %s)",
                  type(exc).__name__, exc)


async def _extract(facts: Any, memory_id: str, items: Sequence[ImportItem]) -> int:
    from solace.facts import Exchange
    from solace.facts.extract_rules import extract_facts

    store = facts.store_name(None, "Main")
    policy = facts.store(store)
    exchanges = [Exchange(item.text, ts=item.at, speaker=item.speaker) for item in items]
    if policy.extraction_mode != "rules":  # the LLM (or none): one turn at a time
        return sum([len(await facts.extract_turn(memory_id, x, store=store, agent="Main"))
                    for x in exchanges])
    limit = policy.max_extractions_per_turn
    candidates, stamps = [], []
    for x in exchanges:
        found = list(extract_facts(x, limit=limit))[:limit] if limit > 0 else []
        candidates += found
        stamps += [x.ts] * len(found)
    if not candidates:
        return 0
    results = await facts.write(memory_id, candidates, store=store, agent="Main",
                                source="extract", as_of=stamps)
    return len(results)
