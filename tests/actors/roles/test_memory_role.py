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
