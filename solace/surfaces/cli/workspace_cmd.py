"""``solace workspace show|synthesize|reload|export DIR``: the home's markdown workspace.

- ``show [FILE]``: the workspace's files with their sizes, or one file's text. Reads
  the files only (it works while a runtime holds the home).
- ``synthesize``: MEMORY.md from the daily logs, then the weekly and monthly roll-ups.
- ``reload``: record the human's edits of the workspace files (they stick: the next
  render and synthesis keep them).
- ``export DIR``: copy the whole tree (markdown only, secret-looking lines left out)
  to DIR, for a git repository.

``synthesize``, ``reload`` and ``export`` open the home's substrate, fact memory
(fact texts come from it) and the workspace, which first renders every daily log
from the substrate, so the files are current. While ``solace serve`` (or ``solace run
--serve``) holds the home they ask it over HTTP instead (``/workspace/...``: the
serving process synthesises, records the edits and rebuilds Main's context, or hands
over the exported files, which are written here); while a plain ``solace run`` holds
it they refuse (one line, exit 1; use the REPL's ``/workspace``, ``/reload`` and
``/now`` there). Every command takes ``--home`` and ``--config``; none creates a home.
"""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import trio

from solace.app import Layers, Solace
from solace.app.workspace import WorkspaceCalls
from solace.config import Config
from solace.home import Home
from solace.surfaces.cli.errors import CliError, guarded
from solace.surfaces.cli.options import add_common, config_of, existing_home, open_home_substrate
from solace.surfaces.cli.remote import Remote, local_or_remote

__all__ = ["register"]

#: A command's work: (the application API over the workspace, the arguments, the human
#: edits recorded while it opened) -> the text to print.
Action = Callable[[Solace, argparse.Namespace, list[Any]], Awaitable[str]]
#: The same work asked of the process serving the home.
RemoteAction = Callable[[Remote, argparse.Namespace], str]


def register(subparsers: Any) -> None:
    """Add ``workspace show|synthesize|reload|export`` to the ``solace`` command."""
    ws = subparsers.add_parser("workspace", help="the human-readable markdown workspace")
    sub = ws.add_subparsers(dest="action", metavar="ACTION", required=True)
    p = sub.add_parser("show", help="list the workspace's files and sizes, or print one")
    p.add_argument("file", nargs="?", default=None, metavar="FILE",
                   help="a file relative to the workspace (e.g. MEMORY.md)")
    add_common(p)
    p.set_defaults(func=guarded(cmd_show))
    p = sub.add_parser("synthesize", help="synthesise MEMORY.md and the roll-ups now")
    add_common(p)
    p.set_defaults(func=guarded(_command(_synthesize, _synthesize_remotely)))
    p = sub.add_parser("reload", help="record your edits of the workspace files")
    add_common(p)
    p.set_defaults(func=guarded(_command(_reload, _reload_remotely)))
    p = sub.add_parser("export", help="copy the whole workspace tree to DIR")
    p.add_argument("dir", metavar="DIR")
    add_common(p)
    p.set_defaults(func=guarded(_command(_export, _export_remotely)))


def _enabled(config: Config) -> None:
    if not config.workspace.enabled:
        raise CliError("the workspace is switched off ([workspace] enabled = false)")


def cmd_show(args: argparse.Namespace) -> int:
    from solace.surfaces.repl_workspace import WorkspacePathError, list_files, show_file

    config = config_of(args)
    _enabled(config)
    home = existing_home(args.home, config, substrate=False)
    root = Home(home.resolve(), config).workspace_dir
    if not root.is_dir():
        raise CliError(f"no workspace at {root} yet; it is created when Solace first opens "
                       f"the home (`solace run --home {args.home}`)")
    try:
        print(list_files(root) if args.file is None else show_file(root, args.file).rstrip())
    except WorkspacePathError as exc:
        raise CliError(str(exc)) from None
    return 0


def _command(action: Action, remote: RemoteAction) -> Callable[[argparse.Namespace], int]:
    def func(args: argparse.Namespace) -> int:
        config = config_of(args)
        _enabled(config)
        home = existing_home(args.home, config)
        print(local_or_remote(home, lambda: trio.run(_run, Home.at(home, config), args, action),
                              lambda server: remote(server, args)))
        return 0

    return func


