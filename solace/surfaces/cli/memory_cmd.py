"""``solace memory ...``: the operator's side of fact memory (issue 9 section 9).

::

    solace memory remember ID TEXT [--store S] [--importance X]
    solace memory recall ID QUERY [--store S] [-k N] [--json]
    solace memory ids [--store S]
    solace memory facts ID [--all] [--json]
    solace memory delete ID FACT_ID
    solace memory forget ID
    solace memory consolidate ID
    solace memory export ID            # JSONL on stdout
    solace memory import FILE --store S [--id ID]

Each opens the home's substrate (with the ``memfact`` kind) and its fact memory
directly, with the configured embedder (MiniLM by default, offline), so a fact
remembered by one process is recalled by the next. While ``solace serve`` or ``solace
run --serve`` holds the home, the command asks that process over HTTP instead
(``/memory...``) and prints the same thing.

Arguments are checked before the home is opened: an invalid memory id (naming the id
and the rule), an unknown ``--store``, an importance outside [0, 1] or a ``-k`` below 1
is a usage error (exit 2); an import file is read and checked whole before anything is
written, and a bad line is one error naming the file, line and field (exit 1). The
commands that only read refuse a home with no substrate; ``remember`` and ``import``
need an existing ``--home`` directory. None prints a traceback (``--verbose`` does).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import trio

from solace.app import Layers, Solace
from solace.clock import WallClock, utc_day
from solace.config import Config
from solace.facts import MEMORY_ID_RULE, fact_record, is_memory_id
from solace.facts.transfer import (
    ImportRow,
    compaction_record,
    export_lines,
    read_import,
    recall_record,
    write_record,
)
from solace.home import Home
from solace.surfaces.cli.errors import UsageError, guarded
from solace.surfaces.cli.options import (
    add_common,
    config_of,
    existing_home,
    finish,
    open_home_substrate,
)
from solace.surfaces.cli.remote import Remote, local_or_remote, quoted

__all__ = ["format_facts", "format_recall", "register"]

Local = Callable[[Solace, argparse.Namespace], Awaitable[str]]
RemoteAction = Callable[[Remote, argparse.Namespace], str]

#: The actions that may start from a home with no substrate yet.
WRITES = frozenset({"remember", "import"})


def register(subparsers: Any) -> None:
    """Add ``memory`` and its actions to the ``solace`` command line."""
    memory = subparsers.add_parser(
        "memory", help="fact memory by memory id: remember, recall, list, delete, forget, "
                       "consolidate, export, import")
    sub = memory.add_subparsers(dest="action", metavar="ACTION", required=True)

    def action(name: str, text: str, local: Local, remote: RemoteAction,
               *args: tuple[str, str]) -> argparse.ArgumentParser:
        p: argparse.ArgumentParser = sub.add_parser(name, help=text)
        for dest, metavar in args:
            p.add_argument(dest, metavar=metavar)
        add_common(p)
        p.set_defaults(func=_command(local, remote))
        return p

    id_arg = ("memory_id", "ID")
    p = action("remember", "write one fact (classified ADD/UPDATE/NOOP/CONFLICT)",
               _remember, _remote_remember, id_arg, ("text", "TEXT"))
    _store(p)
    p.add_argument("--importance", type=float, metavar="X", help="in [0, 1] (default 0.5)")
    p = action("recall", "the facts best matching QUERY, scored", _recall, _remote_recall,
               id_arg, ("query", "QUERY"))
    _store(p)
    p.add_argument("-k", type=int, metavar="N", help="how many (default: the store's top_k)")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p = action("ids", "the memory ids holding facts", _ids, _remote_ids)
    _store(p)
    p = action("facts", "an id's facts: status, importance, mentions, last confirmed",
               _facts, _remote_facts, id_arg)
    p.add_argument("--all", action="store_true",
                   help="history too (superseded and evicted facts)")
    p.add_argument("--json", action="store_true", help="print one JSON document (a list)")
    action("delete", "delete one fact for good (its text becomes unrecoverable)",
           _delete, _remote_delete, id_arg, ("fact_id", "FACT_ID"))
    action("forget", "delete every fact of an id for good", _forget, _remote_forget, id_arg)
    action("consolidate", "compact an id's live facts now", _consolidate, _remote_consolidate,
           id_arg)
    action("export", "an id's facts as JSONL on stdout (history included)", _export,
           _remote_export, id_arg)
    p = action("import", "seed a store from a JSONL or CSV file (no extraction)", _import,
               _remote_import, ("file", "FILE"))
    p.add_argument("--store", required=True, metavar="S", help="the store to file rows in")
    p.add_argument("--id", dest="into", metavar="ID",
                   help="file every row under ID (else each row names its memory_id)")


def _store(p: argparse.ArgumentParser) -> None:
    p.add_argument("--store", metavar="S", help="the store (default: 'default')")


def _check(args: argparse.Namespace, config: Config) -> None:
    """Usage errors, before the home is opened."""
    for name, value in (("ID", getattr(args, "memory_id", None)),
                        ("--id", getattr(args, "into", None))):
        if value is not None and not is_memory_id(value):
            raise UsageError(f"{name}: memory id {value!r} is not valid: {MEMORY_ID_RULE}")
    importance = getattr(args, "importance", None)
    if importance is not None and not 0.0 <= importance <= 1.0:
        raise UsageError(f"--importance must be in [0, 1], got {importance!r}")
    k = getattr(args, "k", None)
    if k is not None and k < 1:
        raise UsageError(f"-k must be at least 1, got {k}")
    store = getattr(args, "store", None)
    if store is not None and store not in config.stores:
        raise UsageError(f"--store: unknown store {store!r} (stores are "
                         f"{', '.join(sorted(config.stores))}; define more as "
                         "[stores.NAME] in the config)")


def _command(local: Local, remote: RemoteAction) -> Callable[[argparse.Namespace], int]:
    def func(args: argparse.Namespace) -> int:
        finish(args)
        config = config_of(args)
        _check(args, config)
        root = existing_home(args.home, config, substrate=args.action not in WRITES)
        if args.action == "import":  # read and check the whole file before anything opens
            args.rows = read_import(args.file, memory_id=args.into)
        out = local_or_remote(
            root, lambda: trio.run(_run, Home.at(root, config), args, local),
            lambda server: remote(server, args))
        if out:
            sys.stdout.write(out if out.endswith("\n") else out + "\n")
        return 0

    return guarded(func)


async def _run(home: Home, args: argparse.Namespace, action: Local) -> str:
    from solace.facts import open_fact_memory
    from solace.models import Guard, NoLLM, build_embedder, build_llm, build_tokenizer
    from solace.offload import Offloader

    cfg = home.config
    async with await open_home_substrate(home) as sub:
        tokenizer = build_tokenizer(cfg.models)
        uses_llm = any(s.extraction_mode == "llm" for s in cfg.stores.values())
        embedder, offloader, clock = build_embedder(cfg.models), Offloader(1), WallClock()
        memory = await open_fact_memory(
            facts_dir=home.facts_dir, substrate=sub, config=cfg,
            embedder=embedder, tokenizer=tokenizer,
            offloader=offloader, clock=clock,
            llm=build_llm(cfg.models) if uses_llm else NoLLM(), guard=Guard(tokenizer=tokenizer),
            snapshot=home.fact_snapshot)  # read, never written here
        from solace.runtime_workspace import following_workspace

        async with following_workspace(home, sub, memory, action=args.action, embedder=embedder,
                                       tokenizer=tokenizer, offloader=offloader):
            return await action(Solace(Layers(facts=memory, clock=clock)), args)


# -- printing (one path for local answers and a server's JSON) ------------------------


def _flag(r: Mapping[str, Any]) -> str:
    conflicts = r.get("conflicts_with") or []
    return f"  [CONFLICT with {', '.join(conflicts)}]" if r.get("status") == "conflicting" \
        and conflicts else ""


def format_facts(records: Sequence[Mapping[str, Any]]) -> str:
    """One fact a line: id, status, importance, mentions, last-confirmed day, text."""
    return "\n".join(
        f"{r['id']}  {r['status']:<11}  {float(r['importance']):.2f}  x{int(r['mentions']):<3}"
        f"  {utc_day(r['last_confirmed'])}  {r['text']}{_flag(r)}" for r in records
    ) or "(no facts)"


def format_recall(answer: Mapping[str, Any]) -> str:
    """A recall: one fact a line (score, id, text), best first, or ``(nothing recalled)``."""
    return "\n".join(f"{float(r['score']):.3f}  {r['id']}  {r['text']}{_flag(r)}"
                     for r in answer["facts"]) or "(nothing recalled)"


def _written(answer: Mapping[str, Any]) -> str:
    f = answer["fact"]
    return f"{answer['class']} {f['id']}: {f['text']} ({answer['reason']})"


def _consolidated(verdicts: Sequence[Mapping[str, Any]]) -> str:
    if not verdicts:
        return "nothing to consolidate (fewer than two live facts)"
    return "\n".join(
        f"accepted: {v['tokens_before']} -> {v['tokens_after']} tokens" if v["accepted"]
        else f"refused ({v['reason']}): {v['detail']}" for v in verdicts)


def _imported(store: str, classes: Sequence[str]) -> str:
    counts = Counter(classes)
    parts = ", ".join(f"{c} {counts[c]}" for c in ("ADD", "UPDATE", "NOOP", "CONFLICT")
                      if counts[c])
    return f"imported {len(classes)} rows into store {store}: {parts}"


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2)


# -- local: the home's own fact memory -------------------------------------------------


async def _remember(app: Solace, args: argparse.Namespace) -> str:
    result = await app.remember(args.memory_id, args.text, store=args.store,
                                importance=args.importance)
    return _written(write_record(result))


async def _recall(app: Solace, args: argparse.Namespace) -> str:
    answer = recall_record(await app.recall_facts(args.query, args.memory_id,
                                                  store=args.store, k=args.k))
    return _dump(answer) if args.json else format_recall(answer)


async def _ids(app: Solace, args: argparse.Namespace) -> str:
    return "\n".join(app.memory_ids(args.store))


async def _facts(app: Solace, args: argparse.Namespace) -> str:
    records = [fact_record(f) for f in app.memory_facts(args.memory_id, all=args.all)]
    return _dump(records) if args.json else format_facts(records)


async def _delete(app: Solace, args: argparse.Namespace) -> str:
    fact = await app.delete_fact(args.memory_id, args.fact_id)
    return f"deleted {fact.fact_id}"


async def _forget(app: Solace, args: argparse.Namespace) -> str:
    return f"forgot {await app.forget(args.memory_id)} facts of {args.memory_id}"


async def _consolidate(app: Solace, args: argparse.Namespace) -> str:
    return _consolidated([compaction_record(c) for c in await app.consolidate(args.memory_id)])


async def _export(app: Solace, args: argparse.Namespace) -> str:
    return export_lines(app.export_facts(args.memory_id))


async def _import(app: Solace, args: argparse.Namespace) -> str:
    done = await app.import_rows(args.rows, args.store)
    return _imported(args.store, [r.write_class for r in done])


# -- remote: the serving process's /memory endpoints -----------------------------------


def _path(args: argparse.Namespace, tail: str = "") -> str:
    return f"/memory/{quoted(args.memory_id)}{tail}"


def _remote_remember(server: Remote, args: argparse.Namespace) -> str:
    body: dict[str, Any] = {"text": args.text}
    if args.store is not None:
        body["store"] = args.store
    if args.importance is not None:
        body["importance"] = args.importance
    return _written(server.call("POST", _path(args, "/remember"), body=body))


def _remote_recall(server: Remote, args: argparse.Namespace) -> str:
    body: dict[str, Any] = {"query": args.query}
    if args.store is not None:
        body["store"] = args.store
    if args.k is not None:
        body["k"] = args.k
    answer = server.call("POST", _path(args, "/recall"), body=body)
    return _dump(answer) if args.json else format_recall(answer)


def _remote_ids(server: Remote, args: argparse.Namespace) -> str:
    params = {"store": args.store} if args.store is not None else None
    return "\n".join(server.call("GET", "/memory", params=params)["ids"])


def _remote_facts(server: Remote, args: argparse.Namespace) -> str:
    params = {"all": "true"} if args.all else None
    records = server.call("GET", _path(args, "/facts"), params=params)["facts"]
    return _dump(records) if args.json else format_facts(records)


def _remote_delete(server: Remote, args: argparse.Namespace) -> str:
    answer = server.call("DELETE", _path(args, f"/facts/{quoted(args.fact_id)}"))
    return f"deleted {answer['deleted']}"


def _remote_forget(server: Remote, args: argparse.Namespace) -> str:
    answer = server.call("DELETE", _path(args))
    return f"forgot {answer['forgotten']} facts of {args.memory_id}"


def _remote_consolidate(server: Remote, args: argparse.Namespace) -> str:
    return _consolidated(server.call("POST", _path(args, "/consolidate"))["compactions"])


def _remote_export(server: Remote, args: argparse.Namespace) -> str:
    return export_lines(server.call("GET", _path(args, "/export"))["facts"])


#: Rows per ``POST /memory/import`` and its JSON size, under the server's limits
#: (10,000 rows, a 1 MiB body).
IMPORT_BATCH_ROWS = 1000
IMPORT_BATCH_BYTES = 512 * 1024


def _batches(rows: Sequence[ImportRow]) -> list[list[dict[str, Any]]]:
    batches: list[list[dict[str, Any]]] = [[]]
    size = 0
    for row in rows:
        item = row.as_json()
        cost = len(json.dumps(item, ensure_ascii=False).encode()) + 1
        if batches[-1] and (len(batches[-1]) >= IMPORT_BATCH_ROWS
                            or size + cost > IMPORT_BATCH_BYTES):
            batches.append([])
            size = 0
        batches[-1].append(item)
        size += cost
    return batches


def _remote_import(server: Remote, args: argparse.Namespace) -> str:
    classes: list[str] = []
    for batch in _batches(args.rows):  # checked whole already; written in order
        answer = server.call("POST", "/memory/import", body={"store": args.store,
                                                             "rows": batch})
        classes += [r["class"] for r in answer["results"]]
    return _imported(args.store, classes)

