"""The Goal Gradient Solver's pure logic: D, P, Ω, L, the 24-cell table, quantization."""

from __future__ import annotations

from typing import get_args

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from artoo.actors.roles.ggs import (
    ACTION_STATES,
    TERMINAL_STATES,
    distance,
    implausibility,
    loss,
    macro_state,
    quantize,
    resource_cost,
)
from artoo.schemas import (
    Criterion,
    GGSConfig,
    SubTaskOutcome,
    Verdict,
)
from artoo.schemas.messages import MacroState

from .ggs_builders import logical_failure, outcome, outcome_st, v, verdict_st

P = GGSConfig()


# --------------------------------------------------------------------------- parameters
def test_defaults_are_appendix_b() -> None:
    assert (P.alpha, P.beta, P.lam, P.w1, P.w2) == (0.6, 0.3, 0.4, 0.6, 0.4)
    assert (P.epsilon, P.delta, P.rho, P.theta) == (0.1, 0.3, 0.5, 0.8)
    assert (P.time_budget_ms, P.max_replans, P.law2_rounds) == (300_000, 3, 2)


@pytest.mark.parametrize(
    "bad", [{"time_budget_ms": 0}, {"max_replans": -1}, {"law2_rounds": 0}, {"epsilon": 0}]
)
def test_params_reject_nonsense(bad: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        GGSConfig(**bad)


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
    no_replans = GGSConfig(max_replans=0)
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
    params = GGSConfig(alpha=1.0, beta=0.0, lam=0.0)
    assert loss(0.37, 0.9, 0.5, params) == pytest.approx(0.37)


unit = st.floats(0.0, 1.0, allow_nan=False)


@given(d1=unit, d2=unit, p=unit, omega=unit)
def test_loss_monotone_in_d(d1: float, d2: float, p: float, omega: float) -> None:
    lo, hi = sorted((d1, d2))
    assert loss(lo, p, omega) <= loss(hi, p, omega)


params_st = st.builds(
    GGSConfig,
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
def test_resource_cost_in_unit_interval(replans: int, elapsed: float, params: GGSConfig) -> None:
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


def _table_lookup(d: float, p: float, omega: float, grad: float, params: GGSConfig) -> str:
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
    GGSConfig,
    epsilon=st.floats(0.001, 0.5),
    delta=unit,
    rho=unit,
    theta=st.floats(0.001, 1.0),
)


@given(d=unit, p=unit, omega=unit, grad=st.floats(-1.0, 1.0, allow_nan=False), params=thresholds_st)
def test_macro_state_total_and_matches_table(
    d: float, p: float, omega: float, grad: float, params: GGSConfig
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
