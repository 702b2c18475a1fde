"""The runtime home: one directory holding everything an installation keeps.

Layout (created on first use)::

    <home>/substrate/        the encrypted event log (the truth)
    <home>/substrate/substrate.key   its key ring, mode 0600 (unless configured)
    <home>/memory/<Agent>/   per-agent snapshots (long-term index, metadata)
    <home>/files/            the human-readable markdown surface

Everything under ``memory/`` and ``files/`` is a projection of the substrate and
can be rebuilt from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .config import Config

__all__ = ["Home", "DEFAULT_HOME"]

DEFAULT_HOME = Path("~/.solace")


@dataclass(frozen=True, slots=True)
class Home:
    """Paths of one runtime home, resolved against a config."""

    root: Path
    config: Config

    @classmethod
    def at(cls, path: str | Path, config: Config) -> Home:
        root = Path(path).expanduser().resolve()
        root.mkdir(parents=True, exist_ok=True)
        return cls(root, config)

    @property
    def substrate_dir(self) -> Path:
        p = Path(self.config.substrate.path).expanduser()
        return p if p.is_absolute() else self.root / p

    @property
    def key_file(self) -> Path:
        if self.config.substrate.key_file:
            p = Path(self.config.substrate.key_file).expanduser()
            return p if p.is_absolute() else self.root / p
        return self.substrate_dir / "substrate.key"

    def agent_dir(self, agent: str) -> Path:
        return self.root / "memory" / agent

    @property
    def files_dir(self) -> Path:
        return self.root / "files"
