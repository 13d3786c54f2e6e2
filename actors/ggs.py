"""R7 — Goal Gradient Solver (GGS): the controller of the medium loop.

Responsibilities
    Turn one round's fan-in into one decision. Compute the loss
    ``L = α·D + β·(1−Ω)·P + λ·Ω`` from the intent-result distance D, the process
    implausibility P and the resource cost Ω (paper §5.1); its gradient
    ``∇L = L − L_prev`` (§5.2); pick one of six macro-states by the priority cascade of
    §5.3 (Appendix A); enforce the Law 2 kill-switch (§5.5) and the replan budget
    (DESIGN §4.2); accumulate the MUST NOT sets — blocked tools (logical failures, this
    round) and blocked targets (environmental failures, all rounds), taken from
    structured ToolCall records (DESIGN §4.1); and write the round's experience to
    memory as Megrams quantized by the matrix of §6.3 (§5.6).

Input contract (consumes)
    ``ReplanRequest`` — the Meta-Validator's fan-in when something failed.
    ``OutcomeSummary`` — the Meta-Validator's fan-in when everything passed.

Output contract (publishes)
    ``GGSDecision`` — every decision, with all of its inputs (for replay ``--verify``).
    ``PlanDirective`` — on an action state (refine, change_path, change_approach,
    break_symmetry): the directive, MUST NOT sets, urgency and failure class.
    ``FinalResult`` — on a terminal state (accept, success, abandon): exactly one per task.
    ``MegramRecorded`` — one per blocked target of the round (action states) or one per
    task (terminal states); GGS is the only writer to memory.

Constraints
    Does NOT call a model, plan, execute tools or validate results. Does NOT read memory
    and never waits on memory I/O (writes are fire-and-forget messages). Does NOT parse
    display strings for targets. Does NOT import another role module.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar, Literal

import msgspec

from artoo.actors.clock import new_id
from artoo.schemas import (
    ConfirmationDecision,
    ConfirmationRequest,
    Cost,
    Criterion,
    DispatchManifest,
    Envelope,
    FinalResult,
    GGSConfig,
    GGSDecision,
    LLMCall,
    Megram,
    MegramRecorded,
    Message,
    OutcomeSummary,
    PlanDirective,
    ReplanRequest,
    RoleFailed,
    SubTaskOutcome,
    TaskCancelled,
    TaskRequest,
    TaskSpec,
    ToolCall,
    Verdict,
)
from artoo.schemas.messages import FailureClass, FinalStatus, MacroState

from .base import Role

__all__ = [
    "ACTION_STATES",
    "TERMINAL_STATES",
    "GGSParams",
    "GGSStep",
    "TaskGradient",
    "distance",
    "implausibility",
    "loss",
    "macro_state",
    "quantize",
    "resource_cost",
]

ACTION_STATES: frozenset[str] = frozenset(
    {"refine", "change_path", "change_approach", "break_symmetry"}
)
"""Macro-states that send a PlanDirective back to the Planner."""

TERMINAL_STATES: frozenset[str] = frozenset({"accept", "success", "abandon"})
"""Macro-states that end the task with a FinalResult."""

Urgency = Literal["low", "normal", "high"]


# --------------------------------------------------------------------------- parameters
@dataclass(frozen=True, slots=True)
class GGSParams:
    """The loss hyperparameters (paper, Appendix B, v0.8 defaults)."""

    alpha: float = 0.6
    beta: float = 0.3
    lam: float = 0.4
    w1: float = 0.6
    w2: float = 0.4
    epsilon: float = 0.1
    delta: float = 0.3
    rho: float = 0.5
    theta: float = 0.8
    time_budget_ms: float = 300_000.0
    max_replans: int = 3
    law2_rounds: int = 2

    def __post_init__(self) -> None:
        if self.time_budget_ms <= 0:
            raise ValueError("time_budget_ms must be > 0")
        if self.max_replans < 0:
            raise ValueError("max_replans must be >= 0")
        if self.law2_rounds < 1:
            raise ValueError("law2_rounds must be >= 1")
        if self.epsilon <= 0:
            raise ValueError("epsilon must be > 0")

    @classmethod
    def from_config(cls, cfg: GGSConfig) -> GGSParams:
        """The parameters of a validated :class:`artoo.schemas.GGSConfig`."""
        return cls(
            alpha=cfg.alpha,
            beta=cfg.beta,
            lam=cfg.lam,
            w1=cfg.w1,
            w2=cfg.w2,
            epsilon=cfg.epsilon,
            delta=cfg.delta,
            rho=cfg.rho,
            theta=cfg.theta,
            time_budget_ms=cfg.time_budget_ms,
            max_replans=cfg.max_replans,
            law2_rounds=cfg.law2_rounds,
        )


_DEFAULTS = GGSParams()


# --------------------------------------------------------------------------- D and P
@dataclass(frozen=True, slots=True)
class _Unit:
    """One criterion as the loss sees it: its weight, failure share and failure class."""

    weight: float
    fail: float
    failed: bool
    failure_class: FailureClass | None
    process: bool  # counts towards P (a skipped subtask is a consequence, not evidence)


def _trajectory(verdict: Verdict, history: Iterable[Verdict]) -> float:
    """k/N of a failed criterion: attempts that failed it over attempts that judged it."""
    failed_by_attempt = {
        v.attempt: not v.passed for v in history if v.criterion_id == verdict.criterion_id
    }
    failed_by_attempt[verdict.attempt] = not verdict.passed
    return sum(failed_by_attempt.values()) / len(failed_by_attempt)


def _verdict_unit(
    verdict: Verdict,
    history: Iterable[Verdict],
    criteria: Mapping[str, Criterion],
    fallback_class: FailureClass | None,
) -> _Unit:
    criterion = criteria.get(verdict.criterion_id)
    weight = max(criterion.weight, 0.0) if criterion is not None else 1.0
    plausible = criterion is not None and criterion.mode == "plausible"
    if verdict.passed:
        fail = 0.0
    elif plausible:
        fail = _trajectory(verdict, history)
    else:
        fail = 1.0
    return _Unit(
        weight=weight,
        fail=fail,
        failed=not verdict.passed,
        failure_class=verdict.failure_class or fallback_class,
        process=True,
    )


def _outcome_units(outcome: SubTaskOutcome, criteria: Mapping[str, Criterion]) -> list[_Unit]:
    units = [
        _verdict_unit(v, outcome.history, criteria, outcome.failure_class) for v in outcome.verdicts
    ]
    if outcome.status != "matched" and not any(u.failed for u in units):
        # No verdicts, or a failed/skipped outcome whose verdicts all passed: the outcome
        # itself is one failed criterion, so a failure can never read as "accept".
        units.append(
            _Unit(
                weight=1.0,
                fail=1.0,
                failed=True,
                failure_class=outcome.failure_class,
                process=outcome.status == "failed" or outcome.failure_class is not None,
            )
        )
    elif not units:
        units.append(_Unit(weight=1.0, fail=0.0, failed=False, failure_class=None, process=True))
    return units


def _units(
    outcomes: Sequence[SubTaskOutcome],
    task_verdicts: Sequence[Verdict],
    criteria: Mapping[str, Criterion] | None,
) -> list[_Unit]:
    known = criteria or {}
    units = [u for o in outcomes for u in _outcome_units(o, known)]
    units += [_verdict_unit(v, task_verdicts, known, None) for v in task_verdicts]
    return units


def _clamp01(x: float) -> float:
    return min(1.0, max(0.0, x))


def _distance_of(units: Sequence[_Unit]) -> float:
    if not units:
        return 1.0
    total = sum(u.weight for u in units)
    if total <= 0:  # every weight is zero: fall back to the unweighted share
        return _clamp01(sum(u.fail for u in units) / len(units))
    return _clamp01(sum(u.weight * u.fail for u in units) / total)


def _implausibility_of(units: Sequence[_Unit]) -> float:
    logical = environmental = 0.0
    for u in units:
        if not (u.failed and u.process):
            continue
        if u.failure_class == "logical":
            logical += 1.0
        elif u.failure_class == "environmental":
            environmental += 1.0
        else:
            logical += 0.5
            environmental += 0.5
    total = logical + environmental
    return logical / total if total > 0 else 0.0


def distance(
    outcomes: Sequence[SubTaskOutcome],
    task_verdicts: Sequence[Verdict],
    criteria: Mapping[str, Criterion] | None = None,
) -> float:
    """Intent-result distance D ∈ [0, 1] (paper §5.1, DESIGN §4.4): ``Σ wᵢ·failᵢ / Σ wᵢ``.

    The criteria are every outcome's final ``verdicts`` plus the Meta-Validator's
    ``task_verdicts``. A failed verifiable criterion contributes 1.0; a failed plausible
    one contributes k/N — the attempts that failed it over the attempts that judged it
    (from the outcome's ``history`` and the final verdict). ``criteria`` maps criterion
    id to its :class:`Criterion` (mode and weight); an unknown id counts as verifiable
    with weight 1, a negative weight as 0. An outcome without verdicts is one criterion
    of weight 1, failed when the outcome failed or was skipped; a failed or skipped
    outcome whose verdicts all passed adds such a failed criterion. No outcomes and no
    task verdicts at all give 1.0 (nothing was delivered).
    """
    return _distance_of(_units(outcomes, task_verdicts, criteria))


def implausibility(
    outcomes: Sequence[SubTaskOutcome],
    task_verdicts: Sequence[Verdict],
) -> float:
    """Process implausibility P ∈ [0, 1] (paper §5.1): logical / (logical + environmental).

    Counts the failed final verdicts of the outcomes and the failed task verdicts, each
    classified by its own ``failure_class`` or else by its outcome's. An unclassified
    failure counts half to each side. A failed outcome without a failed verdict counts
    once with the outcome's class; a skipped one only if it carries a class (a skip is a
    consequence of another failure, not evidence about the approach). 0 when nothing failed.
    """
    return _implausibility_of(_units(outcomes, task_verdicts, None))


# --------------------------------------------------------------------------- Ω, L, state
def resource_cost(replans: int, elapsed_ms: float, params: GGSParams = _DEFAULTS) -> float:
    """Resource cost Ω ∈ [0, 1] (paper §5.1): ``w1·replans/max_replans + w2·elapsed/budget``.

    ``replans`` is the number of replans already done (0 at the first decision). The sum
    is clamped to [0, 1]; negative inputs count as 0. With ``max_replans == 0`` (no
    replanning allowed) the replan share is 0 while no replan was done and 1 after, so a
    disabled replan budget never forces "abandon" through Ω by itself — the budget rule
    of :class:`TaskGradient` ends such a task instead.
    """
    done = max(replans, 0)
    if params.max_replans > 0:
        replan_share = done / params.max_replans
    else:
        replan_share = 0.0 if done == 0 else 1.0
    time_share = max(elapsed_ms, 0.0) / params.time_budget_ms
    return _clamp01(params.w1 * replan_share + params.w2 * time_share)


def loss(d: float, p: float, omega: float, params: GGSParams = _DEFAULTS) -> float:
    """The loss ``L = α·D + β·(1−Ω)·P + λ·Ω`` (paper §5.1; β_eff = β·(1−Ω))."""
    return params.alpha * d + params.beta * (1.0 - omega) * p + params.lam * omega


def macro_state(
    d: float, p: float, omega: float, grad: float, params: GGSParams = _DEFAULTS
) -> MacroState:
    """The diagnostic cascade of paper §5.3 (complete over Appendix A's 24 cells).

    Ω ≥ θ → ``abandon``; else D ≤ δ → ``success``; else by ``|∇L| < ε`` (no signal) and
    ``P > ρ`` (logical): ``break_symmetry`` (no signal, logical), ``change_path`` (no
    signal, environmental), ``change_approach`` (signal, logical), ``refine`` (signal,
    environmental). The ``accept`` refinement of ``success`` is made by the caller.
    """
    if omega >= params.theta:
        return "abandon"
    if d <= params.delta:
        return "success"
    logical = p > params.rho
    if abs(grad) < params.epsilon:
        return "break_symmetry" if logical else "change_path"
    return "change_approach" if logical else "refine"


_QUANTIZATION: dict[str, tuple[float, float, float]] = {
    "abandon": (0.95, -1.0, 0.05),
    "accept": (0.90, 1.0, 0.05),
    "change_approach": (0.85, -1.0, 0.05),
    "success": (0.80, 1.0, 0.05),
    "break_symmetry": (0.75, 1.0, 0.05),
    "change_path": (0.30, 0.0, 0.2),
    "refine": (0.10, 0.5, 0.5),
}


def quantize(state: str) -> tuple[float, float, float]:
    """The Megram parameters ``(f, σ, k)`` of a macro-state (paper §6.3).

    Raises ``ValueError`` for a state outside the matrix.
    """
    try:
        return _QUANTIZATION[state]
    except KeyError:
        raise ValueError(f"unknown macro-state {state!r}") from None


def _urgency(grad: float, params: GGSParams) -> Urgency:
    if grad > params.epsilon:
        return "high"
    if grad < -params.epsilon:
        return "low"
    return "normal"


# --------------------------------------------------------------------------- blocked sets
def _classes(outcome: SubTaskOutcome) -> set[str]:
    found = {v.failure_class for v in outcome.verdicts if not v.passed and v.failure_class}
    if outcome.failure_class:
        found.add(outcome.failure_class)
    return found


def _blocked_calls(outcomes: Iterable[SubTaskOutcome]) -> list[tuple[str, str, ToolCall]]:
    """``(tool, target, call)`` of failed calls with a structured target, in environmentally
    failed outcomes (first-failure order, one per pair)."""
    calls: dict[tuple[str, str], ToolCall] = {}
    for outcome in outcomes:
        if outcome.status != "failed" or "environmental" not in _classes(outcome):
            continue
        for call in outcome.tool_calls:
            if not call.ok and call.target:
                calls.setdefault((call.tool, call.target), call)
    return [(tool, target, call) for (tool, target), call in calls.items()]


def _blocked_tools(outcomes: Iterable[SubTaskOutcome]) -> list[str]:
    """Tools used in logically failed outcomes (first-use order, no duplicates)."""
    tools: dict[str, None] = {}
    for outcome in outcomes:
        if outcome.status == "failed" and "logical" in _classes(outcome):
            tools.update((call.tool, None) for call in outcome.tool_calls)
    return list(tools)


# --------------------------------------------------------------------------- the task
@dataclass(frozen=True, slots=True)
class GGSStep:
    """What one decision produces: the decision, then a directive or a final result."""

    decision: GGSDecision
    directive: PlanDirective | None
    final: FinalResult | None
    megrams: list[Megram] = field(default_factory=list)

    def messages(self) -> list[Message]:
        """Everything to publish, in order: decision, Megram writes, directive or result."""
        out: list[Message] = [self.decision]
        out += [MegramRecorded(megram=m) for m in self.megrams]
        if self.directive is not None:
            out.append(self.directive)
        if self.final is not None:
            out.append(self.final)
        return out


_WHITESPACE = re.compile(r"\s+")


def _one_line(text: str, limit: int = 200) -> str:
    flat = _WHITESPACE.sub(" ", text).strip()
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


class TaskGradient:
    """The GGS state of one task across rounds, and its decision rule.

    Keeps ``L_prev``, the count of consecutive worsening rounds (Law 2), the replans
    done, and the blocked targets of every round so far with the tool that failed on
    each. Pure: no threads, no I/O; ids come from ``new_id``.
    """

    def __init__(
        self,
        task_id: str,
        *,
        slug: str,
        environment: str = "local",
        criteria: Iterable[Criterion] = (),
        params: GGSParams = _DEFAULTS,
        new_id: Callable[[], str] = new_id,
    ) -> None:
        self.task_id = task_id
        self.slug = slug
        self.environment = environment
        self.params = params
        self._new_id = new_id
        self._criteria: dict[str, Criterion] = {}
        self.add_criteria(criteria)
        self.loss_prev: float | None = None
        self.worsening = 0
        self.replans = 0
        self._targets: dict[str, str] = {}  # target -> tool that first failed on it
        self.final: FinalResult | None = None

    # ---- state
    def add_criteria(self, criteria: Iterable[Criterion]) -> None:
        """Learn criterion modes and weights (a later criterion with the same id wins)."""
        self._criteria.update((c.id, c) for c in criteria)

    @property
    def criteria(self) -> Mapping[str, Criterion]:
        """The known criteria by id."""
        return dict(self._criteria)

    @property
    def blocked_targets(self) -> list[str]:
        """Every blocked target so far, in the order first blocked."""
        return list(self._targets)

    @property
    def blocked_pairs(self) -> list[tuple[str, str]]:
        """Every blocked target so far with the tool that failed on it: ``(tool, target)``."""
        return [(tool, target) for target, tool in self._targets.items()]

    @property
    def finished(self) -> bool:
        """True once a FinalResult was produced."""
        return self.final is not None

    # ---- the decision
    def step(
        self, message: ReplanRequest | OutcomeSummary, *, elapsed_ms: float, now: float
    ) -> GGSStep:
        """Decide one round. ``elapsed_ms`` is the task's age, ``now`` the clock time.

        Raises ``RuntimeError`` once the task has ended.
        """
        if self.final is not None:
            raise RuntimeError(f"task {self.task_id} already ended ({self.final.status})")
        params = self.params
        units = _units(message.outcomes, message.task_verdicts, self._criteria)
        d = _distance_of(units)
        p = _implausibility_of(units)
        omega = resource_cost(self.replans, elapsed_ms, params)
        current = loss(d, p, omega, params)
        grad = 0.0 if self.loss_prev is None else current - self.loss_prev
        self.loss_prev = current
        self.worsening = self.worsening + 1 if grad > params.epsilon else 0

        calls = _blocked_calls(message.outcomes)
        for tool, target, _ in calls:
            self._targets.setdefault(target, tool)
        tools = _blocked_tools(message.outcomes)

        clean = bool(units) and not any(u.failed for u in units)
        state, rationale = _choose(
            d, p, omega, grad, self.worsening, self.replans, clean=clean, params=params
        )
        urgency = _urgency(grad, params)
        decision = GGSDecision(
            round=message.round,
            d=d,
            p=p,
            omega=omega,
            loss=current,
            grad=grad,
            directive=state,
            urgency=urgency,
            rationale=rationale,
            replans=self.replans,
            elapsed_ms=float(elapsed_ms),
            blocked_tools=tools,
            blocked_targets=self.blocked_targets,
            law2_worsening=self.worsening,
        )
        if state in ACTION_STATES:
            directive = PlanDirective(
                round=message.round + 1,
                directive=state,
                blocked_tools=tools,
                blocked_targets=self.blocked_targets,
                rationale=rationale,
                urgency=urgency,
                failure_class=_dominant_class(units, p, params),
            )
            megrams = [
                self._tool_megram(state, tool, target, call, message.round, now)
                for tool, target, call in calls
            ]
            self.replans += 1
            return GGSStep(decision=decision, directive=directive, final=None, megrams=megrams)

        status = _final_status(state)
        failed = sum(1 for u in units if u.failed)
        summary = (
            f"{status}: {rationale}; D={d:.3f}, P={p:.3f}, Ω={omega:.3f}, L={current:.3f}, "
            f"{failed} of {len(units)} criteria failed, {self.replans} replans"
        )
        self.final = FinalResult(
            task_id=self.task_id,
            status=status,
            summary=summary,
            output=message.merged_output,
            loss=current,
            replans=self.replans,
        )
        megram = self._intent_megram(status, summary, now)
        return GGSStep(decision=decision, directive=None, final=self.final, megrams=[megram])

    # ---- helpers
    def _megram(self, state: str, space: str, entity: str, content: str, now: float) -> Megram:
        f, sigma, k = quantize(state)
        return Megram(
            id=self._new_id(),
            level="M",
            created_at=now,
            space=space,
            entity=entity,
            content=content,
            state=state,
            f=f,
            sigma=sigma,
            k=k,
        )

    def _tool_megram(
        self, state: str, tool: str, target: str, call: ToolCall, round_: int, now: float
    ) -> Megram:
        why = _one_line(call.error or call.output_preview or "failed")
        content = f"{state}: {tool} on {target} failed in round {round_}: {why}"
        return self._megram(state, f"tool:{tool}", f"path:{target}", content, now)

    def _intent_megram(self, status: str, summary: str, now: float) -> Megram:
        return self._megram(
            status, f"intent:{self.slug}", f"env:{self.environment}", _one_line(summary, 500), now
        )


def _reason(state: str, d: float, p: float, omega: float, grad: float, params: GGSParams) -> str:
    """Why the cascade of §5.3 chose ``state``, with the numbers that decided it."""
    bar = "<" if abs(grad) < params.epsilon else "≥"
    signal = f"|∇L|={abs(grad):.3f} {bar} ε={params.epsilon:g}"
    if p > params.rho:
        kind = f"P={p:.3f} > ρ={params.rho:g} (logical)"
    else:
        kind = f"P={p:.3f} ≤ ρ={params.rho:g} (environmental)"
    reasons = {
        "abandon": f"resource budget exhausted (Ω={omega:.3f} ≥ θ={params.theta:g})",
        "success": f"close enough (D={d:.3f} ≤ δ={params.delta:g})",
        "break_symmetry": f"stuck, wrong approach: {signal}, {kind}; demand a new tool class",
        "change_approach": f"signal, wrong approach: {signal}, {kind}; switch method",
        "change_path": f"stuck, right approach: {signal}, {kind}; try a different target",
        "refine": f"signal, right approach: {signal}, {kind}; tighten parameters",
    }
    return reasons[state]


def _choose(
    d: float,
    p: float,
    omega: float,
    grad: float,
    worsening: int,
    replans: int,
    *,
    clean: bool,
    params: GGSParams,
) -> tuple[MacroState, str]:
    """The macro-state and its rationale: the cascade, then Law 2, the replan budget, accept."""
    state = macro_state(d, p, omega, grad, params)
    if state in ACTION_STATES and worsening >= params.law2_rounds:
        return "abandon", (
            f"Law 2 kill-switch: loss worsened {worsening} rounds in a row "
            f"(∇L={grad:+.3f} > ε={params.epsilon:g}); would have been {state}"
        )
    if state in ACTION_STATES and replans >= params.max_replans:
        return "abandon", (
            f"replan budget spent ({replans} of {params.max_replans}); would have been {state}"
        )
    if state == "success" and clean:
        return "accept", "every criterion passed (D=0)"
    return state, _reason(state, d, p, omega, grad, params)


def _final_status(state: str) -> FinalStatus:
    if state == "accept":
        return "accept"
    if state == "success":
        return "success"
    return "abandon"


def _dominant_class(units: Sequence[_Unit], p: float, params: GGSParams) -> FailureClass | None:
    """The class the directive reports: logical if P > ρ, else environmental; None if clean."""
    if not any(u.failed and u.process for u in units):
        return None
    return "logical" if p > params.rho else "environmental"


# ---- actor ----
@dataclass
class _TaskBook:
    """What the GGS actor keeps per task besides the TaskGradient."""

    started: float
    deadline_s: float
    gradient: TaskGradient | None = None
    law1_denied: bool = False
    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    base_calls: int = 0
    subtask_calls: dict[str, int] = field(default_factory=dict)
    groups: dict[str, tuple[int, int]] = field(default_factory=dict)  # subtask -> (round, seq)

    def cost(self, elapsed_ms: float) -> Cost:
        """The task's Cost: sequential calls count one group's slowest subtask only."""
        per_group: dict[tuple[int, int], int] = {}
        loose = 0
        for sid, n in self.subtask_calls.items():
            key = self.groups.get(sid)
            if key is None:
                loose += n
            else:
                per_group[key] = max(per_group.get(key, 0), n)
        return Cost(
            model_calls=self.calls,
            sequential_calls=self.base_calls + loose + sum(per_group.values()),
            tokens_in=self.tokens_in,
            tokens_out=self.tokens_out,
            elapsed_ms=elapsed_ms,
        )


LAW1_TAG = "[LAW1]"


class GGS(Role):
    """The Goal Gradient Solver actor: the only publisher of FinalResult."""

    name: ClassVar[str] = "ggs"
    consumes: ClassVar[tuple[type[Message], ...]] = (
        TaskRequest,
        TaskSpec,
        DispatchManifest,
        ReplanRequest,
        OutcomeSummary,
        LLMCall,
        ConfirmationRequest,
        ConfirmationDecision,
        RoleFailed,
        TaskCancelled,
    )
    wants_ticks: ClassVar[bool] = True

    def __init__(self, ctx, instance=None) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx, instance)
        self.params = GGSParams.from_config(ctx.config.ggs)
        self.books: dict[str, _TaskBook] = {}
        self.law1_requests: set[str] = set()

    def active_tasks(self) -> list[str]:
        return list(self.books)

    def forget_task(self, task_id: str) -> None:
        self.books.pop(task_id, None)

    def _book(self, task_id: str | None) -> _TaskBook | None:
        return self.books.get(task_id or "")

    # ------------------------------------------------------------------ bookkeeping
    def on_task_request(self, env: Envelope) -> None:
        body: TaskRequest = env.body
        deadline = (
            body.deadline_s if body.deadline_s is not None else self.ctx.config.task_timeout_s
        )
        self.books[env.task_id or ""] = _TaskBook(started=env.ts, deadline_s=deadline)

    def on_task_spec(self, env: Envelope) -> None:
        book = self._book(env.task_id)
        if book is None:
            return
        spec: TaskSpec = env.body
        book.gradient = TaskGradient(
            env.task_id or "",
            slug=spec.slug,
            environment=spec.environment,
            criteria=spec.criteria,
            params=self.params,
            new_id=self.ctx.new_id,
        )

    def on_dispatch_manifest(self, env: Envelope) -> None:
        book = self._book(env.task_id)
        if book is None:
            return
        body: DispatchManifest = env.body
        for st in body.subtasks:
            book.groups[st.subtask_id] = (body.round, st.sequence)
            if book.gradient is not None:
                book.gradient.add_criteria(st.criteria)

    def on_llm_call(self, env: Envelope) -> None:
        book = self._book(env.task_id)
        if book is None:
            return
        body: LLMCall = env.body
        book.calls += 1
        book.tokens_in += int(body.usage.get("prompt_tokens", 0))
        book.tokens_out += int(body.usage.get("completion_tokens", 0))
        if body.subtask_id:
            book.subtask_calls[body.subtask_id] = book.subtask_calls.get(body.subtask_id, 0) + 1
        else:
            book.base_calls += 1

    def on_confirmation_request(self, env: Envelope) -> None:
        body: ConfirmationRequest = env.body
        if body.tool:  # a Law 1 gate (human verdicts of the ladder carry no tool)
            self.law1_requests.add(body.request_id)

    def on_confirmation_decision(self, env: Envelope) -> None:
        body: ConfirmationDecision = env.body
        book = self._book(env.task_id)
        if book is not None and not body.approved and body.request_id in self.law1_requests:
            book.law1_denied = True
        self.law1_requests.discard(body.request_id)

    # ------------------------------------------------------------------ decisions
    def _elapsed_ms(self, book: _TaskBook) -> float:
        return max(0.0, (self.ctx.clock.now() - book.started) * 1000.0)

    def _round(self, env: Envelope) -> None:
        book = self._book(env.task_id)
        if book is None or book.gradient is None:
            return
        now = self.ctx.clock.now()
        step = book.gradient.step(env.body, elapsed_ms=self._elapsed_ms(book), now=now)
        for message in step.messages():
            if isinstance(message, FinalResult):
                self._final(env.task_id or "", message)
            else:
                self.publish(message)

    on_replan_request = _round
    on_outcome_summary = _round

    def _final(self, task_id: str, result: FinalResult) -> None:
        book = self.books.get(task_id)
        if book is not None:
            summary = result.summary
            if book.law1_denied and LAW1_TAG not in summary:
                summary = f"{LAW1_TAG} an irreversible action was denied. {summary}"
            result = msgspec.structs.replace(
                result, summary=summary, cost=book.cost(self._elapsed_ms(book))
            )
        self.publish(result, task_id=task_id)
        self.books.pop(task_id, None)
        self._finished[task_id] = None

    def _abandon(self, task_id: str, summary: str) -> None:
        if self.is_finished(task_id):
            return
        book = self.books.get(task_id)
        replans = book.gradient.replans if book is not None and book.gradient is not None else 0
        self._final(
            task_id,
            FinalResult(task_id=task_id, status="abandon", summary=summary, replans=replans),
        )

    def on_role_failed(self, env: Envelope) -> None:
        body: RoleFailed = env.body
        for task_id in body.task_ids:
            self._abandon(task_id, f"role {body.role} failed: {body.error}")

    def on_task_cancelled(self, env: Envelope) -> None:
        body: TaskCancelled = env.body
        if env.task_id:
            self._abandon(env.task_id, f"cancelled: {body.reason or 'by request'}")

    def on_tick(self, now: float) -> None:
        for task_id, book in list(self.books.items()):
            if now - book.started > book.deadline_s:
                self.envelope = None
                self._abandon(task_id, f"deadline exceeded ({book.deadline_s:g} s)")