async def _run(home: Home, args: argparse.Namespace, action: Action) -> str:
    from solace.assembly import Models, open_fact_memory_or_none
    from solace.clock import WallClock
    from solace.models import Guard, NoLLM, build_embedder, build_llm, build_tokenizer
    from solace.models.embedding_cache import SharedEmbedder
    from solace.offload import Offloader
    from solace.runtime_workspace import open_workspace_or_none

    cfg = home.config
    async with await open_home_substrate(home) as sub:
        tokenizer = build_tokenizer(cfg.models)
        uses_llm = (cfg.workspace.summary_mode == "llm"
                    or any(s.extraction_mode == "llm" for s in cfg.stores.values()))
        llm = build_llm(cfg.models) if uses_llm else NoLLM()
        models = Models(SharedEmbedder(build_embedder(cfg.models)), tokenizer, llm,
                        Guard(tokenizer=tokenizer), None, Offloader(1), Offloader(1))
        clock = WallClock()
        facts = await open_fact_memory_or_none(home, cfg, models, sub, clock)
        mark = sub.last_id
        ws = await open_workspace_or_none(home, cfg, models, sub, clock, facts)
        if ws is None:
            raise CliError(f"the workspace of {home.root} could not be opened (see "
                           f"{home.root / 'solace.log'} or run with --verbose)")
        app = Solace(Layers(workspace=ws, offloader=models.offloader))
        return await action(app, args, await _edits_since(sub, mark))


async def _edits_since(sub: Any, mark: int | None) -> list[Any]:
    """The human edits recorded after entry ``mark`` (opening records those made while
    nothing ran)."""
    from solace.workspace import WORKSPACE_KIND
    from solace.workspace.events import edit_of

    events = await sub.scan(kind=WORKSPACE_KIND, since_id=mark or None)
    return [e for e in (edit_of(ev.kind, ev.content, ev.attrs) for ev in events) if e]


async def _synthesize(app: Solace, args: argparse.Namespace, opened: list[Any]) -> str:
    calls = WorkspaceCalls(app)
    done = await calls.synthesize()
    return _synthesized(asdict(done), len(done.rollups), calls.root)


def _synthesize_remotely(server: Remote, args: argparse.Namespace) -> str:
    done = server.call("POST", "/workspace/synthesize")
    root = server.call("GET", "/workspace")["root"]
    return _synthesized(done, len(done["rollups"]), root)


def _synthesized(counts: dict[str, Any], rollups: int, root: Any) -> str:
    return (f"MEMORY.md: {counts['read']} bullets read, {counts['added']} added, "
            f"{counts['noop']} restated, {counts['updated']} updated, {counts['conflicts']} "
            f"conflicts, {counts['clashes']} clashes with your edits; {rollups} roll-up "
            f"file(s) written in {root}")


async def _reload(app: Solace, args: argparse.Namespace, opened: list[Any]) -> str:
    return (await WorkspaceCalls(app).reload(opened)).text


def _reload_remotely(server: Remote, args: argparse.Namespace) -> str:
    return str(server.call("POST", "/workspace/reload")["message"])


async def _export(app: Solace, args: argparse.Namespace, opened: list[Any]) -> str:
    calls = WorkspaceCalls(app)
    root = Path(calls.root)
    return _exported(args, root, [(f.path, f.text) for f in await calls.export()])


def _export_remotely(server: Remote, args: argparse.Namespace) -> str:
    root = Path(server.call("GET", "/workspace")["root"])
    return _exported(args, root, [(f["path"], f["text"])
                                  for f in server.call("GET", "/workspace/export")["files"]])


def _exported(args: argparse.Namespace, root: Path, files: list[tuple[str, str]]) -> str:
    """Write the exported ``files`` under DIR (checked first: a directory, not inside the
    workspace ``root``)."""
    from solace.workspace.files import WorkspacePathError, write_export

    target = Path(args.dir).expanduser()
    if target.exists() and not target.is_dir():
        raise CliError(f"{target} is a file; pass a directory to export the workspace into")
    if target.resolve().is_relative_to(root.resolve()):
        raise CliError(f"{target} is inside the workspace {root}; pass another directory")
    try:
        written = write_export(files, target)
    except WorkspacePathError as exc:
        raise CliError(str(exc)) from None
    return f"exported {len(written)} file(s) from {root} to {target}"
