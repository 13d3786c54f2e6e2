"""The Goal Gradient Solver's paper math: D, P, Ω, L, ∇L, the macro-state cascade and the
per-task decision rule (paper §5, Appendix A; docs/design.md C2–C4). Pure: no threads, no I/O.

The GGS role (:mod:`artoo.actors.roles.ggs`) is the thin actor over :class:`TaskGradient`;
everything here is re-exported there. Parameters are one type, :class:`GGSConfig`
(``Config.ggs``).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import msgspec

from artoo.actors.runtime.clock import new_id
from artoo.actors.verification._values import stated
from artoo.actors.verification.derive import showing
from artoo.actors.verification.proof import established
from artoo.schemas import (
    POLICY,
    Criterion,
    EpisodeStep,
    Established,
    FinalResult,
    GGSConfig,
    GGSDecision,
    Megram,
    MegramRecorded,
    Message,
    OutcomeSummary,
    PlanDirective,
    Reading,
    ReplanRequest,
    SubTask,
    SubTaskOutcome,
    TaskSpec,
    ToolCall,
    Verdict,
)
from artoo.schemas.messages import EndReason, FailureClass, FinalStatus, MacroState

__all__ = [
    "ACTION_STATES",
    "TERMINAL_STATES",
    "GGSStep",
    "TaskGradient",
    "distance",
    "implausibility",
    "loss",
    "macro_state",
    "not_done",
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


_DEFAULTS = GGSConfig()


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
    """Intent-result distance D ∈ [0, 1] (paper §5.1, docs/design.md C4): ``Σ wᵢ·failᵢ / Σ wᵢ``.

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
def resource_cost(replans: int, elapsed_ms: float, params: GGSConfig = _DEFAULTS) -> float:
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


def loss(d: float, p: float, omega: float, params: GGSConfig = _DEFAULTS) -> float:
    """The loss ``L = α·D + β·(1−Ω)·P + λ·Ω`` (paper §5.1; β_eff = β·(1−Ω))."""
    return params.alpha * d + params.beta * (1.0 - omega) * p + params.lam * omega


