"""The Judge: its detectors as pure functions, and a labelled scenario suite with a
regression set that must raise nothing."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from artoo.actors.roles.judge import Judge, budget_burn, call_key, cycle_at, repeat_at, stalled
from artoo.schemas import (
    Config,
    CorrectionSignal,
    EscalationTicket,
    ExecutionResult,
    FinalResult,
    JudgeConfig,
    JudgeObservation,
    LLMCall,
    TaskRequest,
    TicketResolved,
    ToolCall,
)
from artoo.testing import ManualClock, RoleHarness

keys = st.lists(st.sampled_from("abcd"), max_size=30)


# --------------------------------------------------------------------------- detectors
@given(keys, st.integers(2, 6))
def test_repeat_is_the_nth_identical_call_in_a_row(seq: list[str], limit: int) -> None:
    flagged = repeat_at(seq, limit)
    assert flagged == (len(seq) >= limit and len(set(seq[-limit:])) == 1)
    if flagged:
        assert not repeat_at(seq[:-1], limit) or len(set(seq[-limit - 1 :])) == 1


@given(st.sampled_from("abcd"), st.integers(0, 10))
def test_a_doom_loop_is_flagged_at_the_third_repeat_not_before(key: str, before: int) -> None:
    prefix = ["x"] * before + ["y"]
    assert not repeat_at([*prefix, key, key], 3)
    assert repeat_at([*prefix, key, key, key], 3)


@given(st.lists(st.sampled_from("abcd"), min_size=2, max_size=4), st.lists(st.sampled_from("xyz")))
def test_a_repeated_block_of_two_to_four_is_a_cycle(block: list[str], prefix: list[str]) -> None:
    if len(set(block)) < 2:
        return
    seq = [*prefix, *block, *block]
    period = cycle_at(seq, 2)
    assert (period and len(block) % period == 0) or period <= len(block)
    assert cycle_at([*prefix, *block], 2) == 0 or cycle_at([*prefix, *block], 2) <= len(block)


@given(st.lists(st.integers(0, 1_000), min_size=1, max_size=30, unique=True))
def test_calls_whose_results_all_differ_are_never_a_loop(results: list[int]) -> None:
    """Polling: the same call, a new result each time."""
    seq = [("poll", r) for r in results]
    assert not repeat_at(seq, 3)
    assert cycle_at(seq, 2) == 0


@given(st.sampled_from("abcd"), st.integers(3, 10))
def test_one_call_repeated_is_a_doom_loop_not_a_cycle(key: str, n: int) -> None:
    assert cycle_at([key] * n, 2) == 0


@given(st.floats(0, 1e6), st.floats(0, 1e6), st.floats(0.1, 1e4))
def test_stall_is_silence_of_at_least_stall_s(last: float, now: float, stall_s: float) -> None:
    assert stalled(last, now, stall_s) == (now - last >= stall_s)


@given(st.integers(0, 1_000), st.integers(1, 1_000), st.floats(0.1, 1.0))
def test_budget_burn_is_monotone_in_use(used: int, limit: int, warn: float) -> None:
    if budget_burn(used, limit, warn):
        assert budget_burn(used + 1, limit, warn)
    assert not budget_burn(used, None, warn)
    assert budget_burn(limit, limit, warn)


def test_call_key_ignores_argument_order_but_not_results() -> None:
    a = ToolCall(tool="shell", args={"command": "ls", "cwd": "."}, output_preview="x")
    b = ToolCall(tool="shell", args={"cwd": ".", "command": "ls"}, output_preview="x")
    c = ToolCall(tool="shell", args={"command": "ls", "cwd": "."}, output_preview="y")
    assert call_key(a) == call_key(b) != call_key(c)


# --------------------------------------------------------------------------- scenarios
CFG = Config(judge=JudgeConfig(interval_s=10.0, stall_s=60.0))


@pytest.fixture
def judge() -> Iterator[RoleHarness]:
    clock = ManualClock(start=1000.0)
    with RoleHarness(Judge, config=CFG, clock=clock) as harness:
        harness.send(TaskRequest(text="t", max_model_calls=10), task_id="t1")
        # committed (stamped with the clock's time) before any test advances the clock
        assert harness.bus.flush(10)
        yield harness


def read(path: str, result: str = "same") -> ToolCall:
    return ToolCall(tool="read_file", args={"path": path}, output_preview=result)


def attempt(calls: list[ToolCall], attempt: int = 1, subtask: str = "s1") -> ExecutionResult:
    return ExecutionResult(subtask_id=subtask, attempt=attempt, tool_calls=calls)


def settle(h: RoleHarness, advance: float = 10.0) -> list[EscalationTicket]:
    """Advance the clock one timer interval; the Judge's pass judges all sent so far."""
    clock = h.clock
    assert isinstance(clock, ManualClock)
    clock.advance(advance)
    n = len(h.published(JudgeObservation))
    h.tick()
    h.wait_for(JudgeObservation, count=n + 1)
    return [e.body for e in h.published(EscalationTicket)]


