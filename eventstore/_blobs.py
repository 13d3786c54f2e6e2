"""The blob store beside the event log: content-addressed bytes (the before-images of the
workspace changes tool calls applied, which ``artoo undo`` restores).

A blob is addressed by the sha256 of its bytes (64 lowercase hex digits). Putting the same
bytes twice stores them once; a blob is never changed or removed by artoo. Every backend
implements :class:`BlobStore` and passes one contract suite (``tests/eventstore/
test_blobs.py``: a backend's tests subclass it and write only ``create_store``):

- :class:`FileBlobStore` — a LevelDB store's ``<store>/blobs/<2 hex>/<62 hex>`` files, each
  written under a temporary name and renamed in (a reader never sees half a blob); with
  durability ``batch`` or ``always`` the file and its directory are fsynced before
  :meth:`~BlobStore.put` returns, so a log record naming the blob is never durable before
  it. Plain files, not a LevelDB: one process holds a LevelDB, and the blobs are read by
  whoever holds the store.
- :class:`PostgresBlobStore` — the table ``artoo_blobs (sha, data)`` of a PostgreSQL
  store (schema version 5), one committed insert per blob.
- :class:`InMemoryBlobStore` — for tests and the role harness.

:meth:`~BlobStore.get` checks the bytes against their address: a damaged blob is a
:class:`BlobCorrupt`, a missing one a :class:`BlobMissing` (both ``KeyError``).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import secrets
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from .eventlog import DURABILITY_MODES, Durability

if TYPE_CHECKING:
    import psycopg

__all__ = [
    "BlobCorrupt",
    "BlobMissing",
    "BlobStore",
    "FileBlobStore",
    "InMemoryBlobStore",
    "PostgresBlobStore",
    "sha256_hex",
]

_SHA = re.compile(r"^[0-9a-f]{64}$")


def sha256_hex(data: bytes) -> str:
    """The address of ``data``: its sha256, 64 lowercase hex digits."""
    return hashlib.sha256(data).hexdigest()


class BlobMissing(KeyError):
    """No blob has this address in the store."""


class BlobCorrupt(KeyError):
    """The blob's bytes do not hash to its address (damaged at rest)."""


def _checked(sha: str) -> str:
    if not isinstance(sha, str) or _SHA.match(sha) is None:
        raise ValueError(f"not a blob address (64 lowercase hex digits): {sha!r}")
    return sha


def _verified(sha: str, data: bytes) -> bytes:
    if sha256_hex(data) != sha:
        raise BlobCorrupt(f"blob {sha} is damaged: its bytes hash to {sha256_hex(data)}")
    return data


@runtime_checkable
class BlobStore(Protocol):
    """Content-addressed bytes. ``put`` is idempotent and safe from several threads; a
    blob ``put`` returned is as durable as the store's durability says before it returns;
    ``get`` returns exactly the bytes put, or raises BlobMissing / BlobCorrupt."""

    def put(self, data: bytes) -> str:
        """Keep ``data``; its address (:func:`sha256_hex`)."""
        ...

    def get(self, sha: str) -> bytes:
        """The bytes at ``sha`` (checked against it)."""
        ...

    def has(self, sha: str) -> bool:
        """Whether a blob is kept at ``sha`` (not read back)."""
        ...

    def close(self) -> None:
        """Release the store (idempotent); later calls raise ValueError."""
        ...


class InMemoryBlobStore:
    """A :class:`BlobStore` in memory (tests, the role harness)."""

    def __init__(self) -> None:
        self._blobs: dict[str, bytes] = {}
        self._lock = threading.Lock()
        self._closed = False

    def _check_open(self) -> None:
        if self._closed:
            raise ValueError("the blob store is closed")

    def put(self, data: bytes) -> str:
        """Keep ``data``; its address."""
        sha = sha256_hex(data)
        with self._lock:
            self._check_open()
            self._blobs.setdefault(sha, bytes(data))
        return sha

    def get(self, sha: str) -> bytes:
        """The bytes at ``sha``."""
        _checked(sha)
        with self._lock:
            self._check_open()
            data = self._blobs.get(sha)
        if data is None:
            raise BlobMissing(sha)
        return _verified(sha, data)

    def has(self, sha: str) -> bool:
        """Whether a blob is kept at ``sha``."""
        _checked(sha)
        with self._lock:
            self._check_open()
            return sha in self._blobs

    def close(self) -> None:
        """Close it (idempotent)."""
        self._closed = True


