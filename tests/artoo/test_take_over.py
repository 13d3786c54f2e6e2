"""Taking over a task whose worker died (``artoo._recovery.take_over``): it ends once."""

from __future__ import annotations

from artoo._recovery import take_over
from artoo.actors.runtime.bus import Bus
from artoo.eventstore import InMemoryEventLog
from artoo.schemas import FinalResult, TaskRequest, UserRequest


def _finals(log: InMemoryEventLog, task_id: str) -> list[FinalResult]:
    return [e.body for e in log.read_task(task_id) if isinstance(e.body, FinalResult)]


def test_a_task_in_flight_ends_worker_lost_naming_the_worker_and_its_last_seq() -> None:
    log = InMemoryEventLog()
    bus = Bus(log)
    bus.publish(UserRequest(text="hi"), sender="host", task_id="T")
    bus.publish(TaskRequest(text="hi"), sender="queen", task_id="T")
    bus.publish(UserRequest(text="other"), sender="host", task_id="U")
    bus.flush()
    assert take_over(log, bus, "T", "w1", sender="system") == "ended"
    bus.flush()
    (final,) = _finals(log, "T")
    assert (final.status, final.reason) == ("abandon", "worker_lost")
    assert "w1" in final.summary and "after seq 2" in final.summary
    # taken over again (a second claimer would not get it; the function itself is safe too)
    assert take_over(log, bus, "T", "w1", sender="system") == "had_ended"
    bus.flush()
    assert len(_finals(log, "T")) == 1
    assert _finals(log, "U") == []
    bus.close()


def test_a_task_the_dead_worker_ended_or_never_started_gets_no_second_end() -> None:
    log = InMemoryEventLog()
    bus = Bus(log)
    bus.publish(UserRequest(text="hi"), sender="host", task_id="T")
    bus.publish(FinalResult(task_id="T", status="accept"), sender="ggs", task_id="T")
    bus.flush()
    assert take_over(log, bus, "T", "w1", sender="system") == "had_ended"
    assert take_over(log, bus, "N", "w1", sender="system") == "not_started"
    bus.flush()
    assert [f.status for f in _finals(log, "T")] == ["accept"]
    assert _finals(log, "N") == []
    bus.close()
