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


def test_a_resumed_task_sees_the_memory_it_recalled_first_not_what_memory_holds_now() -> None:
    """Other tasks may change memory between a task's first run and its resume (on a
    shared store, while its worker was dead): the replayed MemoryRecall is delivered as
    the log holds it — what the task saw, and what replay --verify recomputes from."""
    from artoo._resume import Resumer
    from artoo.replay._read import TaskLog
    from artoo.schemas import Envelope, Megram, MemoryQuery, MemoryRecall

    recorded = MemoryRecall(space="intent", entity="hello", round=0)
    log = [
        Envelope(1, 10.0, "T", "host", None, None, UserRequest(text="hi")),
        Envelope(2, 10.1, "T", "planner", None, 1, MemoryQuery(space="intent", entity="hello")),
        Envelope(3, 10.2, "T", "memory", None, 2, recorded),
    ]
    resumer = Resumer()
    resumer.add(TaskLog("T", log), now=20.0)
    sop = Megram(id="sop-1", level="C", created_at=15.0, space="intent", entity="hello")
    now = MemoryRecall(space="intent", entity="hello", round=0, sops=[sop])
    routed = resumer.route("T", "memory", None, 2, now)
    assert routed is not None and routed.envelope is not None  # replayed, not logged again
    assert routed.envelope.seq == 3 and routed.envelope.body == recorded
