"""The fact key vault: one data key per fact, kept outside the append-only log.

A fact's text is sealed in its ``memfact`` event under a fresh 256-bit key of its
own (:func:`solace.facts.events.seal_text`). The keys live here, one sealed file per
memory id (``<home>/facts/<hex of the id>.keys``, sealed with
:func:`solace.sealed.write_sealed` under the substrate's ring), so:

* deleting a fact destroys its key (the id's file is rewritten without it), and
  forgetting an id unlinks its file: the text left in the substrate is ciphertext
  nobody can open, even with the substrate key (crypto-shredding);
* a key is written (fsynced) *before* its event is appended, so an event whose key is
  missing is a deleted fact (or the debris of a crash between the two steps), never
  a fact whose key was lost while it was live.

Blocking (AES-GCM, fsync): the service calls it through the offloader.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import secrets
import threading
from pathlib import Path

from solace.facts.errors import FactVaultError
from solace.sealed import SealedFileRefused, fsync_dir, read_sealed, secure_dir, write_sealed
from substrate import KeyRing

__all__ = ["KeyVault"]

_PURPOSE = "facts/keys"
_SUFFIX = ".keys"


class KeyVault:
    """Per-fact data keys for every memory id, cached in memory, sealed on disk."""

    def __init__(self, directory: str | os.PathLike[str], ring: KeyRing) -> None:
        self.directory = Path(directory)
        self._ring = ring
        self._keys: dict[str, dict[str, bytes]] = {}
        self._lock = threading.Lock()

    def _path(self, memory_id: str) -> Path:
        return self.directory / f"{memory_id.encode().hex()}{_SUFFIX}"

    def _role(self, memory_id: str) -> str:
        return f"facts/keys/{memory_id}"

    def _load(self, memory_id: str) -> dict[str, bytes]:
        if memory_id in self._keys:
            return self._keys[memory_id]
        path = self._path(memory_id)
        try:
            plain = read_sealed(path, ring=self._ring, purpose=_PURPOSE,
                                role=self._role(memory_id))
        except FileNotFoundError:
            keys: dict[str, bytes] = {}
        except SealedFileRefused as exc:
            raise FactVaultError(f"the fact keys of memory id {memory_id!r} cannot be "
                                 f"opened ({exc}); its facts cannot be read") from None
        else:
            keys = {k: base64.b64decode(v) for k, v in json.loads(plain).items()}
        self._keys[memory_id] = keys
        return keys

    def _save(self, memory_id: str, keys: dict[str, bytes]) -> None:
        path = self._path(memory_id)
        if not keys:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
                fsync_dir(path.parent)
        else:
            body = json.dumps({k: base64.b64encode(v).decode() for k, v in sorted(keys.items())})
            write_sealed(path, body.encode(), ring=self._ring, purpose=_PURPOSE,
                         role=self._role(memory_id), what=f"fact keys of {memory_id!r}")
        self._keys[memory_id] = keys

    def key(self, memory_id: str, fact_id: str) -> bytes | None:
        """The data key of ``fact_id``, or None if it was destroyed (or never kept)."""
        with self._lock:
            return self._load(memory_id).get(fact_id)

    def create(self, memory_id: str, fact_ids: list[str]) -> dict[str, bytes]:
        """Make, persist (fsynced) and return a fresh key for each of ``fact_ids``."""
        with self._lock:
            keys = dict(self._load(memory_id))
            fresh = {f: secrets.token_bytes(32) for f in fact_ids}
            keys.update(fresh)
            secure_dir(self.directory)
            self._save(memory_id, keys)
            return fresh

    def destroy(self, memory_id: str, fact_ids: list[str]) -> None:
        """Forget the keys of ``fact_ids`` for good (the file is rewritten without them)."""
        with self._lock:
            keys = {k: v for k, v in self._load(memory_id).items() if k not in set(fact_ids)}
            self._save(memory_id, keys)

    def destroy_all(self, memory_id: str) -> bool:
        """Forget every key of ``memory_id`` (its file is unlinked); True if it held any."""
        with self._lock:
            held = bool(self._load(memory_id))
            self._save(memory_id, {})
            return held

    def memory_ids(self) -> list[str]:
        """The memory ids that hold at least one key, sorted."""
        if not self.directory.is_dir():
            return []
        found = []
        for path in self.directory.glob(f"*{_SUFFIX}"):
            with contextlib.suppress(ValueError, UnicodeDecodeError):
                found.append(bytes.fromhex(path.name[: -len(_SUFFIX)]).decode())
        return sorted(found)
