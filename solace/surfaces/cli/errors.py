"""How the ``solace`` command fails: one line on stderr, a distinct exit code.

Exit codes: 0 ok, 1 an error (a home, file, key, config or model problem), 2 a usage
error, 130 interrupted (Ctrl-C). Every failure is one line, ``solace <command>: <what
went wrong>; <what to do>``; with ``--verbose`` the traceback is printed above it.

A failure inside ``trio.run`` arrives wrapped in (nested) exception groups, with the
``Cancelled`` of the sibling tasks it stopped; :func:`unwrap` finds the one real error.
"""

from __future__ import annotations

import argparse
import functools
import sys
import traceback
from collections.abc import Callable
from typing import TextIO

__all__ = [
    "EXIT_ERROR",
    "EXIT_INTERRUPTED",
    "EXIT_USAGE",
    "CliError",
    "Interrupted",
    "UsageError",
    "describe",
    "guarded",
    "report",
    "unwrap",
]

EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


class CliError(Exception):
    """A command refused or failed; the message says what and what to do (exit 1).

    Args:
        message: the line to print after ``solace <command>:``.
        command: the command to name instead of the one parsed (argparse's ``prog``).
    """

    exit_code = EXIT_ERROR

    def __init__(self, message: str, *, command: str | None = None) -> None:
        super().__init__(message)
        self.command = command


class UsageError(CliError):
    """The command line itself is wrong: an unknown option, a missing argument (exit 2)."""

    exit_code = EXIT_USAGE


class Interrupted(CliError):
    """Ctrl-C stopped the command; the message says what was kept (exit 130)."""

    exit_code = EXIT_INTERRUPTED


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for sub in exc.exceptions for leaf in _leaves(sub)]
    return [exc]


def unwrap(exc: BaseException) -> BaseException:
    """The one error that matters in ``exc``: itself unless it is an exception group;
    for a group, a ``KeyboardInterrupt`` if it holds one, else its first leaf that is not
    trio's ``Cancelled`` (the siblings a failure stopped)."""
    leaves = _leaves(exc)
    for leaf in leaves:
        if isinstance(leaf, KeyboardInterrupt):
            return leaf
    real = [leaf for leaf in leaves if type(leaf).__name__ != "Cancelled"]
    return (real or leaves)[0]


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _oserror(exc: OSError) -> str:
    what = exc.strerror or str(exc)
    names = [str(n) for n in (exc.filename, exc.filename2) if n is not None]
    return f"{what}: {' -> '.join(names)}" if names else what


def describe(exc: BaseException, command: str) -> tuple[str, int]:
    """The one line to print for ``exc`` (after :func:`unwrap`) and the exit code.

    Args:
        exc: what the command raised.
        command: the command as typed (``"solace recall"``), prefixed to the line.
    """
    from solace.config import ConfigError
    from substrate import SubstrateError, SubstrateLockedError

    exc = unwrap(exc)
    code = EXIT_ERROR
    if isinstance(exc, CliError) and exc.command:
        command = exc.command
    if isinstance(exc, KeyboardInterrupt):
        text, code = "interrupted", EXIT_INTERRUPTED
    elif isinstance(exc, CliError):
        text, code = str(exc), exc.exit_code
        if isinstance(exc, UsageError) and "--help" not in text:
            text += f" (see `{command} --help`)"
    elif isinstance(exc, SubstrateLockedError):
        where = f" ({exc.args[0].split(' is already open')[0]})" if exc.args else ""
        text = (f"another process holds this home{where}: is `solace run` running? Or "
                "`solace serve`? Stop it, or use it instead: type the command in the REPL "
                "of `solace run` (/help lists them), or start it as `solace run --serve` or "
                "`solace serve`, whose home these commands reach over HTTP")
    elif isinstance(exc, ConfigError):
        text = f"{exc}; fix the config file (config/solace.toml lists every key)"
    elif isinstance(exc, SubstrateError):
        text = str(exc)
    elif isinstance(exc, OSError):
        text = _oserror(exc)
    elif isinstance(exc, ValueError) and type(exc).__module__.startswith("solace"):
        text = str(exc)  # AppError, ImportFormatError, ConversationError ... name the value
    elif type(exc).__module__.startswith("solace") and type(exc).__name__.endswith("Error"):
        text = str(exc)  # ModelError, HomeFileError, SnapshotError, ConversationError
    else:
        text = (f"unexpected {type(exc).__name__}: {exc} (run again with --verbose for the "
                "traceback, and please report it)")
    return f"{command}: {_one_line(text) or type(exc).__name__}", code


def report(exc: BaseException, command: str, *, verbose: bool = False,
           err: TextIO | None = None) -> int:
    """Print ``exc`` as one line on ``err`` (stderr), the traceback first if ``verbose``;
    return the exit code."""
    err = err or sys.stderr
    if verbose:
        traceback.print_exception(exc, file=err)
    line, code = describe(exc, command)
    print(line, file=err, flush=True)
    return code


def command_name(args: argparse.Namespace) -> str:
    """``solace <command> [<action>]`` as typed, for the start of an error line."""
    words = ["solace"] + [str(w) for w in (getattr(args, "command", None),
                                           getattr(args, "action", None)
                                           or getattr(args, "format", None)) if w]
    return " ".join(words)


def guarded(func: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """``func`` with its failures reported by :func:`report` (returns the exit code)."""

    @functools.wraps(func)
    def run(args: argparse.Namespace) -> int:
        try:
            return int(func(args) or 0)
        except (Exception, KeyboardInterrupt, BaseExceptionGroup) as exc:
            return report(exc, command_name(args), verbose=bool(getattr(args, "verbose", False)))

    return run
