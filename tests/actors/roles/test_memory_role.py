"""The Memory role: applies memory events to the store, answers queries from it."""

from __future__ import annotations

from artoo.actors.roles.memory import Memory
from artoo.schemas import Megram, MegramRecorded, MemoryQuery, MemoryRecall
from artoo.testing import ManualClock, RoleHarness


def test_a_recorded_megram_is_applied_and_recalled() -> None:
    clock = ManualClock()
    megram = Megram(
        id="m1",
        level="M",
        created_at=clock.now(),
        space="intent:count",
        entity="env:local",
        f=0.9,
        sigma=1.0,
        k=0.05,
    )
    with RoleHarness(Memory, megrams=True, clock=clock) as h:
        h.send(MegramRecorded(megram=megram), task_id=None)
        h.sync()
        assert h.megrams is not None and len(h.megrams) == 1
        h.send(MemoryQuery(space="intent:count", entity="env:local", round=2))
        (recall,) = h.wait_for(MemoryRecall)
    assert recall.body.round == 2 and recall.body.action == "exploit"
    assert recall.body.attention > 0.5


def test_a_task_request_is_embedded_ahead_of_its_recall() -> None:
    """While the Perceiver's model reads a request, Memory builds its recall index and
    embeds the request, so the round-0 MemoryQuery of the same text only searches; it
    publishes nothing for the TaskRequest."""
    from artoo.eventstore import task_text
    from artoo.schemas import TaskRequest

    with RoleHarness(Memory, megrams=True) as h:
        h.send(TaskRequest(text="how many lines does notes/todo.txt have?"))
        h.sync()
        recollection = h.ref.proxy().recollection.get()
        assert h.published() == []
        h.send(MemoryQuery(space="intent:x", entity="env:local", round=0, text="x y"))
        h.wait_for(MemoryRecall)
    assert recollection is not None
    assert task_text("how many lines does notes/todo.txt have?") in recollection.index._prepared
