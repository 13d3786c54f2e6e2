"""The write-ahead Bus, with real threads, actors and processes; and artoo.testing's helpers."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from artoo.actors.runtime.bus import Bus, BusClosed, BusError, kind_set, select
from artoo.eventstore import EventLog
from artoo.schemas import (
    Envelope,
    ExecutionResult,
    FinalResult,
    Message,
    SubTask,
    TaskCancelled,
    TaskRequest,
    ToolCall,
)
from artoo.testing import ManualClock, Recorder, temporary_store

from .bus_helpers import DeadReceiver, GateReceiver, ListReceiver, cancel

CHILD = Path(__file__).with_name("_child_publisher.py")


# --------------------------------------------------------------------------- basics
def test_flush_means_persisted_and_told(bus: Bus, log: EventLog) -> None:
    receiver = ListReceiver()
    bus.subscribe(None, receiver)
    bus.publish(TaskRequest(text="hi"), sender="queen", task_id="t1")
    bus.publish(cancel("stop"), sender="host", task_id="t1", to="x", cause=1)
    assert bus.flush(10)
    logged = list(log.read())
    assert [e.seq for e in logged] == [1, 2]
    assert receiver.envelopes == logged
    second = logged[1]
    assert (second.task_id, second.sender, second.to, second.cause) == ("t1", "host", "x", 1)
    assert bus.last_seq == log.last_seq == 2
    stats = bus.stats()
    assert (stats["published"], stats["committed"], stats["last_seq"]) == (2, 2, 2)
    assert stats["queue_depth"] == 0
    assert stats["groups"] >= 1
    assert stats["avg_group_size"] == 2 / stats["groups"]


def test_flush_on_an_idle_bus_returns_true(bus: Bus) -> None:
    assert bus.flush(5)
    assert bus.flush()


def test_flush_times_out_while_the_writer_is_busy(bus: Bus) -> None:
    gate = GateReceiver()
    bus.subscribe(None, gate)
    bus.publish(cancel("1"), sender="s")
    assert gate.entered.wait(10)
    assert bus.flush(timeout=0.05) is False
    gate.release()
    assert bus.flush(10) is True
    assert len(gate.envelopes) == 1


def test_one_delivery_per_group_per_subscriber(bus: Bus, log: EventLog) -> None:
    """While the writer is busy, 99 publishes pile up and reach each subscriber as ONE tell."""
    gate, other = GateReceiver(), ListReceiver()
    bus.subscribe(None, gate)
    bus.subscribe(None, other)
    bus.publish(cancel("first"), sender="s")
    assert gate.entered.wait(10)
    for i in range(99):
        bus.publish(cancel(str(i)), sender="s")
    gate.release()
    assert bus.flush(10)
    assert [len(d) for d in gate.deliveries] == [1, 99]
    assert [len(d) for d in other.deliveries] == [1, 99]
    assert other.envelopes == list(log.read())
    assert bus.stats()["groups"] == 2


def test_max_group_bounds_a_group(log: EventLog) -> None:
    with Bus(log, max_group=10) as bus:
        gate = GateReceiver()
        bus.subscribe(None, gate)
        bus.publish(cancel(), sender="s")
        assert gate.entered.wait(10)
        for _ in range(25):
            bus.publish(cancel(), sender="s")
        gate.release()
        assert bus.flush(10)
        assert [len(d) for d in gate.deliveries] == [1, 10, 10, 5]


def test_kinds_filter_and_base_class_admits_all(bus: Bus) -> None:
    requests, stops, everything, base = (ListReceiver() for _ in range(4))
    bus.subscribe([TaskRequest], requests)
    bus.subscribe([TaskCancelled, FinalResult], stops)
    bus.subscribe(None, everything)
    bus.subscribe([Message], base)
    bodies: list[Message] = [
        TaskRequest(text="a"),
        cancel("b"),
        FinalResult(task_id="t", status="success"),
        TaskRequest(text="c"),
    ]
    for body in bodies:
        bus.publish(body, sender="s")
    assert bus.flush(10)
    assert [e.body for e in everything.envelopes] == bodies
    assert [e.body for e in base.envelopes] == bodies
    assert [e.seq for e in requests.envelopes] == [1, 4]
    assert [e.seq for e in stops.envelopes] == [2, 3]


_BODIES: dict[type, Message] = {
    TaskRequest: TaskRequest(text="t"),
    TaskCancelled: TaskCancelled(),
    FinalResult: FinalResult(task_id="t", status="success"),
    SubTask: SubTask(subtask_id="s"),
}


@settings(max_examples=80, deadline=None)
@given(
    group=st.lists(
        st.tuples(st.sampled_from(list(_BODIES)), st.sampled_from([None, "pair-1", "pair-2"])),
        max_size=12,
    ),
    kinds=st.none() | st.sets(st.sampled_from([*_BODIES, Message]), max_size=3),
    to=st.sampled_from([None, "pair-1"]),
)
def test_select_is_the_plain_filter(
    group: list[tuple[type, str | None]], kinds: set[type] | None, to: str | None
) -> None:
    """Property: select (which skips per-envelope checks when a receiver wants all or none
    of a group's kinds) keeps exactly the envelopes a plain filter keeps, in order."""
    envelopes = tuple(
        Envelope(seq, 1.0, None, "s", address, None, _BODIES[kind])
        for seq, (kind, address) in enumerate(group, 1)
    )
    wanted = kind_set(kinds)
    expected = tuple(
        e
        for e in envelopes
        if (wanted is None or type(e.body) in wanted) and (to is None or e.to == to)
    )
    assert select(envelopes, wanted, to) == expected


def test_no_empty_deliveries(bus: Bus) -> None:
    receiver = ListReceiver()
    bus.subscribe([FinalResult], receiver)
    bus.publish(cancel(), sender="s")
    assert bus.flush(10)
    assert receiver.deliveries == []


def test_subscribe_to_an_address(bus: Bus) -> None:
    pair1, pair2_subtasks, anyone = ListReceiver(), ListReceiver(), ListReceiver()
    bus.subscribe(None, pair1, to="pair-1")
    bus.subscribe([SubTask], pair2_subtasks, to="pair-2")
    bus.subscribe([SubTask], anyone)
    bus.publish(SubTask(subtask_id="a"), sender="d", to="pair-1")
    bus.publish(SubTask(subtask_id="b"), sender="d", to="pair-2")
    bus.publish(SubTask(subtask_id="c"), sender="d")
    bus.publish(cancel(), sender="d", to="pair-2")
    bus.publish(cancel(), sender="d", to="pair-1")
    assert bus.flush(10)
    assert [e.seq for e in pair1.envelopes] == [1, 5]
    assert [e.body.subtask_id for e in pair2_subtasks.envelopes] == ["b"]
    assert [e.body.subtask_id for e in anyone.envelopes] == ["a", "b", "c"]


def test_unsubscribe(bus: Bus) -> None:
    receiver = ListReceiver()
    subscription = bus.subscribe(None, receiver)
    bus.publish(cancel(), sender="s")
    assert bus.flush(10)
    bus.unsubscribe(subscription)
    bus.unsubscribe(subscription)
    bus.publish(cancel(), sender="s")
    assert bus.flush(10)
    assert [e.seq for e in receiver.envelopes] == [1]


def test_kinds_must_be_classes(bus: Bus) -> None:
    with pytest.raises(TypeError, match="message classes"):
        bus.subscribe(["TaskRequest"], ListReceiver())  # type: ignore[list-item]


def test_a_dead_actor_is_dropped_and_the_bus_keeps_running(bus: Bus, log: EventLog) -> None:
    with Recorder() as alive, Recorder() as dead:
        bus.subscribe(None, alive.ref)
        bus.subscribe(None, dead.ref)
        bus.subscribe(None, DeadReceiver())
        dead.stop()
        for i in range(10):
            bus.publish(cancel(str(i)), sender="s")
        assert bus.flush(10)
        assert bus.stats()["dead_subscriptions"] == 2
        assert bus.stats()["subscriptions"] == 1
        bus.publish(cancel("after"), sender="s")
        assert bus.flush(10)
        assert alive.wait_for(11, timeout=10)
        assert alive.envelopes == list(log.read())


def test_recorder_actor_receives_deliveries(bus: Bus) -> None:
    with Recorder() as recorder:
        bus.subscribe([TaskRequest], recorder.ref)
        bus.publish(TaskRequest(text="a"), sender="s")
        bus.publish(cancel(), sender="s")
        bus.publish(TaskRequest(text="b"), sender="s")
        assert recorder.wait_for(lambda envs: [e.body.text for e in envs] == ["a", "b"], 10)
        assert recorder.deliveries >= 1
        assert not recorder.wait_for(3, timeout=0.05)


# --------------------------------------------------------------------------- publishing
def test_publish_rejects_what_is_not_a_message(bus: Bus) -> None:
    with pytest.raises(TypeError, match=r"artoo\.schemas\.Message"):
        bus.publish("hello", sender="s")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"artoo\.schemas\.Message"):
        bus.publish(ToolCall(tool="x"), sender="s")  # type: ignore[arg-type]
    unencodable = ExecutionResult(
        subtask_id="s", tool_calls=[ToolCall(tool="x", args={"o": object()})]
    )
    with pytest.raises(TypeError):
        bus.publish(unencodable, sender="s")
    bus.publish(cancel(), sender="s")
    assert bus.flush(10)
    assert bus.last_seq == 1  # the refused ones took no seq