def test_doom_loop_across_attempts_at_the_third_repeat(judge: RoleHarness) -> None:
    judge.send(attempt([read("a"), read("a")], attempt=1))
    assert settle(judge) == []
    judge.send(attempt([read("a")], attempt=2))
    (ticket,) = settle(judge)
    assert (ticket.kind, ticket.severity, ticket.action) == ("doom_loop", "high", "cancel")
    assert len(ticket.evidence) == 2 and ticket.evidence_ranges  # two ExecutionResults


def test_period_two_cycle(judge: RoleHarness) -> None:
    judge.send(attempt([read("a"), read("b"), read("a")]))
    assert settle(judge) == []
    judge.send(attempt([read("b")], attempt=2))
    (ticket,) = settle(judge)
    assert ticket.kind == "cycle" and "cycle of 2" in ticket.summary


def test_stall_within_stall_s_plus_one_tick(judge: RoleHarness) -> None:
    assert settle(judge, 50.0) == []  # 50 s of silence
    (ticket,) = settle(judge, 10.0)  # 60 s: the next pass finds it
    assert ticket.kind == "stall" and ticket.severity == "high"


def test_retry_storm_and_repeated_errors(judge: RoleHarness) -> None:
    for i in range(5):
        judge.send(CorrectionSignal(subtask_id="s1", attempt=i + 1))
    for i in range(3):  # different commands failing the same way
        boom = ToolCall(tool="shell", args={"n": i}, ok=False, exit_code=2, error="boom")
        judge.send(attempt([boom], i + 1))
    kinds = sorted(t.kind for t in settle(judge))
    assert kinds == ["repeated_errors", "retry_storm"]


def test_asks_for_a_second_derivation_are_no_retry_storm(judge: RoleHarness) -> None:
    """One per subtask, after an attempt that passed: five subtasks asked once each are no
    storm of failures."""
    for i in range(5):
        judge.send(CorrectionSignal(subtask_id=f"s{i}", corroborate="7"))
    judge.send(CorrectionSignal(subtask_id="s0", attempt=2))
    assert settle(judge) == []


def test_budget_burn_and_model_errors(judge: RoleHarness) -> None:
    for i in range(8):
        judge.send(
            LLMCall(call_id=f"c{i}", role="executor", tier="tool", model="m", error="down"),
            sender="executor",
        )
    kinds = sorted(t.kind for t in settle(judge))
    assert kinds == ["budget_burn", "model_errors", "repeated_errors"]


