"""Sealed files: the one format every file Solace keeps under its home is written in.

Everything under the home that holds user content besides the substrate itself
(snapshots, FAISS indexes, any projection written to disk) is a *sealed file*:
encrypted and authenticated with AES-256-GCM under a key derived from the substrate's
key ring (:meth:`substrate.KeyRing.derive`), and written atomically, mode 0600 in a
0700 directory. Layout (sans-IO: :func:`seal` / :func:`unseal` work on bytes)::

    magic  b"SOLSEAL"   7 bytes
    version             1 byte  (1)
    key id              2 bytes big-endian: the ring key the file key was derived from
    nonce               12 bytes, fresh from os.urandom
    ciphertext + tag    AES-GCM(key = ring.derive(purpose, key id))

The associated data is the 22-byte header followed by the file's *role* (e.g.
``memory/Main/snapshot``): a file sealed for one role never opens as another (Main's
snapshot cannot stand in for Supervisor's), and a changed header, nonce, ciphertext
or tag, a truncation, a wrong key or a plaintext file are all refused with
:class:`SealedFileRefused`, which names the file and the reason. Because the key id
is stored, a rotated ring (a new current key) still opens files sealed before.

Writes (:func:`write_sealed`) go to a temporary file created exclusively with mode
0600 in the target's directory, are fsynced, renamed over the target, and the
directory is fsynced; the temporary file is removed on any failure. A write that
fails for lack of space (ENOSPC, EDQUOT, or the EIO/EFBIG a full disk also gives)
raises :class:`StorageFullError`, naming what was being written.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import mmap
import os
import secrets
import stat
import struct
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import msgpack
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from substrate import KeyRing
from substrate.segments import fsync_dir, write_all

__all__ = [
    "read_checkpointed",
    "refusing_malformed",
    "snapshot_body",
    "SnapshotRefused",
    "DIR_MODE",
    "FILE_MODE",
    "HEADER_BYTES",
    "HomeFileError",
    "MAGIC",
    "SealedFileRefused",
    "StorageFullError",
    "TMP_SUFFIX",
    "fsync_dir",
    "is_storage_full",
    "read_sealed",
    "remove_stale_tmp",
    "seal",
    "secure_dir",
    "storage_full",
    "tighten",
    "unseal",
    "write_private",
    "write_sealed",
]

log = logging.getLogger(__name__)
T = TypeVar("T")

MAGIC = b"SOLSEAL"
VERSION = 1
_HEADER = struct.Struct(">7sBH12s")
HEADER_BYTES = _HEADER.size  # 22
_TAG_BYTES = 16
FILE_MODE = 0o600
DIR_MODE = 0o700
TMP_SUFFIX = ".tmp"
#: errnos a full (or failing) disk gives a write: the storage is not accepting data.
_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EFBIG})


class HomeFileError(Exception):
    """Base class of the errors raised about files under the runtime home."""


class SealedFileRefused(HomeFileError):
    """Raised by :func:`unseal`/:func:`read_sealed` when a file is not a sealed file
    this ring and role open: plaintext, truncated, edited, another role's, or sealed
    with a key the ring lacks. The message names the file and the reason."""


class StorageFullError(HomeFileError, OSError):
    """Raised when a write under the home (or to the substrate, by its callers) fails
    because the storage is full or failing; names what was written and where. Nothing
    the failed write touched is left behind, and the previous state is intact."""


def is_storage_full(exc: BaseException) -> bool:
    """Whether ``exc`` is an OSError a full or failing disk gives a write."""
    return isinstance(exc, OSError) and exc.errno in _FULL_ERRNOS


def storage_full(exc: OSError, what: str) -> StorageFullError:
    """A :class:`StorageFullError` for ``exc`` saying that writing ``what`` failed
    (raise it ``from exc``). Keeps ``exc``'s errno and file name."""
    where = f" ({exc.filename})" if exc.filename else ""
    reason = exc.strerror or str(exc)
    err = StorageFullError(exc.errno, f"cannot write {what}{where}: {reason}")
    err.filename = exc.filename
    return err


# ------------------------------------------------------------------ sans-IO


def seal(plaintext: bytes, *, ring: KeyRing, purpose: str, role: str) -> bytes:
    """Encrypt and authenticate ``plaintext`` for ``role`` with the ring's current key.

    Args:
        ring: the key ring; the file key is ``ring.derive(purpose)``.
        purpose: the key-derivation purpose (e.g. ``"snapshot"``).
        role: what this file is (associated data); :func:`unseal` must be given the same.

    Returns:
        The sealed bytes (header + ciphertext + tag).
    """
    key_id = ring.current_id
    header = _HEADER.pack(MAGIC, VERSION, key_id, os.urandom(12))
    aead = AESGCM(ring.derive(purpose, key_id))
    return header + aead.encrypt(header[-12:], plaintext, header + role.encode("utf-8"))


