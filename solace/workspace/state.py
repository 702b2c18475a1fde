"""What the workspace last wrote to each file: a small sealed state file.

For each file, the keyed hash of the last content written and the (section hash,
item hash) pairs of its items: enough to tell a human's edit from the workspace's
own write, and to diff it, without keeping any text (a diff needs the removed items'
hashes only; the added text is in the file). While a write is under way two versions
are kept per file, the one on disk and the one being written, so a crash between the
state's write and the file's rename is never mistaken for a human's edit; once the
file is renamed (or found on disk at load) only that version is kept, so a human who
reverts the file to an earlier render is still seen.

Why a sealed file and not the substrate: the hashes change on every render (each
batch of events), say nothing about the user, and are a cache of what is on disk;
logging them would grow the append-only log with noise. Losing the file only loses
the baseline: the workspace then records the items it would not render itself as
the human's additions and removes nothing. Sealed (:mod:`solace.sealed`) under a
key derived from the substrate's ring, atomic, mode 0600.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from solace.sealed import SealedFileRefused, read_sealed, write_sealed
from solace.workspace.errors import WorkspaceStateError

__all__ = ["STATE_PURPOSE", "Version", "WorkspaceState"]

STATE_PURPOSE = "workspace"
_ROLE = "workspace/state"


@dataclass(frozen=True, slots=True)
class Version:
    """One written version of a file: its hash and its items' hash pairs."""

    file_hash: str
    items: tuple[tuple[str, str], ...]


@dataclass(slots=True)
class WorkspaceState:
    """Per file, the last versions written (newest last); the synthesis clock."""

    files: dict[str, list[Version]] = field(default_factory=dict)
    synthesized_at: float = 0.0
    rolled_at: float = 0.0

    def known(self, rel: str, file_hash: str) -> Version | None:
        """The version of ``rel`` with ``file_hash`` (the workspace wrote it), or None."""
        return next((v for v in self.files.get(rel, ()) if v.file_hash == file_hash), None)

    def versions(self, rel: str) -> list[Version]:
        return list(self.files.get(rel, ()))

    def wrote(self, rel: str, version: Version) -> None:
        """Record ``version`` as the newest of ``rel``, keeping the one before it."""
        kept = [v for v in self.files.get(rel, []) if v.file_hash != version.file_hash]
        self.files[rel] = [*kept[-1:], version]

    def adopt(self, rel: str, version: Version) -> None:
        """Make ``version`` the only known version of ``rel`` (after an edit was recorded)."""
        self.files[rel] = [version]

    def dumps(self) -> bytes:
        return json.dumps({
            "files": {rel: [[v.file_hash, [list(p) for p in v.items]] for v in vs]
                      for rel, vs in sorted(self.files.items())},
            "synthesized_at": self.synthesized_at, "rolled_at": self.rolled_at,
        }, separators=(",", ":")).encode()

    @classmethod
    def loads(cls, data: bytes) -> WorkspaceState:
        raw: dict[str, Any] = json.loads(data)
        files = {rel: [Version(str(h), tuple((str(a), str(b)) for a, b in items))
                       for h, items in vs] for rel, vs in raw.get("files", {}).items()}
        return cls(files, float(raw.get("synthesized_at", 0.0)),
                   float(raw.get("rolled_at", 0.0)))

    # ------------------------------------------------------------------ files
    @classmethod
    def load(cls, path: Path, ring: Any) -> WorkspaceState | None:
        """The state sealed at ``path``; None if there is none.

        Raises:
            WorkspaceStateError: the file exists but is not authentic or not readable.
        """
        try:
            plain = read_sealed(path, ring=ring, purpose=STATE_PURPOSE, role=_ROLE)
        except FileNotFoundError:
            return None
        except SealedFileRefused as exc:
            raise WorkspaceStateError(f"the workspace state {path} cannot be opened: {exc}"
                                      ) from None
        try:
            return cls.loads(plain)
        except (ValueError, TypeError, KeyError) as exc:
            raise WorkspaceStateError(f"the workspace state {path} is malformed ({exc})"
                                      ) from None

    def save(self, path: Path, ring: Any) -> None:
        """Seal and write atomically (blocking: call through the offloader)."""
        write_sealed(path, self.dumps(), ring=ring, purpose=STATE_PURPOSE, role=_ROLE,
                     what="the workspace state")
