"""The GGS actor: the one place a task ends — rounds, unplanned rounds, deadlines, cost,
crashes, cancel — each FinalResult with a structured reason."""

from __future__ import annotations

from artoo.actors.roles.ggs import GGS
from artoo.schemas import (
    Config,
    ConfirmationDecision,
    ConfirmationRequest,
    Criterion,
    DispatchManifest,
    FinalResult,
    GGSDecision,
    LLMCall,
    OutcomeSummary,
    PlanDirective,
    PlanRejected,
    RoleFailed,
    StepFailed,
    SubTask,
    SubTaskOutcome,
    TaskCancelled,
    TaskRequest,
    TaskSpec,
    Verdict,
)
from artoo.testing import ManualClock, RoleHarness

SPEC = TaskSpec(
    text="x", intent="x", slug="x", criteria=[Criterion(id="t1", text="ok", mode="verifiable")]
)


def _start(h: RoleHarness, task_id: str = "t1", deadline_s: float = 60) -> None:
    h.send(TaskRequest(text="x", deadline_s=deadline_s), task_id=task_id)
    h.send(SPEC, task_id=task_id)


def _call(subtask_id: str = "", tokens: int = 10) -> LLMCall:
    usage = {"prompt_tokens": tokens, "completion_tokens": 1}
    return LLMCall(
        call_id="c", role="r", tier="brain", model="m", usage=usage, subtask_id=subtask_id
    )


def test_an_accepted_round_ends_the_task_with_its_cost_from_the_ledger() -> None:
    with RoleHarness(GGS) as h:
        _start(h)
        h.send(DispatchManifest(subtasks=[SubTask(subtask_id="a"), SubTask(subtask_id="b")]))
        for call in (_call(), _call("a"), _call("a"), _call("b")):
            h.send(call)
        ok = Verdict(criterion_id="t1", passed=True)
        h.send(OutcomeSummary(outcomes=[SubTaskOutcome(subtask_id="a")], task_verdicts=[ok]))
        (final,) = h.wait_for(FinalResult)
    body = final.body
    assert body.status == "accept" and body.reason == "criteria_met"
    assert body.cost.model_calls == 4 and body.cost.tokens_in == 40
    assert body.cost.sequential_calls == 3  # one loose call + the slower of a and b


def test_a_rejected_plan_is_a_scored_round_not_a_failure() -> None:
    with RoleHarness(GGS) as h:
        _start(h)
        h.send(PlanRejected(round=0, violations=["s: uses blocked tool shell"], tools=["shell"]))
        (decision,) = h.wait_for(GGSDecision)
        (directive,) = h.wait_for(PlanDirective)
        assert h.published(FinalResult) == []
    assert decision.body.d == 1.0 and decision.body.p > 0.5  # every criterion, logically
    assert directive.body.round == 1


def test_a_denied_action_that_every_plan_needs_is_said_in_the_summary() -> None:
    config = Config(ggs={"max_replans": 0})  # type: ignore[arg-type]
    with RoleHarness(GGS, config=config) as h:
        _start(h)
        h.send(
            ConfirmationRequest(
                request_id="r", action="rm old.log", reason="", tool="shell", target="old.log"
            )
        )
        h.send(ConfirmationDecision(request_id="r", approved=False))
        h.send(PlanRejected(round=0, violations=["names old.log"], targets=["old.log"]))
        (final,) = h.wait_for(FinalResult)
    assert final.body.law1_denied and final.body.reason == "replan_budget"
    assert final.body.summary.startswith("[LAW1] The only way found (rm old.log)")


def test_deadline_crash_cancel_and_no_reading_each_end_once_with_their_reason() -> None:
    clock = ManualClock()
    with RoleHarness(GGS, clock=clock) as h:
        _start(h, "late", deadline_s=10)
        _start(h, "crashed")
        _start(h, "cancelled")
        h.send(TaskRequest(text="x"), task_id="unread")
        h.sync()
        clock.advance(11)
        h.tick()
        h.send(RoleFailed(role="executor/pair-0", error="boom", task_ids=["crashed"]))
        h.send(TaskCancelled(reason="bye"), task_id="cancelled")
        h.send(TaskCancelled(reason="again"), task_id="cancelled")
        h.send(StepFailed(role="perceiver", step="perceive", error="?"), task_id="unread")
        h.tick()
        finals = h.wait_for(FinalResult, 4)
        h.sync()
        assert len(h.published(FinalResult)) == 4
    reasons = {f.body.task_id: f.body.reason for f in finals}
    assert reasons == {
        "late": "deadline",
        "crashed": "crash",
        "cancelled": "cancelled",
        "unread": "step_failed",
    }