def macro_state(
    d: float, p: float, omega: float, grad: float, params: GGSConfig = _DEFAULTS
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


def _urgency(grad: float, params: GGSConfig) -> Urgency:
    if grad > params.epsilon:
        return "high"
    if grad < -params.epsilon:
        return "low"
    return "normal"


# --------------------------------------------------------------------------- blocked sets
def _classes(outcome: SubTaskOutcome) -> set[str]:
    found: set[str] = {
        v.failure_class for v in outcome.verdicts if not v.passed and v.failure_class
    }
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


def _normal_path(path: str) -> str:
    return posixpath.normpath(path) if path else path


def _denied(call: ToolCall) -> bool:
    """A call the operator (or, with none, the Queen) denied: its target stays blocked —
    no later plan works around a denial (the "only way found" of ``ggs.law1_summary``)."""
    return call.refusal in ("law1_denied", "caution_denied")


def request_targets(spec: TaskSpec | None) -> set[str]:
    """The paths the reading writes, creates or deletes (pure; normalised): not blocked
    for a failure on them that no one denied. What failed on such a path is the way it
    was tried, not the path: a probe of the file a creation is to make fails (it is not
    there yet); blocking the path then refused the right call on it in the replan."""
    if spec is None:
        return set()
    return {_normal_path(t.path.rstrip("/")) for t in spec.targets if t.role != "read"}


def _blocked_tools(outcomes: Iterable[SubTaskOutcome], failed_only: bool = True) -> list[str]:
    """Tools that failed in logically failed outcomes (first-use order, no duplicates): a
    call that did not work, was refused, or a command that exited non-zero. A tool whose
    every call worked is not the wrong tool class — what failed was the answer drawn from
    it (a count of 3 that ``grep -c`` printed failed a check that wanted '0|1'; blocking
    ``shell`` then left no tool that could count). ``failed_only`` False: every tool the
    outcomes used (the rule of logs before ``GGSDecision.failed_tools_only``)."""
    tools: dict[str, None] = {}
    for outcome in outcomes:
        if outcome.status == "failed" and "logical" in _classes(outcome):
            tools.update(
                (call.tool, None) for call in outcome.tool_calls if _failed(call) or not failed_only
            )
    return list(tools)


def _failed(call: ToolCall) -> bool:
    """A call that did not work, was refused, or exited non-zero — but not a call refused
    as one the conversation already made (``repeated_call``): its tool worked the first
    time, and the model repeating it says nothing of the tool."""
    if call.refusal == "repeated_call":
        return False
    return not call.ok or call.refusal is not None or call.exit_code not in (None, 0)


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
        params: GGSConfig = _DEFAULTS,
        new_id: Callable[[], str] = new_id,
        spec: TaskSpec | None = None,
        redact: Callable[[str], str] = str,
        policy: int = POLICY,
    ) -> None:
        self.task_id = task_id
        self.policy = policy
        """The decision policy the task runs under (``TaskRequest.policy``)."""
        self.spec = spec
        """The task's reading (None: a log with no TaskSpec; no proof is computed)."""
        self.request = spec.text if spec is not None else ""
        self.slug = slug
        self.redact = redact
        self.family: str | None = None
        """The intent tag recall by meaning put this request in (the first tag it read),
        or None: the episode megram is written under it instead of ``intent:<slug>``."""
        self.plan: list[SubTask] = []
        """The subtasks of the last dispatched plan (the episode's steps at the end)."""
        self.environment = environment
        self.params = params
        self._new_id = new_id
        self._criteria: dict[str, Criterion] = {}
        self._task_criteria = list(criteria)
        self.add_criteria(self._task_criteria)
        self.loss_prev: float | None = None
        self.worsening = 0
        self.replans = 0
        self._targets: dict[str, str] = {}  # target -> tool that first failed on it
        self.denied: list[str] = []
        """The Law 1 actions the operator denied so far (fed by the GGS's TaskBook)."""
        self.final: FinalResult | None = None
        self._calls: list[ToolCall] = []
        """The tool calls of the rounds decided so far: their changes are the task's too."""
        self.failed_tools_only = True
        """Block only the tools that failed (:func:`_blocked_tools`); replay ``--verify``
        sets what a logged decision says it ran by."""
        self.logged_proof: tuple[Established | None, str] | None = None
        """Set by replay for a task logged under a retired policy: the proof the log
        recorded, taken instead of recomputed (schemas.policy)."""

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
    def blocked_tool_targets(self) -> list[tuple[str, str]]:
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
        kept = request_targets(self.spec)  # the request's own paths: neither blocked nor marked
        calls = [c for c in calls if _normal_path(c[1]) not in kept or _denied(c[2])]
        for tool, target, _ in calls:
            self._targets.setdefault(target, tool)
        tools = _blocked_tools(message.outcomes, self.failed_tools_only)

        clean = bool(units) and not any(u.failed for u in units)
        state, reason, rationale = _choose(
            d, p, omega, grad, self.worsening, self.replans, clean=clean, params=params
        )
        if self.logged_proof is not None:
            proof, by = self.logged_proof
        elif self.spec is None:
            proof, by = None, ""
        else:
            proof, by = established(
                spec=self.spec,
                criteria=self._criteria,
                task_verdicts=message.task_verdicts,
                outcomes=message.outcomes,
                output=message.merged_output,
                earlier=self._calls,
                policy=self.policy,
            )
        self._calls += [c for o in message.outcomes for c in o.tool_calls]
        if state == "accept" and proof == "model":  # a model's word is not proof (Law 0)
            state = "success"
            rationale = (
                "every criterion passed, but not all by code (a model's verdict, one tool "
                "result, or a check of the answer's text): success, not accept"
            )
        if state in ("accept", "success") and proof == "none" and self.policy >= 2:
            state, reason, rationale = _not_done(self.worsening, self.replans, params)
        if state in ("accept", "success") and self.denied:  # a denial is never a success
            rationale = f"the operator denied {'; '.join(self.denied)}; would have been {state}"
            state, reason = "abandon", "law1_denied"
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
            params=params.model_dump(),
            failed_tools_only=self.failed_tools_only,
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
            output=not_done(self.denied) if reason == "law1_denied" else message.merged_output,
            loss=current,
            replans=self.replans,
            reason=reason,
            established=None if proof is None else (proof if status != "abandon" else "none"),
            established_by=by if status != "abandon" else "",
        )
        steps = episode_steps(
            self.plan,
            message.outcomes,
            self.redact,
            shape=self.spec.shape if self.spec is not None else "",
        )
        megram = self._intent_megram(status, summary, now, steps)
        return GGSStep(decision=decision, directive=None, final=self.final, megrams=[megram])

    def step_unplanned(
        self, round: int, evidence: str, *, elapsed_ms: float, now: float
    ) -> GGSStep:
        """Decide a round in which no plan could run (the Planner's PlanRejected or
        StepFailed): every task criterion failed, a logical failure with ``evidence``
        (docs/design.md C4: D counts the task criteria). The decision table then picks the
        next macro-state like any other round's."""
        verdicts = [
            Verdict(criterion_id=c.id, passed=False, failure_class="logical", evidence=evidence)
            for c in self._task_criteria
        ] or [
            Verdict(criterion_id="plan", passed=False, failure_class="logical", evidence=evidence)
        ]
        return self.step(
            ReplanRequest(round=round, task_verdicts=verdicts), elapsed_ms=elapsed_ms, now=now
        )

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

    def _intent_megram(
        self, status: str, summary: str, now: float, steps: list[EpisodeStep]
    ) -> Megram:
        space = self.family or f"intent:{self.slug}"
        m = self._megram(status, space, f"env:{self.environment}", _one_line(summary, 500), now)
        request = self.redact(self.request)
        reading = None
        spec = self.spec
        if spec is not None and status == "accept" and request == self.request:
            reading = Reading(
                intent=spec.intent,
                kind=spec.kind,
                shape=spec.shape,
                criteria=self._task_criteria,
                targets=list(spec.targets),
                values=list(spec.values),
                key=spec.key,
                unit=spec.unit,
                call=spec.call,
                policy=self.policy,
            )
        return msgspec.structs.replace(m, request=request, steps=steps, reading=reading)


