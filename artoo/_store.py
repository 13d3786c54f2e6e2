"""Where a store is: a LevelDB directory (the default) or a PostgreSQL URL.

One parser for :meth:`System.open` and every CLI command that takes a store. A store
argument that starts with ``<scheme>://`` is a URL: ``postgresql://`` and ``postgres://``
name a PostgreSQL store; any other scheme is a one-line ValueError (it is never made a
directory named ``foo:``). Anything else is a directory.

:func:`read_log` opens a store's log for reading, live too: a PostgreSQL store is simply
read; a LevelDB store that a running System holds is read through the socket the System
serves inside it (``<store>/events.sock``, :mod:`artoo.eventstore._serve`).
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from artoo.eventstore import AuditLogReader, EventLog, EventLogBackend, StoreLocked

__all__ = [
    "POSTGRES_SCHEMES",
    "StoreArg",
    "StoreSpec",
    "parse_store",
    "read_audit",
    "read_log",
]

POSTGRES_SCHEMES = ("postgresql", "postgres")
"""The URL schemes of a PostgreSQL store (libpq's two spellings)."""

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*)://")


@dataclass(frozen=True)
class StoreSpec:
    """A parsed store argument: ``path`` for a LevelDB store, ``url`` for PostgreSQL."""

    path: Path | None = None
    url: str | None = None

    @property
    def is_postgres(self) -> bool:
        """True for a PostgreSQL store."""
        return self.url is not None

    def __str__(self) -> str:
        return self.url if self.url is not None else str(self.path)

    @property
    def name(self) -> str:
        """A short name: the directory's, or the database's."""
        if self.path is not None:
            return self.path.name
        assert self.url is not None
        return self.url.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1] or "postgres"

    @property
    def has_memory(self) -> bool:
        """True when the store has memory to read (a PostgreSQL store's is in its log)."""
        return self.path is None or (self.path / "memory").exists()


StoreArg = str | os.PathLike[str] | StoreSpec
"""What a store argument may be: a directory, a URL, or one already parsed."""


def parse_store(store: StoreArg) -> StoreSpec:
    """Parse a store argument (see the module docstring); ValueError for an unknown scheme."""
    if isinstance(store, StoreSpec):
        return store
    if isinstance(store, os.PathLike):
        return StoreSpec(path=Path(store))
    match = _SCHEME.match(store)
    if match is None:
        return StoreSpec(path=Path(store))
    scheme = match.group(1).lower()
    if scheme in POSTGRES_SCHEMES:
        return StoreSpec(url=store)
    raise ValueError(
        f"unknown store scheme {scheme!r} in {store!r}: a store is a directory or a "
        "postgresql:// URL"
    )


@contextlib.contextmanager
def read_log(store: StoreArg) -> Iterator[EventLogBackend]:
    """The event log of a store, opened for reading (a ValueError in one line when the
    store does not exist). A PostgreSQL store is read while its Systems write it."""
    spec = parse_store(store)
    if spec.url is not None:
        from artoo.eventstore._postgres import PostgresEventLog

        with PostgresEventLog.open(spec.url, create=False) as pg:
            yield pg
        return
    assert spec.path is not None
    if not (spec.path / "events").exists():
        raise ValueError(f"{spec.path} is not an artoo store (no events/ directory)")
    try:
        log = EventLog.open(spec.path / "events", durability="none", read_only=True)
    except StoreLocked as locked:  # a running System holds it: read through its socket
        from artoo.eventstore._serve import SOCKET_NAME, SocketEventLog

        try:
            live = SocketEventLog(spec.path / SOCKET_NAME)
        except OSError:
            raise locked from None
        with live:
            yield live
        return
    with log:
        yield log


def read_audit(store: StoreArg) -> AuditLogReader | None:
    """The store's audit log, read-only (None when a LevelDB store has none yet). Its
    records are plain appends (files, or rows), read while the Auditor writes."""
    spec = parse_store(store)
    if spec.url is not None:
        from artoo.eventstore._pgaudit import PostgresAuditLogReader

        return PostgresAuditLogReader(spec.url)
    assert spec.path is not None
    directory = spec.path / "audit"
    return AuditLogReader(directory) if directory.exists() else None
