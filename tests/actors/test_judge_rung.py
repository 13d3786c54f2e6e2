"""The Judge's model rung (ambiguous cases only, fails closed) and its escalation to
critical (issue 10): the rules as pure functions, then the actor with a scripted model."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from artoo.actors.llm import LLMError, LLMResponse
from artoo.actors.llm._budget import BudgetSpent
from artoo.actors.roles._judge_rung import (
    ask_opinion,
    doom_severity,
    opinion_request,
    plateau,
    run_length,
    stall_severity,
    varying_repeat,
)
from artoo.actors.roles.judge import Judge, repeat_at
from artoo.schemas import (
    Config,
    EscalationTicket,
    ExecutionResult,
    GGSDecision,
    JudgeConfig,
    JudgeObservation,
    LLMCall,
    TaskRequest,
    TicketResolved,
    ToolCall,
)
from artoo.testing import ManualClock, RoleHarness, write_script


# --------------------------------------------------------------------------- rules
@given(st.lists(st.sampled_from("ab"), max_size=12), st.lists(st.integers(0, 2), max_size=12))
def test_varying_repeat_is_same_call_different_results(args: list[str], res: list[int]) -> None:
    n = min(len(args), len(res))
    args = args[:n]
    keys = [(a, r) for a, r in zip(args, res[:n], strict=True)]
    flagged = varying_repeat(args, keys, 3)
    same_call = n >= 3 and len(set(args[-3:])) == 1
    assert flagged == (same_call and len(set(keys[-3:])) > 1)
    if flagged:  # never a doom loop at the same time: the two rules do not overlap
        assert not repeat_at(keys, 3)


@given(st.lists(st.floats(0, 1, allow_nan=False), max_size=12), st.integers(2, 5))
def test_plateau_is_no_new_best_for_n_rounds(losses: list[float], rounds: int) -> None:
    flagged = plateau(losses, rounds)
    if len(losses) <= rounds:
        assert not flagged
    else:
        assert flagged == all(x >= min(losses[:-rounds]) for x in losses[-rounds:])
    if losses and not flagged and len(losses) > rounds:
        assert not plateau([*losses[:-1], -1.0], rounds)  # a new best is never a plateau


@given(st.lists(st.sampled_from("ab"), max_size=20))
def test_run_length_counts_the_trailing_identical_keys(keys: list[str]) -> None:
    n = run_length(keys)
    assert n == 0 if not keys else (1 <= n <= len(keys))
    assert all(k == keys[-1] for k in keys[len(keys) - n :])
    assert n == len(keys) or keys[-n - 1] != keys[-1]


@given(st.floats(0, 1e4), st.floats(1, 1e3), st.one_of(st.none(), st.floats(1, 1e4)))
def test_stall_severity_rises_with_silence(
    silent: float, stall_s: float, crit: float | None
) -> None:
    severity = stall_severity(silent, stall_s, crit)
    limit = max(4 * stall_s if crit is None else crit, stall_s)
    assert severity == ("critical" if silent >= limit else "high" if silent >= stall_s else None)
    order = [None, "high", "critical"]
    assert order.index(stall_severity(silent + 1, stall_s, crit)) >= order.index(severity)


@given(st.integers(0, 30), st.integers(2, 6), st.integers(2, 4))
def test_doom_severity(run: int, limit: int, critical: int) -> None:
    severity = doom_severity(run, limit, critical)
    assert (severity is None) == (run < limit)
    assert (severity == "critical") == (run >= critical * limit)


# --------------------------------------------------------------------------- ask_opinion
class _Gateway:
    def __init__(self, *answers: Any) -> None:
        self.answers = list(answers)

    def complete(self, request: Any) -> LLMResponse:
        answer = self.answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return LLMResponse(content=answer)


REQ = opinion_request("t1", "varying_repeat", "facts")


def test_ask_opinion_never_raises_and_names_each_failure() -> None:
    ok = ask_opinion(_Gateway('{"verdict": "healthy", "reason": "polling"}'), REQ)
    assert ok.opinion is not None and ok.opinion.verdict == "healthy" and ok.error_kind is None
    assert ask_opinion(_Gateway(RuntimeError("bug")), REQ).error_kind == "error"
    assert ask_opinion(_Gateway(LLMError("down")), REQ).error_kind == "error"
    spent = BudgetSpent("max_model_calls", 3, 3, 10)
    assert ask_opinion(_Gateway(spent), REQ).error_kind == "refused"
    garbage = ask_opinion(_Gateway("lol", '{"verdict": "fine"}'), REQ)
    assert garbage.opinion is None and garbage.error_kind == "unparsable"


# --------------------------------------------------------------------------- the actor
def _config(**judge: Any) -> Config:
    return Config(judge=JudgeConfig(interval_s=10.0, stall_s=60.0, **judge))


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(start=1000.0)


def _harness(tmp_path: Path, clock: ManualClock, answers: list[dict[str, Any]], **judge: Any):
    model = write_script(tmp_path / "judge.toml", [{"role": "judge", **a} for a in answers])
    return RoleHarness(Judge, config=_config(**judge), clock=clock, model=model)


@pytest.fixture
def start() -> Iterator[Any]:
    def _start(h: RoleHarness) -> RoleHarness:
        h.send(TaskRequest(text="t"), task_id="t1")
        assert h.bus.flush(10)
        return h

    yield _start


def poll(i: int) -> ExecutionResult:
    """A poll whose result changes: ambiguous (polling or a drifting loop?)."""
    call = ToolCall(tool="read_file", args={"path": "status"}, output_preview=f"pending {i}")
    return ExecutionResult(subtask_id="s1", attempt=i + 1, tool_calls=[call])


def same(i: int) -> ExecutionResult:
    call = ToolCall(tool="read_file", args={"path": "a"}, output_preview="same")
    return ExecutionResult(subtask_id="s1", attempt=i + 1, tool_calls=[call])


def judge_calls(h: RoleHarness) -> list[LLMCall]:
    return [e.body for e in h.published(LLMCall)]


def quiet(h: RoleHarness, seconds: float = 0.3) -> None:
    """Give the Judge (and a model thread it might start) time to act."""
    h.bus.flush(10)
    time.sleep(seconds)
    h.bus.flush(10)


DEGRADED = {"content": {"verdict": "degraded", "reason": "the counter drifts, a loop"}}
HEALTHY = {"content": {"verdict": "healthy", "reason": "polling a job"}}


def test_the_model_says_degraded_a_ticket(tmp_path: Path, clock: ManualClock, start: Any) -> None:
    with _harness(tmp_path, clock, [DEGRADED], model_rung=True) as h:
        start(h)
        for i in range(6):
            h.send(poll(i))
        (ticket,) = [e.body for e in h.wait_for(EscalationTicket)]
        quiet(h)
        assert (ticket.kind, ticket.case, ticket.error_kind) == (
            "model_opinion",
            "varying_repeat",
            None,
        )
        assert ticket.severity == "high" and len(ticket.evidence) == 3
        assert len(judge_calls(h)) == 1  # once per (task, case), not per poll
        assert len(h.published(EscalationTicket)) == 1


def test_the_model_says_healthy_no_ticket(tmp_path: Path, clock: ManualClock, start: Any) -> None:
    with _harness(tmp_path, clock, [HEALTHY], model_rung=True) as h:
        start(h)
        for i in range(4):
            h.send(poll(i))
        (obs,) = [e for e in h.wait_for(JudgeObservation)]
        quiet(h)
        assert obs.task_id == "t1" and "varying_repeat dismissed" in obs.body.summary
        assert h.published(EscalationTicket) == []
        (call,) = judge_calls(h)
        assert call.role == "judge" and call.tier == "brain"


@pytest.mark.parametrize(
    ("answers", "kind"),
    [
        ([{"content": "I think it is fine?", "times": 0}], "unparsable"),
        ([{"content": {"verdict": "maybe", "reason": "?"}, "times": 0}], "unparsable"),
    ],
)
def test_the_model_raising_or_answering_garbage_is_a_ticket(
    tmp_path: Path, clock: ManualClock, start: Any, answers: list[dict[str, Any]], kind: str
) -> None:
    with _harness(tmp_path, clock, answers, model_rung=True) as h:
        start(h)
        for i in range(3):
            h.send(poll(i))
        (ticket,) = [e.body for e in h.wait_for(EscalationTicket)]
    assert (ticket.kind, ticket.case, ticket.error_kind) == (
        "model_opinion",
        "varying_repeat",
        kind,
    )
    assert ticket.action == "inspect" and ticket.severity == "high"


def test_a_model_that_raises_is_a_ticket(tmp_path: Path, clock: ManualClock, start: Any) -> None:
    """No script entry matches: the gateway raises LLMError."""
    model = write_script(
        tmp_path / "judge.toml", [{"role": "judge", "match": "^never$", **HEALTHY}]
    )
    with RoleHarness(Judge, config=_config(model_rung=True), clock=clock, model=model) as h:
        start(h)
        for i in range(3):
            h.send(poll(i))
        (ticket,) = [e.body for e in h.wait_for(EscalationTicket)]
        (call,) = judge_calls(h)
    assert ticket.error_kind == "error" and call.error  # the failed call is logged too


def test_a_model_that_does_not_answer_in_time_is_a_ticket(
    tmp_path: Path, clock: ManualClock, start: Any
) -> None:
    slow = {**HEALTHY, "delay_ms": 1500}
    with _harness(tmp_path, clock, [slow], model_rung=True, model_timeout_s=30.0) as h:
        start(h)
        for i in range(3):
            h.send(poll(i))
        quiet(h, 0.2)
        clock.advance(30.0)
        h.tick()
        (ticket,) = [e.body for e in h.wait_for(EscalationTicket)]
        assert ticket.error_kind == "timeout"
        time.sleep(2.0)  # the late "healthy" arrives: dropped, it dismisses nothing
        quiet(h)
        assert [
            e.body.summary for e in h.published(JudgeObservation) if "dismissed" in e.body.summary
        ] == []
        assert len(h.published(EscalationTicket)) == 1


def test_the_rung_off_never_asks(tmp_path: Path, clock: ManualClock, start: Any) -> None:
    with _harness(tmp_path, clock, [DEGRADED]) as h:  # model_rung defaults to off
        start(h)
        for i in range(6):
            h.send(poll(i))
        quiet(h)
        assert judge_calls(h) == [] and h.published(EscalationTicket) == []


def test_unambiguous_cases_never_ask_the_model(
    tmp_path: Path, clock: ManualClock, start: Any
) -> None:
    with _harness(tmp_path, clock, [DEGRADED], model_rung=True) as h:
        start(h)
        for i in range(3):
            h.send(same(i))  # a doom loop: the rule decides
        (ticket,) = [e.body for e in h.wait_for(EscalationTicket)]
        for i in range(4):  # a deterministic read repeated across subtasks: healthy
            call = ToolCall(tool="read_file", args={"path": "cfg"}, output_preview="x")
            h.send(ExecutionResult(subtask_id=f"o{i}", attempt=1, tool_calls=[call]))
        quiet(h)
        assert ticket.kind == "doom_loop" and judge_calls(h) == []


def test_a_loss_plateau_is_put_to_the_model(tmp_path: Path, clock: ManualClock, start: Any) -> None:
    with _harness(tmp_path, clock, [DEGRADED], model_rung=True, plateau_rounds=3) as h:
        start(h)
        for r, loss in enumerate([0.5, 0.4, 0.45, 0.42]):
            h.send(
                GGSDecision(round=r, d=loss, p=0, omega=0, loss=loss, grad=0, directive="refine")
            )
        quiet(h)
        assert judge_calls(h) == []  # two rounds without a new best: not yet
        h.send(GGSDecision(round=4, d=0.41, p=0, omega=0, loss=0.41, grad=0, directive="refine"))
        (ticket,) = [e.body for e in h.wait_for(EscalationTicket)]
    assert (ticket.kind, ticket.case) == ("model_opinion", "plateau")


# --------------------------------------------------------------------------- critical
def test_a_stall_is_high_then_critical_the_same_ticket(clock: ManualClock, start: Any) -> None:
    with RoleHarness(Judge, config=_config(), clock=clock) as h:
        start(h)
        seen: list[EscalationTicket] = []
        for _ in range(24):  # 240 s in timer steps
            clock.advance(10.0)
            n = len(h.published(JudgeObservation))
            h.tick()
            h.wait_for(JudgeObservation, count=n + 1)
            seen = [e.body for e in h.published(EscalationTicket)]
            if len(seen) == 1:
                assert clock.now() - 1000.0 >= 60.0 and seen[0].severity == "high"
        high, critical = seen
        assert clock.now() - 1000.0 == 240.0
        assert (high.severity, critical.severity) == ("high", "critical")
        assert critical.ticket_id == high.ticket_id and critical.action == "cancel"
        clock.advance(10.0)
        h.tick()
        quiet(h)
        assert len(h.published(EscalationTicket)) == 2  # critical is the top: no more


def test_a_doom_loop_goes_critical_at_twice_the_limit(clock: ManualClock, start: Any) -> None:
    with RoleHarness(Judge, config=_config(), clock=clock) as h:
        start(h)
        for i in range(5):
            h.send(same(i))
        (high,) = [e.body for e in h.wait_for(EscalationTicket)]
        h.send(same(5))
        _, critical = [e.body for e in h.wait_for(EscalationTicket, count=2)]
        assert critical.ticket_id == high.ticket_id and critical.severity == "critical"
        assert len(critical.evidence) == 6


def test_after_continue_only_a_worse_finding_tickets_within_the_cooldown(
    clock: ManualClock, start: Any
) -> None:
    with RoleHarness(Judge, config=_config(), clock=clock) as h:
        start(h)
        for i in range(3):
            h.send(same(i))
        (high,) = [e.body for e in h.wait_for(EscalationTicket)]
        h.send(TicketResolved(ticket_id=high.ticket_id, resolution="continue", by="operator"))
        h.send(same(3))  # 4, 5: still high, the operator let it continue
        h.send(same(4))
        quiet(h)
        assert len(h.published(EscalationTicket)) == 1
        h.send(same(5))  # 6: critical, a new ticket despite the cooldown
        _, critical = [e.body for e in h.wait_for(EscalationTicket, count=2)]
        assert critical.severity == "critical" and critical.ticket_id != high.ticket_id


def test_the_judges_tap_is_not_blocked_while_the_model_thinks(
    tmp_path: Path, clock: ManualClock, start: Any
) -> None:
    slow = {**DEGRADED, "delay_ms": 1000}
    with _harness(tmp_path, clock, [slow], model_rung=True) as h:
        start(h)
        for i in range(3):
            h.send(poll(i))
        quiet(h, 0.1)
        began = time.monotonic()
        for i in range(3):
            h.send(same(i), task_id="t1")
        (doom,) = [e.body for e in h.wait_for(EscalationTicket)]
        assert doom.kind == "doom_loop" and time.monotonic() - began < 0.9
        _, opinion = [e.body for e in h.wait_for(EscalationTicket, count=2)]
        assert opinion.kind == "model_opinion"
