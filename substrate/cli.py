"""Command-line helpers: ``verify``, ``dump`` and ``stats`` for a substrate directory.

Wired two ways: ``python -m substrate verify PATH`` (see :func:`main`), and the
``solace substrate verify|dump|stats`` commands, which the solace CLI adds by calling
:func:`register` with its subparsers. Every command sets ``func`` on the parsed
namespace: call ``args.func(args)`` and exit with the int it returns (0 ok, 1 problem).

The commands never create a key file, append, or fsync-by-policy; opening does cut a
torn tail (saving the cut bytes), exactly as the runtime would on start.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from .errors import SubstrateError
from .keys import DEFAULT_ENV_VAR, KeySource
from .opener import open_substrate
from .store import Substrate
from .xmlcodec import encode_event

__all__ = ["add_commands", "cmd_dump", "cmd_stats", "cmd_verify", "main", "register"]


def _open(path: str | Path, key_source: KeySource | None) -> Substrate:
    if not Path(path).is_dir():
        raise SubstrateError(f"{path} is not a substrate directory")
    return open_substrate(path, key_source=key_source or KeySource(create=False), fsync="never")


def _fail(command: str, exc: SubstrateError) -> int:
    print(f"substrate {command}: {type(exc).__name__}: {exc}", file=sys.stderr)
    return 1


def _recovered(sub: Substrate, out: TextIO) -> None:
    for torn in sub.recovered:
        print(
            f"recovered: cut a torn tail of {torn.bytes_dropped} bytes from {torn.segment} "
            f"at offset {torn.offset} (saved to {torn.saved_to})",
            file=out,
        )


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
    print(
        f"ok: {report.frames} events in {report.segments} segments, {report.bytes} bytes "
        f"({keys}); {report.seconds:.3f} s, {report.mb_per_s:.1f} MB/s",
        file=out,
    )
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


def add_commands(subparsers: Any) -> None:
    """Add ``verify``, ``dump`` and ``stats`` to an argparse subparsers object."""
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


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add a ``substrate`` command (with verify|dump|stats under it) to a CLI's subparsers.

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
    """``python -m substrate verify|dump|stats PATH``; returns the exit code."""
    parser = argparse.ArgumentParser(
        prog="python -m substrate",
        description="Inspect a substrate directory (the encrypted event log).",
    )
    add_commands(parser.add_subparsers(dest="command", required=True, metavar="COMMAND"))
    args = parser.parse_args(argv)
    code: int = args.func(args)
    return code
