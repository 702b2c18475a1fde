"""``solace import locomo FILE`` and ``solace import jsonl FILE``: fill a home.

Imports are idempotent and resumable (see :mod:`solace.importing`): each event is
keyed by its source, a re-import skips what the home already holds and says how many,
and Ctrl-C stops after the batch being written, exits 130 and says how many events of
the file the home now holds; running the same command again imports the rest. A
progress bar (events, rate, ETA) goes to stderr when it is a terminal.

While ``solace serve`` (or ``solace run --serve``) holds the home, the batches go to it
over HTTP (``POST /import``, a few a request; :mod:`solace.app.importing`): the same
keys and batches, but the serving runtime keeps its own clock, so the fade sees old
lines as old at once instead of living through them.

Replayed history counts as lived: each batch (a LoCoMo session; at most 64 JSONL lines
of one day) is distilled into facts at its dates and the workspace follows, so every
day whose lines teach a fact gets its daily log (see :mod:`solace.importing`).

The file is read and checked before any model loads or the home is touched, so a
file that is not LoCoMo, or a JSONL line that is bad (named by its number), costs
nothing.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from contextlib import aclosing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

from solace.config import Config
from solace.importing import ImportFormatError, ImportItem
from solace.surfaces.cli.errors import CliError, Interrupted, guarded, unwrap
from solace.surfaces.cli.options import add_common, config_of, usable_home
from solace.surfaces.cli.remote import Remote, local_or_remote

__all__ = ["register"]

JSONL_BATCH = 64


def register(subparsers: Any) -> None:
    """Add ``import locomo`` and ``import jsonl`` to the ``solace`` command."""
    imp = subparsers.add_parser("import", help="replay a conversation file into a home")
    fmt = imp.add_subparsers(dest="format", metavar="FORMAT", required=True)
    locomo = fmt.add_parser("locomo", help="a LoCoMo-format JSON file, at its real dates")
    locomo.add_argument("file", metavar="FILE")
    locomo.add_argument("--conversation", metavar="ID", default=None,
                        help="sample_id of one conversation (default: all)")
    add_common(locomo)
    locomo.set_defaults(func=guarded(cmd_import_locomo))
    jsonl = fmt.add_parser("jsonl", help='a JSONL file of {"speaker", "text", "at"} lines')
    jsonl.add_argument("file", metavar="FILE")
    add_common(jsonl)
    jsonl.set_defaults(func=guarded(cmd_import_jsonl))


def _file(args: argparse.Namespace) -> Path:
    path = Path(args.file).expanduser()
    if path.is_dir():
        raise CliError(f"{path} is a directory; pass the file to import")
    if not path.is_file():
        raise CliError(f"no such file {path}")
    return path


def cmd_import_locomo(args: argparse.Namespace) -> int:
    from solace.locomo import load_locomo, session_items

    path = _file(args)
    config = config_of(args)
    home = usable_home(args.home)
    conversations = load_locomo(path)
    if args.conversation is not None:
        known = [c.sample_id for c in conversations]
        conversations = [c for c in conversations if c.sample_id == args.conversation]
        if not conversations:
            raise CliError(f"no conversation {args.conversation!r} in {path} "
                           f"(it holds {', '.join(known)})")
    try:
        batches = [batch for c in conversations for batch in session_items(c)]
    except ImportFormatError as exc:
        raise ImportFormatError(f"{path}: {exc}") from None
    summary = [f"{c.sample_id}: {len(c.turns)} turns in {len(c.sessions)} sessions"
               for c in conversations]
    return _import(path, home, config, batches, summary, verbose=args.verbose)


def day_batches(items: Sequence[ImportItem], size: int, timezone: str) -> list[list[ImportItem]]:
    """``items`` in order, in batches of at most ``size`` that never span two calendar
    days (in ``timezone``, the workspace's): a batch is distilled at its dates, so each
    day's facts land in that day's daily log."""
    from datetime import datetime

    from solace.workspace.service import _zone

    tz = _zone(timezone)
    batches: list[list[ImportItem]] = []
    day = None
    for item in items:
        today = datetime.fromtimestamp(item.at, tz).date()
        if not batches or today != day or len(batches[-1]) >= size:
            batches.append([])
        batches[-1].append(item)
        day = today
    return batches


def cmd_import_jsonl(args: argparse.Namespace) -> int:
    from solace.importing import load_jsonl

    path = _file(args)
    config = config_of(args)
    home = usable_home(args.home)
    items = load_jsonl(path)
    batches = day_batches(items, JSONL_BATCH, config.workspace.timezone)
    return _import(path, home, config, batches, [f"{path.name}: {len(items)} lines"],
                   verbose=args.verbose)


@dataclass
class _Progress:
    skipped: int = 0
    written: int = 0
    bar: Any = None
    status: str = ""
    keys: set[str] = field(default_factory=set)


def _import(path: Path, home: Path, config: Config, batches: Sequence[Sequence[ImportItem]],
            summary: list[str], *, verbose: bool) -> int:
    total = sum(len(b) for b in batches)
    progress = _Progress(keys={item.key for b in batches for item in b})
    try:
        local_or_remote(home, lambda: trio.run(_run, home, config, batches, total, progress,
                                               verbose),
                        lambda server: _remotely(server, batches, total, progress))
    except (KeyboardInterrupt, BaseExceptionGroup) as exc:
        if progress.bar is not None:
            progress.bar.close()
        if not isinstance(unwrap(exc), KeyboardInterrupt):
            raise
        kept = _count_kept(home, config, progress.keys)
        raise Interrupted(
            f"interrupted: {kept} of the {total} events of {path} are in {home}; run the "
            "same command again to import the rest (nothing is imported twice)"
        ) from None
    for line in summary:
        print(line)
    print(f"imported {progress.written} new events from {path} into {home} "
          f"({progress.skipped} already there, skipped)")
    print(progress.status, flush=True)
    return 0


async def _run(home: Path, config: Config, batches: Sequence[Sequence[ImportItem]],
               total: int, progress: _Progress, verbose: bool) -> None:
    from tqdm import tqdm

    from solace.app import Solace
    from solace.app.importing import ImportCalls
    from solace.clock import ReplayClock
    from solace.runtime import open_runtime
    from solace.surfaces.repl import LOG_FILE, setup_logging

    setup_logging(home / LOG_FILE, verbose=verbose)
    async with open_runtime(home, config, clock=ReplayClock(), warm_up=False) as rt:
        def skipped(n: int) -> None:
            progress.skipped = n
            progress.bar = tqdm(total=total, initial=n, unit="event", file=sys.stderr,
                                disable=None, dynamic_ncols=True, desc="import")

        importer = ImportCalls(Solace(rt))
        async with aclosing(importer.import_items(batches, on_skipped=skipped)) as per_batch:
            async for written in per_batch:
                progress.written += written
                progress.bar.update(written)
        progress.bar.close()
        progress.status = rt.status()


#: Batches per request when a serving process imports (each is written, settled and
#: distilled before the answer), and the seconds such a request may take.
REMOTE_BATCHES = 4
REMOTE_TIMEOUT = 600.0


def _remotely(server: Remote, batches: Sequence[Sequence[ImportItem]], total: int,
              progress: _Progress) -> None:
    """The import sent to the process serving the home, a few batches a request."""
    from tqdm import tqdm

    server = Remote(server.info, timeout=REMOTE_TIMEOUT)
    progress.bar = tqdm(total=total, unit="event", file=sys.stderr, disable=None,
                        dynamic_ncols=True, desc="import")
    for start in range(0, len(batches), REMOTE_BATCHES):
        chunk = [[{"key": i.key, "speaker": i.speaker, "text": i.text, "at": i.at,
                   "attrs": dict(i.attrs)} for i in batch]
                 for batch in batches[start:start + REMOTE_BATCHES]]
        done = server.call("POST", "/import", body={"batches": chunk})
        progress.written += done["written"]
        progress.skipped += done["skipped"]
        progress.bar.update(done["written"] + done["skipped"])
    progress.bar.close()
    events = server.call("GET", "/stats")["events"]
    progress.status = (f"imported through the process serving the home (pid "
                       f"{server.info.pid}, {server.info.url}), which now holds {events} "
                       "events")


def _count_kept(home: Path, config: Config, keys: set[str]) -> int:
    """How many events keyed ``keys`` the home's substrate holds: exact, read back after
    an interruption rather than counted as the batches went (0 if it has no substrate)."""
    from solace.home import Home
    from solace.importing import IMPORT_KEY
    from solace.runtime import extra_kinds
    from substrate import KeySource, SubstrateError, open_substrate

    where = Home(home.resolve(), config)
    if not where.substrate_dir.is_dir():
        return 0
    source = KeySource(key_file=where.key_file, env_var=config.substrate.key_env or None,
                     create=False)
    try:
        sub = open_substrate(where.substrate_dir, key_source=source, read_only=True,
                             fsync="never", extra_kinds=extra_kinds(config))
    except SubstrateError:
        return 0  # interrupted before anything was written: no segment, no key yet
    with sub:
        return sum(1 for e in sub.scan(kind="message") if e.attrs.get(IMPORT_KEY) in keys)
