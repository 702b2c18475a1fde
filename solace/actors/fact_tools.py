"""Fact memory for the actors: the turn's memory id, recall before a turn,
extraction after it, and the ``remember`` / ``recall`` tools of every actor.

The runtime owns one :class:`FactTools` over its (possibly absent) fact memory.
Main opens each turn with :meth:`FactTools.begin_turn` (the request's memory id,
else the conversation scope's user; the request's store, else the agent's
configured one, else ``default``); an actor's ``remember`` or ``recall_facts``
acts under the memory id of the turn in progress.

Memory never fails a turn (seed 001): with fact memory switched off, or a fact
store that raises, a turn proceeds without memory and the cause is logged once
(later failures of the same operation are counted in :attr:`FactTools.failures`,
not logged again). A tool call always gets a result the agent can read
(``ok: false`` with the reason), never an exception.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from solace.conversation.tools import FACT_TOOLS
from solace.models.schema import SchemaError, validate

if TYPE_CHECKING:
    from solace.facts import Exchange, FactMemory, RecallBlock, WriteResult

__all__ = ["FACTS_OFF", "FactTools", "TurnMemory", "remember_line"]

log = logging.getLogger(__name__)

#: What a tool call answers while fact memory is switched off (or failed to open).
FACTS_OFF = "fact memory is off"

_SPECS = {spec.name: spec for spec in FACT_TOOLS}


@dataclass(frozen=True, slots=True)
class TurnMemory:
    """The memory a turn reads and writes: its memory id and the request's store
    (None: the agent's configured store, else ``default``)."""

    memory_id: str
    store: str | None = None


def remember_line(result: WriteResult) -> str:
    """One line saying what a write became: ``UPDATE: newer value for f1a2...``."""
    return f"{result.write_class.value}: {result.reason}"


class FactTools:
    """remember / recall for every actor, and Main's per-turn recall and extraction.

    Args:
        facts: returns the runtime's fact memory, or None while it is off.
        default_id: the memory id of a turn whose request names none (the
            conversation scope's user).

    Attributes:
        turn: the memory of the turn in progress (the default id until a turn begins).
        failures: fact-store failures by operation (``recall``, ``extract``,
            ``remember``, ``recall_tool``), and ``off`` turns that carried a memory id
            while fact memory was off.
    """

    def __init__(self, facts: Callable[[], FactMemory | None], *, default_id: str) -> None:
        self._facts = facts
        self.default_id = default_id
        self.turn = TurnMemory(default_id)
        self.failures: Counter[str] = Counter()
        self._logged: set[str] = set()

    @property
    def facts(self) -> FactMemory | None:
        """The fact memory, or None while it is off."""
        return self._facts()

    def check(self, memory_id: str | None, store: str | None, agent: str = "Main") -> None:
        """Refuse a request's memory fields before anything is sent (memory on only:
        with memory off a request carrying them proceeds without memory).

        Raises:
            solace.facts.InvalidMemoryIdError: naming the id and the rule.
            solace.facts.UnknownStoreError: naming the store.
        """
        facts = self.facts
        if facts is None:
            return
        from solace.facts import check_memory_id

        if memory_id is not None:
            check_memory_id(memory_id)
        facts.store_name(store, agent)

    def off_logged(self) -> None:
        """Fact memory's absence was logged already (when it was opened): turns that
        carry memory fields do not log it again (they are still counted)."""
        self._logged.add("off")

    def begin_turn(self, memory_id: str | None = None, store: str | None = None) -> TurnMemory:
        """Start a turn under ``memory_id`` (default: :attr:`default_id`) and ``store``;
        logs once (unless :meth:`off_logged`) when the request carries memory fields
        and fact memory is off."""
        self.turn = TurnMemory(memory_id or self.default_id, store or None)
        if self.facts is None and (memory_id or store):
            self.failures["off"] += 1
            self._log_once("off", "fact memory is off: turns carrying a memory id (%s) "
                           "proceed without memory", self.turn.memory_id)
        return self.turn

    # ---------------------------------------------------------------- Main's turn

    async def recall_block(self, turn: TurnMemory, query: str,
                           agent: str = "Main") -> RecallBlock | None:
        """The recall block for ``query`` under ``turn``; None without memory or when
        the fact store fails (logged once, never raised)."""
        facts = self.facts
        if facts is None:
            return None
        try:
            return await facts.recall(query, turn.memory_id, store=turn.store, agent=agent)
        except Exception as exc:  # a failing fact store never fails the turn
            self._failed("recall", exc)
            return None

    async def extract(self, turn: TurnMemory, exchange: Exchange,
                      agent: str = "Main") -> list[WriteResult]:
        """Distil ``exchange`` into facts under ``turn`` (classified writes); [] without
        memory or when the fact store fails (logged once, never raised)."""
        facts = self.facts
        if facts is None:
            return []
        try:
            written = await facts.extract_turn(turn.memory_id, exchange, store=turn.store,
                                               agent=agent)
        except Exception as exc:  # the reply is out already; memory must not break it
            self._failed("extract", exc)
            return []
        return written

    # ---------------------------------------------------------------- the tools

    async def remember(self, agent: str, text: str,
                       importance: float | None = None) -> dict[str, Any]:
        """``remember`` for actor ``agent``: classify and write ``text`` under the turn's
        memory id (``FactMemory.remember(..., agent=agent)``). The result names the
        class and the reason (``"result": "UPDATE: newer value for f..."``)."""
        args: dict[str, Any] = {"text": text}
        if importance is not None:
            args["importance"] = importance
        return await self.run(agent, "remember", args)

    async def recall(self, agent: str, query: str, k: int | None = None) -> dict[str, Any]:
        """``recall`` for actor ``agent``: the turn's memory id's facts best matching
        ``query`` (the store's ``top_k``, or ``k``)."""
        args: dict[str, Any] = {"query": query}
        if k is not None:
            args["k"] = k
        return await self.run(agent, "recall", args)

    def owns(self, name: str) -> bool:
        """True for the tools dispatched here (``remember``, ``recall``)."""
        return name in _SPECS

    async def run(self, agent: str, name: str, args: Mapping[str, Any]) -> dict[str, Any]:
        """Run fact tool ``name`` for ``agent`` with JSON ``args``; always a result
        (``ok: false`` and ``error`` when refused, invalid, off or failing)."""
        from solace.facts import FactMemoryError, fact_record

        if name not in _SPECS:
            raise KeyError(f"unknown fact tool {name!r} (tools are {', '.join(_SPECS)})")
        try:
            validate(dict(args), _SPECS[name].parameters)
        except SchemaError as exc:
            return {"ok": False, "error": f"{name}: invalid arguments: {exc}"}
        facts = self.facts
        if facts is None:
            return {"ok": False, "error": FACTS_OFF}
        turn = self.turn
        try:
            if name == "remember":
                result = await facts.remember(turn.memory_id, args["text"], store=turn.store,
                                              importance=args.get("importance"), agent=agent)
                return {"ok": True, "result": remember_line(result),
                        "class": result.write_class.value, "reason": result.reason,
                        "fact_id": result.fact.fact_id, "memory_id": turn.memory_id,
                        "store": result.fact.store}
            block = await facts.recall(args["query"], turn.memory_id, store=turn.store,
                                       k=args.get("k"), agent=agent)
            return {"ok": True, "memory_id": block.memory_id, "store": block.store,
                    "text": block.text, "tokens": block.tokens,
                    "facts": [{**_brief(fact_record(s.fact)), "score": round(s.score, 4)}
                              for s in block.facts]}
        except FactMemoryError as exc:  # a refused argument: the agent reads why
            return {"ok": False, "error": f"{name}: {exc}"}
        except Exception as exc:  # a failing store: a result, never a failed turn
            self._failed(f"{name}_tool", exc)
            return {"ok": False, "error": f"{name}: fact memory failed ({exc})"}

    # ---------------------------------------------------------------- logging

    def note_failure(self, what: str, exc: Exception) -> None:
        """Count a fact-store failure of operation ``what`` made outside a turn (an
        import's extraction); the first of each operation is logged."""
        self._failed(what, exc)

    def _failed(self, what: str, exc: Exception) -> None:
        self.failures[what] += 1
        self._log_once(what, "fact memory: %s failed (%s: %s); the turn proceeds without "
                       "memory (later failures are counted, not logged)",
                       what, type(exc).__name__, exc)

    def _log_once(self, key: str, message: str, *args: object) -> None:
        if key in self._logged:
            log.debug(message, *args)
            return
        self._logged.add(key)
        log.warning(message, *args)


def _brief(record: Mapping[str, Any]) -> dict[str, Any]:
    keys = ("id", "text", "status", "importance", "last_confirmed", "conflicts_with")
    return {k: record[k] for k in keys}
