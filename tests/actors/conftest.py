"""Fixtures of the actor tests: a LevelDB event log and a Bus over it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from artoo.actors.runtime.bus import Bus, BusError
from artoo.eventstore import EventLog


@pytest.fixture
def log(tmp_path: Path) -> Iterator[EventLog]:
    with EventLog.open(tmp_path / "events", durability="none") as log:
        yield log


@pytest.fixture
def bus(log: EventLog) -> Iterator[Bus]:
    bus = Bus(log)
    yield bus
    try:
        bus.close()
    except BusError:
        pass
