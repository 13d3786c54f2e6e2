"""The verification ladder's rungs, shared by both validators (equipment).

Pure functions over messages: deciding a criterion that has a ``check`` by code (the rules
rung), a model's verdict on one that has none (failing closed), and classifying why an
execution failed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from artoo.actors.llm import LLMRequest, ask_structured
from artoo.schemas import Check, Criterion, ExecutionResult, Target, ToolCall, Verdict
from artoo.schemas.messages import FailureClass

from .answers import CriterionVerdictAnswer, VerdictAnswer, VerdictsAnswer
from .checks import evaluate, judge_observed, reads_workspace

__all__ = [
    "VERDICTS_FORMAT",
    "VERDICT_FORMAT",
    "criteria_text",
    "execution_failure_class",
    "majority_class",
    "model_verdict",
    "model_verdicts",
    "rule_verdict",
    "tool_results_text",
    "verdict_prompt",
]

VERDICT_FORMAT = (
    'Answer with one JSON object: {"passed": true or false, "confidence": 0.0 to 1.0, '
    '"failure_class": "logical" or "environmental" or null, "evidence": "<one sentence>"}.'
)

_VERDICT_EXAMPLE = (
    "Example. Criterion: the answer states the number of lines in a.txt. Tool results: "
    "shell(wc -l a.txt) -> 12 a.txt. Output: a.txt has 12 lines. Answer: "
    '{"passed": true, "confidence": 0.9, "failure_class": null, "evidence": "wc -l printed '
    '12 and the output states 12"}'
)
_VERDICTS_EXAMPLE = (
    "Example. Criteria: [c1] the answer states the number of lines in a.txt; [c2] the "
    "answer names the file. Tool results: shell(wc -l a.txt) -> 12 a.txt. Output: a.txt "
    'has 15 lines. Answer: {"verdicts": [{"criterion": "c1", "passed": false, '
    '"confidence": 0.9, "failure_class": "logical", "evidence": "wc -l printed 12, the '
    'output states 15"}, {"criterion": "c2", "passed": true, "confidence": 0.9, '
    '"failure_class": null, "evidence": "it names a.txt"}]}'
)


def verdict_prompt(who: str, criteria: list[Criterion]) -> str:
    """The system prompt of a validator's model rung (pure): short, the rule of evidence,
    the JSON shape and one worked example — for one criterion or for several."""
    one = len(criteria) == 1
    return (
        f"You are {who} of artoo. Judge whether the output meets "
        + ("the criterion" if one else "each criterion")
        + ". Pass only what the tool results support: a figure or claim that no tool result "
        'shows fails ("logical"); a missing file or a refused tool is "environmental".\n'
        + (VERDICT_FORMAT if one else VERDICTS_FORMAT)
        + "\n"
        + (_VERDICT_EXAMPLE if one else _VERDICTS_EXAMPLE)
    )


def tool_results_text(calls: list[ToolCall], limit: int = 300) -> str:
    """The tool calls as a validator is shown them: one line each, the result clipped."""
    return (
        "\n".join(
            f"- {c.tool}({c.target or ''}) ok={c.ok} -> "
            + " ".join((c.output_preview or c.error or "").split())[:limit]
            for c in calls
        )
        or "(none)"
    )


def _environment_failed(call: ToolCall) -> bool:
    """The call did not work — but not one refused as a call its conversation already made
    (``repeated_call``): that is the model repeating itself, not the environment failing."""
    return not call.ok and call.refusal != "repeated_call"


def execution_failure_class(result: ExecutionResult) -> FailureClass:
    """Why an execution failed, from its structured ``stop``: doom loops and turn caps are
    logical; model outages, and a run whose tools were refused or failed, environmental."""
    if result.stop in ("doom_loop", "turn_cap"):
        return "logical"
    if result.stop == "model_error" or any(_environment_failed(c) for c in result.tool_calls):
        return "environmental"
    return "logical"


def rule_verdict(
    criterion: Criterion,
    output: str,
    calls: Sequence[ToolCall],
    workspace: Path,
    attempt: int = 1,
    *,
    targets: Sequence[Target] = (),
    recorded: Callable[[], Verdict | None] | None = None,
    observed: dict[str, Any] | None = None,
) -> Verdict:
    """Decide a criterion that has a check, by code (:func:`.checks.evaluate`: the answer,
    the task's ``calls`` so far, the workspace, the reading's ``targets``). ``recorded``
    (a rerun's) gives the logged verdict of a check that reads the workspace; ``observed``
    (a verify's: the logged ``Verdict.observed``) decides it from what it read then. An
    unusable check fails, logical."""
    if criterion.check is None:
        raise ValueError(f"criterion {criterion.id} has no check")
    if recorded is not None and reads_workspace(criterion.check):
        logged = recorded()
        if logged is not None:
            return logged
    try:
        if observed is not None:
            res = judge_observed(
                criterion.check, output=output, calls=calls, observed=observed, targets=targets
            )
        else:
            res = evaluate(
                criterion.check, output=output, calls=calls, workspace=workspace, targets=targets
            )
    except ValueError as exc:
        return Verdict(
            criterion_id=criterion.id,
            passed=False,
            failure_class="logical",
            evidence=f"invalid check: {exc}",
            attempt=attempt,
        )
    fclass: FailureClass | None = None
    if not res.passed:
        fclass = _attribute(criterion.check, res.failure_class, calls, targets)
    return Verdict(
        criterion_id=criterion.id,
        passed=res.passed,
        failure_class=fclass,
        evidence=res.evidence,
        signal="rule",
        attempt=attempt,
        observed=res.observed,
    )


def _touches(call: ToolCall, path: str) -> bool:
    """Whether a tool call worked on ``path`` (a directory: beneath it): its target, or a
    shell command naming it."""
    wanted = path.strip().removeprefix("./").rstrip("/")
    if not wanted:
        return False
    target = (call.target or "").strip().removeprefix("./")
    if target == wanted or target.startswith(wanted + "/"):
        return True
    command = call.args.get("command") if call.tool == "shell" else None
    return isinstance(command, str) and wanted in command


def _attribute(
    check: Check,
    suggested: FailureClass | None,
    calls: Sequence[ToolCall],
    targets: Sequence[Target],
) -> FailureClass:
    """The failure class of a failed check, from what the tools did (paper §9:
    misattribution is a Law 0 violation).

    A change that is not there (``changed``) is the environment's fault only when a call
    on a target the reading writes failed (refused, or an error); when no call tried it,
    or the calls that did worked, the work is wrong — an Executor that only *claims* it
    changed a file fails logically, whatever else failed on the way. (A reading with no
    target to write: any call.) For the other checks a tool the environment refused
    explains the miss better than the check can. A call refused as a repeat
    (``repeated_call``) is no sign of the environment either way."""
    if suggested == "environmental":
        return "environmental"
    if check.kind == "changed":
        paths = [t.path for t in targets if t.role != "read"]
        calls = [c for c in calls if any(_touches(c, p) for p in paths)] if paths else calls
    return "environmental" if any(_environment_failed(c) for c in calls) else "logical"


def majority_class(verdicts: list[Verdict]) -> FailureClass | None:
    """The most common failure class among failed verdicts (logical on a tie)."""
    failed = [v.failure_class for v in verdicts if not v.passed]
    env = sum(1 for f in failed if f == "environmental")
    logical = sum(1 for f in failed if f == "logical")
    if env == 0 and logical == 0:
        return None
    return "environmental" if env > logical else "logical"


VERDICTS_FORMAT = (
    'Answer with one JSON object: {"verdicts": [{"criterion": "<id>", "passed": true or '
    'false, "confidence": 0.0 to 1.0, "failure_class": "logical" or "environmental" or null, '
    '"evidence": "<one sentence>"}]}, one verdict per criterion.'
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
