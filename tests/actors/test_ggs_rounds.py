"""The GGS over rounds: TaskGradient decisions, Law 2, the replan budget, MUST NOT sets."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from artoo.actors.roles.ggs import (
    GGSStep,
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

from .ggs_builders import (
    S,
    env_failure,
    failing,
    gradient,
    logical_failure,
    outcome,
    outcome_st,
    reading,
    v,
    verdict_st,
)

P = GGSConfig()


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
    calls = [
        ToolCall(tool="read_file", target="/w/t", ok=True),  # worked: not blocked
        ToolCall(tool="shell", target="/w/t", ok=True, exit_code=1),  # exited non-zero
    ]
    failed = outcome("t", [v("t.c", False, "logical")], calls=calls, fc="logical")
    step = g.step(replan(0, failing("s", 2, 4), failed), elapsed_ms=9 * S, now=1)
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
    g = gradient(params=GGSConfig(max_replans=6))
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
    g = gradient(params=GGSConfig(max_replans=0))
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
    g = gradient(params=GGSConfig(max_replans=5))
    # after a logical failure only the tools whose calls failed are blocked: a refused shell
    # call and a glob that did not work are; read_file, whose call worked, is not (the
    # answer drawn from it failed, not the tool) — nor is write_file in an outcome whose
    # every call worked
    calls = [
        ToolCall(tool="read_file", target="/w/b", ok=True),
        ToolCall(tool="shell", ok=False, error="denied", refusal="law1_denied"),
        ToolCall(tool="glob", target="/w/b", ok=False, error="bad pattern"),
    ]
    failed = outcome("b", [v("b.c", False, "logical")], calls=calls, fc="logical")
    first = g.step(
        replan(
            0,
            env_failure("a", "read_file", "/data/a"),
            failed,
            logical_failure("w", "write_file"),
        ),
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
    assert g.blocked_tool_targets == [("read_file", "/data/a"), ("shell", "/data/b")]
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
    g = gradient(params=GGSConfig(epsilon=epsilon))

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
    g = gradient(params=GGSConfig(max_replans=max_replans))
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


def test_a_path_the_request_changes_is_never_a_blocked_target() -> None:
    # a failure on the file the reading writes that no one denied: the path stays open
    request = "append the line 'TODO: call Bob' to notes/todo.txt"
    failures = (
        env_failure("a", "write_file", "notes/todo.txt"),
        env_failure("b", "shell", "x.txt"),
    )
    kept = gradient(spec=reading(request, "change", targets=[("notes/todo.txt", "write")]))
    step = kept.step(replan(0, *failures), elapsed_ms=S, now=1.0)
    assert step.directive is not None and step.directive.blocked_targets == ["x.txt"]
    assert [m.entity for m in step.megrams] == ["path:x.txt"]
    # a path the reading only reads (a question naming it), or no reading: blocked
    question = "how many lines does notes/todo.txt have?"
    for g in (
        gradient(spec=reading(question, "question", "number", [("notes/todo.txt", "read")])),
        gradient(),
    ):
        step = g.step(replan(0, *failures), elapsed_ms=S, now=1.0)
        assert step.directive is not None
        assert step.directive.blocked_targets == ["notes/todo.txt", "x.txt"]


def test_a_denied_path_stays_blocked_even_when_the_request_names_it() -> None:
    # no later plan works around the operator's no ("the only way found … was denied")
    request = "delete the old log archive/old.log"
    call = ToolCall(tool="shell", target="archive/old.log", ok=False, refusal="law1_denied")
    denied = outcome("a", [v("a.c", False, "environmental")], calls=[call], fc="environmental")
    g = gradient(spec=reading(request, "change", targets=[("archive/old.log", "delete")]))
    step = g.step(replan(0, denied), elapsed_ms=S, now=1.0)
    assert step.directive is not None and step.directive.blocked_targets == ["archive/old.log"]


def _close_enough(policy: int, replans: int = 0) -> GGSStep:
    """One round of a change's reading with one of five criteria failed (D = 0.2 ≤ δ)."""
    spec = reading("set max-complexity to 25 in .flake8", "change", "", [(".flake8", "write")])
    g = gradient(spec=spec, policy=policy)
    g.replans = replans
    return g.step(replan(0, failing("a", 1, 5, "logical")), elapsed_ms=S, now=1.0)


def test_close_enough_with_a_criterion_failed_is_refined_never_success() -> None:
    # a planned round's subtasks passed on "completed" while the task's own check failed,
    # and D = 0.2 ≤ δ ended the task success with established "none" (bench, issue 40)
    step = _close_enough(policy=2)
    assert step.final is None and step.directive is not None
    assert step.directive.directive == "refine" and step.decision.directive == "refine"
    assert "never success" in step.decision.rationale
    spent = _close_enough(policy=2, replans=GGSConfig().max_replans)
    assert spent.final is not None
    assert (spent.final.status, spent.final.reason) == ("abandon", "replan_budget")
    assert spent.final.established == "none"


def test_a_policy_1_log_ends_close_enough_as_it_recorded() -> None:
    # the paper's cell (D ≤ δ: success) is what a policy-1 task decided; replay keeps it
    step = _close_enough(policy=1)
    assert step.final is not None
    assert (step.final.status, step.final.established) == ("success", "none")


@settings(max_examples=150, deadline=None)
@given(outcomes=st.lists(outcome_st, min_size=1, max_size=3), tv=st.lists(verdict_st, max_size=3))
def test_under_policy_2_no_task_ends_success_or_accept_unless_its_criteria_all_passed(
    outcomes: list[SubTaskOutcome], tv: list[Verdict]
) -> None:
    spec = reading("how many lines does a.txt have?", "question", "number", [("a.txt", "read")])
    g = gradient(spec=spec)
    for round_ in range(GGSConfig().max_replans + 2):
        step = g.step(replan(round_, *outcomes, tv=tv), elapsed_ms=S, now=1.0 + round_)
        if step.final is not None:
            break
    assert step.final is not None
    if step.final.status in ("accept", "success"):
        assert step.final.established != "none"
