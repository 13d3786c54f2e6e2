"""The Judge's critical escalation and its model rung (issue 10): what the rules call
ambiguous goes to the model, and the rung fails closed — an error or garbage is a ticket."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from artoo.actors.judge import Judge, ambiguous_repeat, run_length
from artoo.schemas import (
    Config,
    EscalationTicket,
    ExecutionResult,
    JudgeConfig,
    JudgeObservation,
    LLMCall,
    TaskRequest,
    ToolCall,
)
from artoo.testing import ManualClock, RoleHarness, write_script

keys = st.lists(st.sampled_from("abc"), max_size=20)


# --------------------------------------------------------------------------- pure
@given(keys)
def test_run_length_counts_the_last_key_repeated_in_a_row(seq: list[str]) -> None:
    n = run_length(seq)
    assert (n == 0) == (not seq)
    assert all(k == seq[-1] for k in seq[len(seq) - n :])
    assert n == len(seq) or seq[-n - 1] != seq[-1]


@given(st.integers(2, 6), keys, st.lists(st.integers(0, 3), min_size=6, max_size=6))
def test_ambiguous_is_the_same_call_repeated_with_results_that_change(
    limit: int, prefix: list[str], results: list[int]
) -> None:
    calls = [*prefix, *["poll"] * limit]
    outcome = [*[("x", k) for k in prefix], *[("poll", r) for r in results[:limit]]]
    expected = len(set(results[:limit])) > 1
    assert ambiguous_repeat(calls, outcome, limit) == expected


def test_ambiguous_worked_examples() -> None:
    assert ambiguous_repeat(["p"] * 4, [1, 2, 3, 4], 4)  # polling: the rules cannot tell
    assert not ambiguous_repeat(["p"] * 4, [1, 1, 1, 1], 4)  # a doom loop: the rules can
    assert not ambiguous_repeat(["p", "p", "q", "p"], [1, 2, 3, 4], 4)  # not in a row
    assert not ambiguous_repeat(["p"] * 3, [1, 2, 3], 4)  # not yet


# --------------------------------------------------------------------------- helpers
def read(path: str, result: str = "same") -> ToolCall:
    return ToolCall(tool="read_file", args={"path": path}, output_preview=result)


def attempt(calls: list[ToolCall], attempt: int = 1, subtask: str = "s1") -> ExecutionResult:
    return ExecutionResult(subtask_id=subtask, attempt=attempt, tool_calls=calls)


def polls(n: int = 4, start: int = 0) -> list[ToolCall]:
    return [read("status", f"pending {i}") for i in range(start, start + n)]


def settle(h: RoleHarness, advance: float = 10.0) -> list[EscalationTicket]:
    clock = h.clock
    assert isinstance(clock, ManualClock)
    clock.advance(advance)
    n = len(h.published(JudgeObservation))
    h.tick()
    h.wait_for(JudgeObservation, count=n + 1)
    return [e.body for e in h.published(EscalationTicket)]


def harness(tmp_path: Path, answers: list[dict[str, Any]] | None, **cfg: Any) -> RoleHarness:
    model = write_script(tmp_path / "judge.toml", answers) if answers is not None else None
    config = Config(judge=JudgeConfig(interval_s=10.0, stall_s=60.0, **cfg))
    h = RoleHarness(Judge, config=config, clock=ManualClock(start=1000.0), model=model)
    h.send(TaskRequest(text="t"), task_id="t1")
    assert h.bus.flush(10)
    return h


@pytest.fixture
def rung(tmp_path: Path) -> Iterator[Any]:
    made: list[RoleHarness] = []

    def make(answers: list[dict[str, Any]] | None, **cfg: Any) -> RoleHarness:
        made.append(harness(tmp_path, answers, model_rung=True, **cfg))
        return made[-1]

    yield make
    for h in made:
        h.close()


def judge_calls(h: RoleHarness) -> list[LLMCall]:
    return [e.body for e in h.published(LLMCall)]


# --------------------------------------------------------------------------- the rung
def test_the_model_judges_polling_degraded_and_a_ticket_names_it(rung: Any) -> None:
    h = rung([{"role": "judge", "content": {"verdict": "degraded", "reason": "never done"}}])
    h.send(attempt(polls()))
    (ticket,) = settle(h)
    assert (ticket.kind, ticket.severity) == ("model_opinion", "high")
    assert "never done" in ticket.summary and len(ticket.evidence) == 1
    (call,) = judge_calls(h)
    assert call.role == "judge" and call.tier == "brain" and call.error is None


def test_the_model_judges_polling_healthy_and_nothing_is_raised(rung: Any) -> None:
    h = rung([{"role": "judge", "content": {"verdict": "healthy", "reason": "it moves"}}])
    h.send(attempt(polls()))
    h.send(attempt(polls(start=4), attempt=2))  # asked once per subtask: no second call
    assert settle(h) == []
    said = [e.body for e in h.published(JudgeObservation) if e.task_id == "t1"]
    assert any("judged it healthy: it moves" in o.summary for o in said)
    assert len(judge_calls(h)) == 1


def test_a_model_that_raises_is_a_ticket(rung: Any) -> None:
    h = rung([])  # a script with no answer for the judge: the call fails
    h.send(attempt(polls()))
    (ticket,) = settle(h)
    assert (ticket.kind, ticket.severity) == ("model_rung_failed", "high")
    assert "could not judge" in ticket.summary
    assert [c.error is not None for c in judge_calls(h)] == [True]


def test_a_model_that_answers_garbage_is_a_ticket(rung: Any) -> None:
    h = rung([{"role": "judge", "content": "looks fine to me!", "times": 2}])
    h.send(attempt(polls()))
    (ticket,) = settle(h)
    assert ticket.kind == "model_rung_failed"
    assert len(judge_calls(h)) == 2  # the answer, and the one repair it was asked for


def test_a_system_without_a_model_fails_closed_too(rung: Any) -> None:
    h = rung(None)
    h.send(attempt(polls()))
    (ticket,) = settle(h)
    assert ticket.kind == "model_rung_failed" and "no model" in ticket.summary


def test_an_unambiguous_case_never_asks_the_model(rung: Any) -> None:
    h = rung([{"role": "judge", "content": {"verdict": "healthy"}}])
    h.send(attempt([read("a")] * 4))  # a doom loop: the rules decide
    h.send(attempt([read("config"), read("part1"), read("config"), read("part2")], subtask="s2"))
    assert [t.kind for t in settle(h)] == ["doom_loop"]
    assert judge_calls(h) == []


def test_with_the_rung_off_polling_asks_no_model_and_raises_nothing(tmp_path: Path) -> None:
    model = [{"role": "judge", "content": {"verdict": "degraded"}}]
    h = harness(tmp_path, model)  # model_rung defaults to False
    try:
        h.send(attempt(polls(6)))
        assert settle(h) == [] and judge_calls(h) == []
    finally:
        h.close()


# --------------------------------------------------------------------------- critical
def test_a_stall_that_goes_on_is_raised_again_at_critical_once(tmp_path: Path) -> None:
    h = harness(tmp_path, None)
    try:
        assert settle(h, 50.0) == []
        (high,) = settle(h, 10.0)  # the first pass at stall_s
        assert (high.kind, high.severity) == ("stall", "high")
        assert settle(h, 170.0) == [high]  # 230 s: not yet
        (_, critical) = settle(h, 10.0)  # 240 s: stall_critical_s
        assert (critical.ticket_id, critical.severity) == (high.ticket_id, "critical")
        assert (critical.escalated_from, critical.action) == ("high", "cancel")
        assert len(settle(h, 100.0)) == 2  # raised once
    finally:
        h.close()


def test_a_doom_loop_that_goes_on_is_raised_again_at_critical(tmp_path: Path) -> None:
    h = harness(tmp_path, None)
    try:
        h.send(attempt([read("a")] * 3))
        (high,) = settle(h)
        h.send(attempt([read("a")] * 2, attempt=2))
        assert settle(h) == [high]  # 5 in a row
        h.send(attempt([read("a")], attempt=3))
        (_, critical) = settle(h)  # the 6th: loop_critical
        assert (critical.ticket_id, critical.kind, critical.severity) == (
            high.ticket_id,
            "doom_loop",
            "critical",
        )
        assert len(critical.evidence) == 3  # the three attempts' ExecutionResults
    finally:
        h.close()
