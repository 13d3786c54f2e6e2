"""The audit log after a SIGKILL'd writer: a torn tail is repaired on open (a partial last
record cut off, or HEAD moved to the one complete record beyond it), tampering is not;
an external anchor (``--expect-head``) catches a rewritten tail the chain alone cannot."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import msgspec
import pytest

from artoo.eventstore import AuditLog, AuditLogReader
from artoo.eventstore.audit import record_hash
from artoo.schemas import AuditReport

# a writer that appends two reports, then is killed (SIGKILL, by itself, at the chosen
# point) while appending the third
WRITER = textwrap.dedent(
    """
    import os, signal, sys
    from artoo.eventstore import AuditLog
    from artoo.schemas import AuditReport

    where, directory = sys.argv[1], sys.argv[2]
    log = AuditLog(directory)
    for i in range(2):
        log.append(AuditReport(window_start=60.0 * i, window_end=60.0 * (i + 1), envelopes=i))
    def die(*_a, **_k):
        os.kill(os.getpid(), signal.SIGKILL)
    if where == "before_head":   # the record is written and fsynced; HEAD not replaced
        os.replace = die
    else:                        # killed in the middle of writing the record
        real = log._file.write
        def half(data):
            real(data[: len(data) // 2])
            log._file.flush()
            die()
        log._file.write = half
    log.append(AuditReport(window_start=120.0, window_end=180.0, envelopes=2))
    """
)


def _killed_writer(directory: Path, where: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", WRITER, where, str(directory)], capture_output=True, timeout=60
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr


@pytest.mark.parametrize(("where", "kept"), [("before_head", 3), ("mid_record", 2)])
def test_a_torn_tail_after_a_crash_is_repaired_on_open(
    tmp_path: Path, where: str, kept: int
) -> None:
    directory = tmp_path / "audit"
    _killed_writer(directory, where)
    before = AuditLogReader(directory).verify()
    assert not before.ok  # as found, it reads as broken
    log = AuditLog(directory)
    try:
        assert log.repaired is not None and log.count == kept
        assert AuditLogReader(directory).verify().ok
        log.append(AuditReport(window_start=180.0, window_end=240.0))
    finally:
        log.close()
    check = AuditLogReader(directory).verify()
    assert check.ok and check.records == kept + 1


def test_tampering_is_not_repaired(tmp_path: Path) -> None:
    directory = tmp_path / "audit"
    log = AuditLog(directory)
    for i in range(3):
        log.append(AuditReport(window_start=60.0 * i, window_end=60.0 * (i + 1)))
    log.close()
    path = directory / "reports.jsonl"
    data = path.read_bytes()
    path.write_bytes(data.replace(b'"window_start":60.0', b'"window_start":61.0', 1))
    AuditLog(directory).close()
    assert AuditLog(directory).repaired is None
    assert path.read_bytes() != data  # left as found, for verify to name
    assert AuditLogReader(directory).verify().bad_record == 2
    path.write_bytes(data[:-5])  # the last record cut short (not by a crash: HEAD names it)
    reopened = AuditLog(directory)
    reopened.close()
    assert reopened.repaired is None and path.read_bytes() == data[:-5]
    assert not AuditLogReader(directory).verify().ok


def test_an_external_head_anchors_what_the_chain_alone_cannot(tmp_path: Path) -> None:
    directory = tmp_path / "audit"
    log = AuditLog(directory)
    for i in range(3):
        log.append(AuditReport(window_start=60.0 * i, window_end=60.0 * (i + 1), envelopes=i))
    log.close()
    anchor = AuditLogReader(directory).verify().head
    # rewrite the last record and recompute its hash and HEAD: the chain still verifies
    path = directory / "reports.jsonl"
    lines = path.read_bytes().splitlines()
    last = msgspec.json.decode(lines[-1])
    body = msgspec.json.encode(AuditReport(window_start=120.0, window_end=180.0, envelopes=99))
    digest = record_hash(3, last["prev"], body)
    forged = b'{"n":3,"prev":"%s","hash":"%s","report":%s}' % (
        last["prev"].encode(),
        digest.encode(),
        body,
    )
    path.write_bytes(b"\n".join([*lines[:-1], forged]) + b"\n")
    (directory / "HEAD").write_bytes(msgspec.json.encode({"n": 3, "hash": digest}))
    assert AuditLogReader(directory).verify().ok  # not caught by the chain
    store = tmp_path
    (store / "events").mkdir()
    base = [sys.executable, "-m", "artoo.cli", "audit", str(store), "--verify"]
    caught = subprocess.run([*base, "--expect-head", anchor], capture_output=True, text=True)
    assert caught.returncode == 1 and "not in the chain" in caught.stdout
    fine = subprocess.run([*base, "--expect-head", digest], capture_output=True, text=True)
    assert fine.returncode == 0 and "record 3" in fine.stdout and f"head {digest}" in fine.stdout
