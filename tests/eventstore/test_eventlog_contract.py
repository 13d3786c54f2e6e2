"""Both event-log backends pass the one contract."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from artoo.eventstore import EventLog, InMemoryEventLog, StoreError, StoreLocked

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


def test_a_store_we_may_not_write_says_permission_denied(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import artoo.eventstore.eventlog as eventlog

    monkeypatch.setattr(eventlog.os, "access", lambda path, mode: False)
    with pytest.raises(StoreError, match="permission denied"):
        EventLog.open(tmp_path / "events")


def test_a_second_open_in_one_process_names_this_process(tmp_path: Path) -> None:
    with EventLog.open(tmp_path / "events"), pytest.raises(StoreLocked) as info:
        EventLog.open(tmp_path / "events")
    assert info.value.holder_pid == os.getpid()
