"""The runtime home: one directory holding everything an installation keeps.

Layout (created on first use)::

    <home>/substrate/        the encrypted event log (the truth)
    <home>/substrate/substrate.key   its key ring, mode 0600 (unless configured)
    <home>/memory/<Agent>/   per-agent snapshots (long-term index, metadata)
    <home>/memory/unit-forms.sealed  the units' retrieval forms, shared by the agents
    <home>/memory/workspace/ the workspace's sealed state (hashes of what it wrote)
    <home>/facts/            fact memory's key vault
    <home>/workspace/        the human-readable markdown workspace (``[workspace] path``;
                             SOUL/USER/AGENTS.md, MEMORY.md, NOW.md, memory/ daily logs
                             and roll-ups; see docs/workspace.md)

Everything under ``memory/`` and ``workspace/`` is a projection of the substrate and
can be rebuilt from it (a human's edits of the workspace are recorded in the
substrate too). Every file under the home that holds user content is
encrypted: the substrate by itself, the rest as sealed files (:mod:`solace.sealed`)
with keys derived from the substrate's key ring — the workspace's markdown excepted
by design: it is for a person to read, edit and version, holds distilled memory
(never a transcript) and passes one secret detector on every write. Directories are
0700 and files 0600: :meth:`Home.at` creates the home that way and tightens a home an
older Solace left group- or world-readable, the workspace included (its files are
private in the home; ``solace workspace export DIR`` copies them out for a repository).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .config import Config
from .sealed import secure_dir, tighten

__all__ = ["Home", "DEFAULT_HOME"]

DEFAULT_HOME = Path("~/.solace")


@dataclass(frozen=True, slots=True)
class Home:
    """Paths of one runtime home, resolved against a config."""

    root: Path
    config: Config

    @classmethod
    def at(cls, path: str | Path, config: Config) -> Home:
        """The home at ``path`` (created 0700 if missing), secured (:meth:`secure`)."""
        root = Path(path).expanduser().resolve()
        home = cls(secure_dir(root), config)
        home.secure()
        return home

    def secure(self) -> int:
        """Make the home 0700 and everything Solace keeps in it private: ``memory/`` and
        the substrate directory created 0700 if missing; every directory under them, under
        the workspace (when inside the home) and under ``files/`` (an older Solace's
        markdown surface) 0700, every file 0600 or stricter. Other entries of the home
        directory are left alone.

        Returns:
            How many modes were changed.
        """
        changed = tighten([self.root])
        secure_dir(self.root / "memory")
        secure_dir(self.substrate_dir)  # before the substrate creates it with the umask's mode
        tops = [self.root / "memory", self.files_dir, self.facts_dir, self.substrate_dir]
        if self.workspace_dir.is_relative_to(self.root):  # a workspace elsewhere is the user's
            tops.append(self.workspace_dir)
        for top in tops:
            if top.is_dir():
                changed += tighten([top, *top.rglob("*")])
        return changed

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
        """Where ``agent``'s sealed snapshots live (created 0700 by its memory)."""
        return self.root / "memory" / agent

    @property
    def conversation_snapshot(self) -> Path:
        """The conversation projection kept across restarts
        (:mod:`solace.conversation.snapshot`)."""
        return self.root / "memory" / "conversation" / "projection.sealed"

    @property
    def fact_snapshot(self) -> Path:
        """Fact memory's projection kept across restarts, each text sealed under its
        fact's key (:mod:`solace.facts.snapshot`)."""
        return self.root / "memory" / "facts" / "projection.sealed"

    @property
    def workspace_snapshot(self) -> Path:
        """The workspace's ledger and human layers kept across restarts (no fact text:
        :mod:`solace.workspace.snapshot`)."""
        return self.root / "memory" / "workspace" / "projection.sealed"

    @property
    def unit_forms_dir(self) -> Path:
        """Where the units' retrieval forms of every agent are kept across restarts
        (:mod:`solace.memory.retrieval_forms`)."""
        return self.root / "memory"

    @property
    def event_vectors_dir(self) -> Path:
        """Where the events' raw-text embeddings are kept across restarts
        (:mod:`solace.memory.event_vectors`)."""
        return self.root / "memory" / "event-vectors"

    @property
    def files_dir(self) -> Path:
        """An older Solace's markdown directory (kept private if present); the markdown
        now lives in :attr:`workspace_dir`."""
        return self.root / "files"

    @property
    def workspace_dir(self) -> Path:
        """The markdown workspace (``[workspace] path``, relative to the home unless
        absolute; default ``<home>/workspace``)."""
        p = Path(self.config.workspace.path).expanduser()
        return p if p.is_absolute() else self.root / p

    @property
    def facts_dir(self) -> Path:
        """Fact memory's key vault (:mod:`solace.facts.vault`)."""
        return self.root / "facts"
