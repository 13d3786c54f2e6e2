"""The Queen: admits tasks, relays confirmations, and never approves by itself."""

from __future__ import annotations

import threading

from artoo.actors.roles.queen import Queen
from artoo.schemas import (
    Config,
    ConfirmationDecision,
    ConfirmationRequest,
    FinalResult,
    TaskRequest,
    UserRequest,
)
from artoo.testing import ManualClock, RoleHarness


def _request(rid: str = "r1", timeout_s: float = 30.0) -> ConfirmationRequest:
    return ConfirmationRequest(
        request_id=rid, action="rm f", reason="deletes f", tool="shell", timeout_s=timeout_s
    )


def test_a_user_request_becomes_a_task_request_with_the_deadline_decided_once() -> None:
    with RoleHarness(Queen, config=Config(task_timeout_s=42)) as h:
        h.send(UserRequest(text="count files"))
        h.send(UserRequest(text="hurry", deadline_s=5), task_id="t2")
        first, second = h.wait_for(TaskRequest, 2)
    assert (first.body.text, first.body.deadline_s) == ("count files", 42)
    assert second.body.deadline_s == 5 and second.task_id == "t2"
    assert first.cause is not None  # answers the UserRequest


def test_without_an_operator_every_confirmation_is_denied_by_the_queen() -> None:
    with RoleHarness(Queen) as h:
        h.send(_request())
        (decision,) = h.wait_for(ConfirmationDecision)
    assert decision.body.approved is False and decision.body.by == "queen"


def test_an_operator_approves_and_an_operator_error_denies() -> None:
    def operator(request: ConfirmationRequest) -> bool:
        if request.request_id == "boom":
            raise RuntimeError("operator crashed")
        return True

    with RoleHarness(Queen, operator=operator) as h:
        h.send(_request("ok"))
        h.send(_request("boom"))
        decisions = {d.body.request_id: d.body for d in h.wait_for(ConfirmationDecision, 2)}
    assert decisions["ok"].approved is True and decisions["ok"].by == "operator"
    assert decisions["boom"].approved is False and "operator failed" in decisions["boom"].reason


def test_silence_is_a_denial_at_the_timeout_in_clock_time_and_exactly_once() -> None:
    clock = ManualClock()
    released = threading.Event()

    def slow(request: ConfirmationRequest) -> bool:
        released.wait(10)
        return True  # too late: the denial stands

    with RoleHarness(Queen, operator=slow, clock=clock, config=Config()) as h:
        h.send(_request(timeout_s=30))
        h.sync()
        h.tick()
        h.sync()
        assert h.published(ConfirmationDecision) == []  # no clock time passed
        clock.advance(31)
        h.tick()
        (decision,) = h.wait_for(ConfirmationDecision)
        released.set()
        h.sync()
        assert len(h.published(ConfirmationDecision)) == 1
    assert decision.body.approved is False and "no answer within 30" in decision.body.reason


def test_a_pending_confirmation_of_an_ended_task_is_denied() -> None:
    never = threading.Event()
    with RoleHarness(Queen, operator=lambda r: never.wait(10)) as h:
        h.send(_request())
        h.send(FinalResult(task_id="t1", status="abandon"))
        (decision,) = h.wait_for(ConfirmationDecision)
        never.set()
    assert decision.body.approved is False and decision.body.reason == "the task ended first"
