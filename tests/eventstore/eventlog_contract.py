"""The one contract every event-log backend passes (eventsourcing's recorder style).

A backend's test module subclasses :class:`EventLogContract` and writes ``create_log``;
every test here then runs against it.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from artoo.actors.runtime.bus import Bus
from artoo.eventstore import EventLogBackend, envelope_tail
from artoo.schemas import Envelope, FinalResult, TaskCancelled, UserRequest


def env(task_id: str | None = "t1", text: str = "hi", seq: int = 0) -> Envelope:
    return Envelope(seq, 1.5, task_id, "host", None, None, UserRequest(text=text))


class EventLogContract:
    """The behaviour the Bus and every reader rely on."""

    def create_log(self, tmp_path: Path) -> Any:
        raise NotImplementedError

    @pytest.fixture
    def log(self, tmp_path: Path) -> Any:
        log = self.create_log(tmp_path)
        yield log
        log.close()

    def test_it_is_an_event_log_backend(self, log: Any) -> None:
        assert isinstance(log, EventLogBackend)

    def test_an_empty_log(self, log: Any) -> None:
        assert log.last_seq == 0 and list(log.read()) == [] and list(log.read_task("t1")) == []

    def test_append_assigns_seqs_from_one_without_gaps(self, log: Any) -> None:
        assert log.append([env(text="a"), env(text="b")]) == [1, 2]
        assert log.append([env(text="c")]) == [3]
        assert [e.body.text for e in log.read()] == ["a", "b", "c"]
        assert [e.seq for e in log.read()] == [1, 2, 3] and log.last_seq == 3

    def test_a_seq_that_does_not_continue_is_refused_and_nothing_written(self, log: Any) -> None:
        log.append([env()])
        with pytest.raises(ValueError, match="does not continue"):
            log.append([env(seq=2), env(seq=4)])
        with pytest.raises(ValueError, match="does not continue"):
            log.append_encoded(5, 0.0, [None], [envelope_tail(None, "s", None, None, env().body)])
        assert log.last_seq == 1

    def test_the_bus_fast_path_reads_back_as_whole_envelopes(self, log: Any) -> None:
        bodies = [
            UserRequest(text="x"),
            TaskCancelled(reason="y"),
            FinalResult(task_id="t", status="accept"),
        ]
        tails = [envelope_tail("t", "host", "pair-0", 7, b) for b in bodies]
        log.append_encoded(1, 42.25, ["t", None, "t"], tails)
        got = list(log.read())
        assert [e.body for e in got] == bodies
        assert [(e.seq, e.ts, e.sender, e.to, e.cause) for e in got] == [
            (i, 42.25, "host", "pair-0", 7) for i in (1, 2, 3)
        ]
        assert [e.task_id for e in got] == ["t", "t", "t"]  # the tail's task id is kept
        assert [e.seq for e in log.read_task("t")] == [1, 3]  # only indexed ones

    def test_read_by_seq_range(self, log: Any) -> None:
        log.append([env(text=str(i)) for i in range(10)])
        assert [e.seq for e in log.read(4, 6)] == [4, 5, 6]
        assert [e.seq for e in log.read(9)] == [9, 10]
        assert list(log.read(6, 4)) == [] and list(log.read(11)) == []

    def test_read_task_keeps_order_and_tells_prefix_sharing_ids_apart(self, log: Any) -> None:
        log.append([env("t1"), env("t10"), env(None), env("t1")])
        log.append([env("t10"), env("t1")])
        assert [e.seq for e in log.read_task("t1")] == [1, 4, 6]
        assert [e.seq for e in log.read_task("t10")] == [2, 5]
        assert list(log.read_task("t")) == []

    def test_appends_from_many_threads_stay_contiguous(self, log: Any) -> None:
        def worker(i: int) -> None:
            for j in range(50):
                log.append([env(f"t{i}", f"{i}.{j}")])

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert [e.seq for e in log.read()] == list(range(1, 401))
        for i in range(8):
            texts = [e.body.text for e in log.read_task(f"t{i}")]
            assert texts == [f"{i}.{j}" for j in range(50)]

    def test_a_bus_runs_over_it(self, log: Any) -> None:
        bus = Bus(log)
        for i in range(100):
            bus.publish(UserRequest(text=str(i)), sender="host", task_id=f"t{i % 3}")
        assert bus.flush(10)
        bus.close()
        assert log.last_seq == 100
        assert [e.body.text for e in log.read_task("t1")] == [str(i) for i in range(1, 100, 3)]

    def test_close_is_idempotent(self, log: Any) -> None:
        log.close()
        log.close()
        assert log.closed
