"""The Bus's taps: bounded observer queues, drops counted, catch-up from the log."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from artoo.actors.runtime.bus import Bus, Tap, kind_set
from artoo.eventstore import EventLog
from artoo.schemas import (
    Envelope,
    ExecutionResult,
    FinalResult,
    TaskCancelled,
    TaskRequest,
)
from artoo.testing import Recorder

from .bus_helpers import cancel

CHILD = Path(__file__).with_name("_child_publisher.py")


# --------------------------------------------------------------------------- taps
def test_tap_gets_its_kinds_and_ends_when_the_bus_closes(bus: Bus) -> None:
    tap = bus.tap(maxsize=100, kinds=[FinalResult])
    assert tap.get(timeout=0.01) is None
    bus.publish(cancel(), sender="s")
    bus.publish(FinalResult(task_id="t", status="success"), sender="s")
    got: list[Envelope] = []
    reader = threading.Thread(target=lambda: got.extend(tap))
    reader.start()
    assert bus.flush(10)
    bus.close()
    reader.join(10)
    assert not reader.is_alive()
    assert [e.seq for e in got] == [2]
    assert tap.closed and tap.dropped == 0


def test_a_closed_tap_stops_receiving(bus: Bus) -> None:
    with bus.tap(maxsize=2) as tap:
        for _ in range(5):
            bus.publish(cancel(), sender="s")
        assert bus.flush(10)
    assert tap.closed and tap.pending == 2 and tap.dropped == 3
    assert [e.seq for e in tap] == [1, 2]  # what it held still drains
    bus.publish(cancel(), sender="s")
    assert bus.flush(10)
    assert tap.get(timeout=0) is None
    assert bus.stats()["tap_drops"] == 3
    assert bus.stats()["taps"] == 0


def test_a_stuck_tap_never_holds_up_publishers_or_subscribers(tmp_path: Path) -> None:
    """Nothing reads the tap while 4 threads publish: publishing, flush and delivery finish.

    If publish or the writer ever waited for a tap's reader, this would hang (the reader
    only starts after flush). The rate with a slow tap is measured in bench/bus.py
    (``slow_tap_ratio``), not asserted here: timings do not belong in tests.
    """
    n, maxsize, threads = 20_000, 100, 4
    body = ExecutionResult(subtask_id="s", output="x" * 100)
    with EventLog.open(tmp_path / "events", durability="none") as log, Recorder() as receiver:
        bus = Bus(log)
        bus.subscribe(None, receiver.ref)
        tap = bus.tap(maxsize=maxsize)

        def publisher() -> None:
            for _ in range(n // threads):
                bus.publish(body, sender="p", task_id="t")

        workers = [threading.Thread(target=publisher) for _ in range(threads)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(60)
        assert not any(worker.is_alive() for worker in workers)
        assert bus.flush(60)
        assert tap.pending == maxsize and tap.dropped == n - maxsize
        assert bus.stats()["tap_drops"] == n - maxsize
        assert receiver.wait_for(n, 30)
        assert [e.seq for e in receiver.envelopes] == list(range(1, n + 1))
        assert [e.seq for e in tap.catch_up()] == list(range(maxsize + 1, n + 1))
        assert tap.catch_up() == []  # each drop is returned once
        bus.close()
        assert [e.seq for e in tap] == list(range(1, maxsize + 1))


def test_a_sleeping_tap_sees_every_message_once_between_its_queue_and_catch_up(
    tmp_path: Path,
) -> None:
    n = 5_000
    body = ExecutionResult(subtask_id="s", output="x" * 100)
    received: list[int] = []
    with EventLog.open(tmp_path / "events", durability="none") as log:
        bus = Bus(log)
        tap = bus.tap(maxsize=100)

        def consume() -> None:
            for envelope in tap:
                received.append(envelope.seq)
                time.sleep(0.001)  # a slow observer

        consumer = threading.Thread(target=consume)
        consumer.start()
        for _ in range(n):
            bus.publish(body, sender="p", task_id="t")
        assert bus.flush(60)
        bus.close()  # ends the tap's iteration once its queue is drained
        consumer.join(30)
        assert not consumer.is_alive()
        caught = [e.seq for e in tap.catch_up()]
    assert tap.dropped > 0 and len(caught) == tap.dropped
    assert caught == sorted(caught)
    assert not set(caught) & set(received)
    assert received == sorted(received)
    assert sorted(received + caught) == list(range(1, n + 1))


@pytest.fixture(scope="module")
def mixed_log(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Envelope]]:
    path = tmp_path_factory.mktemp("taps") / "events"
    with EventLog.open(path, durability="none") as log:
        log.append(
            Envelope(0, 1.0, None, "s", None, None, cancel() if i % 3 else TaskRequest(text=""))
            for i in range(400)
        )
        envelopes = list(log.read())
        yield envelopes


_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("offer"), st.integers(1, 20)),
        st.tuples(st.just("get"), st.integers(0, 25)),
        st.tuples(st.just("catch_up"), st.just(0)),
    ),
    max_size=20,
)


@settings(max_examples=60, deadline=None)
@given(ops=_OPS, maxsize=st.integers(1, 8), filtered=st.booleans())
def test_tap_drop_accounting(
    mixed_log: list[Envelope],
    tmp_path_factory: pytest.TempPathFactory,
    ops: Any,
    maxsize: int,
    filtered: bool,
) -> None:
    """Property: what a tap delivered plus what catch_up returns is exactly what it was
    offered (of its kinds), each once, and catch_up returns exactly the dropped ones."""
    kinds = kind_set([TaskCancelled]) if filtered else None
    log = _LogView(mixed_log)
    tap = Tap(cast(Bus, None), cast(EventLog, log), maxsize, kinds)
    offered = 0
    received: list[int] = []
    caught: list[int] = []
    for op, n in ops:
        if op == "offer":
            tap._offer(tuple(mixed_log[offered : offered + n]))
            offered += n
        elif op == "get":
            for _ in range(n):
                envelope = tap.get(timeout=0)
                if envelope is None:
                    break
                received.append(envelope.seq)
        else:
            caught += [e.seq for e in tap.catch_up()]
    received += [e.seq for e in _drain(tap)]
    caught += [e.seq for e in tap.catch_up()]
    wanted = [e.seq for e in mixed_log[:offered] if kinds is None or type(e.body) in kinds]
    assert sorted(received + caught) == wanted
    assert len(caught) == tap.dropped
    assert tap.catch_up() == []


class _LogView:
    """Just enough of EventLog for catch_up: read(first, last) over a list."""

    def __init__(self, envelopes: list[Envelope]) -> None:
        self._envelopes = envelopes

    def read(self, from_seq: int = 1, to_seq: int | None = None) -> Iterator[Envelope]:
        last = to_seq if to_seq is not None else len(self._envelopes)
        return iter(self._envelopes[from_seq - 1 : last])


def _drain(tap: Tap) -> list[Envelope]:
    out = []
    while (envelope := tap.get(timeout=0)) is not None:
        out.append(envelope)
    return out