def command_text(call: ToolCall) -> str:
    """One tool call as the command that reproduces it: a shell call's command line,
    another tool's name and arguments (``read_file notes/a.txt``)."""
    command = call.args.get("command")
    if call.tool == "shell" and isinstance(command, str):
        return _one_line(command, 300)
    args = " ".join(str(v) for v in call.args.values() if isinstance(v, str | int | float))
    return _one_line(f"{call.tool} {args or call.target or ''}".strip(), 300)


def episode_steps(
    plan: Sequence[SubTask],
    outcomes: Iterable[SubTaskOutcome],
    redact: Callable[[str], str] = str,
    *,
    shape: str = "",
) -> list[EpisodeStep]:
    """What an accepted task did (pure): each subtask of its last plan, its tools and the
    successful tool calls of its outcome as commands (``command_text``), secrets redacted
    by ``redact``; calls that failed or were refused are not the approach, and when the
    answer states a value of its ``shape`` some calls show, only those
    (:func:`backing_calls`)."""
    calls: dict[str, list[str]] = {}
    for outcome in outcomes:
        done = calls.setdefault(outcome.subtask_id, [])
        worked = [c for c in outcome.tool_calls if c.ok and c.refusal is None]
        worked = backing_calls(outcome.output, worked, shape)
        for call in worked:
            text = redact(command_text(call))
            if text not in done:
                done.append(text)
    return [
        EpisodeStep(
            instruction=redact(_one_line(s.instruction, 500)),
            tools=list(s.tools),
            sequence=s.sequence,
            commands=calls.get(s.subtask_id, []),
        )
        for s in plan
    ]


def backing_calls(answer: str, calls: Sequence[ToolCall], shape: str) -> list[ToolCall]:
    """Of ``calls`` (that worked), those an episode records as its step's approach (pure):
    when ``answer`` states a value of its ``shape`` that some call shows, only the calls
    that show the first such value; else all. A small model once ran ``wc -l`` before
    ``wc -w`` for a word count; a reuse ran both again, and the model answered the first."""
    if shape in ("", "text", "list"):
        return list(calls)
    for value in stated(answer, shape):
        backed = showing(value, calls, shape)
        if backed:
            return backed
    return list(calls)


def not_done(denied: Sequence[str]) -> str:
    """The output of a task ended by a Law 1 denial (pure): what was not done, in place of
    the model's words (which may claim the denied action happened)."""
    return (
        "Not done: the operator denied "
        + "; ".join(denied)
        + ". The task's answer is withheld: it relied on an action that did not happen."
    )


def _reason(state: str, d: float, p: float, omega: float, grad: float, params: GGSConfig) -> str:
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
    params: GGSConfig,
) -> tuple[MacroState, EndReason | None, str]:
    """The macro-state, why a terminal one ends the task, and its rationale: the cascade,
    then Law 2, the replan budget, accept."""
    state = macro_state(d, p, omega, grad, params)
    if state in ACTION_STATES and worsening >= params.law2_rounds:
        return (
            "abandon",
            "law2",
            (
                f"Law 2 kill-switch: loss worsened {worsening} rounds in a row "
                f"(∇L={grad:+.3f} > ε={params.epsilon:g}); would have been {state}"
            ),
        )
    if state in ACTION_STATES and replans >= params.max_replans:
        return (
            "abandon",
            "replan_budget",
            (f"replan budget spent ({replans} of {params.max_replans}); would have been {state}"),
        )
    if state == "success" and clean:
        return "accept", "criteria_met", "every criterion passed (D=0)"
    reason: EndReason | None = None
    if state == "abandon":
        reason = "omega"
    elif state == "success":
        reason = "criteria_met"
    return state, reason, _reason(state, d, p, omega, grad, params)


def _not_done(
    worsening: int, replans: int, params: GGSConfig
) -> tuple[MacroState, EndReason | None, str]:
    """Policy 2: a round the cascade calls done (D ≤ δ) whose proof is ``none`` — a
    criterion failed, or no verdict at all — is not done (fail closed; docs/decisions/0003):
    refined while Law 2 and the replan budget allow, else abandoned by the one that stops
    it."""
    why = "close enough (D ≤ δ), but a criterion failed or none was checked: never success"
    if worsening >= params.law2_rounds:
        return "abandon", "law2", f"{why}; Law 2: loss worsened {worsening} rounds in a row"
    if replans >= params.max_replans:
        return "abandon", "replan_budget", f"{why}; replan budget spent ({replans})"
    return "refine", None, f"{why}: refine"


def _final_status(state: str) -> FinalStatus:
    if state == "accept":
        return "accept"
    if state == "success":
        return "success"
    return "abandon"


def _dominant_class(units: Sequence[_Unit], p: float, params: GGSConfig) -> FailureClass | None:
    """The class the directive reports: logical if P > ρ, else environmental; None if clean."""
    if not any(u.failed and u.process for u in units):
        return None
    return "logical" if p > params.rho else "environmental"
