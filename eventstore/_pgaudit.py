"""The audit log in a PostgreSQL store: the same hash-chained records and HEAD as
``<store>/audit`` (:mod:`artoo.eventstore.audit`), as rows.

``artoo_audit (pos, line)`` holds each record's line exactly as ``reports.jsonl`` would
(``{"n", "prev", "hash", "report"}``), ``pos`` its place; ``artoo_audit_head (id = 1,
head)`` holds HEAD's bytes. An append writes the record and moves HEAD in one transaction,
so no torn tail exists to repair; the checks (:meth:`AuditLogReader.verify`, ``holds``) are
the file log's own, over these rows — a row edited, deleted or swapped in the database is
found at the first record touched, as in the file.
"""

from __future__ import annotations

import tempfile
import threading
from pathlib import Path
from typing import Any

import msgspec

from artoo.schemas import AuditReport

from ._postgres import connect, migrate
from .audit import GENESIS, AuditLog, AuditLogReader, _Head, _Record, record_hash

__all__ = ["PostgresAuditLog", "PostgresAuditLogReader"]


class PostgresAuditLogReader(AuditLogReader):
    """Read-only view of a PostgreSQL store's audit log (many readers, while it is written)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._conn: Any = connect(url)
        self._conn_lock = threading.Lock()

    def _lines(self, *, complete_only: bool = False) -> list[bytes]:
        with self._conn_lock:
            rows = self._conn.execute("SELECT line FROM artoo_audit ORDER BY pos").fetchall()
        return [bytes(row[0]) for row in rows]

    def _head_bytes(self) -> bytes | None:
        with self._conn_lock:
            row = self._conn.execute("SELECT head FROM artoo_audit_head WHERE id = 1").fetchone()
        return None if row is None else bytes(row[0])

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self._conn_lock:
            self._conn.close()


class PostgresAuditLog(PostgresAuditLogReader, AuditLog):
    """The writable audit log of a PostgreSQL store: :meth:`append` only (the Auditor's).

    Appends from several threads or processes keep one chain: each takes HEAD's row lock
    (``SELECT … FOR UPDATE``) and continues from the HEAD it read.
    """

    repaired: str | None = None  # one transaction per record: nothing is ever torn

    def __init__(self, url: str, directory: Path | None = None) -> None:
        """``directory``: where the Auditor keeps its watermark (``_audit_mark``), a
        directory of this process (the store's scratch); the records are rows."""
        super().__init__(url)
        migrate(self._conn)
        self.directory = directory if directory is not None else Path(tempfile.mkdtemp())
        self.directory.mkdir(parents=True, exist_ok=True)

    @property
    def count(self) -> int:
        """Records written so far (HEAD's number)."""
        head = self._head_bytes()
        return 0 if head is None else msgspec.json.decode(head, type=_Head).n

    def append(self, report: AuditReport) -> int:
        """Write ``report`` as the next record; returns its number."""
        body = msgspec.json.encode(report)
        with self._conn_lock, self._conn.transaction():
            conn = self._conn
            conn.execute(
                "INSERT INTO artoo_audit_head (id, head) VALUES (1, %s) ON CONFLICT DO NOTHING",
                (msgspec.json.encode(_Head(0, GENESIS)),),
            )
            row = conn.execute(
                "SELECT head FROM artoo_audit_head WHERE id = 1 FOR UPDATE"
            ).fetchone()
            head = msgspec.json.decode(bytes(row[0]), type=_Head)
            n = head.n + 1
            digest = record_hash(n, head.hash, body)
            line = msgspec.json.encode(_Record(n, head.hash, digest, msgspec.Raw(body)))
            conn.execute(
                "INSERT INTO artoo_audit (pos, line) VALUES"
                " ((SELECT coalesce(max(pos), 0) + 1 FROM artoo_audit), %s)",
                (line,),
            )
            conn.execute(
                "UPDATE artoo_audit_head SET head = %s WHERE id = 1",
                (msgspec.json.encode(_Head(n, digest)),),
            )
        return n
