"""The audit log: append-only, hash-chained; tampering is found at the first bad record.

Every test runs on both backends: the store directory's files and a PostgreSQL store's
rows (the same records; a test edits them where they are kept).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import msgspec
import pytest

from artoo.eventstore import AuditLog, AuditLogReader
from artoo.schemas import AuditReport, TaskGap


def report(i: int) -> AuditReport:
    return AuditReport(
        window_start=i * 300.0,
        window_end=(i + 1) * 300.0,
        first_seq=i * 10 + 1,
        last_seq=i * 10 + 10,
        envelopes=10,
        gap_trend=[TaskGap(task_id=f"t{i}", rounds=[0, 1], losses=[0.5, 0.25])],
    )


class Files:
    """``<store>/audit``: reports.jsonl and HEAD."""

    def __init__(self, tmp_path: Path) -> None:
        self.directory = tmp_path / "audit"

    def writer(self) -> Any:
        return AuditLog(self.directory)

    def reader(self) -> Any:
        return AuditLogReader(self.directory)

    def raw(self) -> bytes:
        return (self.directory / "reports.jsonl").read_bytes()

    def write_raw(self, data: bytes) -> None:
        (self.directory / "reports.jsonl").write_bytes(data)


class Rows:
    """A PostgreSQL store: artoo_audit rows and artoo_audit_head."""

    def __init__(self, url: str) -> None:
        self.url = url

    def writer(self) -> Any:
        from artoo.eventstore._pgaudit import PostgresAuditLog

        return PostgresAuditLog(self.url)

    def reader(self) -> Any:
        from artoo.eventstore._pgaudit import PostgresAuditLogReader

        return PostgresAuditLogReader(self.url)

    def raw(self) -> bytes:
        from artoo.eventstore._postgres import connect

        with connect(self.url) as conn:
            rows = conn.execute("SELECT line FROM artoo_audit ORDER BY pos").fetchall()
        return b"".join(bytes(r[0]) + b"\n" for r in rows)

    def write_raw(self, data: bytes) -> None:
        from artoo.eventstore._postgres import connect

        lines = data.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        with connect(self.url) as conn, conn.transaction():
            conn.execute("DELETE FROM artoo_audit")
            for pos, line in enumerate(lines, 1):
                conn.execute("INSERT INTO artoo_audit (pos, line) VALUES (%s, %s)", (pos, line))


@pytest.fixture(params=["files", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    if request.param == "files":
        return Files(tmp_path)
    return Rows(request.getfixturevalue("pg_url"))


@pytest.fixture
def written(store: Any) -> Any:
    log = store.writer()
    for i in range(5):
        assert log.append(report(i)) == i + 1
    log.close()
    return store


def lines(store: Any) -> list[bytes]:
    return store.raw().splitlines(keepends=True)


def test_an_untouched_log_verifies_and_reads_back(written: Any) -> None:
    reader = written.reader()
    assert reader.verify().ok and reader.verify().records == 5
    assert reader.reports() == [report(i) for i in range(5)]


def test_reopening_continues_the_chain(written: Any) -> None:
    log = written.writer()
    assert log.count == 5
    assert log.append(report(5)) == 6
    log.close()
    assert written.reader().verify().ok


def test_an_edited_byte_is_the_first_bad_record(written: Any) -> None:
    data = lines(written)
    data[2] = data[2].replace(b'"envelopes":10', b'"envelopes":19')
    written.write_raw(b"".join(data))
    result = written.reader().verify()
    assert (result.ok, result.bad_record, result.records) == (False, 3, 2)
    assert "hash" in result.reason


def test_an_edited_byte_that_breaks_the_json_is_found(written: Any) -> None:
    data = bytearray(written.raw())
    second = data.index(b"\n") + 1
    data[second] = ord("[")
    written.write_raw(bytes(data))
    assert written.reader().verify().bad_record == 2


def test_a_deleted_record_is_found(written: Any) -> None:
    data = lines(written)
    del data[1]
    written.write_raw(b"".join(data))
    result = written.reader().verify()
    assert (result.ok, result.bad_record) == (False, 2)


def test_a_deleted_last_record_is_found_by_head(written: Any) -> None:
    data = lines(written)
    written.write_raw(b"".join(data[:-1]))
    result = written.reader().verify()
    assert (result.ok, result.bad_record) == (False, 5)


def test_two_swapped_records_are_found(written: Any) -> None:
    data = lines(written)
    data[1], data[3] = data[3], data[1]
    written.write_raw(b"".join(data))
    result = written.reader().verify()
    assert (result.ok, result.bad_record) == (False, 2)


def test_a_rewritten_record_with_its_own_hash_recomputed_still_breaks_the_next_link(
    written: Any,
) -> None:
    """A forger who rehashes the record they edited is caught by the record after it."""
    from artoo.eventstore.audit import record_hash

    data = lines(written)
    record = msgspec.json.decode(data[1])
    record["report"]["envelopes"] = 99
    body = msgspec.json.encode(record["report"])
    record["hash"] = record_hash(record["n"], record["prev"], body)
    data[1] = msgspec.json.encode(record) + b"\n"
    written.write_raw(b"".join(data))
    assert written.reader().verify().bad_record == 3


def test_concurrent_appends_keep_one_chain(store: Any) -> None:
    log = store.writer()
    threads = [
        threading.Thread(target=lambda k=k: [log.append(report(k * 10 + j)) for j in range(10)])
        for k in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    log.close()
    result = store.reader().verify()
    assert result.ok and result.records == 40


def test_a_record_being_written_is_not_read_as_a_report(tmp_path: Path) -> None:
    """A reader racing the Auditor's append sees part of a line: not a report, no error.
    (Files only: a row is written whole, in one transaction.)"""
    written = Files(tmp_path)
    log = written.writer()
    for i in range(5):
        log.append(report(i))
    log.close()
    data = lines(written)
    written.write_raw(b"".join(data[:4]) + data[4][: len(data[4]) // 2])
    assert written.reader().reports() == [report(i) for i in range(4)]
