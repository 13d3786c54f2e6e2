"""The rules rung of the verification ladder, shared by both validators (equipment).

Pure functions over messages: deciding a criterion that has a ``check`` by code, and
classifying why an execution failed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from artoo.actors.llm import LLMRequest, ask_structured
from artoo.schemas import Criterion, ExecutionResult, ToolCall, Verdict
from artoo.schemas.messages import FailureClass

from ._counting import stated_number
from .answers import CriterionVerdictAnswer, VerdictAnswer, VerdictsAnswer
from .checks import COMPUTED_KINDS, computed, evaluate, judge_observed, reads_workspace
from .grounding import (
    Grounding,
    asks_question,
    grounding,
    read_sources,
    stated_count,
    tool_outputs,
)
from .request import answer_problem, code_values, duties, traced

__all__ = [
    "REQUEST_CRITERION",
    "VERDICTS_FORMAT",
    "VERDICT_FORMAT",
    "criteria_text",
    "execution_failure_class",
    "grounding_verdicts",
    "last_exit_code",
    "majority_class",
    "model_verdict",
    "model_verdicts",
    "request_problem",
    "request_verdict",
    "rule_verdict",
    "tool_results_text",
    "ungrounded",
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


def ungrounded(
    output: str,
    calls: list[ToolCall],
    *,
    request: str | None,
    instruction: str = "",
    checked: Sequence[tuple[Criterion, Verdict]] = (),
    kind: str = "",
    count_reading: bool = False,
) -> Grounding | None:
    """The failed :func:`grounding` of an answer to a question, or None (it is grounded,
    or answers no question). ``request`` is the user's (None when unknown: the
    ``instruction`` stands for it); ``kind`` the Perceiver's reading of it (``TaskSpec.kind``:
    with it, :func:`.request.duties` says whether the answer must answer — when unsure, it
    must; without it, a log from before the field, the old keyword reading); a passed
    ``count_matches`` check makes the number it measured given — the count the answer
    states as the check read it (``count_reading``, ``Config.count_reads_answer``:
    :func:`.grounding.stated_count`; off, the first number standing alone) (pure)."""
    question = request if request is not None else instruction
    if not (duties(question, kind).answers if kind else asks_question(question)):
        return None
    measured: list[int | str] = [
        n
        for c, v in checked
        if v.passed and c.check is not None and c.check.kind == "count_matches"
        if (n := stated_count(output, question) if count_reading else stated_number(output))
        is not None
    ]
    tabled = computed_values(checked)
    measured += [v for v in tabled if _DECIMAL.fullmatch(v)]
    strict = bool(kind)
    outputs = tool_outputs(calls, strict=strict)
    result = grounding(output, outputs, request=question, context=instruction, measured=measured)
    if strict:  # generalised: the names and strings it states, traced to what tools read
        sources = [*outputs, *read_sources(calls), *tabled]
        names = tuple(v for v in code_values(output, question) if not traced(v, sources, question))
        if names:
            result = Grounding(stated=result.stated, ungrounded=(*result.ungrounded, *names))
    return None if result.grounded else result


REQUEST_CRITERION = "request"
"""The id of the task-level verdict that judges the answer against the request itself."""


def request_verdict(
    request: str, kind: str, shape: str, output: str, calls: Sequence[ToolCall] = ()
) -> Verdict | None:
    """The task-level verdict on whether ``output`` answers ``request`` (pure; the rule is
    :func:`.request.answer_problem`, the duties :func:`.request.duties`): a failed,
    logical verdict for an answer that does not answer a question — it describes the
    process, talks about its criteria, lacks the asked-for value — whatever the criteria
    said; a passed one for an answer that answers; None for a log from before
    ``TaskSpec.kind`` (empty ``kind``), which was never judged so. ``calls``: the round's
    tool calls — a word the answer shares with what they printed is a value it states."""
    if not kind:
        return None
    problem = request_problem(request, kind, shape, output, calls)
    return Verdict(
        criterion_id=REQUEST_CRITERION,
        passed=problem is None,
        failure_class=None if problem is None else "logical",
        evidence=problem or "the answer answers the request",
        signal="rule",
    )


def request_problem(
    request: str, kind: str, shape: str, output: str, calls: Sequence[ToolCall] = ()
) -> str | None:
    """Why ``output`` does not answer ``request``, or None (pure): the rule of
    :func:`request_verdict` — :func:`.request.answer_problem` under the request's
    :func:`.request.duties`, with what ``calls`` printed as the values the answer may
    state — and None for a request no one holds to answer (``duty.answers`` false) and for
    a log from before ``TaskSpec.kind`` (empty ``kind``)."""
    if not kind:
        return None
    outputs = tool_outputs(calls, strict=True)
    return answer_problem(request, output, duties(request, kind, shape), outputs)


_DECIMAL = re.compile(r"-?\d+(?:\.\d+)?")


def computed_values(checked: Sequence[tuple[Criterion, Verdict]]) -> list[str]:
    """The values passed ``table_value`` checks computed from a table (pure): an answer
    stating one states what code computed from the workspace, not a model's figure."""
    return [
        str(value)
        for c, v in checked
        if v.passed and c.check is not None and c.check.kind in COMPUTED_KINDS
        if computed(c.check, v.observed)
        for value in v.observed.get("values", [])
    ]


