"""The Auditor's pure logic: the drift rule, convergence detection and the window fold."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from artoo.actors.roles.auditor import (
    AuditFold,
    drift_limit,
    is_drift,
    loss_stall,
    median,
    p95,
    recompute_reports,
)
from artoo.actors.roles.roster import CONTRACTS, ROSTER
from artoo.actors.runtime.runner import contracts_from
from artoo.schemas import (
    AuditConfig,
    CorrectionSignal,
    Envelope,
    ExecutionResult,
    FinalResult,
    GGSDecision,
    LLMCall,
    MemoryQuery,
    SubTask,
    TaskSpec,
    ToolCall,
    UserRequest,
)

values = st.floats(min_value=0, max_value=1e6, allow_nan=False)
histories = st.lists(values, min_size=0, max_size=40)
RULE = {"k": 3.0, "floor": 0.05, "min_windows": 5}


# --------------------------------------------------------------------------- drift rule
@given(histories)
def test_a_value_at_or_below_the_median_is_never_drift(history: list[float]) -> None:
    if history:
        assert not is_drift(history, median(history), **RULE)
        assert not is_drift(history, min(history), **RULE)


@given(st.lists(values, max_size=4), values)
def test_no_drift_is_judged_without_enough_history(history: list[float], value: float) -> None:
    assert not is_drift(history, value, **RULE)
    assert drift_limit(history, **RULE) is None


@given(st.lists(values, min_size=5, max_size=40), values, values)
def test_drift_is_monotone_in_the_value(history: list[float], a: float, b: float) -> None:
    low, high = sorted((a, b))
    if is_drift(history, low, **RULE):
        assert is_drift(history, high, **RULE)


@given(
    st.lists(st.integers(0, 10_000), min_size=5, max_size=40),
    st.integers(0, 20_000),
    st.integers(-5_000, 5_000),
)
def test_drift_does_not_depend_on_where_the_history_sits(
    history: list[int], value: int, shift: int
) -> None:
    rule = {"k": 3.0, "floor": 1.0, "min_windows": 5}
    plain = is_drift([float(x) for x in history], float(value), **rule)
    moved = is_drift([float(x + shift) for x in history], float(value + shift), **rule)
    assert plain == moved


@given(st.lists(values, min_size=5, max_size=40), values)
def test_one_outlier_in_the_history_cannot_hide_a_jump(history: list[float], extra: float) -> None:
    """Robustness: the limit moves by at most one rank when one window is an outlier."""
    base = drift_limit(history, **RULE)
    assert base is not None
    huge = max(history) * 10 + 1e6
    with_outlier = drift_limit([*history, huge], **RULE)
    assert with_outlier is not None
    # a mean/stddev rule would let the outlier raise the limit by ~huge/len; MAD does not
    spread = max(history) - min(history)
    assert with_outlier[0] <= base[0] + 3.0 * max(spread, 0.05) + spread + 1e-6


def test_a_steady_role_that_doubles_its_tokens_drifts() -> None:
    history = [100.0, 104.0, 98.0, 101.0, 99.0, 102.0]
    assert not is_drift(history, 110.0, k=3.0, floor=20.0, min_windows=5)
    assert is_drift(history, 200.0, k=3.0, floor=20.0, min_windows=5)


def test_percentile_and_median() -> None:
    assert p95(list(range(1, 101))) == 95
    assert p95([7.0]) == 7.0
    assert median([3.0, 1.0, 2.0, 10.0]) == 2.5


# --------------------------------------------------------------------------- convergence
@given(st.lists(st.floats(0, 10, allow_nan=False), min_size=0, max_size=30))
def test_a_stall_is_found_at_the_first_moment_it_exists(losses: list[float]) -> None:
    at = loss_stall(losses)
    if at is None:
        assert all(loss_stall(losses[:n]) is None for n in range(len(losses) + 1))
    else:
        assert loss_stall(losses[:at]) is None
        assert loss_stall(losses[: at + 1]) == at
        assert losses[at] >= losses[at - 1] >= losses[at - 2]


@given(st.lists(st.floats(0, 10, allow_nan=False), min_size=0, max_size=30, unique=True))
def test_a_strictly_improving_task_never_stalls(losses: list[float]) -> None:
    assert loss_stall(sorted(losses, reverse=True)) is None


@given(st.lists(st.floats(0, 10, allow_nan=False), min_size=3, max_size=30))
def test_a_task_that_never_improves_stalls_at_its_third_round(losses: list[float]) -> None:
    assert loss_stall(sorted(losses)) == 2


def test_one_improvement_between_two_worsenings_is_not_a_stall() -> None:
    assert loss_stall([0.5, 0.6, 0.4, 0.7]) is None
    assert loss_stall([0.5, 0.6, 0.6]) == 2


# --------------------------------------------------------------------------- the fold
class Log:
    """Envelopes with consecutive seqs at given times."""

    def __init__(self) -> None:
        self.envelopes: list[Envelope] = []

    def add(self, body: object, *, sender: str, ts: float, task: str | None = "t1") -> Envelope:
        env = Envelope(len(self.envelopes) + 1, ts, task, sender, None, None, body)
        self.envelopes.append(env)
        return env


def decision(round_: int, loss: float) -> GGSDecision:
    return GGSDecision(
        round=round_, d=0.5, p=0.0, omega=0.1, loss=loss, grad=0.0, directive="refine"
    )


def test_the_boundary_table_comes_from_the_roster() -> None:
    assert CONTRACTS == contracts_from(ROSTER)
    assert CONTRACTS.check("executor/pair-3", "ExecutionResult") is None
    assert CONTRACTS.check("executor/pair-3", "MemoryQuery") == "effector_memory_query"
    assert CONTRACTS.check("agent_validator/pair-0", "MemoryQuery") == "effector_memory_query"
    assert CONTRACTS.check("planner", "MemoryQuery") is None
    assert CONTRACTS.check("perceiver", "FinalResult") == "outside_contract"
    assert CONTRACTS.check("mallory", "TaskSpec") == "unknown_sender"
    assert CONTRACTS.check("queen", "RoleFailed") is None  # any role may report its crash
    assert CONTRACTS.check("auditor", "TaskSpec") == "outside_contract"  # publishes nothing


def test_boundary_violations_are_reported_with_their_rule() -> None:
    log = Log()
    log.add(UserRequest(text="x"), sender="host", ts=10)
    log.add(MemoryQuery(space="a", entity="b"), sender="executor/pair-0", ts=11)
    log.add(FinalResult(task_id="t1", status="accept"), sender="perceiver", ts=12)
    log.add(TaskSpec(text="x", intent="i", slug="s"), sender="mallory", ts=13)
    log.add(SubTask(subtask_id="s1"), sender="dispatcher", ts=14)
    (report,) = recompute_reports(log.envelopes, CONTRACTS, until=300)
    assert [(v.seq, v.sender, v.kind, v.rule) for v in report.boundary_violations] == [
        (2, "executor/pair-0", "MemoryQuery", "effector_memory_query"),
        (3, "perceiver", "FinalResult", "outside_contract"),
        (4, "mallory", "TaskSpec", "unknown_sender"),
    ]
    assert report.tasks_started == 1 and report.tasks_ended == {"accept": 1}


def test_convergence_failures_loss_law2_and_replan_budget() -> None:
    log = Log()
    for r, loss in enumerate([0.5, 0.6, 0.7, 0.8]):
        log.add(decision(r, loss), sender="ggs", ts=10 + r)
    log.add(FinalResult(task_id="t1", status="abandon", reason="law2"), sender="ggs", ts=20)
    log.add(decision(0, 0.9), sender="ggs", ts=21, task="t2")
    log.add(decision(1, 0.3), sender="ggs", ts=22, task="t2")
    log.add(
        FinalResult(task_id="t2", status="abandon", reason="replan_budget"),
        sender="ggs",
        ts=23,
        task="t2",
    )
    (report,) = recompute_reports(log.envelopes, CONTRACTS, until=300)
    rules = [(c.task_id, c.rule, c.seqs) for c in report.convergence_failures]
    assert rules == [
        ("t1", "loss_not_improving", [1, 2, 3]),  # once per task, at the first stall
        ("t1", "law2", [1, 2, 3, 4, 5]),
        ("t2", "replan_budget", [6, 7, 8]),
    ]
    assert [g.losses for g in report.gap_trend] == [[0.5, 0.6, 0.7, 0.8], [0.9, 0.3]]


def test_windows_close_on_event_time_and_carry_role_history_into_drift() -> None:
    config = AuditConfig(window_s=100.0, drift_min_windows=3)
    log = Log()
    usage = {"prompt_tokens": 90, "completion_tokens": 10}
    for window in range(4):  # four steady windows, then a window of huge calls
        log.add(
            LLMCall(call_id=f"c{window}", role="planner", tier="brain", model="m", usage=usage),
            sender="planner",
            ts=window * 100 + 5,
        )
    big = {"prompt_tokens": 900, "completion_tokens": 100}
    log.add(
        LLMCall(call_id="c9", role="planner", tier="brain", model="m", usage=big),
        sender="planner",
        ts=405,
    )
    reports = recompute_reports(log.envelopes, CONTRACTS, config, until=500)
    assert [(r.window_start, r.first_seq, r.last_seq) for r in reports] == [
        (0, 1, 1),
        (100, 2, 2),
        (200, 3, 3),
        (300, 4, 4),
        (400, 5, 5),
    ]
    assert all(not r.drift for r in reports[:4])
    (alert,) = reports[4].drift
    assert (alert.role, alert.metric, alert.value, alert.median) == (
        "planner",
        "tokens_per_call",
        1000.0,
        100.0,
    )


def test_anomalies_come_from_structured_fields() -> None:
    log = Log()
    log.add(
        LLMCall(call_id="c", role="executor", tier="tool", model="m", error="boom"),
        sender="executor",
        ts=1,
    )
    calls = [
        ToolCall(tool="shell", ok=False, error="exit 1"),
        ToolCall(tool="shell", ok=False, refusal="law1_denied"),
        ToolCall(tool="read_file", ok=True),
    ]
    log.add(
        ExecutionResult(subtask_id="s", attempt=2, ok=False, tool_calls=calls),
        sender="executor/pair-0",
        ts=2,
    )
    (report,) = recompute_reports(log.envelopes, CONTRACTS, until=300)
    assert [(a.kind, a.seq) for a in report.anomalies] == [("model_error", 1), ("tool_error", 2)]
    (executor,) = report.roles
    assert (executor.failure_rate, executor.retries_per_subtask, executor.model_errors) == (
        1.0,
        1.0,
        1,
    )


def test_a_correction_is_counted_and_an_ask_for_a_second_derivation_is_not() -> None:
    log = Log()
    log.add(CorrectionSignal(subtask_id="s", feedback="wrong"), sender="agent_validator", ts=1)
    log.add(
        CorrectionSignal(subtask_id="s", attempt=2, corroborate="7"),
        sender="agent_validator",
        ts=2,
    )
    (report,) = recompute_reports(log.envelopes, CONTRACTS, until=300)
    assert report.corrections == 1


def test_the_fold_takes_seqs_in_order_only() -> None:
    fold = AuditFold(CONTRACTS)
    log = Log()
    log.add(UserRequest(text="x"), sender="host", ts=1)
    log.add(UserRequest(text="y"), sender="host", ts=2)
    with pytest.raises(ValueError, match="expects seq 1"):
        fold.feed(log.envelopes[1])


def test_event_time_never_runs_backwards() -> None:
    """A wall clock stepping back does not reopen a closed window."""
    log = Log()
    log.add(UserRequest(text="x"), sender="host", ts=350)
    log.add(UserRequest(text="y"), sender="host", ts=250)  # clock stepped back
    reports = recompute_reports(log.envelopes, CONTRACTS, until=600)
    assert [(r.window_start, r.envelopes) for r in reports] == [(300, 2)]
