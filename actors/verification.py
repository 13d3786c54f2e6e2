"""The rules rung of the verification ladder, shared by both validators (equipment).

Pure functions over messages: deciding a criterion that has a ``check`` by code, and
classifying why an execution failed.
"""

from __future__ import annotations

from pathlib import Path

from artoo.schemas import Criterion, ExecutionResult, ToolCall, Verdict

from .checks import evaluate

__all__ = ["execution_failure_class", "last_exit_code", "majority_class", "rule_verdict"]


def last_exit_code(calls: list[ToolCall]) -> int | None:
    """The exit code of the last shell call, if any."""
    for call in reversed(calls):
        if call.tool == "shell":
            return call.exit_code
    return None


def execution_failure_class(result: ExecutionResult) -> str:
    """Why an execution failed: tool errors and model outages are environmental,
    doom loops and turn caps are logical."""
    err = result.error or ""
    if "doom loop" in err or "turn cap" in err:
        return "logical"
    if err.startswith("model call failed") or any(not c.ok for c in result.tool_calls):
        return "environmental"
    return "logical"


def rule_verdict(
    criterion: Criterion,
    output: str,
    calls: list[ToolCall],
    workspace: Path,
    attempt: int = 1,
) -> Verdict:
    """Decide a criterion that has a check, by code (reads files, nothing else)."""
    if criterion.check is None:
        raise ValueError(f"criterion {criterion.id} has no check")
    try:
        res = evaluate(
            criterion.check, output=output, exit_code=last_exit_code(calls), workspace=workspace
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
        # a tool the environment refused explains the miss better than the check can
        env = res.failure_class == "environmental" or any(not c.ok for c in calls)
        fclass = "environmental" if env else (res.failure_class or "logical")
    return Verdict(
        criterion_id=criterion.id,
        passed=res.passed,
        failure_class=fclass,
        evidence=res.evidence,
        signal="rule",
        attempt=attempt,
    )


def majority_class(verdicts: list[Verdict]) -> str | None:
    """The most common failure class among failed verdicts (logical on a tie)."""
    failed = [v.failure_class for v in verdicts if not v.passed]
    env = sum(1 for f in failed if f == "environmental")
    logical = sum(1 for f in failed if f == "logical")
    if env == 0 and logical == 0:
        return None
    return "environmental" if env > logical else "logical"
