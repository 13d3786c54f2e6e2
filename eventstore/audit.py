"""The audit log: the Auditor's reports, append-only and hash-chained (paper §8; design C10).

``<store>/audit/`` holds two files, separate from the event log and from memory:

- ``reports.jsonl`` — one record per line, ``{"n", "prev", "hash", "report"}``: ``n``
  counts from 1, ``prev`` is the previous record's ``hash`` (64 zeros for the first) and
  ``hash`` is the SHA-256 of ``"<n>\\n<prev>\\n"`` followed by the report's canonical JSON
  (msgspec's encoding). Editing a byte of a record, deleting one or swapping two breaks
  the chain at the first record touched.
- ``HEAD`` — ``{"n", "hash"}`` of the last record, replaced atomically after each append,
  so a deleted last record is detected too.

A crash of the writer can leave a **torn tail**: a partial last line (killed inside the
write), or one complete record that chains correctly beyond HEAD (killed between the
record's fsync and HEAD's replacement). Opening the writable :class:`AuditLog` repairs
exactly these two, with a warning (the partial line is cut off; HEAD is moved to the
complete record); anything else is left as it is for :meth:`AuditLogReader.verify` to
name as tampering.

Nothing outside the store anchors the chain: someone who rewrites the last records *and*
recomputes their hashes and HEAD is not caught by the chain alone. Keep the head that a
verify prints (``artoo audit --verify`` prints it) somewhere else, and later check that
the chain still holds it (``artoo audit --verify --expect-head HASH``, :meth:`holds`):
every record up to that one is then as it was.

Only the Auditor writes it (:class:`AuditLog`, which no other role is given); the System
and ``artoo audit`` read it through :class:`AuditLogReader`, which cannot write.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import msgspec

from artoo.schemas import AuditReport

__all__ = ["GENESIS", "AuditLog", "AuditLogReader", "AuditVerification", "record_hash"]

_log = logging.getLogger("artoo.eventstore")

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
    head: str = GENESIS
    """The last good record's hash (GENESIS for an empty log)."""


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

    def close(self) -> None:
        """Release what the reader holds (nothing for the files; idempotent)."""

    def _head_bytes(self) -> bytes | None:
        """HEAD as stored (None when there is none)."""
        try:
            return (self.directory / _HEAD).read_bytes()
        except FileNotFoundError:
            return None

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
        head_bytes = self._head_bytes()
        if head_bytes is None:
            if count:
                return AuditVerification(False, count, count, "HEAD is missing")
            return AuditVerification(True, 0)
        try:
            head = msgspec.json.decode(head_bytes, type=_Head)
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
        return AuditVerification(True, count, head=prev)

    def holds(self, record_hash: str) -> int | None:
        """The number of the record whose hash is ``record_hash``, or None (an external
        anchor: with a verified chain, every record up to it is unchanged)."""
        for index, line in enumerate(self._lines(), 1):
            try:
                if msgspec.json.decode(line, type=_Record).hash == record_hash:
                    return index
            except (msgspec.DecodeError, msgspec.ValidationError):
                return None
        return None


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
        self.repaired = self._repair_torn_tail()
        """What opening repaired (a torn tail after a crash), or None."""
        lines = self._lines()
        if lines:
            try:
                record = msgspec.json.decode(lines[-1], type=_Record)
                self._n, self._last = record.n, record.hash
            except (msgspec.DecodeError, msgspec.ValidationError):
                self._n = len(lines)  # the chain is broken; verify() names where
        self._file = open(self.directory / _REPORTS, "ab")

    def _repair_torn_tail(self) -> str | None:
        """Repair what a crashed writer leaves (see the module docstring); None if
        nothing was torn. Tampering is never repaired."""
        path = self.directory / _REPORTS
        if not path.exists():
            return None
        data = path.read_bytes()
        fixed: str | None = None
        if data and not data.endswith(b"\n"):  # a partial last line: cut it off
            cut = data.rfind(b"\n") + 1
            check = AuditLogReader(self.directory)
            with open(path, "r+b") as f:
                f.truncate(cut)
                f.flush()
                os.fsync(f.fileno())
            if not check.verify().ok and not self._one_beyond_head():
                # not a clean chain without it either: keep the evidence, do not repair
                with open(path, "r+b") as f:
                    f.seek(cut)
                    f.write(data[cut:])
                return None
            fixed = f"cut off a partial last record ({len(data) - cut} bytes)"
        if self._one_beyond_head():
            lines = self._lines()
            record = msgspec.json.decode(lines[-1], type=_Record)
            head = self.directory / _HEAD
            tmp = head.with_suffix(".tmp")
            tmp.write_bytes(msgspec.json.encode(_Head(record.n, record.hash)))
            os.replace(tmp, head)
            moved = f"moved HEAD to record {record.n}, written before a crash"
            fixed = moved if fixed is None else f"{fixed}; {moved}"
        if fixed is not None:
            _log.warning("audit log %s: torn tail repaired: %s", self.directory, fixed)
        return fixed

    def _one_beyond_head(self) -> bool:
        """True when the chain is intact up to HEAD (or empty, HEAD not yet written) and
        one more complete record links and hashes after it: what a crash between a
        record's fsync and HEAD's replacement leaves."""
        head_path = self.directory / _HEAD
        head = _Head(0, GENESIS)
        if head_path.exists():
            try:
                head = msgspec.json.decode(head_path.read_bytes(), type=_Head)
            except (msgspec.DecodeError, msgspec.ValidationError):
                return False
        lines = self._lines()
        if len(lines) != head.n + 1:
            return False
        prev = GENESIS
        for index, line in enumerate(lines, 1):
            try:
                record = msgspec.json.decode(line, type=_Record)
            except (msgspec.DecodeError, msgspec.ValidationError):
                return False
            if record.n != index or record.prev != prev:
                return False
            if record_hash(record.n, record.prev, bytes(record.report)) != record.hash:
                return False
            prev = record.hash
            if index == head.n and prev != head.hash:
                return False
        return True

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
