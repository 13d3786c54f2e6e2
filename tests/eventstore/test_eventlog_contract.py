"""Both event-log backends pass the one contract."""

from __future__ import annotations

from pathlib import Path

from artoo.eventstore import EventLog, InMemoryEventLog

from .eventlog_contract import EventLogContract, env


class TestLevelDBEventLog(EventLogContract):
    def create_log(self, tmp_path: Path) -> EventLog:
        return EventLog.open(tmp_path / "events", durability="none")

    def test_a_reopened_log_continues_its_seqs(self, tmp_path: Path) -> None:
        with EventLog.open(tmp_path / "e", durability="batch") as log:
            log.append([env(), env()])
        with EventLog.open(tmp_path / "e", durability="batch") as log:
            assert log.last_seq == 2 and log.append([env()]) == [3]


class TestInMemoryEventLog(EventLogContract):
    def create_log(self, tmp_path: Path) -> InMemoryEventLog:
        return InMemoryEventLog()
