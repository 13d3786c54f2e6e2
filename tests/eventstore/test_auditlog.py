"""The audit log: append-only, hash-chained; tampering is found at the first bad record."""

from __future__ import annotations

import threading
from pathlib import Path

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


@pytest.fixture
def written(tmp_path: Path) -> Path:
    log = AuditLog(tmp_path / "audit")
    for i in range(5):
        assert log.append(report(i)) == i + 1
    log.close()
    return tmp_path / "audit"


def lines(directory: Path) -> list[bytes]:
    return (directory / "reports.jsonl").read_bytes().splitlines(keepends=True)


def test_an_untouched_log_verifies_and_reads_back(written: Path) -> None:
    reader = AuditLogReader(written)
    assert reader.verify().ok and reader.verify().records == 5
    assert reader.reports() == [report(i) for i in range(5)]


def test_reopening_continues_the_chain(written: Path) -> None:
    log = AuditLog(written)
    assert log.count == 5
    assert log.append(report(5)) == 6
    log.close()
    assert AuditLogReader(written).verify().ok


def test_an_edited_byte_is_the_first_bad_record(written: Path) -> None:
    data = lines(written)
    data[2] = data[2].replace(b'"envelopes":10', b'"envelopes":19')
    (written / "reports.jsonl").write_bytes(b"".join(data))
    result = AuditLogReader(written).verify()
    assert (result.ok, result.bad_record, result.records) == (False, 3, 2)
    assert "hash" in result.reason


def test_an_edited_byte_that_breaks_the_json_is_found(written: Path) -> None:
    data = bytearray((written / "reports.jsonl").read_bytes())
    second = data.index(b"\n") + 1
    data[second] = ord("[")
    (written / "reports.jsonl").write_bytes(bytes(data))
    assert AuditLogReader(written).verify().bad_record == 2


def test_a_deleted_record_is_found(written: Path) -> None:
    data = lines(written)
    del data[1]
    (written / "reports.jsonl").write_bytes(b"".join(data))
    result = AuditLogReader(written).verify()
    assert (result.ok, result.bad_record) == (False, 2)


def test_a_deleted_last_record_is_found_by_head(written: Path) -> None:
    data = lines(written)
    (written / "reports.jsonl").write_bytes(b"".join(data[:-1]))
    result = AuditLogReader(written).verify()
    assert (result.ok, result.bad_record) == (False, 5)


def test_two_swapped_records_are_found(written: Path) -> None:
    data = lines(written)
    data[1], data[3] = data[3], data[1]
    (written / "reports.jsonl").write_bytes(b"".join(data))
    result = AuditLogReader(written).verify()
    assert (result.ok, result.bad_record) == (False, 2)


def test_a_rewritten_record_with_its_own_hash_recomputed_still_breaks_the_next_link(
    written: Path,
) -> None:
    """A forger who rehashes the record they edited is caught by the record after it."""
    from artoo.eventstore.audit import record_hash

    data = lines(written)
    record = msgspec.json.decode(data[1])
    record["report"]["envelopes"] = 99
    body = msgspec.json.encode(record["report"])
    record["hash"] = record_hash(record["n"], record["prev"], body)
    data[1] = msgspec.json.encode(record) + b"\n"
    (written / "reports.jsonl").write_bytes(b"".join(data))
    assert AuditLogReader(written).verify().bad_record == 3


def test_concurrent_appends_keep_one_chain(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit")
    threads = [
        threading.Thread(target=lambda k=k: [log.append(report(k * 10 + j)) for j in range(10)])
        for k in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    log.close()
    result = AuditLogReader(tmp_path / "audit").verify()
    assert result.ok and result.records == 40


def test_a_record_being_written_is_not_read_as_a_report(written: Path) -> None:
    """A reader racing the Auditor's append sees part of a line: not a report, no error."""
    data = lines(written)
    (written / "reports.jsonl").write_bytes(b"".join(data[:4]) + data[4][: len(data[4]) // 2])
    assert AuditLogReader(written).reports() == [report(i) for i in range(4)]
