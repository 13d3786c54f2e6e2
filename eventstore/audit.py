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

What the chain proves and what it does not: anyone who can write the directory can
rewrite the last records and HEAD consistently (SHA-256 needs no key), so the chain alone
detects edits *before* its end. ``verify(expect_head=…)`` (``artoo audit --verify
--expect-head HASH``) anchors it outside the store: the head a verify printed earlier,
kept elsewhere, must still be a record of the chain — rewriting any record up to it is
then detected.

A crash while appending leaves one of two states, which :class:`AuditLog` repairs when it
opens (with a warning), and :meth:`AuditLogReader.verify` names as a crash, not as
tampering: a last line without its newline (the write did not complete: dropped), or a
complete, correctly chained last record that HEAD does not name yet (HEAD is written
after the record: completed).
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

GENESIS = "0" * 64
"""The ``prev`` of the first record."""

_log = logging.getLogger(__name__)

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
    head: str = ""
    """The hash of the last good record (GENESIS for none): note it somewhere else, and
    pass it as ``expect_head`` to a later verify to anchor the chain."""
    crash: bool = False
    """The only fault is what a crash while appending leaves (see the module docstring);
    the writer repairs it at its next open."""


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

    def verify(self, expect_head: str | None = None) -> AuditVerification:
        """Check every record's number, link and hash, and the HEAD; the first bad one.

        ``expect_head``: a head noted from an earlier verify (kept outside the store); it
        must still be the hash of a record of the chain.
        """
        prev = GENESIS
        hashes = {GENESIS}
        complete = self._lines(complete_only=True)
        lines = self._lines()
        if len(lines) > len(complete):  # a last line without its newline
            return AuditVerification(
                False,
                len(complete),
                len(lines),
                "a write that did not complete (a crash while appending; the writer drops it "
                "when it opens)",
                crash=True,
            )
        for index, line in enumerate(lines, 1):
            bad = self._bad(line, index, prev)
            if bad:
                return AuditVerification(False, index - 1, index, bad, head=prev)
            prev = msgspec.json.decode(line, type=_Record).hash
            hashes.add(prev)
        checked = self._head(len(lines), prev)
        if checked.ok and expect_head is not None and expect_head not in hashes:
            return AuditVerification(
                False,
                len(lines),
                None,
                f"the head noted earlier ({expect_head[:16]}…) is no longer a record of the "
                "chain: records were rewritten",
                head=prev,
            )
        return checked

    @staticmethod
    def _bad(line: bytes, index: int, prev: str) -> str:
        try:
            record = msgspec.json.decode(line, type=_Record)
            msgspec.json.decode(record.report, type=AuditReport)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            return f"undecodable: {exc}"
        if record.n != index:
            return f"numbered {record.n}, expected {index}"
        if record.prev != prev:
            return "does not link to the record before it"
        if record_hash(record.n, record.prev, bytes(record.report)) != record.hash:
            return "its hash does not match"
        return ""

    def _head(self, count: int, prev: str) -> AuditVerification:
        """The chain of ``count`` records ending in ``prev`` checked against HEAD."""
        head_path = self.directory / _HEAD
        if not head_path.exists():
            if count == 1:  # the first record, and a crash before its HEAD
                return AuditVerification(
                    False,
                    0,
                    1,
                    "not in HEAD yet, which is not written (a crash between the first record "
                    "and HEAD; the writer completes it when it opens)",
                    head=prev,
                    crash=True,
                )
            if count:
                return AuditVerification(False, count, count, "HEAD is missing", head=prev)
            return AuditVerification(True, 0, head=GENESIS)
        try:
            head = msgspec.json.decode(head_path.read_bytes(), type=_Head)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            return AuditVerification(False, count, count, f"HEAD undecodable: {exc}")
        if head.n > count:
            return AuditVerification(
                False, count, count + 1, f"missing: HEAD names record {head.n}, the log ends"
            )
        if head.n == count - 1 and head.hash == self._hash_of(count - 1):
            return AuditVerification(
                False,
                count - 1,
                count,
                "not in HEAD yet, which names the record before it (a crash between the "
                "record and HEAD; the writer completes it when it opens)",
                head=prev,
                crash=True,
            )
        if head.n < count:
            return AuditVerification(
                False, head.n, head.n + 1, f"not in HEAD, which names record {head.n}", head=prev
            )
        if head.hash != prev:
            return AuditVerification(False, count - 1, count, "HEAD names another hash", head=prev)
        return AuditVerification(True, count, head=prev)

    def _hash_of(self, n: int) -> str:
        if n == 0:
            return GENESIS
        return msgspec.json.decode(self._lines()[n - 1], type=_Record).hash


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
        self._repair()
        lines = self._lines()
        if lines:
            try:
                record = msgspec.json.decode(lines[-1], type=_Record)
                self._n, self._last = record.n, record.hash
            except (msgspec.DecodeError, msgspec.ValidationError):
                self._n = len(lines)  # the chain is broken; verify() names where
        self._file = open(self.directory / _REPORTS, "ab")

    def _repair(self) -> None:
        """Undo what a crash while appending left (the only faults repaired; a broken
        chain is left for verify to name): a last line without its newline is dropped; a
        complete last record HEAD does not name yet gets its HEAD."""
        check = self.verify()
        if not check.crash:
            return
        path = self.directory / _REPORTS
        data = path.read_bytes()
        if not data.endswith(b"\n"):
            keep = data.rfind(b"\n") + 1
            with open(path, "r+b") as f:
                f.truncate(keep)
                os.fsync(f.fileno())
            _log.warning("audit log %s: dropped a write a crash left incomplete", path)
            check = self.verify()
            if not check.crash:
                return
        last = self._lines()[-1]
        record = msgspec.json.decode(last, type=_Record)
        self._write_head(record.n, record.hash)
        _log.warning("audit log %s: HEAD completed for record %d after a crash", path, record.n)

    def _write_head(self, n: int, digest: str) -> None:
        head = self.directory / _HEAD
        tmp = head.with_suffix(".tmp")
        tmp.write_bytes(msgspec.json.encode(_Head(n, digest)))
        os.replace(tmp, head)

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
            self._write_head(n, digest)
            self._n, self._last = n, digest
            return n

    def close(self) -> None:
        """Close the file (idempotent)."""
        with self._lock:
            self._file.close()
