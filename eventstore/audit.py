"""The audit log: the Auditor's reports, append-only and hash-chained (paper §8, DESIGN §5).

``<store>/audit/`` holds two files, separate from the event log and from memory:

- ``reports.jsonl`` — one record per line, ``{"n", "prev", "hash", "report"}``: ``n``
  counts from 1, ``prev`` is the previous record's ``hash`` (64 zeros for the first) and
  ``hash`` is the SHA-256 of ``"<n>\\n<prev>\\n"`` followed by the report's canonical JSON
  (msgspec's encoding). Editing a byte of a record, deleting one or swapping two breaks
  the chain at the first record touched.
- ``HEAD`` — ``{"n", "hash"}`` of the last record, replaced atomically after each append,
  so a deleted last record is detected too.

Only the Auditor writes it (:class:`AuditLog`, which no other role is given); the System
and ``artoo audit`` read it through :class:`AuditLogReader`, which cannot write.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import msgspec

from artoo.schemas import AuditReport

__all__ = ["GENESIS", "AuditLog", "AuditLogReader", "AuditVerification", "record_hash"]

GENESIS = "0" * 64
"""The ``prev`` of the first record."""

_REPORTS = "reports.jsonl"
_HEAD = "HEAD"


class _Record(msgspec.Struct, frozen=True):
    n: int
    prev: str
    hash: str
    report: msgspec.Raw


class _Head(msgspec.Struct, frozen=True):
    n: int
    hash: str


def record_hash(n: int, prev: str, report_json: bytes) -> str:
    """The SHA-256 (hex) a record ``n`` carries, chained to ``prev``."""
    digest = hashlib.sha256(f"{n}\n{prev}\n".encode())
    digest.update(report_json)
    return digest.hexdigest()


@dataclass(frozen=True)
class AuditVerification:
    """The result of checking the chain: ``ok``, else the first bad record and why.

    ``bad_record`` is the 1-based record (line) number; ``records`` counts the good ones
    read before it.
    """

    ok: bool
    records: int
    bad_record: int | None = None
    reason: str = ""


class AuditLogReader:
    """Read-only view of a store's audit log (``<store>/audit``)."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)

    def _lines(self, *, complete_only: bool = False) -> list[bytes]:
        path = self.directory / _REPORTS
        if not path.exists():
            return []
        data = path.read_bytes()
        lines = data.split(b"\n")
        # the last piece is b"" after a final newline, else a record still being written
        if lines and (lines[-1] == b"" or complete_only):
            lines.pop()
        return lines

    def reports(self) -> list[AuditReport]:
        """Every complete report, oldest first (decoded without checking the chain; see
        :meth:`verify`). A record the Auditor is writing at this moment (no newline yet)
        is not one."""
        out = []
        for line in self._lines(complete_only=True):
            record = msgspec.json.decode(line, type=_Record)
            out.append(msgspec.json.decode(record.report, type=AuditReport))
        return out

    def __iter__(self) -> Iterator[AuditReport]:
        return iter(self.reports())

    def verify(self) -> AuditVerification:
        """Check every record's number, link and hash, and the HEAD; the first bad one."""
        prev = GENESIS
        lines = self._lines()
        for index, line in enumerate(lines, 1):
            try:
                record = msgspec.json.decode(line, type=_Record)
                msgspec.json.decode(record.report, type=AuditReport)
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                return AuditVerification(False, index - 1, index, f"undecodable: {exc}")
            if record.n != index:
                return AuditVerification(
                    False, index - 1, index, f"numbered {record.n}, expected {index}"
                )
            if record.prev != prev:
                return AuditVerification(
                    False, index - 1, index, "does not link to the record before it"
                )
            if record_hash(record.n, record.prev, bytes(record.report)) != record.hash:
                return AuditVerification(False, index - 1, index, "its hash does not match")
            prev = record.hash
        count = len(lines)
        head_path = self.directory / _HEAD
        if not head_path.exists():
            if count:
                return AuditVerification(False, count, count, "HEAD is missing")
            return AuditVerification(True, 0)
        try:
            head = msgspec.json.decode(head_path.read_bytes(), type=_Head)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            return AuditVerification(False, count, count, f"HEAD undecodable: {exc}")
        if head.n > count:
            return AuditVerification(
                False, count, count + 1, f"missing: HEAD names record {head.n}, the log ends"
            )
        if head.n < count:
            return AuditVerification(
                False, head.n, head.n + 1, f"not in HEAD, which names record {head.n}"
            )
        if head.hash != prev:
            return AuditVerification(False, count - 1, count, "HEAD names another hash")
        return AuditVerification(True, count)


class AuditLog(AuditLogReader):
    """The writable audit log: :meth:`append` only (the Auditor's; thread-safe).

    Each append is written and fsynced before HEAD is replaced. Opening continues the
    chain from the last record on disk; a damaged chain is reported by :meth:`verify`
    (and ``artoo audit --verify``), never repaired.
    """

    def __init__(self, directory: str | Path) -> None:
        super().__init__(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._n = 0
        self._last = GENESIS
        lines = self._lines()
        if lines:
            try:
                record = msgspec.json.decode(lines[-1], type=_Record)
                self._n, self._last = record.n, record.hash
            except (msgspec.DecodeError, msgspec.ValidationError):
                self._n = len(lines)  # the chain is broken; verify() names where
        self._file = open(self.directory / _REPORTS, "ab")

    @property
    def count(self) -> int:
        """Records written so far."""
        return self._n

    def append(self, report: AuditReport) -> int:
        """Write ``report`` as the next record; returns its number."""
        body = msgspec.json.encode(report)
        with self._lock:
            n = self._n + 1
            digest = record_hash(n, self._last, body)
            line = msgspec.json.encode(_Record(n, self._last, digest, msgspec.Raw(body)))
            self._file.write(line + b"\n")
            self._file.flush()
            os.fsync(self._file.fileno())
            head = self.directory / _HEAD
            tmp = head.with_suffix(".tmp")
            tmp.write_bytes(msgspec.json.encode(_Head(n, digest)))
            os.replace(tmp, head)
            self._n, self._last = n, digest
            return n

    def close(self) -> None:
        """Close the file (idempotent)."""
        with self._lock:
            self._file.close()