def _code_measured(criterion: Criterion, verdict: Verdict) -> bool:
    check = criterion.check
    if verdict.signal != "rule" or check is None:
        return False
    if check.kind in COMPUTED_KINDS:
        return computed(check, verdict.observed)
    return check.kind == "count_matches"


def grounding_verdicts(
    criteria: list[Criterion],
    verdicts: list[Verdict | None],
    weak: Grounding | None,
    attempt: int = 1,
) -> list[Verdict]:
    """The verdicts once the grounding is applied (pure): with an ungrounded answer
    (``weak``), every verdict that passed — but a count code measured — and every
    criterion left unjudged (None: no model was asked) fails as logical, the evidence
    naming the numbers. Grounded (``weak`` None), the verdicts stand; none may be None."""
    out: list[Verdict] = []
    for criterion, verdict in zip(criteria, verdicts, strict=True):
        if weak is None:
            if verdict is None:
                raise ValueError(f"criterion {criterion.id} has no verdict")
            out.append(verdict)
        elif verdict is not None and (not verdict.passed or _code_measured(criterion, verdict)):
            out.append(verdict)
        else:
            out.append(
                Verdict(
                    criterion_id=criterion.id,
                    passed=False,
                    failure_class="logical",
                    evidence=weak.evidence(),
                    signal="rule",
                    attempt=attempt,
                )
            )
    return out


def last_exit_code(calls: list[ToolCall]) -> int | None:
    """The exit code of the last shell call, if any."""
    for call in reversed(calls):
        if call.tool == "shell":
            return call.exit_code
    return None


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
    calls: list[ToolCall],
    workspace: Path,
    attempt: int = 1,
    *,
    recorded: Callable[[], Verdict | None] | None = None,
    observed: dict[str, Any] | None = None,
    count_request: str | None = None,
) -> Verdict:
    """Decide a criterion that has a check, by code (reads files, nothing else).
    ``recorded`` (a rerun's) gives the logged verdict of a check that reads the workspace,
    which a rerun does not have; without one logged, the check runs. ``observed`` (a
    verify's: a logged ``Verdict.observed``) decides such a check from what it read then,
    without reading the workspace. ``count_request``: the request a ``count_matches``
    reads the stated count against (``Config.count_reads_answer``; None, off:
    ``checks.evaluate``). The verdict carries what the check read
    (``Verdict.observed``)."""
    if criterion.check is None:
        raise ValueError(f"criterion {criterion.id} has no check")
    if recorded is not None and reads_workspace(criterion.check):
        logged = recorded()
        if logged is not None:
            return logged
    try:
        if observed is not None:
            res = judge_observed(
                criterion.check, output=output, observed=observed, count_request=count_request
            )
        else:
            res = evaluate(
                criterion.check,
                output=output,
                exit_code=last_exit_code(calls),
                workspace=workspace,
                count_request=count_request,
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

    A missing file (``file_exists``, or the file a ``file_contains``/``file_matches``
    reads) is the environment's fault only when a call that worked on it failed
    (refused, or an error); when no call ever tried to make it, or the calls that did
    succeeded, the work is wrong — an executor that only *claims* it wrote the file gets a
    logical failure. For the other checks a tool the environment refused explains the miss
    better than the check can. A call refused as a repeat (``repeated_call``) is no sign
    of the environment either way.
    """
    check = criterion.check
    missing = check is not None and (
        (check.kind == "file_exists" and check.value is not False)
        or (check.kind in ("file_contains", "file_matches") and suggested == "environmental")
    )
    if check is not None and missing:
        touching = [c for c in calls if _names(c, check.path)]
        return "environmental" if any(_environment_failed(c) for c in touching) else "logical"
    if suggested == "environmental" or any(_environment_failed(c) for c in calls):
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