def unseal(data: bytes | mmap.mmap, *, ring: KeyRing, purpose: str, role: str, name: str = "data"
           ) -> bytes:
    """The plaintext of sealed ``data``, after checking it is authentic for ``role``.

    Args:
        data: the sealed bytes, or any buffer of them (a mapped file: nothing of it is
            copied but the header).
        name: how to name the data in an error (a file path).

    Raises:
        SealedFileRefused: ``data`` is not a sealed file, another version, truncated,
            sealed with a key id the ring lacks, or fails authentication (edited, another
            role's, another key's). Nothing of ``data`` is returned then.
    """
    if len(data) < HEADER_BYTES + _TAG_BYTES:
        data = bytes(data)
        if not data.startswith(MAGIC[: len(data)]) or not data:
            raise SealedFileRefused(f"{name} is not a sealed file (no {MAGIC.decode()} header)")
        raise SealedFileRefused(f"{name} is truncated ({len(data)} bytes)")
    magic, version, key_id, nonce = _HEADER.unpack_from(data)
    if magic != MAGIC:
        raise SealedFileRefused(f"{name} is not a sealed file (no {MAGIC.decode()} header; "
                                "plaintext from an older Solace?)")
    if version != VERSION:
        raise SealedFileRefused(f"{name} has sealed-file version {version}, this Solace "
                                f"reads {VERSION}")
    try:
        key = ring.derive(purpose, key_id)
    except KeyError:
        raise SealedFileRefused(f"{name} was sealed with key id {key_id}, which is not in "
                                f"the key ring (ids {sorted(ring.keys)})") from None
    header = bytes(data[:HEADER_BYTES])
    try:
        with memoryview(data) as whole, whole[HEADER_BYTES:] as body:  # not copied
            return AESGCM(key).decrypt(nonce, body, header + role.encode("utf-8"))
    except InvalidTag:
        raise SealedFileRefused(
            f"{name} failed authentication as {role!r}: edited, truncated, sealed for "
            "another file, or sealed with another key") from None


# ------------------------------------------------------------------ files


def secure_dir(directory: str | os.PathLike[str]) -> Path:
    """Create ``directory`` (and missing parents) with mode 0700, or tighten it to 0700.

    Only the directories this call creates and ``directory`` itself are changed, never
    an existing parent.

    Returns:
        The directory as a Path.
    """
    directory = Path(directory)
    missing = []
    p = directory
    while not p.exists():
        missing.append(p)
        if p.parent == p:
            break
        p = p.parent
    for d in reversed(missing):
        with contextlib.suppress(FileExistsError):  # a concurrent creator
            d.mkdir(mode=DIR_MODE)
        os.chmod(d, DIR_MODE)  # mkdir's mode is masked by the umask
    if not missing and (directory.stat().st_mode & 0o777) != DIR_MODE:
        os.chmod(directory, DIR_MODE)
    return directory


def tighten(paths: Iterable[Path]) -> int:
    """Make every directory among ``paths`` 0700 and every regular file 0600 or stricter
    (group and other bits removed). Symlinks are not followed.

    Returns:
        How many modes were changed.
    """
    changed = 0
    for path in paths:
        try:
            st = path.lstat()
        except FileNotFoundError:
            continue
        if stat.S_ISLNK(st.st_mode):
            continue
        mode = stat.S_IMODE(st.st_mode)
        want = DIR_MODE if stat.S_ISDIR(st.st_mode) else mode & 0o700
        if want != mode:
            os.chmod(path, want)
            changed += 1
    return changed


def remove_stale_tmp(directory: str | os.PathLike[str]) -> list[Path]:
    """Delete temporary files an interrupted :func:`write_sealed` left in ``directory``.

    Returns:
        The paths removed.
    """
    directory = Path(directory)
    removed = []
    with contextlib.suppress(FileNotFoundError):
        for path in directory.iterdir():
            if path.name.endswith(TMP_SUFFIX) and path.is_file():
                path.unlink(missing_ok=True)
                removed.append(path)
    return removed


def write_sealed(path: str | os.PathLike[str], plaintext: bytes, *, ring: KeyRing,
                 purpose: str, role: str, what: str | None = None) -> Path:
    """Seal ``plaintext`` and write it to ``path`` with :func:`write_private`.

    Blocking (AES-GCM, fsync): call through the offloader from async code.

    Args:
        ring, purpose, role: as for :func:`seal`.
        what: how to name the content in an error (default: the path).

    Returns:
        ``path``.

    Raises:
        As :func:`write_private`.
    """
    return write_private(path, seal(plaintext, ring=ring, purpose=purpose, role=role),
                         what=what)


