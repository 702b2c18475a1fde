"""The ``/memory`` endpoints: fact memory over HTTP (issue 9 section 9).

Each handler calls one method of :class:`solace.app.Solace` and answers with the
JSON shapes of :mod:`solace.facts.transfer` (the same the CLI's ``--json`` prints):

- ``POST /memory/{id}/remember`` -> ``{"class", "reason", "fact"}``
- ``POST /memory/{id}/recall`` -> ``{"memory_id", "store", "text", "tokens", "facts"}``
- ``GET /memory?store=S`` -> ``{"ids"}``
- ``GET /memory/{id}/facts?all=true`` -> ``{"facts"}``
- ``DELETE /memory/{id}/facts/{fact_id}`` -> ``{"deleted"}``
- ``DELETE /memory/{id}`` -> ``{"forgotten"}``
- ``POST /memory/{id}/consolidate`` -> ``{"compactions"}``
- ``GET /memory/{id}/export`` -> ``{"facts"}``
- ``POST /memory/import`` -> ``{"results": [{"memory_id", "class", "reason", "fact_id"}]}``

The request has passed the server's checks (token, body schema, the memory id's rule
and the token's scope) before a handler runs. Errors map as every endpoint's do
(400 a bad value, 404 an unknown fact id); with fact memory off the app raises
:class:`~solace.facts.FactsDisabledError`, which the server answers 503
``facts_disabled``. Import rows are checked whole (:func:`rows_from_records`) before
anything is written.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from solace.app.memory import ImportResult
from solace.facts import Fact, fact_record
from solace.facts.transfer import (
    ImportRow,
    compaction_record,
    recall_record,
    rows_from_records,
    write_record,
)

if TYPE_CHECKING:
    from solace.surfaces.http.app import Call

__all__ = ["memory_handlers"]


async def _answer(value: Any) -> Any:
    """``value``, awaited if the app's method was a coroutine."""
    return await value if inspect.isawaitable(value) else value


def _record(fact: Fact | Mapping[str, Any]) -> dict[str, Any]:
    return fact_record(fact) if isinstance(fact, Fact) else dict(fact)


def _import_result(item: ImportResult) -> dict[str, Any]:
    return {"memory_id": item.memory_id, "class": item.write_class, "reason": item.reason,
            "fact_id": item.fact_id}


def memory_handlers(app: Any) -> dict[str, Callable[[Call], Awaitable[Any]]]:
    """The handlers of the ``/memory`` endpoints over ``app``, by operation name."""

    async def memory_remember(call: Call) -> Any:
        b = call.body
        return write_record(await app.remember(call.params["memory_id"], b["text"],
                                               store=b.get("store"),
                                               importance=b.get("importance")))

    async def memory_recall(call: Call) -> Any:
        b = call.body
        return recall_record(await app.recall_facts(b["query"], call.params["memory_id"],
                                                    store=b.get("store"), k=b.get("k")))

    async def memory_ids(call: Call) -> Any:
        return {"ids": list(await _answer(app.memory_ids(call.query.get("store"))))}

    async def memory_facts(call: Call) -> Any:
        facts = await _answer(app.memory_facts(call.params["memory_id"],
                                               all=call.query.get("all") == "true"))
        return {"facts": [_record(f) for f in facts]}

    async def memory_delete(call: Call) -> Any:
        fact_id = call.params["fact_id"]
        await app.delete_fact(call.params["memory_id"], fact_id)
        return {"deleted": fact_id}

    async def memory_forget(call: Call) -> Any:
        return {"forgotten": int(await app.forget(call.params["memory_id"]))}

    async def memory_consolidate(call: Call) -> Any:
        verdicts = await app.consolidate(call.params["memory_id"])
        return {"compactions": [compaction_record(c) for c in verdicts]}

    async def memory_export(call: Call) -> Any:
        facts = await _answer(app.export_facts(call.params["memory_id"]))
        return {"facts": [_record(f) for f in facts]}

    async def memory_import(call: Call) -> Any:
        rows: list[ImportRow] = rows_from_records(call.body["rows"], source="$.rows")
        done = await app.import_facts([r.as_json() for r in rows], call.body["store"])
        return {"results": [_import_result(item) for item in done]}

    return {name: fn for name, fn in locals().items() if name.startswith("memory_")}