def test_ts_comes_from_the_clock(log: EventLog) -> None:
    clock = ManualClock(start=1_000.0)
    with Bus(log, clock) as bus:
        bus.publish(cancel(), sender="s")
        assert bus.flush(10)
        clock.advance(2.5)
        bus.publish(cancel(), sender="s")
        assert bus.flush(10)
    assert [e.ts for e in log.read()] == [1_000.0, 1_002.5]


def test_the_bus_continues_the_logs_seqs(tmp_path: Path) -> None:
    path = tmp_path / "events"
    for run in range(3):
        with EventLog.open(path, durability="batch") as log, Bus(log) as bus:
            for i in range(4):
                bus.publish(cancel(f"{run}.{i}"), sender="s")
    with EventLog.open(path) as log:
        logged = list(log.read())
    assert [e.seq for e in logged] == list(range(1, 13))
    assert [e.body.reason for e in logged][4:6] == ["1.0", "1.1"]


def test_eight_threads_ten_thousand_each(bus: Bus, log: EventLog) -> None:
    """Seqs 1..80,000 with no gap or duplicate; each thread's order kept; every subscriber
    received every message exactly once, in seq order; the log holds them all."""
    threads, per_thread = 8, 10_000
    total = threads * per_thread
    start = threading.Barrier(threads)

    def publisher(k: int) -> None:
        start.wait()
        for i in range(per_thread):
            bus.publish(cancel(f"{k}:{i}"), sender=f"p{k}")

    with Recorder() as first, Recorder() as second:
        bus.subscribe(None, first.ref)
        bus.subscribe([TaskCancelled], second.ref)
        workers = [threading.Thread(target=publisher, args=(k,)) for k in range(threads)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        assert bus.flush(60)
        assert first.wait_for(total, timeout=60)
        assert second.wait_for(total, timeout=60)
        logged = list(log.read())
        assert first.envelopes == logged
        assert second.envelopes == logged
    assert [e.seq for e in logged] == list(range(1, total + 1))
    seen: dict[str, list[int]] = {f"p{k}": [] for k in range(threads)}
    for envelope in logged:
        k, i = envelope.body.reason.split(":")
        assert envelope.sender == f"p{k}"
        seen[envelope.sender].append(int(i))
    assert all(order == list(range(per_thread)) for order in seen.values())
    stats = bus.stats()
    assert stats["published"] == stats["committed"] == total


# --------------------------------------------------------------------------- closing and failure
def test_close_commits_what_was_published_then_refuses(bus: Bus, log: EventLog) -> None:
    for i in range(1_000):
        bus.publish(cancel(str(i)), sender="s")
    bus.close()
    assert log.last_seq == 1_000
    with pytest.raises(BusClosed, match="closed"):
        bus.publish(cancel(), sender="s")
    bus.close()  # idempotent
    assert bus.flush(1)


def test_publishes_racing_close_are_committed_or_refused(tmp_path: Path) -> None:
    """Every publish that returned is in the log; every one that raised BusClosed is not."""
    for trial in range(5):
        with EventLog.open(tmp_path / f"events{trial}", durability="none") as log:
            bus = Bus(log)
            accepted: list[list[str]] = [[] for _ in range(4)]

            def run(k: int, bus: Bus = bus, accepted: list[list[str]] = accepted) -> None:
                i = 0
                while True:
                    try:
                        bus.publish(cancel(f"{k}:{i}"), sender="s")
                    except BusClosed:
                        return
                    accepted[k].append(f"{k}:{i}")
                    i += 1

            workers = [threading.Thread(target=run, args=(k,)) for k in range(4)]
            for worker in workers:
                worker.start()
            time.sleep(0.01 * (trial + 1))
            bus.close()
            for worker in workers:
                worker.join(10)
            logged = [e.body.reason for e in log.read()]
        assert sorted(logged) == sorted(r for rs in accepted for r in rs)
        assert len(logged) > 0


@pytest.mark.parametrize("close_before_push", [True, False])
def test_a_publish_interleaved_with_close_is_decided(
    bus: Bus, log: EventLog, close_before_push: bool
) -> None:
    """White-box: close() completing inside publish's lock-free window (between its check
    and its push, or right after the push) either refuses the message or commits it —
    never loses it silently."""
    push = bus._push

    def push_with_close(item: Any) -> None:
        if close_before_push:
            bus.close()
            push(item)
        else:
            push(item)
            bus.close()

    bus._push = push_with_close  # type: ignore[method-assign]
    if close_before_push:
        with pytest.raises(BusClosed):
            bus.publish(cancel("late"), sender="s")
        assert list(log.read()) == []
    else:
        bus.publish(cancel("in time"), sender="s")
        assert [e.body.reason for e in log.read()] == ["in time"]
    assert bus.stats()["queue_depth"] == 0


def test_a_failing_log_is_reported_not_swallowed(bus: Bus, log: EventLog) -> None:
    bus.publish(cancel("ok"), sender="s")
    assert bus.flush(10)
    log.close()  # the next append raises inside the writer
    bus.publish(cancel("lost"), sender="s")
    with pytest.raises(BusError, match="writer failed") as info:
        bus.flush(10)
    assert isinstance(info.value.__cause__, RuntimeError)
    with pytest.raises(BusError):
        bus.publish(cancel("after"), sender="s")
    with pytest.raises(BusError):
        bus.close()
    assert bus.last_seq == 1


def test_flush_from_the_writer_thread_is_refused(bus: Bus) -> None:
    errors: list[BaseException] = []

    class Flusher:
        def tell(self, message: Any) -> None:
            try:
                bus.flush(1)
            except RuntimeError as exc:
                errors.append(exc)

    bus.subscribe(None, Flusher())
    bus.publish(cancel(), sender="s")
    assert bus.flush(10)
    assert len(errors) == 1 and "writer" in str(errors[0])


# --------------------------------------------------------------------------- from_seq
def test_subscribe_from_seq_replays_then_goes_live_without_gap(bus: Bus, log: EventLog) -> None:
    for i in range(10):
        bus.publish(cancel(str(i)), sender="s", to="a" if i % 2 else None)
    assert bus.flush(10)
    stop = threading.Event()

    def keep_publishing() -> None:
        while not stop.is_set():
            bus.publish(cancel("live"), sender="s", to="a")

    worker = threading.Thread(target=keep_publishing)
    worker.start()
    try:
        with Recorder() as everything, Recorder() as addressed:
            bus.subscribe(None, everything.ref, from_seq=4)
            bus.subscribe(None, addressed.ref, to="a", from_seq=1)
            time.sleep(0.05)
            stop.set()
            worker.join()
            assert bus.flush(10)
            last = bus.last_seq
            assert everything.wait_for(last - 3, timeout=30)
            assert [e.seq for e in everything.envelopes] == list(range(4, last + 1))
            expected = [e.seq for e in log.read() if e.to == "a"]
            assert addressed.wait_for(len(expected), timeout=30)
            assert [e.seq for e in addressed.envelopes] == expected
    finally:
        stop.set()
        worker.join()


def test_subscribe_from_seq_after_close_replays_at_once(bus: Bus) -> None:
    for i in range(3):
        bus.publish(cancel(str(i)), sender="s")
    bus.close()
    receiver = ListReceiver()
    bus.subscribe(None, receiver, from_seq=2)
    assert [e.seq for e in receiver.envelopes] == [2, 3]


# --------------------------------------------------------------------------- SIGKILL
def _kill_at_random(path: Path, durability: str, rng: random.Random) -> tuple[int, int]:
    """Run a publishing child, SIGKILL it at a random moment; return (flushed, logged)."""
    child = subprocess.Popen(
        [sys.executable, str(CHILD), str(path), durability, "3"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert child.stdout is not None and child.stderr is not None
    try:
        ready = child.stdout.readline()
        assert ready == b"ready\n", child.stderr.read().decode()
        first = child.stdout.readline()  # the first flush returned: publishing is under way
        assert first.strip().isdigit(), first
        time.sleep(rng.uniform(0.0, 0.2))
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(30)
    reports = [first, *child.stdout.read().split()]
    child.stdout.close()
    child.stderr.close()
    flushed = max((int(r) for r in reports), default=0)
    with EventLog.open(path, durability="none") as log:
        logged = list(log.read())  # every record decodes (CorruptRecord otherwise)
        assert log.last_seq == len(logged)
    assert [e.seq for e in logged] == list(range(1, len(logged) + 1)), "not contiguous"
    assert all(e.body.subtask_id == str(e.seq) for e in logged), "not the published prefix"
    assert len(logged) >= flushed, f"lost flushed messages: {len(logged)} < {flushed}"
    return flushed, len(logged)


@pytest.mark.slow
@pytest.mark.parametrize("durability", ["always", "batch"])
def test_sigkill_leaves_a_decodable_prefix_holding_every_flushed_message(
    tmp_path: Path, durability: str
) -> None:
    seed = int.from_bytes(os.urandom(4), "big")
    rng = random.Random(seed)
    delays = [random.Random(rng.random()) for _ in range(20)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(
            pool.map(
                lambda k: _kill_at_random(tmp_path / f"events{k}", durability, delays[k]),
                range(20),
            )
        )
    assert all(flushed >= 3 for flushed, _ in results), (seed, results)
    assert len({logged for _, logged in results}) > 1, results  # killed at different moments


# --------------------------------------------------------------------------- artoo.testing
def test_manual_clock_moves_only_when_told() -> None:
    clock = ManualClock()
    assert clock.now() == 1_700_000_000.0 and clock.monotonic() == 0.0
    clock.advance(1.5)
    assert (clock.now(), clock.monotonic()) == (1_700_000_001.5, 1.5)
    clock.set(1_700_000_010.0)
    assert clock.monotonic() == 10.0
    clock.set(5.0)  # a wall-clock jump back leaves monotonic alone
    assert (clock.now(), clock.monotonic()) == (5.0, 10.0)
    with pytest.raises(ValueError, match="negative"):
        clock.advance(-1)


def test_manual_clock_fires_timers_in_time_order() -> None:
    clock = ManualClock(start=0.0)
    fired: list[tuple[str, float]] = []
    clock.call_at(3.0, lambda: fired.append(("c", clock.now())))
    clock.call_at(1.0, lambda: fired.append(("a", clock.now())))
    cancelled = clock.call_later(2.0, lambda: fired.append(("x", clock.now())))
    clock.call_at(
        2.0,
        lambda: (
            fired.append(("b", clock.now())),
            clock.call_at(2.5, lambda: fired.append(("d", 0))),
        ),
    )
    cancelled.cancel()
    assert clock.pending() == 3
    clock.advance(0.5)
    assert fired == []
    clock.advance(10)
    assert [name for name, _ in fired] == ["a", "b", "d", "c"]
    assert clock.pending() == 0


def test_manual_clock_is_thread_safe() -> None:
    clock = ManualClock(start=0.0)
    workers = [
        threading.Thread(target=lambda: [clock.advance(1) for _ in range(2_000)]) for _ in range(4)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert clock.now() == clock.monotonic() == 8_000


def test_temporary_store_is_fresh_and_removed() -> None:
    with temporary_store() as store:
        assert store.is_dir() and list(store.iterdir()) == []
        with EventLog.open(store / "events") as log:
            log.append([Envelope(0, 1.0, None, "s", None, None, cancel())])
    assert not store.exists()
