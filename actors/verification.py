"""The rules rung of the verification ladder, shared by both validators (equipment).

Pure functions over messages: deciding a criterion that has a ``check`` by code, and
classifying why an execution failed.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from artoo.schemas import Criterion, ExecutionResult, ToolCall, Verdict
from artoo.schemas.messages import FailureClass

from .answers import CriterionVerdictAnswer, VerdictAnswer, VerdictsAnswer
from .checks import evaluate, judge_observed, reads_workspace
from .llm import LLMRequest, ask_structured

__all__ = [
    "VERDICTS_FORMAT",
    "VERDICT_FORMAT",
    "criteria_text",
    "execution_failure_class",
    "last_exit_code",
    "majority_class",
    "model_verdict",
    "model_verdicts",
    "rule_verdict",
]

VERDICT_FORMAT = (
    'Answer JSON: {"passed": bool, "confidence": 0..1, '
    '"failure_class": "logical"|"environmental"|null, "evidence": str}.'
)


def last_exit_code(calls: list[ToolCall]) -> int | None:
    """The exit code of the last shell call, if any."""
    for call in reversed(calls):
        if call.tool == "shell":
            return call.exit_code
    return None


def execution_failure_class(result: ExecutionResult) -> FailureClass:
    """Why an execution failed, from its structured ``stop``: doom loops and turn caps are
    logical; model outages, and a run whose tools were refused or failed, environmental."""
    if result.stop in ("doom_loop", "turn_cap"):
        return "logical"
    if result.stop == "model_error" or any(not c.ok for c in result.tool_calls):
        return "environmental"
    return "logical"


def rule_verdict(
    criterion: Criterion,
    output: str,
    calls: list[ToolCall],
    workspace: Path,
    attempt: int = 1,
    *,
    recorded: Callable[[], Verdict | None] | None = None,
    observed: dict[str, Any] | None = None,
) -> Verdict:
    """Decide a criterion that has a check, by code (reads files, nothing else).
    ``recorded`` (a rerun's) gives the logged verdict of a check that reads the workspace,
    which a rerun does not have; without one logged, the check runs. ``observed`` (a
    verify's: a logged ``Verdict.observed``) decides such a check from what it read then,
    without reading the workspace. The verdict carries what the check read
    (``Verdict.observed``)."""
    if criterion.check is None:
        raise ValueError(f"criterion {criterion.id} has no check")
    if recorded is not None and reads_workspace(criterion.check):
        logged = recorded()
        if logged is not None:
            return logged
    try:
        if observed is not None:
            res = judge_observed(criterion.check, output=output, observed=observed)
        else:
            res = evaluate(
                criterion.check,
                output=output,
                exit_code=last_exit_code(calls),
                workspace=workspace,
            )
    except ValueError as exc:
        return Verdict(
            criterion_id=criterion.id,
            passed=False,
            failure_class="logical",
            evidence=f"invalid check: {exc}",
            attempt=attempt,
        )
    fclass = None
    if not res.passed:
        fclass = _attribute(criterion, res.failure_class, calls)
    return Verdict(
        criterion_id=criterion.id,
        passed=res.passed,
        failure_class=fclass,
        evidence=res.evidence,
        signal="rule",
        attempt=attempt,
        observed=res.observed,
    )


def _names(call: ToolCall, path: str) -> bool:
    """Whether a tool call worked on ``path``: its target, or a shell command naming it."""
    wanted = path.strip().lstrip("./")
    if not wanted:
        return False
    if call.target is not None and call.target.strip().lstrip("./") == wanted:
        return True
    command = call.args.get("command") if call.tool == "shell" else None
    return isinstance(command, str) and wanted in command


def _attribute(criterion: Criterion, suggested: str | None, calls: list[ToolCall]) -> FailureClass:
    """The failure class of a failed check, attributed from what the tools did (paper §9:
    misattribution is a Law 0 violation).

    A missing file is the environment's fault only when a call that worked on it failed
    (refused, or an error); when no call ever tried to make it, or the calls that did
    succeeded, the work is wrong — an executor that only *claims* it wrote the file gets a
    logical failure. For the other checks a tool the environment refused explains the miss
    better than the check can.
    """
    check = criterion.check
    if check is not None and check.kind == "file_exists" and check.value is not False:
        touching = [c for c in calls if _names(c, check.path)]
        return "environmental" if any(not c.ok for c in touching) else "logical"
    if suggested == "environmental" or any(not c.ok for c in calls):
        return "environmental"
    return "logical"


def majority_class(verdicts: list[Verdict]) -> FailureClass | None:
    """The most common failure class among failed verdicts (logical on a tie)."""
    failed = [v.failure_class for v in verdicts if not v.passed]
    env = sum(1 for f in failed if f == "environmental")
    logical = sum(1 for f in failed if f == "logical")
    if env == 0 and logical == 0:
        return None
    return "environmental" if env > logical else "logical"


VERDICTS_FORMAT = (
    'Answer JSON: {"verdicts": [{"criterion": "<id>", "passed": bool, "confidence": 0..1, '
    '"failure_class": "logical"|"environmental"|null, "evidence": str}]}, one per criterion.'
)


def criteria_text(criteria: list[Criterion]) -> str:
    """The criteria as the model is asked to judge them: one line each, with its id."""
    return "\n".join(f"- [{c.id}] {c.text}" for c in criteria)


def model_verdicts(
    gateway: Any,
    request: LLMRequest,
    criteria: list[Criterion],
    *,
    threshold: float,
    attempt: int = 1,
) -> list[tuple[Verdict, VerdictAnswer | None]]:
    """The model rung for several criteria in ONE call (paper §10: one validation call per
    attempt); one criterion is asked as :func:`model_verdict` asks it. Fails closed per
    criterion: no valid answer, or no verdict for a criterion, is a failed verdict."""
    if len(criteria) == 1:
        return [model_verdict(gateway, request, criteria[0], threshold=threshold, attempt=attempt)]
    answer = ask_structured(gateway, request, VerdictsAnswer)
    given: dict[str, CriterionVerdictAnswer] = {}
    if answer.ok and answer.value is not None:
        for v in answer.value.verdicts:
            given.setdefault(v.criterion, v)
    out: list[tuple[Verdict, VerdictAnswer | None]] = []
    for criterion in criteria:
        found = given.get(criterion.id)
        if found is None:
            why = answer.error if not answer.ok else "the answer has no verdict for it"
            out.append((_no_verdict(criterion, why, attempt), None))
            continue
        one = VerdictAnswer(
            passed=found.passed,
            confidence=found.confidence,
            failure_class=found.failure_class,
            evidence=found.evidence,
        )
        out.append((_graded(criterion, one, threshold, attempt), one))
    return out


def _no_verdict(criterion: Criterion, why: str | None, attempt: int) -> Verdict:
    """The failed verdict of a criterion the model gave no valid verdict on (fail closed)."""
    return Verdict(
        criterion_id=criterion.id,
        passed=False,
        evidence=f"no valid verdict (fails closed): {why}",
        signal="llm",
        confidence=0.0,
        attempt=attempt,
    )


def _graded(criterion: Criterion, v: VerdictAnswer, threshold: float, attempt: int) -> Verdict:
    """A model's answer on one criterion as a Verdict: a pass only when confident enough."""
    confidence = min(max(v.confidence, 0.0), 1.0)
    confident = confidence >= threshold
    passed = v.passed and confident
    return Verdict(
        criterion_id=criterion.id,
        passed=passed,
        failure_class=None if passed else (v.failure_class or "logical"),
        evidence=v.evidence if confident else f"low confidence ({confidence:.2f}): {v.evidence}",
        signal="llm",
        confidence=confidence,
        attempt=attempt,
    )


def model_verdict(
    gateway: Any,
    request: LLMRequest,
    criterion: Criterion,
    *,
    threshold: float,
    attempt: int = 1,
) -> tuple[Verdict, VerdictAnswer | None]:
    """The model rung: ask for a verdict; fail closed.

    Returns the Verdict (a pass only when the model passed it with at least ``threshold``
    confidence) and the model's answer (None when there was no valid answer), so that a
    caller may take a low-confidence answer to a human.
    """
    answer = ask_structured(gateway, request, VerdictAnswer)
    if not answer.ok or answer.value is None:
        return _no_verdict(criterion, answer.error, attempt), None
    v: VerdictAnswer = answer.value
    return _graded(criterion, v, threshold, attempt), v