def test_one_open_ticket_per_task_and_detector_resolved_when_the_task_ends(
    judge: RoleHarness,
) -> None:
    judge.send(attempt([read("a")] * 3))
    judge.send(attempt([read("a")] * 2, attempt=2))  # 5: one short of critical (6)
    tickets = settle(judge)
    assert [(t.kind, t.severity) for t in tickets] == [("doom_loop", "high")]
    judge.send(FinalResult(task_id="t1", status="abandon"))
    (resolved,) = judge.wait_for(TicketResolved)
    assert resolved.body.ticket_id == tickets[0].ticket_id
    assert resolved.body.resolution == "task_ended"


# --------------------------------------------------------------------------- regression
def test_polling_whose_results_change_raises_nothing(judge: RoleHarness) -> None:
    for i in range(6):
        judge.send(attempt([read("status", f"pending {i}")], attempt=i + 1))
    assert settle(judge) == []


def test_a_legitimately_repeated_deterministic_call_raises_nothing(judge: RoleHarness) -> None:
    for i in range(6):  # each subtask reads the same config once, then does its own work
        judge.send(attempt([read("config.json"), read(f"part{i}")], subtask=f"s{i}"))
    assert settle(judge) == []


def test_a_slow_but_progressing_task_raises_nothing(judge: RoleHarness) -> None:
    judge.send(FinalResult(task_id="t1", status="accept"))
    judge.send(TaskRequest(text="slow"), task_id="t2")  # no budget
    for i in range(12):  # a message every 40 s for 8 minutes: never silent for 60 s
        judge.send(
            LLMCall(call_id=f"c{i}", role="planner", tier="brain", model="m"),
            sender="planner",
            task_id="t2",
        )
        assert settle(judge, 40.0) == []


def test_a_task_that_ends_just_before_a_stop_still_gets_its_tickets_resolved() -> None:
    """The stop is told right after the FinalResult is committed — before the pump has
    woken the Judge: the Judge still judges it and resolves the open ticket."""
    for _ in range(5):
        clock = ManualClock(start=1000.0)
        harness = RoleHarness(Judge, config=CFG, clock=clock)
        try:
            harness.send(TaskRequest(text="t", max_model_calls=10), task_id="t1")
            harness.send(attempt([read("a")] * 3))
            (ticket,) = settle(harness)
            harness.send(FinalResult(task_id="t1", status="abandon"))
            assert harness.bus.flush(10)
            harness.ref.stop(block=True, timeout=5)
            assert harness.bus.flush(10)
            resolved = [
                e.body
                for e in harness.log.read()
                if isinstance(e.body, TicketResolved) and e.sender.startswith("judge")
            ]
            assert [r.ticket_id for r in resolved] == [ticket.ticket_id]
        finally:
            harness.close()


def test_an_acknowledged_ticket_stays_open_until_its_task_ends(judge: RoleHarness) -> None:
    """The Queen's acknowledgement races with the task's end; the Judge's messages must
    not depend on which came first: it resolves the ticket at the end either way."""
    judge.send(attempt([read("a")] * 3))
    (ticket,) = settle(judge)
    judge.send(
        TicketResolved(ticket_id=ticket.ticket_id, resolution="acknowledged", by="queen"),
        sender="queen",
        task_id="t1",
    )
    judge.send(attempt([read("a")] * 2, attempt=2))  # the loop goes on (5 < 6): no new ticket
    assert [t.ticket_id for t in settle(judge)] == [ticket.ticket_id]
    judge.send(FinalResult(task_id="t1", status="abandon"))
    (resolved,) = judge.wait_for(TicketResolved)
    assert (resolved.body.ticket_id, resolved.body.resolution) == (ticket.ticket_id, "task_ended")


def test_an_operator_answer_closes_a_ticket_before_its_task_ends(judge: RoleHarness) -> None:
    judge.send(attempt([read("a")] * 3))
    (ticket,) = settle(judge)
    judge.send(
        TicketResolved(ticket_id=ticket.ticket_id, resolution="continue", by="operator"),
        sender="queen",
        task_id="t1",
    )
    judge.send(FinalResult(task_id="t1", status="abandon"))
    judge.sync()
    assert judge.published(TicketResolved) == []
