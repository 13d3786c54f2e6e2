"""A stalled task escalates from high to critical under the injected clock; the Queen's
policy or the operator's cancel ends it with one FinalResult naming the ticket (issue 10)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import artoo
from artoo.schemas import EscalationTicket, FinalResult, QueenConfig, TaskCancelled
from artoo.testing import ManualClock, write_script

from .helpers import CONFIG, rm_script_entries, task_events, until

# a task held on a Law 1 confirmation for longer than any stall: silent, so it stalls
HELD = CONFIG.model_copy(update={"confirmation_timeout_s": 10_000.0})


def _stall(system: artoo.System, clock: ManualClock, seconds: float) -> None:
    """Advance the clock in timer steps (10 s), letting the Judge take each tick."""
    for _ in range(int(seconds // 10)):
        clock.advance(10.0)
        system.bus.flush(10)
        time.sleep(0.02)


def _tickets(store: Path, task_id: str) -> list[EscalationTicket]:
    return [e.body for e in task_events(store, task_id) if isinstance(e.body, EscalationTicket)]


def test_a_stall_goes_critical_and_the_policy_cancels_it(tmp_path: Path, workspace: Path) -> None:
    clock = ManualClock(start=5000.0)
    config = HELD.model_copy(update={"queen": QueenConfig(auto_cancel="critical")})
    told: list[EscalationTicket] = []
    model = write_script(tmp_path / "rm.toml", rm_script_entries())
    store = tmp_path / "s"
    with artoo.System.open(
        store,
        model=model,
        workspace=workspace,
        config=config,
        clock=clock,
        inbox=True,
        on_ticket=told.append,
    ) as system:
        handle = system.submit("delete the old log")
        until(system.inbox)  # held on its confirmation: from now on it is silent
        _stall(system, clock, 60.0)
        (high,) = until(lambda: told)
        assert high.kind == "stall" and high.severity == "high"
        assert not handle.done()
        _stall(system, clock, 180.0)  # 240 s silent: critical, and the policy cancels
        result = handle.result(30)
    assert (result.status, result.reason, result.ticket_id) == (
        "abandon",
        "cancelled",
        high.ticket_id,
    )
    events = task_events(store, handle.task_id)
    assert sum(isinstance(e.body, FinalResult) for e in events) == 1
    tickets = _tickets(store, handle.task_id)
    assert [t.severity for t in tickets] == ["high", "critical"]
    assert {t.ticket_id for t in tickets} == {high.ticket_id}  # one ticket, raised again
    (cancel,) = [e for e in events if isinstance(e.body, TaskCancelled)]
    assert cancel.sender == "queen" and cancel.body.ticket_id == high.ticket_id
    assert [t.severity for t in told] == ["high"]  # the policy answered the critical one


def test_a_critical_stall_reaches_the_operator_whose_cancel_ends_it(
    tmp_path: Path, workspace: Path
) -> None:
    clock = ManualClock(start=5000.0)
    told: list[EscalationTicket] = []
    critical = threading.Event()

    def on_ticket(ticket: EscalationTicket) -> None:
        told.append(ticket)
        if ticket.severity == "critical":
            critical.set()

    model = write_script(tmp_path / "rm.toml", rm_script_entries())
    store = tmp_path / "s"
    with artoo.System.open(
        store,
        model=model,
        workspace=workspace,
        config=HELD,
        clock=clock,
        inbox=True,
        on_ticket=on_ticket,
    ) as system:
        handle = system.submit("delete the old log")
        until(system.inbox)
        _stall(system, clock, 240.0)
        assert critical.wait(10)
        (item,) = until(lambda: [i for i in system.inbox() if i.kind == "ticket"])
        assert item.severity == "critical" and item.task_id == handle.task_id
        assert not handle.done()  # auto_cancel is off: the operator decides
        system.answer(item.item_id, "cancel")
        result = handle.result(30)
    assert [t.severity for t in told] == ["high", "critical"]
    assert told[0].ticket_id == told[1].ticket_id == item.item_id == result.ticket_id
    assert (result.status, result.reason) == ("abandon", "cancelled")
    events = task_events(store, handle.task_id)
    assert sum(isinstance(e.body, FinalResult) for e in events) == 1
