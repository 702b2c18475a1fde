"""``solace``: one entry point, one module per group of subcommands.

Each command module exposes ``register(subparsers)``, which adds its parsers and
sets ``func`` (taking the parsed namespace, returning an exit code) on each.
Modules are imported when the CLI starts, never at package import.

Failures are one line on stderr with exit code 1 (an error), 2 (usage) or 130
(interrupted); ``--verbose`` prints the traceback too (see :mod:`solace.surfaces.cli.errors`).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Iterator, Sequence
from typing import NoReturn

from solace.surfaces.cli.errors import UsageError, command_name, report
from solace.surfaces.cli.options import add_common, finish

__all__ = ["build_parser", "main"]

# Order is the order of `solace --help`.
_COMMAND_MODULES = (
    "solace.surfaces.cli.runtime_cmd",  # run, recall
    "solace.surfaces.cli.import_cmd",  # import locomo|jsonl
    "solace.surfaces.cli.conversation_cmd",  # topics, facts, notes
    "solace.surfaces.cli.memory_cmd",  # memory remember|recall|ids|facts|delete|forget|...
    "solace.surfaces.cli.workspace_cmd",  # workspace show|synthesize|reload|export
    "solace.surfaces.http.cli",  # serve
    "solace.surfaces.mcp.cli",  # mcp
    "substrate.cli",  # substrate verify|dump|stats|recover
)


class Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line (a :class:`UsageError`)."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see `{self.prog} --help`)", command=self.prog)


def _leaves(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield parser
        return
    seen: set[int] = set()
    for action in subs:
        for child in action.choices.values():
            if id(child) not in seen:
                seen.add(id(child))
                yield from _leaves(child)


def build_parser() -> argparse.ArgumentParser:
    """The ``solace`` parser with every command registered."""
    parser = Parser(
        prog="solace",
        description="Solace: memory for LLM agents that lasts across sessions. Exit codes: "
                    "0 ok, 1 error, 2 usage, 130 interrupted.",
    )
    add_common(parser, top=True)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    for leaf in _leaves(parser):
        if leaf is not parser and not any("--config" in a.option_strings for a in leaf._actions):
            add_common(leaf, home=False)  # substrate's commands take a PATH, not --home
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the process exit code (0, 1 error, 2 usage, 130 interrupted)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    verbose = "--verbose" in argv or "-v" in argv
    args = argparse.Namespace(command=None)
    try:
        parser = build_parser()
        args = finish(parser.parse_args(argv))
        if getattr(args, "func", None) is None:
            parser.print_help()
            raise UsageError("no command given (see `solace --help`)")
        return int(args.func(args) or 0)
    except (Exception, KeyboardInterrupt, BaseExceptionGroup) as exc:
        return report(exc, command_name(args), verbose=verbose)


if __name__ == "__main__":
    sys.exit(main())
