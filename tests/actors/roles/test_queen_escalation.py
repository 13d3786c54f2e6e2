"""The Queen's escalation rules, the operator inbox and cancels (issue 10)."""

from __future__ import annotations

import threading
from typing import Any

from artoo.actors.roles.queen import InboxItem, InboxQuery, OperatorAnswer, Queen
from artoo.schemas import (
    CancelRequest,
    Config,
    ConfirmationDecision,
    ConfirmationRequest,
    EscalationTicket,
    FinalResult,
    TaskCancelled,
    TicketResolved,
)
from artoo.testing import ManualClock, RoleHarness


def _ticket(
    tid: str = "k1", severity: Any = "critical", action: Any = "cancel"
) -> EscalationTicket:
    return EscalationTicket(
        ticket_id=tid, severity=severity, kind="doom_loop", summary="ls 3 times", action=action
    )


def _inbox(h: RoleHarness) -> list[InboxItem]:
    h.sync()
    items: list[InboxItem] = h.ref.ask(InboxQuery(), timeout=5)
    return items


def test_a_ticket_below_relay_at_is_acknowledged_and_not_relayed() -> None:
    told: list[EscalationTicket] = []
    with RoleHarness(Queen, ticket_operator=lambda t: told.append(t) or None) as h:
        h.send(_ticket(severity="medium"), sender="judge")
        (resolved,) = h.wait_for(TicketResolved)
        assert _inbox(h) == []
    assert resolved.body.resolution == "acknowledged" and resolved.body.by == "queen"
    assert resolved.body.ticket_id == "k1" and told == []


def test_the_operators_cancel_resolves_the_ticket_and_cancels_the_task_naming_it() -> None:
    told: list[EscalationTicket] = []

    def operator(ticket: EscalationTicket) -> str:
        told.append(ticket)
        return "cancel"

    with RoleHarness(Queen, ticket_operator=operator) as h:
        h.send(_ticket(), sender="judge")
        (cancel,) = h.wait_for(TaskCancelled)
        (resolved,) = h.published(TicketResolved)
        assert _inbox(h) == []
    assert [t.ticket_id for t in told] == ["k1"]
    assert (resolved.body.resolution, resolved.body.by) == ("cancel", "operator")
    assert cancel.body.ticket_id == "k1" and cancel.task_id == "t1"
    assert resolved.seq < cancel.seq  # resolved before the task is ended


def test_the_policy_cancels_a_critical_cancel_ticket_without_asking() -> None:
    told: list[EscalationTicket] = []
    config = Config(queen={"auto_cancel": "critical"})
    with RoleHarness(Queen, config=config, ticket_operator=lambda t: told.append(t) or None) as h:
        h.send(_ticket("k1"), sender="judge")
        h.send(_ticket("k2", action="inspect"), sender="judge", task_id="t2")
        (cancel,) = h.wait_for(TaskCancelled)
        h.sync()
        (resolved,) = h.published(TicketResolved)
        items = _inbox(h)
    assert (resolved.body.by, resolved.body.resolution) == ("queen", "cancel")
    assert cancel.body.ticket_id == "k1"
    assert [i.item_id for i in items] == ["k2"]  # not cancel-suggesting: the operator's
    assert [t.ticket_id for t in told] == ["k2"]


def test_an_unanswered_ticket_waits_in_the_inbox_until_answered_once() -> None:
    with RoleHarness(Queen, ticket_operator=lambda t: None) as h:
        h.send(_ticket(severity="high", action="inspect"), sender="judge")
        (item,) = _inbox(h)
        wrong = h.ref.ask(OperatorAnswer("k1", "approve"), timeout=5)
        ok = h.ref.ask(OperatorAnswer("k1", "continue"), timeout=5)
        again = h.ref.ask(OperatorAnswer("k1", "cancel"), timeout=5)
        (resolved,) = h.wait_for(TicketResolved)
        assert h.published(TaskCancelled) == [] and _inbox(h) == []
    assert (item.kind, item.severity, item.task_id, item.answers) == (
        "ticket",
        "high",
        "t1",
        ("continue", "cancel"),
    )
    assert "continue or cancel" in wrong and ok is None and "no open inbox item" in again
    assert (resolved.body.resolution, resolved.body.by) == ("continue", "operator")


def test_a_held_confirmation_is_answered_from_the_inbox_or_denied_at_its_timeout() -> None:
    clock = ManualClock()
    with RoleHarness(Queen, hold_confirmations=True, clock=clock) as h:
        for rid in ("r1", "r2"):
            h.send(ConfirmationRequest(request_id=rid, action="rm f", reason="deletes f"))
        items = _inbox(h)
        assert h.published(ConfirmationDecision) == []  # held, not denied at once
        assert h.ref.ask(OperatorAnswer("r1", "approve"), timeout=5) is None
        clock.advance(61)
        h.tick()
        decisions = {d.body.request_id: d.body for d in h.wait_for(ConfirmationDecision, 2)}
        assert _inbox(h) == []
    assert [(i.item_id, i.kind, i.answers) for i in items] == [
        ("r1", "confirmation", ("approve", "deny")),
        ("r2", "confirmation", ("approve", "deny")),
    ]
    assert decisions["r1"].approved is True and decisions["r1"].by == "operator"
    assert decisions["r2"].approved is False and decisions["r2"].by == "queen"


def test_the_hosts_cancel_request_becomes_a_task_cancelled() -> None:
    with RoleHarness(Queen) as h:
        h.send(CancelRequest(reason="changed my mind"), sender="host")
        (cancel,) = h.wait_for(TaskCancelled)
    assert cancel.body.reason == "changed my mind" and cancel.body.ticket_id is None
    assert cancel.task_id == "t1" and cancel.cause is not None


def test_a_tasks_end_takes_its_tickets_out_of_the_inbox() -> None:
    gate = threading.Event()

    def operator(ticket: EscalationTicket) -> str:
        gate.wait(5)
        return "cancel"  # too late: the task ended

    with RoleHarness(Queen, ticket_operator=operator) as h:
        h.send(_ticket(), sender="judge")
        assert [i.item_id for i in _inbox(h)] == ["k1"]
        h.send(FinalResult(task_id="t1", status="success"), sender="ggs")
        assert _inbox(h) == []
        gate.set()
        h.sync()
        assert h.published(TaskCancelled) == [] and h.published(TicketResolved) == []


def test_a_ticket_that_lands_after_its_task_ended_is_still_acknowledged_not_relayed() -> None:
    """The Judge judges a hop behind the bus: its ticket may follow the task's FinalResult.
    A low one is acknowledged all the same (a rerun logs the same); a high one reaches no
    operator — the task is over — and the Judge resolves it."""
    told: list[EscalationTicket] = []
    with RoleHarness(Queen, ticket_operator=lambda t: told.append(t) or None) as h:
        h.send(FinalResult(task_id="t1", status="accept"), sender="ggs")
        h.send(_ticket("low", severity="low"), sender="judge")
        h.send(_ticket("high", severity="high"), sender="judge")
        (resolved,) = h.wait_for(TicketResolved)
        assert _inbox(h) == []
    assert (resolved.body.ticket_id, resolved.body.resolution) == ("low", "acknowledged")
    assert told == []