class FileBlobStore:
    """A :class:`BlobStore` of files beneath ``directory`` (a LevelDB store's ``blobs/``),
    durable per ``durability`` (see the module docstring)."""

    def __init__(self, directory: str | os.PathLike[str], durability: Durability = "batch") -> None:
        if durability not in DURABILITY_MODES:
            raise ValueError(f"durability must be one of {DURABILITY_MODES}, not {durability!r}")
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.durability = durability
        self._closed = False

    def __repr__(self) -> str:
        return f"FileBlobStore({str(self.directory)!r}, durability={self.durability!r})"

    def _check_open(self) -> None:
        if self._closed:
            raise ValueError("the blob store is closed")

    def _path(self, sha: str) -> Path:
        return self.directory / sha[:2] / sha[2:]

    def put(self, data: bytes) -> str:
        """Keep ``data`` (written aside, fsynced per the durability, renamed in)."""
        self._check_open()
        sha = sha256_hex(data)
        final = self._path(sha)
        if final.exists():
            return sha
        sync = self.durability != "none"
        final.parent.mkdir(exist_ok=True)
        tmp = final.parent / f".{sha[2:]}.{secrets.token_hex(4)}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            with open(fd, "wb", closefd=False) as out:
                out.write(data)
            if sync:
                os.fsync(fd)
        except BaseException:
            os.close(fd)
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise
        os.close(fd)
        os.replace(tmp, final)
        if sync:
            for folder in (final.parent, self.directory):
                dfd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
                try:
                    os.fsync(dfd)
                finally:
                    os.close(dfd)
        return sha

    def get(self, sha: str) -> bytes:
        """The bytes at ``sha``."""
        self._check_open()
        try:
            data = self._path(_checked(sha)).read_bytes()
        except FileNotFoundError:
            raise BlobMissing(sha) from None
        return _verified(sha, data)

    def has(self, sha: str) -> bool:
        """Whether a blob is kept at ``sha``."""
        self._check_open()
        return self._path(_checked(sha)).is_file()

    def close(self) -> None:
        """Close it (idempotent)."""
        self._closed = True


class PostgresBlobStore:
    """A :class:`BlobStore` in the ``artoo_blobs`` table of the PostgreSQL store at
    ``url`` (migrated to this code's schema on open). One connection, used by one thread
    at a time."""

    def __init__(self, url: str) -> None:
        from ._postgres import connect, migrate

        self._conn: psycopg.Connection[Any] = connect(url)
        try:
            migrate(self._conn)
        except BaseException:
            self._conn.close()
            raise
        self._lock = threading.Lock()

    def _check_open(self) -> None:
        if self._conn.closed:
            raise ValueError("the blob store is closed")

    def put(self, data: bytes) -> str:
        """Keep ``data`` (one committed insert; nothing when it is kept already)."""
        sha = sha256_hex(data)
        with self._lock:
            self._check_open()
            self._conn.execute(
                "INSERT INTO artoo_blobs (sha, data) VALUES (%s, %s) ON CONFLICT (sha) DO NOTHING",
                (sha, bytes(data)),
            )
        return sha

    def get(self, sha: str) -> bytes:
        """The bytes at ``sha``."""
        _checked(sha)
        with self._lock:
            self._check_open()
            row = self._conn.execute(
                "SELECT data FROM artoo_blobs WHERE sha = %s", (sha,)
            ).fetchone()
        if row is None:
            raise BlobMissing(sha)
        return _verified(sha, bytes(row[0]))

    def has(self, sha: str) -> bool:
        """Whether a blob is kept at ``sha``."""
        _checked(sha)
        with self._lock:
            self._check_open()
            row = self._conn.execute("SELECT 1 FROM artoo_blobs WHERE sha = %s", (sha,)).fetchone()
        return row is not None

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self._lock:
            self._conn.close()
