"""Command-line helpers: ``verify``, ``dump``, ``stats`` and ``recover`` for a substrate.

Wired two ways: ``python -m substrate verify PATH`` (see :func:`main`), and the
``solace substrate verify|dump|stats|recover`` commands, which the solace CLI adds by
calling :func:`register` with its subparsers. Every command sets ``func`` on the parsed
namespace: call ``args.func(args)`` and exit with the int it returns (0 ok, 1 problem).

``verify``, ``dump`` and ``stats`` open the substrate read-only: they change no file
(no key file, directory or anchor is created, a torn tail is reported but not cut).
``recover`` opens it for writing, as the runtime would on start: it cuts a torn tail
(saving the bytes) and, only with ``--accept-loss``, accepts a log shorter than its
anchor.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from .anchor import ANCHOR_FILE
from .errors import SubstrateError
from .keys import DEFAULT_ENV_VAR, KeySource
from .opener import open_substrate
from .segments import list_segments
from .store import Substrate
from .xmlcodec import encode_event

__all__ = [
    "add_commands", "cmd_dump", "cmd_recover", "cmd_stats", "cmd_verify", "main", "register",
]


def _open(path: str | Path, key_source: KeySource | None, *, accept_loss: bool = False,
          read_only: bool = True) -> Substrate:
    directory = Path(path)
    if not directory.is_dir():
        raise SubstrateError(f"{path} is not a substrate directory")
    if not list_segments(directory) and not (directory / ANCHOR_FILE).exists():
        inner = directory / "substrate"
        guess = (f"did you mean {inner}?" if inner.is_dir() else
                 "it is not a substrate directory, or nothing was ever written to it")
        raise SubstrateError(f"{directory}: no segments here; {guess}")
    return open_substrate(path, key_source=key_source or KeySource(create=False),
                          fsync="never" if read_only else "always",
                          accept_loss=accept_loss, read_only=read_only)


def _fail(command: str, exc: SubstrateError) -> int:
    print(f"substrate {command}: {type(exc).__name__}: {exc}", file=sys.stderr)
    return 1


def _recovered(sub: Substrate, out: TextIO) -> None:
    for torn in sub.recovered:
        if torn.cut:
            print(
                f"recovered: cut a torn tail of {torn.bytes_dropped} bytes from "
                f"{torn.segment} at offset {torn.offset} (saved to {torn.saved_to})",
                file=out,
            )
        else:
            print(
                f"torn tail: {torn.bytes_dropped} bytes of {torn.segment} from offset "
                f"{torn.offset} hold no intact frame (unsynced writes cut short by a "
                f"crash); left in place: `substrate recover {sub.directory}` cuts them",
                file=out,
            )
    if sub.accepted_loss:
        print(f"accepted loss: {sub.accepted_loss}", file=out)


def cmd_verify(path: str | Path, key_source: KeySource | None = None, *,
               out: TextIO | None = None) -> int:
    """Check every frame of the substrate at ``path``; print a summary.

    Returns:
        0 if everything checked out, 1 otherwise (the problem goes to stderr).
    """
    out = out or sys.stdout
    try:
        with _open(path, key_source) as sub:
            _recovered(sub, out)
            report = sub.verify()
    except SubstrateError as exc:
        return _fail("verify", exc)
    keys = ", ".join(f"key {k}: {n}" for k, n in sorted(report.key_ids.items())) or "no keys"
    anchored = ("no anchor yet (the next writable open writes one)"
                if report.anchored_id is None else f"anchored at entry {report.anchored_id}")
    print(
        f"ok: {report.frames} events in {report.segments} segments, {report.bytes} bytes "
        f"({keys}); {anchored}; {report.seconds:.3f} s, {report.mb_per_s:.1f} MB/s",
        file=out,
    )
    return 0


def cmd_recover(path: str | Path, key_source: KeySource | None = None, *,
                accept_loss: bool = False, out: TextIO | None = None) -> int:
    """Open the substrate at ``path`` for writing, as the runtime does, and close it.

    Cuts a torn tail (saving the bytes beside the segment) and re-anchors the head.
    With ``accept_loss``, also accepts a log shorter than its anchor (the loss is
    printed); without it such a log is refused and nothing changes.

    Returns:
        0 if the substrate now opens cleanly, 1 otherwise (the problem goes to stderr).
    """
    out = out or sys.stdout
    try:
        with _open(path, key_source, accept_loss=accept_loss, read_only=False) as sub:
            _recovered(sub, out)
            last_id = sub.last_id
    except SubstrateError as exc:
        return _fail("recover", exc)
    print(f"ok: the log ends at entry {last_id} and is anchored there", file=out)
    return 0


def cmd_dump(
    path: str | Path,
    *,
    agent: str | None = None,
    kind: str | None = None,
    since: int | None = None,
    out: TextIO | None = None,
    key_source: KeySource | None = None,
) -> int:
    """Write decrypted events as XML: an ``<events>`` root, one ``<event>`` per line.

    Args:
        agent, kind: Only these (None = all).
        since: Only entry ids greater than this.

    Returns:
        0 on success, 1 if an event could not be read (output so far is incomplete).
    """
    out = out or sys.stdout
    try:
        with _open(path, key_source) as sub:
            out.write("<events>\n")
            for e in sub.scan(agent=agent, kind=kind, since_id=since):
                xml = encode_event(e.entry_id, e.ts, e.agent, e.kind, e.content, e.attrs)
                out.write(xml.decode("utf-8") + "\n")
            out.write("</events>\n")
    except SubstrateError as exc:
        return _fail("dump", exc)
    return 0


def cmd_stats(path: str | Path, *, key_source: KeySource | None = None,
              out: TextIO | None = None) -> int:
    """Print event counts by agent, kind and key id, and segment sizes.

    Returns:
        0 on success, 1 if the substrate could not be opened.
    """
    out = out or sys.stdout
    try:
        with _open(path, key_source) as sub:
            _recovered(sub, out)
            s = sub.stats()
    except SubstrateError as exc:
        return _fail("stats", exc)
    print(f"events: {s.events}", file=out)
    print(f"segments: {s.segments} ({s.bytes} bytes)", file=out)
    print(f"current key id: {s.current_key_id}", file=out)
    for title, counts in (("agent", s.by_agent), ("kind", s.by_kind), ("key id", s.key_ids)):
        for name, n in sorted(counts.items(), key=lambda kv: (-kv[1], str(kv[0]))):
            print(f"  {title} {name}: {n}", file=out)
    return 0


def _key_source(args: argparse.Namespace) -> KeySource:
    return KeySource(key_file=args.key_file, env_var=args.key_env or None, create=False)


def _run_verify(args: argparse.Namespace) -> int:
    return cmd_verify(args.path, _key_source(args))


def _run_dump(args: argparse.Namespace) -> int:
    return cmd_dump(args.path, agent=args.agent, kind=args.kind, since=args.since,
                    key_source=_key_source(args))


def _run_stats(args: argparse.Namespace) -> int:
    return cmd_stats(args.path, key_source=_key_source(args))


def _run_recover(args: argparse.Namespace) -> int:
    return cmd_recover(args.path, _key_source(args), accept_loss=args.accept_loss)


def add_commands(subparsers: Any) -> None:
    """Add ``verify``, ``dump``, ``stats`` and ``recover`` to an argparse subparsers object."""
    def command(name: str, help: str, func: Any) -> argparse.ArgumentParser:
        p: argparse.ArgumentParser = subparsers.add_parser(name, help=help, description=help)
        p.add_argument("path", type=Path, help="the substrate directory")
        p.add_argument("--key-file", type=Path, default=None,
                       help="key ring file (default: PATH/substrate.key)")
        p.add_argument("--key-env", default=DEFAULT_ENV_VAR,
                       help=f"env var holding the key; '' to ignore (default {DEFAULT_ENV_VAR})")
        p.set_defaults(func=func)
        return p

    command("verify", "check every frame: checksum, hash chain, key, AES-GCM tag, XML",
            _run_verify)
    dump = command("dump", "print decrypted events as XML, one <event> per line", _run_dump)
    dump.add_argument("--agent", default=None, help="only this agent")
    dump.add_argument("--kind", default=None, help="only this kind")
    dump.add_argument("--since", type=int, default=None, help="only ids greater than this")
    command("stats", "counts by agent, kind and key id; segment sizes", _run_stats)
    recover = command("recover", "open for writing: cut a torn tail, re-anchor the head",
                      _run_recover)
    recover.add_argument("--accept-loss", action="store_true",
                         help="accept a log that ends before its anchor (events lost)")


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add a ``substrate`` command (verify|dump|stats|recover under it) to a CLI's subparsers.

    Returns:
        The ``substrate`` parser. Dispatch with ``args.func(args)`` (returns an exit code).
    """
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "substrate", help="inspect the encrypted event log",
        description="Inspect a substrate directory (the encrypted event log).",
    )
    add_commands(parser.add_subparsers(dest="substrate_command", required=True,
                                       metavar="COMMAND"))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m substrate verify|dump|stats|recover PATH``; returns the exit code."""
    parser = argparse.ArgumentParser(
        prog="python -m substrate",
        description="Inspect a substrate directory (the encrypted event log).",
    )
    add_commands(parser.add_subparsers(dest="command", required=True, metavar="COMMAND"))
    args = parser.parse_args(argv)
    code: int = args.func(args)
    return code
