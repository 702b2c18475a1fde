"""``solace``: one entry point, one module per group of subcommands.

Each command module exposes ``register(subparsers)``, which adds its parsers and
sets ``func`` (taking the parsed namespace, returning an exit code) on each.
Modules are imported when the CLI starts, never at package import.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

__all__ = ["main"]

# Order is the order of `solace --help`.
_COMMAND_MODULES = (
    "solace.cli.runtime_cmd",  # run, recall, import
    "solace.cli.conversation_cmd",  # topics, facts, notes
    "substrate.cli",  # substrate verify|dump|stats
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="solace",
        description="Solace: memory for LLM agents that lasts across sessions.",
    )
    parser.add_argument(
        "--config", metavar="FILE", help="TOML config (default: the embedded defaults)"
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
