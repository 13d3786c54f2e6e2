"""The Role base: handlers declared and checked at import, one subscription per role (one
Delivery per committed group, in seq order, addressed kinds included), reply Inboxes."""

from __future__ import annotations

import threading
from typing import Any, ClassVar

import pytest

from artoo.actors.runtime.bus import Bus, Delivery
from artoo.actors.runtime.role import Equipment, Inbox, Role, handles
from artoo.schemas import (
    ConfirmationDecision,
    CorrectionSignal,
    Envelope,
    FinalResult,
    Message,
    SubTask,
    TaskCancelled,
)

from .bus_helpers import GateReceiver, ListReceiver


class _Probe(Role):
    """A role recording every Delivery it gets (addressed kinds included)."""

    name: ClassVar[str] = "probe"
    consumes: ClassVar[tuple[type[Message], ...]] = (TaskCancelled,)
    addressed: ClassVar[tuple[type[Message], ...]] = (SubTask, CorrectionSignal)

    def __init__(self, equipment: Equipment, instance: str | None = None) -> None:
        super().__init__(equipment, instance)
        self.deliveries: list[list[int]] = []
        self.handled: list[int] = []
        self.done = threading.Event()

    def on_receive(self, message: Any) -> Any:
        if isinstance(message, Delivery):
            self.deliveries.append([e.seq for e in message.envelopes])
        return super().on_receive(message)

    @handles(TaskCancelled, SubTask, CorrectionSignal)
    def on_any(self, env: Envelope) -> None:
        self.handled.append(env.seq)

    @handles(FinalResult)
    def on_final_result(self, env: Envelope) -> None:
        self.handled.append(env.seq)
        self.done.set()


def test_a_role_gets_each_group_as_one_delivery_in_seq_order(bus: Bus) -> None:
    gate = GateReceiver()
    bus.subscribe(None, gate)
    ref = _Probe.start(Equipment(bus=bus), "pair-0")
    _Probe.subscribe(bus, ref, "pair-0")
    try:
        bus.publish(TaskCancelled(reason="first"), sender="t", task_id="a")
        assert gate.entered.wait(10)  # the writer is held: what follows is one group
        st = SubTask(subtask_id="s1")
        bus.publish(st, sender="d", task_id="a", to="pair-0")
        bus.publish(st, sender="d", task_id="a", to="pair-1")  # not ours
        bus.publish(TaskCancelled(reason="x"), sender="t", task_id="b")
        bus.publish(CorrectionSignal(subtask_id="s1"), sender="v", task_id="a", to="pair-0")
        bus.publish(FinalResult(task_id="b", status="abandon"), sender="g", task_id="b")
        gate.release()
        assert bus.flush(10)
        probe = ref.proxy()
        assert probe.done.get().wait(10)
        deliveries = probe.deliveries.get()
        assert deliveries == [[1], [2, 4, 5, 6]]  # one Delivery for the group, seq 3 not ours
        assert probe.handled.get() == [1, 2, 4, 5, 6]
    finally:
        ref.stop()


def test_a_role_declaring_a_kind_without_a_handler_fails_at_definition() -> None:
    with pytest.raises(TypeError, match="consumes SubTask with no handler"):

        class _Broken(Role):
            consumes: ClassVar[tuple[type[Message], ...]] = (SubTask,)

    with pytest.raises(TypeError, match="handles TaskCancelled it does not consume"):

        class _Stray(Role):
            consumes: ClassVar[tuple[type[Message], ...]] = ()

            @handles(TaskCancelled)
            def on_cancel(self, env: Envelope) -> None: ...


def test_an_inbox_joined_at_a_seq_misses_nothing_and_never_drops(bus: Bus) -> None:
    first = ListReceiver()
    bus.subscribe(None, first)
    for i in range(50):
        bus.publish(ConfirmationDecision(request_id=str(i), approved=False), sender="q")
    assert bus.flush(10)
    inbox = Inbox()
    inbox.subscription = bus.subscribe([ConfirmationDecision], inbox, from_seq=41)
    for i in range(50, 5050):  # far more than any bounded tap held
        bus.publish(ConfirmationDecision(request_id=str(i), approved=True), sender="q")
    assert bus.flush(10)
    got = inbox.drain()
    assert [e.seq for e in got] == list(range(41, 5051))
    bus.unsubscribe(inbox.subscription)
    inbox.wake()
    assert inbox.get(timeout=5) is None
