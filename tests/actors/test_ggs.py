"""The Goal Gradient Solver's pure logic: D, P, Ω, L, the 24-cell table, quantization, rounds."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import get_args

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from artoo.actors.ggs import (
    ACTION_STATES,
    TERMINAL_STATES,
    GGSParams,
    GGSStep,
    TaskGradient,
    distance,
    implausibility,
    loss,
    macro_state,
    quantize,
    resource_cost,
)
from artoo.schemas import (
    AnyMessage,
    Criterion,
    FinalResult,
    GGSConfig,
    GGSDecision,
    MegramRecorded,
    OutcomeSummary,
    PlanDirective,
    ReplanRequest,
    SubTaskOutcome,
    ToolCall,
    Verdict,
)
from artoo.schemas.messages import MacroState

P = GGSParams()
S = 1000.0  # one second in ms


# --------------------------------------------------------------------------- builders
def v(cid: str, passed: bool, fc: str | None = None, attempt: int = 1) -> Verdict:
    return Verdict(criterion_id=cid, passed=passed, failure_class=fc, attempt=attempt)  # type: ignore[arg-type]


def outcome(
    sid: str,
    verdicts: Sequence[Verdict] = (),
    *,
    status: str | None = None,
    history: Sequence[Verdict] | None = None,
    calls: Sequence[ToolCall] = (),
    fc: str | None = None,
) -> SubTaskOutcome:
    if status is None:
        status = "matched" if all(x.passed for x in verdicts) else "failed"
    return SubTaskOutcome(
        subtask_id=sid,
        status=status,  # type: ignore[arg-type]
        verdicts=list(verdicts),
        history=list(verdicts if history is None else history),
        tool_calls=list(calls),
        failure_class=fc,  # type: ignore[arg-type]
    )


def failing(sid: str, failed: int, total: int, fc: str = "environmental") -> SubTaskOutcome:
    """One subtask with ``total`` verifiable criteria of which ``failed`` failed."""
    verdicts = [v(f"{sid}.c{i}", i >= failed, None if i >= failed else fc) for i in range(total)]
    return outcome(sid, verdicts, fc=fc if failed else None)


def env_failure(sid: str, tool: str, target: str) -> SubTaskOutcome:
    call = ToolCall(tool=tool, target=target, ok=False, error="permission denied")
    return outcome(sid, [v(f"{sid}.c", False, "environmental")], calls=[call], fc="environmental")


def logical_failure(sid: str, *tools: str) -> SubTaskOutcome:
    calls = [ToolCall(tool=t, target=f"/w/{sid}", ok=True) for t in tools]
    return outcome(sid, [v(f"{sid}.c", False, "logical")], calls=calls, fc="logical")


def ids() -> object:
    counter = itertools.count(1)
    return lambda: f"id{next(counter):03d}"


def gradient(**kw: object) -> TaskGradient:
    kw.setdefault("slug", "count-files")
    return TaskGradient("task-1", new_id=ids(), **kw)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- parameters
def test_defaults_are_appendix_b() -> None:
    assert (P.alpha, P.beta, P.lam, P.w1, P.w2) == (0.6, 0.3, 0.4, 0.6, 0.4)
    assert (P.epsilon, P.delta, P.rho, P.theta) == (0.1, 0.3, 0.5, 0.8)
    assert (P.time_budget_ms, P.max_replans, P.law2_rounds) == (300_000, 3, 2)


def test_from_config_copies_every_field() -> None:
    cfg = GGSConfig(alpha=0.5, epsilon=0.05, theta=0.9, max_replans=5, law2_rounds=3)
    params = GGSParams.from_config(cfg)
    assert set(GGSConfig.model_fields) == {f for f in GGSParams.__dataclass_fields__}
    for name in GGSConfig.model_fields:
        assert getattr(params, name) == getattr(cfg, name)
    assert GGSParams.from_config(GGSConfig()) == GGSParams()


@pytest.mark.parametrize(
    "bad", [{"time_budget_ms": 0}, {"max_replans": -1}, {"law2_rounds": 0}, {"epsilon": 0}]
)
def test_params_reject_nonsense(bad: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        GGSParams(**bad)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- Ω and L
@pytest.mark.parametrize(
    ("replans", "elapsed_ms", "expected"),
    [
        (1, 60_000, 0.6 * 1 / 3 + 0.4 * 0.2),  # 0.28, the brief's example
        (0, 0, 0.0),
        (0, 150_000, 0.2),
        (2, 30_000, 0.6 * 2 / 3 + 0.4 * 0.1),
        (3, 300_000, 1.0),
        (0, 600_000, 0.8),  # double the time budget alone reaches θ
        (3, 900_000, 1.0),  # capped
        (-2, -5.0, 0.0),  # negatives count as 0
    ],
)
def test_resource_cost_worked(replans: int, elapsed_ms: float, expected: float) -> None:
    assert resource_cost(replans, elapsed_ms) == pytest.approx(expected)


def test_resource_cost_without_replan_budget() -> None:
    no_replans = GGSParams(max_replans=0)
    assert resource_cost(0, 0, no_replans) == 0.0
    assert resource_cost(0, 30_000, no_replans) == pytest.approx(0.04)
    assert resource_cost(1, 0, no_replans) == pytest.approx(0.6)


@pytest.mark.parametrize(
    ("d", "p", "omega", "expected"),
    [
        (0.0, 0.0, 0.0, 0.0),
        (0.5, 0.5, 0.28, 0.6 * 0.5 + 0.3 * 0.72 * 0.5 + 0.4 * 0.28),  # 0.52
        (1.0, 1.0, 0.0, 0.9),
        (1.0, 1.0, 1.0, 1.0),  # β_eff = 0 once the budget is gone
        (0.0, 1.0, 1.0, 0.4),
        (0.6, 0.0, 0.2, 0.44),
    ],
)
def test_loss_worked(d: float, p: float, omega: float, expected: float) -> None:
    assert loss(d, p, omega) == pytest.approx(expected)


def test_loss_uses_params() -> None:
    params = GGSParams(alpha=1.0, beta=0.0, lam=0.0)
    assert loss(0.37, 0.9, 0.5, params) == pytest.approx(0.37)


unit = st.floats(0.0, 1.0, allow_nan=False)


@given(d1=unit, d2=unit, p=unit, omega=unit)
def test_loss_monotone_in_d(d1: float, d2: float, p: float, omega: float) -> None:
    lo, hi = sorted((d1, d2))
    assert loss(lo, p, omega) <= loss(hi, p, omega)


params_st = st.builds(
    GGSParams,
    w1=unit,
    w2=unit,
    time_budget_ms=st.floats(1.0, 1e7),
    max_replans=st.integers(0, 6),
)


@given(
    replans=st.integers(-3, 50),
    elapsed=st.floats(-1e6, 1e10, allow_nan=False),
    params=params_st,
)
def test_resource_cost_in_unit_interval(replans: int, elapsed: float, params: GGSParams) -> None:
    assert 0.0 <= resource_cost(replans, elapsed, params) <= 1.0


# --------------------------------------------------------------------------- D
def test_distance_weights_and_trajectory() -> None:
    criteria = {
        "c1": Criterion(id="c1", text="exit 0", mode="verifiable", weight=2.0),
        "c2": Criterion(id="c2", text="reads well", mode="plausible", weight=1.0),
        "c3": Criterion(id="c3", text="complete", mode="plausible", weight=1.0),
        "t1": Criterion(id="t1", text="answers", mode="verifiable", weight=1.0),
    }
    history = [
        v("c1", False, attempt=1),
        v("c2", False, attempt=1),
        v("c3", True, attempt=1),
        v("c1", False, attempt=2),
        v("c2", True, attempt=2),
        v("c3", True, attempt=2),
        v("c1", False, attempt=3),
        v("c2", False, attempt=3),
        v("c3", True, attempt=3),
    ]
    final = [h for h in history if h.attempt == 3]
    o = outcome("s1", final, history=history)
    # (2·1 + 1·2/3 + 1·0 + 1·0) / (2 + 1 + 1 + 1)
    expected = (2.0 + 2 / 3) / 5
    assert distance([o], [v("t1", True)], criteria) == pytest.approx(expected)


def test_distance_plausible_failing_every_attempt_counts_fully() -> None:
    criteria = {"c": Criterion(id="c", text="t", mode="plausible")}
    history = [v("c", False, attempt=a) for a in (1, 2, 3)]
    assert distance([outcome("s", history[-1:], history=history)], [], criteria) == 1.0
    # k/N also when the final verdict is missing from the history
    assert distance([outcome("s", [v("c", False, attempt=2)], history=[])], [], criteria) == 1.0
    history = [v("c", True, attempt=1), v("c", False, attempt=2)]
    assert distance([outcome("s", history[-1:], history=history)], [], criteria) == 0.5


def test_distance_unknown_criterion_is_verifiable_weight_one() -> None:
    criteria = {"known": Criterion(id="known", text="t", mode="verifiable", weight=3.0)}
    o = outcome("s", [v("known", True), v("stranger", False)])
    assert distance([o], [], criteria) == pytest.approx(1 / 4)


def test_distance_outcomes_without_verdicts() -> None:
    assert distance([outcome("a", status="matched")], []) == 0.0
    assert distance([outcome("a", status="failed")], []) == 1.0
    assert distance([outcome("a", status="matched"), outcome("b", status="skipped")], []) == 0.5


def test_distance_failed_outcome_with_passing_verdicts_is_not_clean() -> None:
    o = outcome("a", [v("c", True)], status="failed", fc="environmental")
    assert distance([o], []) == 0.5


def test_distance_nothing_delivered_is_one() -> None:
    assert distance([], []) == 1.0


def test_distance_includes_task_verdicts() -> None:
    good = outcome("a", [v("c", True)])
    assert distance([good], []) == 0.0
    assert distance([good], [v("task", False, "logical")]) == 0.5


def test_distance_zero_weights_fall_back_to_unweighted() -> None:
    criteria = {c: Criterion(id=c, text=c, mode="verifiable", weight=0.0) for c in "ab"}
    assert distance([outcome("s", [v("a", False), v("b", True)])], [], criteria) == 0.5


# --------------------------------------------------------------------------- P
def test_implausibility_nothing_failed_is_zero() -> None:
    assert implausibility([outcome("a", [v("c", True)])], [v("t", True)]) == 0.0
    assert implausibility([], []) == 0.0


def test_implausibility_counts_unclassified_half_each_side() -> None:
    o = outcome("a", [v("x", False, "logical"), v("y", False, "environmental"), v("z", False)])
    assert implausibility([o], []) == pytest.approx(1.5 / 3)
    assert implausibility([outcome("a", [v("z", False)])], []) == 0.5
    assert implausibility([], [v("t", False, "logical"), v("u", False)]) == pytest.approx(0.75)


def test_implausibility_falls_back_to_outcome_class() -> None:
    o = outcome("a", [v("x", False), v("y", False)], fc="environmental")
    assert implausibility([o], [v("t", False, "logical")]) == pytest.approx(1 / 3)


def test_implausibility_ignores_unclassified_skips() -> None:
    skipped = outcome("b", status="skipped")
    assert implausibility([logical_failure("a", "shell"), skipped], []) == 1.0
    classified = outcome("b", status="skipped", fc="environmental")
    assert implausibility([logical_failure("a", "shell"), classified], []) == 0.5


verdict_st = st.builds(
    Verdict,
    criterion_id=st.sampled_from(["a", "b", "c", "d"]),
    passed=st.booleans(),
    failure_class=st.sampled_from([None, "logical", "environmental"]),
    attempt=st.integers(1, 3),
)
outcome_st = st.builds(
    SubTaskOutcome,
    subtask_id=st.sampled_from(["s1", "s2", "s3"]),
    status=st.sampled_from(["matched", "failed", "skipped"]),
    verdicts=st.lists(verdict_st, max_size=4),
    history=st.lists(verdict_st, max_size=6),
    failure_class=st.sampled_from([None, "logical", "environmental"]),
)
criteria_st = st.dictionaries(
    st.sampled_from(["a", "b", "c"]),
    st.builds(
        Criterion,
        id=st.just("x"),
        text=st.just("t"),
        mode=st.sampled_from(["verifiable", "plausible"]),
        weight=st.floats(-1.0, 5.0, allow_nan=False),
    ),
)


@given(
    outcomes=st.lists(outcome_st, max_size=4), tv=st.lists(verdict_st, max_size=3), cr=criteria_st
)
def test_distance_and_implausibility_in_unit_interval(
    outcomes: list[SubTaskOutcome], tv: list[Verdict], cr: dict[str, Criterion]
) -> None:
    assert 0.0 <= distance(outcomes, tv, cr) <= 1.0
    assert 0.0 <= implausibility(outcomes, tv) <= 1.0


@given(outcomes=st.lists(outcome_st, min_size=1, max_size=4))
def test_distance_extremes(outcomes: list[SubTaskOutcome]) -> None:
    clean = [
        msgspec.structs.replace(
            o,
            status="matched",
            verdicts=[msgspec.structs.replace(x, passed=True) for x in o.verdicts],
        )
        for o in outcomes
    ]
    assert distance(clean, []) == 0.0
    assert implausibility(clean, []) == 0.0
    broken = [
        msgspec.structs.replace(
            o,
            status="failed",
            verdicts=[msgspec.structs.replace(x, passed=False) for x in o.verdicts],
        )
        for o in outcomes
    ]
    assert distance(broken, []) == 1.0  # unknown criteria are verifiable: each fails fully


# --------------------------------------------------------------------------- the 24 cells
APPENDIX_A = """
1  <-e  <=d <=r <t success
2  <-e  <=d >r  <t success
3  <-e  <=d <=r >=t abandon
4  <-e  <=d >r  >=t abandon
5  <-e  >d  <=r <t refine
6  <-e  >d  >r  <t change_approach
7  <-e  >d  <=r >=t abandon
8  <-e  >d  >r  >=t abandon
9  |e|  <=d <=r <t success
10 |e|  <=d >r  <t success
11 |e|  <=d <=r >=t abandon
12 |e|  <=d >r  >=t abandon
13 |e|  >d  <=r <t change_path
14 |e|  >d  >r  <t break_symmetry
15 |e|  >d  <=r >=t abandon
16 |e|  >d  >r  >=t abandon
17 >e   <=d <=r <t success
18 >e   <=d >r  <t success
19 >e   <=d <=r >=t abandon
20 >e   <=d >r  >=t abandon
21 >e   >d  <=r <t refine
22 >e   >d  >r  <t change_approach
23 >e   >d  <=r >=t abandon
24 >e   >d  >r  >=t abandon
"""
CELLS = [line.split() for line in APPENDIX_A.strip().splitlines()]
TABLE = {tuple(cell[1:5]): cell[5] for cell in CELLS}
GRAD = {"<-e": -0.25, "|e|": 0.03, ">e": 0.25}
D = {"<=d": 0.2, ">d": 0.7}
PV = {"<=r": 0.3, ">r": 0.9}
OMEGA = {"<t": 0.5, ">=t": 0.9}


def test_appendix_a_has_24_distinct_cells() -> None:
    assert len(CELLS) == 24 and len(TABLE) == 24
    assert {c[5] for c in CELLS} == {
        "success", "abandon", "refine", "change_approach", "change_path", "break_symmetry"
    }  # fmt: skip


@pytest.mark.parametrize("cell", CELLS, ids=[f"cell{c[0]}" for c in CELLS])
def test_appendix_a_cell(cell: list[str]) -> None:
    _, g, d, p, o, expected = cell
    assert macro_state(D[d], PV[p], OMEGA[o], GRAD[g]) == expected


@pytest.mark.parametrize(
    ("d", "p", "omega", "grad", "expected"),
    [
        (0.9, 0.9, 0.8, 0.0, "abandon"),  # Ω = θ abandons
        (0.3, 0.9, 0.79, 0.0, "success"),  # D = δ succeeds
        (0.9, 0.5, 0.0, 0.0, "change_path"),  # P = ρ is environmental
        (0.9, 0.5, 0.0, 0.1, "refine"),  # |∇L| = ε is a signal
        (0.9, 0.51, 0.0, -0.1, "change_approach"),
        (0.9, 0.51, 0.0, 0.0999, "break_symmetry"),
    ],
)
def test_boundaries(d: float, p: float, omega: float, grad: float, expected: str) -> None:
    assert macro_state(d, p, omega, grad) == expected


def _table_lookup(d: float, p: float, omega: float, grad: float, params: GGSParams) -> str:
    """Appendix A read as a lookup table (an independent statement of the cascade)."""
    if grad <= -params.epsilon:
        g = "<-e"
    elif grad >= params.epsilon:
        g = ">e"
    else:
        g = "|e|"
    key = (
        g,
        "<=d" if d <= params.delta else ">d",
        "<=r" if p <= params.rho else ">r",
        "<t" if omega < params.theta else ">=t",
    )
    return TABLE[key]


thresholds_st = st.builds(
    GGSParams,
    epsilon=st.floats(0.001, 0.5),
    delta=unit,
    rho=unit,
    theta=st.floats(0.001, 1.0),
)


@given(d=unit, p=unit, omega=unit, grad=st.floats(-1.0, 1.0, allow_nan=False), params=thresholds_st)
def test_macro_state_total_and_matches_table(
    d: float, p: float, omega: float, grad: float, params: GGSParams
) -> None:
    state = macro_state(d, p, omega, grad, params)
    assert state in {
        "abandon",
        "success",
        "break_symmetry",
        "change_approach",
        "change_path",
        "refine",
    }
    assert state == _table_lookup(d, p, omega, grad, params)


# --------------------------------------------------------------------------- quantization
@pytest.mark.parametrize(
    ("state", "expected"),
    [
        ("abandon", (0.95, -1.0, 0.05)),
        ("accept", (0.90, 1.0, 0.05)),
        ("change_approach", (0.85, -1.0, 0.05)),
        ("success", (0.80, 1.0, 0.05)),
        ("break_symmetry", (0.75, 1.0, 0.05)),
        ("change_path", (0.30, 0.0, 0.2)),
        ("refine", (0.10, 0.5, 0.5)),
    ],
)
def test_quantize_table(state: str, expected: tuple[float, float, float]) -> None:
    assert quantize(state) == expected


def test_quantize_covers_every_macro_state_and_nothing_else() -> None:
    assert set(get_args(MacroState)) == ACTION_STATES | TERMINAL_STATES
    for state in get_args(MacroState):
        f, sigma, k = quantize(state)
        assert 0 < f <= 1 and -1 <= sigma <= 1 and k > 0
    for bad in ("", "Accept", "ignore", "success "):
        with pytest.raises(ValueError):
            quantize(bad)


# --------------------------------------------------------------------------- rounds
def replan(round_: int, *outcomes: SubTaskOutcome, tv: Sequence[Verdict] = ()) -> ReplanRequest:
    return ReplanRequest(
        round=round_, outcomes=list(outcomes), task_verdicts=list(tv), merged_output=f"out{round_}"
    )


def test_first_decision_has_zero_replans_and_zero_gradient() -> None:
    g = gradient()
    step = g.step(replan(0, failing("s", 3, 5)), elapsed_ms=10 * S, now=1.0)
    assert step.decision.replans == 0 and step.decision.grad == 0.0
    assert step.decision.omega == pytest.approx(resource_cost(0, 10 * S))
    assert step.directive is not None and step.final is None
    assert step.directive.round == 1
    second = g.step(replan(1, failing("s", 3, 5)), elapsed_ms=20 * S, now=2.0)
    assert second.decision.replans == 1
    assert second.decision.omega == pytest.approx(0.6 / 3 + 0.4 * 20 / 300)


def test_decision_keeps_every_input() -> None:
    g = gradient()
    step = g.step(
        replan(0, failing("s", 2, 4), logical_failure("t", "shell")), elapsed_ms=9 * S, now=1
    )
    dec = step.decision
    assert dec.round == 0 and dec.elapsed_ms == 9 * S
    assert dec.loss == pytest.approx(loss(dec.d, dec.p, dec.omega))
    assert dec.omega == pytest.approx(resource_cost(dec.replans, dec.elapsed_ms))
    assert dec.directive == macro_state(dec.d, dec.p, dec.omega, dec.grad)
    assert dec.blocked_tools == ["shell"] and dec.law2_worsening == 0
    assert dec.rationale


def test_task_verdict_failure_replans_instead_of_success() -> None:
    g = gradient()
    step = g.step(
        replan(0, outcome("s", [v("c", True)]), tv=[v("task", False, "logical")]),
        elapsed_ms=S,
        now=1,
    )
    assert step.decision.d == 0.5 and step.final is None
    assert step.directive is not None and step.directive.failure_class == "logical"


def test_accept_when_everything_passed() -> None:
    g = gradient(environment="laptop")
    msg = OutcomeSummary(round=0, outcomes=[outcome("s", [v("c", True)])], merged_output="42")
    step = g.step(msg, elapsed_ms=5 * S, now=123.0)
    assert step.decision.directive == "accept" and step.directive is None
    final = step.final
    assert final is not None and final.status == "accept" and final.output == "42"
    assert final.task_id == "task-1" and final.replans == 0
    assert final.loss == pytest.approx(step.decision.loss)
    assert "every criterion passed" in final.summary
    [m] = step.megrams
    assert (m.space, m.entity, m.level, m.state) == (
        "intent:count-files",
        "env:laptop",
        "M",
        "accept",
    )
    assert (m.f, m.sigma, m.k) == quantize("accept") and m.created_at == 123.0 and m.id == "id001"
    assert g.finished


def test_success_when_close_enough() -> None:
    g = gradient()
    step = g.step(replan(0, failing("s", 1, 4)), elapsed_ms=5 * S, now=1.0)
    assert step.decision.d == 0.25
    assert step.final is not None and step.final.status == "success"
    assert "D=0.250 ≤ δ=0.3" in step.final.summary
    [m] = step.megrams
    assert m.state == "success" and (m.f, m.sigma, m.k) == quantize("success")


def test_success_after_replans_reports_them() -> None:
    g = gradient()
    g.step(replan(0, failing("s", 4, 4)), elapsed_ms=5 * S, now=1.0)
    step = g.step(replan(1, failing("s", 1, 4)), elapsed_ms=9 * S, now=2.0)
    assert step.final is not None and step.final.status == "success" and step.final.replans == 1
    assert step.decision.urgency == "low"  # loss fell by more than ε


def test_law2_fires_on_two_consecutive_worsening_rounds() -> None:
    # Five verifiable criteria; 2, then 3, then 4 fail (environmental); time passes normally.
    g = gradient()
    first = g.step(replan(0, failing("s", 2, 5)), elapsed_ms=20 * S, now=1.0)
    assert first.decision.directive == "change_path" and first.decision.law2_worsening == 0
    second = g.step(replan(1, failing("s", 3, 5)), elapsed_ms=45 * S, now=2.0)
    assert second.decision.grad > P.epsilon and second.decision.law2_worsening == 1
    assert second.decision.directive == "refine" and second.decision.urgency == "high"
    third = g.step(replan(2, failing("s", 4, 5)), elapsed_ms=70 * S, now=3.0)
    dec = third.decision
    assert dec.grad > P.epsilon and dec.law2_worsening == 2
    # Without Law 2 the cascade would have gone on refining: Ω < θ, D > δ, signal.
    assert dec.omega < P.theta and dec.d > P.delta
    assert macro_state(dec.d, dec.p, dec.omega, dec.grad) == "refine"
    assert dec.directive == "abandon" and "Law 2" in dec.rationale
    assert third.final is not None and third.final.status == "abandon"
    assert "Law 2" in third.final.summary and third.final.replans == 2
    assert third.final.output == "out2"
    [m] = third.megrams
    assert m.space == "intent:count-files" and (m.f, m.sigma, m.k) == quantize("abandon")


def test_law2_counter_resets_on_a_round_that_does_not_worsen() -> None:
    g = gradient(params=GGSParams(max_replans=6))
    g.step(replan(0, failing("s", 2, 5)), elapsed_ms=S, now=1)
    assert g.step(replan(1, failing("s", 3, 5)), elapsed_ms=S, now=2).decision.law2_worsening == 1
    assert g.step(replan(2, failing("s", 2, 5)), elapsed_ms=S, now=3).decision.law2_worsening == 0
    step = g.step(replan(3, failing("s", 4, 5)), elapsed_ms=S, now=4)
    assert step.decision.law2_worsening == 1 and step.final is None


def test_replan_budget_ends_the_task() -> None:
    g = gradient()
    decisions: list[GGSDecision] = []
    for r in range(4):
        step = g.step(replan(r, failing("s", 3, 5)), elapsed_ms=(r + 1) * S, now=float(r))
        decisions.append(step.decision)
    assert [d.replans for d in decisions] == [0, 1, 2, 3]
    assert [d.directive for d in decisions] == ["change_path"] * 3 + ["abandon"]
    assert all(abs(d.grad) < P.epsilon for d in decisions)  # so Law 2 never fired
    assert decisions[-1].omega < P.theta
    assert step.final is not None and step.final.status == "abandon"
    assert "replan budget spent (3 of 3)" in step.final.summary and step.final.replans == 3
    with pytest.raises(RuntimeError):
        g.step(replan(4, failing("s", 3, 5)), elapsed_ms=5 * S, now=5.0)


def test_no_replan_budget_abandons_at_the_first_action_state() -> None:
    g = gradient(params=GGSParams(max_replans=0))
    step = g.step(replan(0, failing("s", 3, 5)), elapsed_ms=S, now=1)
    assert step.final is not None and "replan budget spent (0 of 0)" in step.final.summary


def test_resource_budget_abandons_even_a_clean_round() -> None:
    g = gradient()
    msg = OutcomeSummary(round=0, outcomes=[outcome("s", [v("c", True)])], merged_output="ok")
    step = g.step(msg, elapsed_ms=600 * S, now=1)
    assert step.decision.omega == pytest.approx(0.8)
    assert step.final is not None and step.final.status == "abandon"
    assert "Ω=0.800 ≥ θ=0.8" in step.final.summary and step.final.output == "ok"


def test_blocked_targets_accumulate_and_blocked_tools_are_per_round() -> None:
    g = gradient(params=GGSParams(max_replans=5))
    first = g.step(
        replan(0, env_failure("a", "read_file", "/data/a"), logical_failure("b", "shell", "glob")),
        elapsed_ms=S,
        now=1.0,
    )
    assert first.directive is not None
    assert first.directive.blocked_targets == ["/data/a"]
    assert first.directive.blocked_tools == ["shell", "glob"]
    second = g.step(
        replan(1, env_failure("a", "shell", "/data/b"), env_failure("c", "read_file", "/data/a")),
        elapsed_ms=2 * S,
        now=2.0,
    )
    assert second.directive is not None
    assert second.directive.blocked_targets == ["/data/a", "/data/b"]
    assert second.decision.blocked_targets == ["/data/a", "/data/b"]
    assert second.directive.blocked_tools == [] and second.decision.blocked_tools == []
    assert g.blocked_pairs == [("read_file", "/data/a"), ("shell", "/data/b")]
    # Megrams are written for the targets blocked in this round only, each with its tool.
    assert sorted((m.space, m.entity) for m in second.megrams) == [
        ("tool:read_file", "path:/data/a"),
        ("tool:shell", "path:/data/b"),
    ]


def test_blocked_targets_come_only_from_structured_failed_calls() -> None:
    calls = [
        ToolCall(tool="shell", target="/ok", ok=True),
        ToolCall(tool="shell", target=None, ok=False, error="permission denied: /etc/shadow"),
        ToolCall(tool="read_file", target="/etc/shadow", ok=False, error="EACCES"),
    ]
    env = outcome("a", [v("c", False, "environmental")], calls=calls)
    logical = outcome(
        "b", [v("c", False, "logical")], calls=[ToolCall(tool="glob", target="/x", ok=False)]
    )
    matched = outcome("m", [v("c", True)], calls=[ToolCall(tool="ls", target="/y", ok=False)])
    step = gradient().step(replan(0, env, logical, matched), elapsed_ms=S, now=1)
    assert step.decision.blocked_targets == ["/etc/shadow"]
    assert step.decision.blocked_tools == ["glob"]


ACTION_CASES = [
    (10.0, 0, "change_path"),
    (10.0, 3, "break_symmetry"),
    (1e-6, 0, "refine"),
    (1e-6, 3, "change_approach"),
]


@pytest.mark.parametrize(("epsilon", "logical", "state"), ACTION_CASES)
def test_action_states_write_one_megram_per_blocked_target(
    epsilon: float, logical: int, state: str
) -> None:
    g = gradient(params=GGSParams(epsilon=epsilon))

    def round_(r: int) -> ReplanRequest:
        logicals = [logical_failure(f"l{i}", "shell") for i in range(logical)]
        envs = [
            env_failure("e1", "read_file", f"/r{r}/one"),
            env_failure("e2", "glob", f"/r{r}/two"),
        ]
        return replan(r, *envs, *logicals)

    g.step(round_(0), elapsed_ms=S, now=1.0)
    step = g.step(round_(1), elapsed_ms=2 * S, now=2.0)
    assert step.decision.directive == state
    assert step.directive is not None and step.directive.directive == state
    assert step.directive.failure_class == ("logical" if logical else "environmental")
    assert step.directive.blocked_targets == ["/r0/one", "/r0/two", "/r1/one", "/r1/two"]
    assert [(m.space, m.entity) for m in step.megrams] == [
        ("tool:read_file", "path:/r1/one"),
        ("tool:glob", "path:/r1/two"),
    ]
    for m in step.megrams:
        assert (m.f, m.sigma, m.k) == quantize(state)
        assert m.level == "M" and m.state == state and m.created_at == 2.0
        assert "permission denied" in m.content


def test_criteria_given_to_the_task_shape_d() -> None:
    criteria = [Criterion(id="style", text="reads well", mode="plausible", weight=3.0)]
    history = [v("style", True, attempt=1), v("style", False, "logical", attempt=2)]
    o = outcome("s", history[-1:], history=history, fc="logical")
    assert gradient().step(replan(0, o), elapsed_ms=S, now=1).decision.d == 1.0
    assert gradient(criteria=criteria).step(replan(0, o), elapsed_ms=S, now=1).decision.d == 0.5
    late = gradient()
    late.add_criteria(criteria)
    assert late.step(replan(0, o), elapsed_ms=S, now=1).decision.d == 0.5


def test_messages_are_ordered_and_encodable() -> None:
    g = gradient()
    step = g.step(replan(0, env_failure("a", "shell", "/p")), elapsed_ms=S, now=1.0)
    kinds = [type(m) for m in step.messages()]
    assert kinds == [GGSDecision, MegramRecorded, PlanDirective]
    end = g.step(
        OutcomeSummary(round=1, outcomes=[outcome("a", [v("c", True)])]), elapsed_ms=S, now=2
    )
    assert [type(m) for m in end.messages()] == [GGSDecision, MegramRecorded, FinalResult]
    for m in step.messages() + end.messages():
        assert msgspec.msgpack.decode(msgspec.msgpack.encode(m), type=AnyMessage) == m


rounds_st = st.lists(
    st.tuples(st.lists(outcome_st, max_size=3), st.lists(verdict_st, max_size=2), st.floats(0, 50)),
    min_size=1,
    max_size=8,
)


@settings(max_examples=60)
@given(rounds=rounds_st, max_replans=st.integers(0, 4))
def test_every_task_ends_within_its_replan_budget(
    rounds: list[tuple[list[SubTaskOutcome], list[Verdict], float]], max_replans: int
) -> None:
    g = gradient(params=GGSParams(max_replans=max_replans))
    steps: list[GGSStep] = []
    elapsed = 0.0
    for r in itertools.count():
        outs, tv, dt = rounds[r % len(rounds)]
        elapsed += dt * S
        steps.append(g.step(replan(r, *outs, tv=tv), elapsed_ms=elapsed, now=float(r)))
        if steps[-1].final is not None:
            break
    assert len(steps) <= max_replans + 1
    assert [s.decision.replans for s in steps] == list(range(len(steps)))
    assert sum(s.final is not None for s in steps) == 1
    assert all((s.directive is None) == (s.final is not None) for s in steps)
    for s in steps:
        dec = s.decision
        assert 0 <= dec.d <= 1 and 0 <= dec.p <= 1 and 0 <= dec.omega <= 1
        assert math.isfinite(dec.loss)
        assert all(s_.space.startswith(("tool:", "intent:")) for s_ in s.megrams)
