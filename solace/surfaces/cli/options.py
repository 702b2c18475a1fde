"""Options every ``solace`` command takes, and the checks on ``--home``.

``--config``, ``--home`` and ``--verbose`` are accepted before or after the subcommand
(``solace --home H recall x`` and ``solace recall x --home H`` are the same): each is
added to the top-level parser and to every subcommand with ``default=SUPPRESS``, so
whichever place gives it wins and :func:`finish` fills in the defaults.

Read-only commands never create a home: :func:`existing_home` refuses a path where no
Solace home is. Commands that write take :func:`usable_home`, which refuses only a path
that is not a directory.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from solace.config import Config, load_config
from solace.home import DEFAULT_HOME, Home
from solace.surfaces.cli.errors import CliError, UsageError

if TYPE_CHECKING:
    from substrate.aio import TrioSubstrate

__all__ = ["add_common", "config_of", "existing_home", "finish", "usable_home"]


def add_common(parser: argparse.ArgumentParser, *, home: bool = True,
               top: bool = False) -> None:
    """Add ``--config``, ``--verbose`` and (if ``home``) ``--home`` to ``parser``, a
    subcommand's parser (or, with ``top``, the ``solace`` parser itself)."""
    parser.add_argument("--config", metavar="FILE", default=argparse.SUPPRESS,
                        help="TOML config (default: the embedded defaults)")
    if home:
        parser.add_argument("--home", metavar="DIR", default=argparse.SUPPRESS,
                            help=f"the Solace home directory (default {DEFAULT_HOME})")
        if not top:
            parser.set_defaults(takes_home=True)
    parser.add_argument("--verbose", "-v", action="store_true", default=argparse.SUPPRESS,
                        help="show tracebacks on failure, and the log on stderr")


def finish(args: argparse.Namespace) -> argparse.Namespace:
    """Fill in the common options' defaults; refuse ``--home`` where it means nothing.

    Raises:
        UsageError: ``--home`` given to a command that takes a PATH instead.
    """
    if hasattr(args, "home") and not getattr(args, "takes_home", False):
        raise UsageError(f"{args.command} takes a substrate PATH, not --home "
                         "(the substrate of home H is H/substrate)")
    args.config = getattr(args, "config", None)
    args.home = getattr(args, "home", str(DEFAULT_HOME))
    args.verbose = getattr(args, "verbose", False)
    return args


def config_of(args: argparse.Namespace) -> Config:
    """The config ``--config`` names, or the embedded defaults.

    Raises:
        CliError: the path is a directory. ConfigError: a missing file, bad TOML, an
            unknown key or a bad value (the message names file, key and value).
    """
    path = getattr(args, "config", None)
    if path is None:
        return Config()
    if Path(path).expanduser().is_dir():
        raise CliError(f"--config {path} is a directory; pass a TOML file "
                       "(config/solace.toml lists every key)")
    if not Path(path).expanduser().exists():
        raise CliError(f"--config {path}: no such file; pass a TOML file "
                       "(config/solace.toml lists every key), or leave --config out")
    return load_config(Path(path).expanduser())


def _not_a_file(root: Path) -> None:
    if root.exists() and not root.is_dir():
        raise CliError(f"--home {root} is a file, not a directory; pass the directory "
                       "Solace keeps its home in")


def usable_home(path: str | Path) -> Path:
    """``path`` resolved, for a command that may create the home there.

    Raises:
        CliError: ``path`` exists and is not a directory.
    """
    root = Path(path).expanduser()
    _not_a_file(root)
    return root


def existing_home(path: str | Path, config: Config, *, substrate: bool = True) -> Path:
    """``path`` resolved, for a command that must not create a home.

    Args:
        path: the ``--home`` given.
        config: where the substrate lives inside the home.
        substrate: also require the home's substrate (False: the directory is enough).

    Raises:
        CliError: no directory there, a file there, or (with ``substrate``) no substrate
            in it, naming the path and saying how a home is made.
    """
    root = Path(path).expanduser()
    _not_a_file(root)
    create = f"run `solace run --home {path}` (or `solace import ... --home {path}`) to create one"
    if not root.is_dir():
        raise CliError(f"no Solace home at {root}; {create}")
    if substrate:
        sub = Home(root.resolve(), config).substrate_dir
        if not sub.is_dir() or not any(sub.iterdir()):
            raise CliError(f"no Solace home at {root} (it holds no substrate); {create}")
    return root


async def open_home_substrate(home: Home) -> TrioSubstrate:
    """The home's substrate as the commands that act on it directly open it: its key
    source and fsync policy from the config, every kind the runtime writes. Use it in
    ``async with``."""
    from solace.runtime import extra_kinds
    from substrate import KeySource
    from substrate.aio import open_trio_substrate

    cfg = home.config
    keys = KeySource(key_file=home.key_file, env_var=cfg.substrate.key_env or None)
    return await open_trio_substrate(home.substrate_dir, key_source=keys,
                                     fsync=cfg.substrate.fsync, extra_kinds=extra_kinds(cfg))