def write_private(path: str | os.PathLike[str], data: bytes, *,
                  what: str | None = None) -> Path:
    """Write ``data`` to ``path`` atomically, mode 0600 in a 0700 directory (created if
    missing): a temporary file created exclusively, fsynced, renamed over ``path``, the
    directory fsynced. The one atomic writer for files under the home.

    Returns:
        ``path``.

    Raises:
        StorageFullError: the disk is full or failing; ``path`` still holds what it held
            before and no temporary file is left.
        OSError: any other write failure, with the same guarantee.
    """
    path = Path(path)
    directory = secure_dir(path.parent)
    tmp = directory / f".{path.name}.{secrets.token_hex(4)}{TMP_SUFFIX}"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
        try:
            os.fchmod(fd, FILE_MODE)
            write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
        fsync_dir(directory)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        if is_storage_full(exc):
            raise storage_full(exc, what or str(path)) from exc
        raise
    return path


def read_sealed(path: str | os.PathLike[str], *, ring: KeyRing, purpose: str,
                role: str) -> bytes:
    """The authenticated plaintext of the sealed file at ``path``.

    Raises:
        FileNotFoundError: there is no such file.
        SealedFileRefused: the file is not authentic for ``role`` (see :func:`unseal`).
    """
    path = Path(path)
    with open(path, "rb") as file:
        if os.fstat(file.fileno()).st_size < HEADER_BYTES + _TAG_BYTES:  # mmap refuses 0
            return unseal(file.read(), ring=ring, purpose=purpose, role=role, name=str(path))
        # Mapped, not read: the file's bytes are decrypted from the page cache, with no
        # copy of them faulted into fresh memory (a third of the cost of reading a
        # large file). A sealed file is only ever replaced by a rename, never
        # truncated in place, so the mapping cannot shrink under the decryption.
        with mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            return unseal(mapped, ring=ring, purpose=purpose, role=role, name=str(path))


def read_checkpointed(path: str | os.PathLike[str], *, ring: KeyRing, purpose: str, role: str,
                      decode: Callable[[bytes], tuple[T, int]], last_id: int,
                      what: str) -> tuple[T, int] | None:
    """A projection's kept snapshot and its checkpoint, or None when there is none or it
    cannot be used (logged at WARNING naming ``what`` and why): it fails authentication,
    ``decode`` refuses it (a ``ValueError``), or its checkpoint is beyond the log's
    ``last_id``. A cache: whoever gets None replays the substrate instead.

    Blocking (file I/O, AES-GCM): call through the offloader from async code.
    """
    try:
        kept, checkpoint = decode(read_sealed(path, ring=ring, purpose=purpose, role=role))
    except FileNotFoundError:
        return None
    except (SealedFileRefused, ValueError) as exc:
        log.warning("%s refused, replaying the substrate: %s", what, exc)
        return None
    if checkpoint > last_id:
        log.warning("%s covers entry %d, the substrate ends at %d: replaying the substrate",
                    what, checkpoint, last_id)
        return None
    return kept, checkpoint


class SnapshotRefused(ValueError):
    """Bytes that are not a projection snapshot this code can use: another format, or
    malformed. A ``ValueError``, so :func:`read_checkpointed` logs it and the caller
    replays the substrate."""


def snapshot_body(data: bytes, *, format: int, what: str, **unpack: Any) -> dict[str, Any]:
    """The msgpack map a projection's ``encode`` wrote, checked to be of ``format``.

    Raises:
        SnapshotRefused: not a map, or of another format (``"<what> format ..."``).
        ValueError, msgpack.UnpackException: not msgpack (see :func:`refusing_malformed`).
    """
    body = msgpack.unpackb(data, raw=False, **unpack)
    if not isinstance(body, dict) or body.get("format") != format:
        found = body.get("format") if isinstance(body, dict) else type(body).__name__
        raise SnapshotRefused(f"{what} format {found!r}, expected {format}")
    return body


@contextlib.contextmanager
def refusing_malformed(what: str) -> Iterator[None]:
    """Around a projection's ``decode``: any error reading its body (a missing key, a
    wrong type, bad msgpack, a text that fails authentication) is raised as
    :class:`SnapshotRefused` (``"<what> malformed: ..."``); a refusal passes as it is."""
    try:
        yield
    except SnapshotRefused:
        raise
    except (ValueError, TypeError, KeyError, IndexError, InvalidTag,
            msgpack.UnpackException) as exc:
        raise SnapshotRefused(f"{what} malformed: {exc!r}") from exc
