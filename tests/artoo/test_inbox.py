"""The operator inbox end to end: tickets and confirmations reach the operator; the
operator's answers end or continue real tasks (issue 10)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

import artoo
from artoo.actors.roles.queen import InboxItem
from artoo.schemas import (
    CancelRequest,
    ConfirmationDecision,
    EscalationTicket,
    FinalResult,
    TaskCancelled,
    TicketResolved,
)
from artoo.testing import write_script

from .helpers import CONFIG, rm_script_entries, task_events, until

HELD = CONFIG.model_copy(update={"confirmation_timeout_s": 120.0})


def _kinds(items: list[InboxItem]) -> list[str]:
    return sorted(i.kind for i in items)


def test_a_critical_ticket_reaches_the_operator_and_the_inbox_and_its_cancel_ends_the_task(
    tmp_path: Path, workspace: Path
) -> None:
    told: list[EscalationTicket] = []
    seen = threading.Event()

    def on_ticket(ticket: EscalationTicket) -> None:
        told.append(ticket)
        seen.set()  # no decision: the ticket waits in the inbox

    model = write_script(tmp_path / "rm.toml", rm_script_entries())
    store = tmp_path / "s"
    with artoo.System.open(
        store, model=model, workspace=workspace, config=HELD, inbox=True, on_ticket=on_ticket
    ) as system:
        handle = system.submit("delete the old log")
        (pending,) = until(system.inbox)  # the Law 1 confirmation, held for the operator
        assert pending.kind == "confirmation" and pending.task_id == handle.task_id
        system.bus.publish(  # as the Judge would: the task is in trouble
            EscalationTicket(
                ticket_id="tk-1",
                severity="critical",
                kind="doom_loop",
                summary="rm called 3 times",
                action="cancel",
            ),
            sender="judge",
            task_id=handle.task_id,
        )
        assert seen.wait(10)
        items = until(lambda: len(system.inbox()) == 2 and system.inbox())
        assert _kinds(items) == ["confirmation", "ticket"]
        with pytest.raises(ValueError, match="continue or cancel"):
            system.answer("tk-1", "approve")
        system.answer("tk-1", "cancel")
        result = handle.result(30)
        assert system.inbox() == []
        with pytest.raises(ValueError, match="no open inbox item"):
            system.answer("tk-1", "cancel")
    assert [t.ticket_id for t in told] == ["tk-1"] and told[0].severity == "critical"
    assert (result.status, result.reason, result.ticket_id) == ("abandon", "cancelled", "tk-1")
    assert "tk-1" in result.summary
    events = task_events(store, handle.task_id)
    assert sum(isinstance(e.body, FinalResult) for e in events) == 1
    (resolved,) = [e.body for e in events if isinstance(e.body, TicketResolved)]
    assert (resolved.resolution, resolved.by) == ("cancel", "operator")
    (cancel,) = [e for e in events if isinstance(e.body, TaskCancelled)]
    assert cancel.sender == "queen" and cancel.body.ticket_id == "tk-1"
    (decision,) = [e.body for e in events if isinstance(e.body, ConfirmationDecision)]
    assert decision.approved is False  # the held confirmation died with its task
    assert (workspace / "archive" / "old.log").exists()


def test_an_inbox_approval_lets_a_held_confirmation_through(
    tmp_path: Path, workspace: Path
) -> None:
    model = write_script(tmp_path / "rm.toml", rm_script_entries())
    with artoo.System.open(
        tmp_path / "s", model=model, workspace=workspace, config=HELD, inbox=True
    ) as system:
        handle = system.submit("delete the old log")
        (pending,) = until(system.inbox)
        with pytest.raises(ValueError, match="a decision is one of"):
            system.answer(pending.item_id, "yes")
        system.answer(pending.item_id, "approve")
        result = handle.result(30)
    assert result.status == "success", result.summary
    assert not (workspace / "archive" / "old.log").exists()


def test_task_handle_cancel_goes_through_the_queen(tmp_path: Path, workspace: Path) -> None:
    model = write_script(tmp_path / "rm.toml", rm_script_entries())
    store = tmp_path / "s"
    with artoo.System.open(
        store, model=model, workspace=workspace, config=HELD, inbox=True
    ) as system:
        handle = system.submit("delete the old log")
        until(system.inbox)
        handle.cancel("not today")
        result = handle.result(30)
    assert (result.status, result.reason, result.ticket_id) == ("abandon", "cancelled", None)
    events = task_events(store, handle.task_id)
    (request,) = [e for e in events if isinstance(e.body, CancelRequest)]
    (cancel,) = [e for e in events if isinstance(e.body, TaskCancelled)]
    assert request.sender == "host" and cancel.sender == "queen"
    assert cancel.cause == request.seq and cancel.body.reason == "not today"
    assert sum(isinstance(e.body, FinalResult) for e in events) == 1
