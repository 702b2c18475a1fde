"""Where the substrate's keys come from: an environment variable or a key file.

Resolution order (:meth:`KeySource.load`): if the environment variable (default
``SOLACE_SUBSTRATE_KEY``) is set and non-empty it wins; otherwise the key file (default
``<substrate dir>/substrate.key``) is read. When neither exists and the substrate holds
no data yet, a key file with one fresh key is created: exclusively (a concurrent
creator's file is never overwritten), atomically (written to a temporary file, fsynced,
then hard-linked into place) and with mode 0600. When data exists but no key does,
:class:`MissingKeyError` is raised: a new key could never read the old frames.

A key file must be readable by its owner only: like ``ssh`` with a private key, a key
file whose mode grants any access to group or others (0644, 0640, 0666, ...) is refused
with a :class:`SubstrateError` naming the file, its mode and the ``chmod 600`` that fixes
it; the file is never changed (so read-only commands stay read-only), and the key it
holds may already have leaked, which a silent fix would hide. A key file that is a
directory, unreadable, or not ASCII text is a :class:`SubstrateError` as well.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

from .crypto import KeyRing, format_ring, parse_ring
from .errors import MissingKeyError, SubstrateError
from .segments import fsync_dir

__all__ = ["DEFAULT_ENV_VAR", "DEFAULT_KEY_FILE", "KeySource", "LoadedKeys"]

DEFAULT_ENV_VAR = "SOLACE_SUBSTRATE_KEY"
DEFAULT_KEY_FILE = "substrate.key"


@dataclass(frozen=True, slots=True)
class LoadedKeys:
    """A key ring and where it came from (``file`` is None when it came from the env)."""

    ring: KeyRing
    origin: str
    file: Path | None


@dataclass(frozen=True, slots=True)
class KeySource:
    """Where to find the key ring.

    Attributes:
        key_file: Key file path; None means ``<substrate dir>/substrate.key``.
        env_var: Environment variable holding a key or key ring; None disables it.
        create: Whether a missing key file may be created for an empty substrate.
    """

    key_file: Path | str | None = None
    env_var: str | None = DEFAULT_ENV_VAR
    create: bool = True

    def file_for(self, directory: Path | str) -> Path:
        """The key file this source uses for the substrate at ``directory``."""
        if self.key_file is not None:
            return Path(self.key_file)
        return Path(directory) / DEFAULT_KEY_FILE

    def load(self, directory: Path | str, *, may_create: bool) -> LoadedKeys:
        """Load the ring for the substrate at ``directory`` (see module docstring).

        Args:
            may_create: The substrate is empty, so a missing key file may be created
                (if ``self.create``).

        Raises:
            MissingKeyError: no env var, no key file, and the key file may not be created.
            SubstrateError: the env var or key file does not parse (message names it).
        """
        if self.env_var:
            text = os.environ.get(self.env_var, "")
            if text.strip():
                try:
                    return LoadedKeys(parse_ring(text), f"${self.env_var}", None)
                except ValueError as exc:
                    raise SubstrateError(f"${self.env_var} holds no valid key: {exc}") from None
        path = self.file_for(directory)
        try:
            return LoadedKeys(_read_ring(path), str(path), path)
        except FileNotFoundError:
            pass  # a dangling symlink too: nothing to read
        if not (may_create and self.create):
            env = f"${self.env_var} is not set and " if self.env_var else ""
            raise MissingKeyError(
                f"no key for the substrate at {directory}: {env}{path} does not exist. "
                + ("Its segments were written with a key: restore that key file or set "
                   "the env var to the key." if not may_create else
                   "Create the key file or set the env var.")
            )
        return LoadedKeys(create_key_file(path), str(path), path)

    def rotate(self, directory: Path | str) -> int:
        """Add a fresh key to this source's key file; it becomes current. Returns its id.

        For a substrate that is not open (an open one keeps sealing with the key it
        loaded; use :meth:`Substrate.rotate_key` there).

        Raises:
            SubstrateError: the keys come from the env var (which cannot be written).
            MissingKeyError: the key file does not exist.
        """
        loaded = self.load(directory, may_create=False)
        if loaded.file is None:
            raise SubstrateError(
                f"keys come from {loaded.origin}; rotate by adding 'id:hex' entries there"
            )
        ring = loaded.ring.with_new_key()
        write_key_file(loaded.file, ring)
        return ring.current_id


def _read_ring(path: Path) -> KeyRing:
    """Read and parse the key file at ``path``.

    Raises:
        FileNotFoundError: there is no such file.
        SubstrateError: it is a directory, unreadable, open to group or others, not
            ASCII, or malformed (the message names the file, never key material).
    """
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise SubstrateError(f"cannot read the key file {path}: {exc.strerror}") from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise SubstrateError(f"the key file {path} is a directory, not a key ring file")
        mode = stat.S_IMODE(st.st_mode)
        if mode & 0o077:
            raise SubstrateError(
                f"the key file {path} has mode {mode:04o}: group or others may access it, "
                f"so it is refused (the key may have leaked; consider rotating it). Make it "
                f"readable by its owner only: chmod 600 {path}"
            )
        chunks = []
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
    except OSError as exc:
        raise SubstrateError(f"cannot read the key file {path}: {exc.strerror}") from None
    finally:
        os.close(fd)
    try:
        text = b"".join(chunks).decode("ascii")
    except UnicodeDecodeError as exc:
        raise SubstrateError(
            f"the key file {path} is not ASCII text (byte {exc.start} is "
            f"0x{exc.object[exc.start]:02x}); it should hold 'id:hex' lines"
        ) from None
    try:
        return parse_ring(text)
    except ValueError as exc:
        raise SubstrateError(f"key file {path} is malformed: {exc}") from None


def _write_temp(path: Path, ring: KeyRing) -> Path:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, format_ring(ring).encode("ascii"))
        os.fsync(fd)
    finally:
        os.close(fd)
    return tmp


def create_key_file(path: Path) -> KeyRing:
    """Create ``path`` holding a fresh one-key ring, exclusively, atomically, mode 0600.

    If another process created it first, its ring is returned instead.
    """
    ring = KeyRing.generate()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _write_temp(path, ring)
    try:
        os.link(tmp, path)
    except FileExistsError:
        return _read_ring(path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    fsync_dir(path.parent)
    return ring


def write_key_file(path: Path, ring: KeyRing) -> None:
    """Replace ``path`` with ``ring`` atomically (temp file, fsync, rename), mode 0600."""
    tmp = _write_temp(path, ring)
    try:
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    fsync_dir(path.parent)
