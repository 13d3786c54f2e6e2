"""R4a Agent-Validator — sensor and controller of the fast loop.

Responsibilities:
    Check each ExecutionResult of its pair against the subtask's criteria with the
    verification ladder: a criterion with a ``check`` is decided by code; any other by a
    tool-tier model verdict with a confidence; a verdict under the confidence threshold
    goes to a human (through the Queen, as a ConfirmationRequest). On failure, send a
    CorrectionSignal naming the failure class and retry, at most ``max_retries`` times;
    then publish the one SubTaskOutcome of the subtask. An attempt that passed but whose
    answer one tool call alone backs, where the proof would need two
    (``proof.needs_second_derivation``), is not given on yet: a CorrectionSignal with
    ``corroborate`` set asks the Executor to derive the value once more with a different
    command or tool (``Config.corroborate``), in a fresh conversation. That ask is no
    retry (it corrects nothing): it follows the last attempt ``max_retries`` allows too
    (:func:`may_corroborate`; ``Config.corroborate_after_last_retry`` off, or a log from
    before it: only with a retry left). The answer that comes back is judged as usual if
    it passes — and when it passes stating another value than the one asked about, on
    one call's word again (the fresh conversation corrected the first answer: a line
    count of 5 given as a column's total, then 4250 read off the file), that value is
    asked about in turn, in another fresh conversation (:func:`may_ask_again`; at most
    ``Config.corroborate_asks`` asks a subtask, 2; 1 for a log from before it), so a
    subtask runs at most ``max_retries`` + 1 + ``corroborate_asks`` attempts. An attempt
    that passed stating a value no tool call backs (grounding passed it — a mean the model
    worked out from a file it read — but no result shows it) is asked, by the same kind of
    CorrectionSignal with ``unbacked`` set, to compute it with a command or tool that
    prints it, in the same conversation (``Config.corroborate_unbacked``; off for a log
    from before it): one of the ``corroborate_asks`` asks, and when one call then shows
    the value, its second derivation may be asked as any other's. If the
    attempt after an ask does not pass — or passes without answering the request, by the
    Meta-Validator's own rule (``ladder.request_problem``: "There is no subtask to
    answer." to a how-many question states no number; ``Config.corroborate_keeps_answer``,
    off for a log from before it) — the subtask ends at once on the answer last asked
    about (:func:`corroboration_fallback`: matched, with every verdict and call of the
    subtask; for a non-answer, its ``reason`` says so) — asking for more proof never turns
    a passing answer into a failed subtask, nor a non-answer into a derivation — unless it
    holds a Law 1 denial.

Input contract:
    SubTask and ExecutionResult, both addressed ``to`` this pair; TaskSpec (the request
    the grounding of stated numbers reads; its kind and criteria, what the proof will
    hold the answer to).

Output contract:
    CorrectionSignal (addressed to the pair), SubTaskOutcome, ConfirmationRequest (human
    rung of the ladder); LLMCall for each model call.

Constraints:
    Fails closed — a model error, an unparsable verdict, a low-confidence verdict nobody
    confirms, or a failed execution never counts as a pass. An answer to a question that
    states a number no tool result backs fails whatever the model or a weak check says
    (``grounding``: a model's figure is never proof). Does NOT retry a subtask
    whose irreversible action the operator denied, or whose attempt ended on a model
    outage (paper §4c: an infrastructure failure ends the subtask at once). Asks for a
    derivation at most ``Config.corroborate_asks`` times per subtask — again only about a
    value other than the one last asked about, or about the one it asked to be shown with
    a tool, once a call shows it — and assumes nothing of it: the
    SubTaskOutcome carries every call and the value last asked about, and the proof
    decides whether two different calls or readings agree; does NOT retry the attempt
    that followed an ask, does NOT give that attempt on in place of the answer asked
    about when it states no answer to a request held to answer (a change is not), and
    does NOT give on the earlier answer after a Law 1 denial (the subtask fails: a denial
    never ends accept).
    Decides from structured fields only (``ToolCall.refusal``, ``ExecutionResult.stop``).
    Does NOT execute tools; does NOT judge the whole task (that is the Meta-Validator's
    scope).
    A subtask that is the request itself, a sure change or creation, passes only once
    one of its calls changed the workspace (or wrote a file that
    already held the text): an attempt whose change was refused — ``lost_lines``, say — and
    that answered anyway is retried, told so (``proof.unchanged``,
    ``Config.change_needs_effect``; off for a log from before it).
    Does NOT ask the model about an attempt a rule already decided — a check failed it, a
    figure is ungrounded, or a check that read the workspace passed (code measured what
    the answer states): its plausible criteria stay unjudged that attempt.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from artoo.actors.llm import LLMRequest
from artoo.actors.runtime.role import Equipment, Role, VerdictKey, handles
from artoo.actors.verification._evaluation import evaluates, evaluation_command
from artoo.actors.verification.answers import VerdictAnswer
from artoo.actors.verification.checks import COMPUTED_KINDS, computed
from artoo.actors.verification.ladder import (
    criteria_text,
    execution_failure_class,
    grounding_verdicts,
    majority_class,
    model_verdicts,
    request_problem,
    rule_verdict,
    tool_results_text,
    ungrounded,
    verdict_prompt,
)
from artoo.actors.verification.proof import Corroboration, needs_second_derivation, unchanged
from artoo.actors.verification.request import duties
from artoo.schemas import (
    Config,
    ConfirmationDecision,
    ConfirmationRequest,
    CorrectionSignal,
    Criterion,
    Envelope,
    ExecutionResult,
    FinalResult,
    LLMCall,
    Message,
    SubTask,
    SubTaskOutcome,
    TaskCancelled,
    TaskSpec,
    ToolCall,
    Verdict,
)

__all__ = [
    "CHANGED",
    "IMPLICIT_CRITERION",
    "AgentValidator",
    "corroboration_fallback",
    "may_ask_again",
    "may_corroborate",
    "second_derivation_ask",
]

IMPLICIT_CRITERION = Criterion(id="done", text="the subtask completed without error")
CHANGED = "changed"
"""The ``criterion_id`` of the verdict that fails an attempt at a change that changed
nothing (``proof.unchanged``): no criterion of the subtask's, the request's own."""


def may_corroborate(config: Config, attempt: int) -> bool:
    """Whether a second derivation may be asked for after attempt ``attempt`` passed (pure;
    how many a subtask is :func:`may_ask_again`'s): ``Config.corroborate`` on and — the ask is
    no retry — after any attempt, the last ``max_retries`` allows too; with
    ``Config.corroborate_after_last_retry`` off (a log from before it reads so) only with
    a retry left, as one of the retries."""
    return config.corroborate and (
        config.corroborate_after_last_retry or attempt <= config.max_retries
    )


def _asked_value(value: str) -> str:
    """A value as the proof compares it with the one asked about (pure): quotes, backticks
    and spacing around it aside — kept consistent with ``proof._norm_value``, which is not
    exported."""
    return value.strip().strip("`'\"").strip()


def may_ask_again(
    config: Config,
    asks: int,
    asked_value: str,
    value: str,
    *,
    asked_unbacked: bool = False,
    unbacked: bool = False,
) -> bool:
    """Whether a derivation of ``value`` may be asked for in a subtask already asked
    ``asks`` times, the last about ``asked_value`` (pure; :func:`may_corroborate` aside):
    always before the first ask; after one, only with fewer than ``Config.corroborate_asks``
    asks so far, and for a value other than the one asked about (the fresh conversation
    corrected the answer, and the new value stands on one derivation too) — or for the
    same value when the last ask was to show it with a tool (``asked_unbacked``: no call
    backed it) and one call now backs it (not ``unbacked``): its second derivation. The
    same value again otherwise is the ask answered: the proof decides it."""
    if asks == 0:
        return True
    if asks >= config.corroborate_asks:
        return False
    if _asked_value(value) != _asked_value(asked_value):
        return True
    return asked_unbacked and not unbacked


def second_derivation_ask(
    *,
    request: str,
    kind: str,
    task_criteria: Sequence[Criterion],
    criteria: Sequence[Criterion],
    verdicts: Sequence[Verdict],
    calls: Sequence[ToolCall],
    output: str,
    shape: str = "",
    unbacked: bool = True,
    by_effect: bool = True,
    in_place: bool = True,
    evaluation: bool = True,
    named_read: bool = False,
    unit_count: bool = False,
) -> Corroboration | None:
    """:func:`~artoo.actors.verification.proof.needs_second_derivation` for an attempt
    judged on the subtask's ``criteria`` (pure): the task's criteria that are not the
    subtask's (``task_criteria``, from the TaskSpec) are the ones judged later; ``kind``
    and ``shape`` are the TaskSpec's; ``unbacked``, ``Config.corroborate_unbacked``;
    ``by_effect``, ``Config.read_back_by_effect``; ``in_place``,
    ``Config.read_back_in_place``; ``evaluation``, ``Config.proof_by_evaluation``;
    ``named_read``, ``Config.read_back_reads_named``; ``unit_count``,
    ``Config.unit_count_phrase``."""
    own = {c.id for c in criteria}
    return needs_second_derivation(
        request=request,
        kind=kind,
        criteria={c.id: c for c in criteria},
        verdicts=verdicts,
        calls=calls,
        output=output,
        pending=[c for c in task_criteria if c.id not in own],
        shape=shape,
        unbacked=unbacked,
        by_effect=by_effect,
        in_place=in_place,
        evaluation=evaluation,
        named_read=named_read,
        unit_count=unit_count,
    )


def evaluation_run(
    *, request: str, kind: str, shape: str, calls: Sequence[ToolCall], enabled: bool
) -> str:
    """The command the Executor runs itself before the next turn of a retry, or of an ask
    about a value no tool result shows (``CorrectionSignal.run``; pure): for a question
    (:func:`~artoo.actors.verification.request.duties`), the command that evaluates the
    request when code can write it
    (:func:`~artoo.actors.verification._evaluation.evaluation_command`), unless a call of
    the subtask already evaluated it; "" otherwise, or not ``enabled``
    (``Config.proof_by_evaluation``). A small model told to run the code answered "Here is
    the output of the Python code …" with no call made, or ran ``echo 9.0``."""
    if not enabled or not duties(request, kind, shape).answers:
        return ""
    if any(evaluates(c, request) for c in calls):
        return ""
    return evaluation_command(request) or ""


def _computes(criterion: Criterion) -> bool:
    """Whether ``criterion``'s check computes a value code can print for a retry."""
    check = criterion.check
    return check is not None and (check.kind in COMPUTED_KINDS or check.kind == "count_matches")


def computed_run(*, verdicts: Sequence[Verdict], calls: Sequence[ToolCall]) -> str:
    """The command the Executor runs itself before the next turn of a retry after a
    check computed a value the answer did not state — a ``table_value`` (the
    ``python3 -c`` that prints it from the table, and writes it to the ``into`` file of a
    value the request writes), a ``code_value`` (a ``grep`` that shows it), a
    ``count_matches`` (the command that prints the count, ``_counting.count_command``) —
    or after an attempt that failed outright (a doom loop: the failed verdict of such a
    check still carries what code computed) (``CorrectionSignal.run``; pure): the command
    logged in the verdict's observation (``observed["command"]``; a log from before it
    has none, and nothing is run), unless a call of the subtask already ran it; ""
    otherwise. Told "code computed 4250; the output states 0", a small model ran its
    wrong ``awk`` again and stated 0 three times; told "3 lines containing 'ERROR'; the
    output states 20", it read the file again three times: what a tool prints, it
    states."""
    ran = {str(c.args.get("command", "")) for c in calls if c.tool == "shell"}
    for v in verdicts:
        command = str(v.observed.get("command", "")) if not v.passed else ""
        if command and command not in ran:
            return command
    return ""


def corroboration_fallback(
    *,
    asked: ExecutionResult,
    asked_verdicts: Sequence[Verdict],
    result: ExecutionResult,
    verdicts: Sequence[Verdict],
    history: Sequence[Verdict],
    calls: Sequence[ToolCall],
    value: str = "",
    request: str = "",
    kind: str = "",
    shape: str = "",
    keeps_answer: bool = False,
) -> SubTaskOutcome | None:
    """The outcome of a subtask asked for a second derivation of the answer of attempt
    ``asked`` (the one asked of last; ``asked_verdicts`` all passed) when the attempt that
    followed (``result``, judged ``verdicts``) did not pass, or — ``keeps_answer``
    (``Config.corroborate_keeps_answer``) — passed without answering the request (pure):
    the earlier answer's — matched, its output and verdicts — with ``history`` (every
    verdict), ``calls`` (every call of every attempt) and ``result``'s attempt number; the
    task's proof then decides whether two different calls back its value (``value``: the
    one asked about). An attempt that passed answers unless the Meta-Validator's rule for
    the request (``ladder.request_problem``: ``request``, ``kind`` and ``shape`` are the
    TaskSpec's, the values ``calls`` printed those the answer may state) finds a problem
    — "There is no subtask to answer." to a how-many question states no number: it
    derives nothing, and given on it would fail the task's request check; the outcome's
    ``reason`` then says so. A request not held to answer (a change) never falls back
    so. None when ``result`` passed and answers (it is given on, or asked about again, as
    usual) or holds a Law 1 denial (the subtask fails as usual: a denial never ends
    accept)."""
    if any(c.refusal == "law1_denied" for c in result.tool_calls):
        return None
    reason = ""
    if all(v.passed for v in verdicts):
        problem = (
            request_problem(request, kind, shape, result.output, calls) if keeps_answer else None
        )
        if problem is None:
            return None
        reason = f"attempt {result.attempt} did not answer: {problem}"
    return SubTaskOutcome(
        subtask_id=result.subtask_id,
        round=result.round,
        status="matched",
        output=asked.output,
        verdicts=list(asked_verdicts),
        history=list(history),
        attempts=result.attempt,
        tool_calls=list(calls),
        reason=reason,
        asked=value,
    )


@dataclass
class _Sub:
    subtask: SubTask
    task_id: str
    history: list[Verdict] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    asked: tuple[ExecutionResult, list[Verdict]] | None = None
    """The attempt a second derivation was last asked of (its verdicts all passed)."""
    asked_value: str = ""
    """The value that attempt stated and was asked to derive again."""
    asked_unbacked: bool = False
    """Whether that ask was to show the value with a tool (no call backed it)."""
    asks: int = 0
    """How many second derivations the subtask was asked for (``Config.corroborate_asks``)."""


class AgentValidator(Role):
    """The Agent-Validator actor (one per effector pair)."""

    name: ClassVar[str] = "agent_validator"
    publishes: ClassVar[tuple[type[Message], ...]] = (
        CorrectionSignal,
        SubTaskOutcome,
        ConfirmationRequest,
        LLMCall,
    )
    consumes: ClassVar[tuple[type[Message], ...]] = (TaskSpec,)
    addressed: ClassVar[tuple[type[Message], ...]] = (SubTask, ExecutionResult)

    def __init__(self, equipment: Equipment, instance: str | None = None) -> None:
        super().__init__(equipment, instance)
        self.subs: dict[str, _Sub] = {}
        self.requests: dict[str, str] = {}
        self.kinds: dict[str, str] = {}  # TaskSpec.kind: the Perceiver's reading
        self.shapes: dict[str, str] = {}  # TaskSpec.shape: what an answer must state
        self.task_criteria: dict[str, list[Criterion]] = {}  # TaskSpec.criteria

    def active_tasks(self) -> list[str]:
        return sorted({s.task_id for s in self.subs.values()})

    def forget_task(self, task_id: str) -> None:
        for sid in [k for k, s in self.subs.items() if s.task_id == task_id]:
            del self.subs[sid]
        self.requests.pop(task_id, None)
        self.kinds.pop(task_id, None)
        self.shapes.pop(task_id, None)
        self.task_criteria.pop(task_id, None)

    @handles(TaskSpec)
    def on_task_spec(self, env: Envelope) -> None:
        self.requests[env.task_id or ""] = env.body.text
        self.kinds[env.task_id or ""] = env.body.kind
        self.shapes[env.task_id or ""] = env.body.shape
        self.task_criteria[env.task_id or ""] = list(env.body.criteria)

    @handles(SubTask)
    def on_sub_task(self, env: Envelope) -> None:
        st: SubTask = env.body
        self.subs[st.subtask_id] = _Sub(subtask=st, task_id=env.task_id or "")

    def _recorded(
        self, subtask_id: str, criterion_id: str, attempt: int
    ) -> Callable[[], Verdict | None] | None:
        """A rerun's logged verdict for a check that reads the workspace (else None)."""
        recorded = self.ctx.recorded_verdicts
        if recorded is None:
            return None
        key = VerdictKey(criterion_id, subtask_id=subtask_id, attempt=attempt)
        return lambda: recorded.verdict(key)

    @handles(ExecutionResult)
    def on_execution_result(self, env: Envelope) -> None:
        result: ExecutionResult = env.body
        sub = self.subs.get(result.subtask_id)
        if sub is None:
            return
        sub.calls.extend(result.tool_calls)
        criteria = sub.subtask.criteria or [IMPLICIT_CRITERION]
        denied = [c for c in result.tool_calls if c.refusal == "law1_denied"]
        if denied:
            # the work needed an action a human did not allow: the subtask failed, whatever
            # the model says, and retrying will not change the answer
            verdicts = [
                Verdict(
                    criterion_id=c.id,
                    passed=False,
                    failure_class="environmental",
                    evidence=denied[0].error or "an irreversible action was denied",
                    attempt=result.attempt,
                )
                for c in criteria
            ]
        else:
            verdicts = self._verdicts(env, criteria, result, sub)
        sub.history.extend(verdicts)
        if sub.asked is not None:  # after an ask: it passes and answers, or the earlier one holds
            fallback = corroboration_fallback(
                asked=sub.asked[0],
                asked_verdicts=sub.asked[1],
                result=result,
                verdicts=verdicts,
                history=sub.history,
                calls=sub.calls,
                value=sub.asked_value,
                request=self.requests.get(sub.task_id, ""),
                kind=self.kinds.get(sub.task_id, ""),
                shape=self.shapes.get(sub.task_id, ""),
                keeps_answer=self.ctx.config.corroborate_keeps_answer,
            )
            if fallback is not None:
                self.reply(env, fallback)
                del self.subs[result.subtask_id]
                return
        passed = all(v.passed for v in verdicts)
        final = bool(denied) or result.stop == "model_error"  # retrying cannot help
        fclass = majority_class(verdicts)
        retry = result.attempt <= self.ctx.config.max_retries and not final
        # the ask is no retry: it needs none left (may_corroborate)
        ask = self._corroboration(sub, criteria, verdicts, result) if passed and not final else None
        if ask is not None or (not passed and retry):
            if ask is not None:  # passed, on one call's word or none: derive it
                sub.asked = (result, verdicts)
                sub.asked_value = ask.value
                sub.asked_unbacked = ask.unbacked
                sub.asks += 1
                feedback = ask.feedback()
            else:
                feedback = "; ".join(
                    f"{v.criterion_id}: {v.evidence or 'failed'}" for v in verdicts if not v.passed
                )
            run = ""
            if ask is None or ask.unbacked:  # a retry, or a value no result shows
                run = evaluation_run(
                    request=self.requests.get(sub.task_id, ""),
                    kind=self.kinds.get(sub.task_id, ""),
                    shape=self.shapes.get(sub.task_id, ""),
                    calls=sub.calls,
                    enabled=self.ctx.config.proof_by_evaluation,
                )
            if run:  # said only when it is run: an ask names the command either way
                feedback += f"\nThe code the request asks about is run for you next: {run}"
            elif ask is None:  # a value code computed, not stated: printed for it
                run = computed_run(verdicts=verdicts, calls=sub.calls)
                if run:
                    feedback += f"\nA command that computes it is run for you next: {run}"
            self.reply(
                env,
                CorrectionSignal(
                    subtask_id=result.subtask_id,
                    round=result.round,
                    attempt=result.attempt,
                    verdicts=verdicts,
                    feedback=feedback,
                    failure_class=None if passed else fclass,
                    corroborate=ask.value if ask is not None else "",
                    unbacked=ask is not None and ask.unbacked,
                    run=run,
                ),
                to=self.instance,
            )
            return
        self.reply(
            env,
            SubTaskOutcome(
                subtask_id=result.subtask_id,
                round=result.round,
                status="matched" if passed else "failed",
                output=result.output,
                verdicts=verdicts,
                history=list(sub.history),
                attempts=result.attempt,
                tool_calls=list(sub.calls),
                failure_class=None if passed else fclass,
                reason="" if passed else (result.error or "criteria failed"),
                asked=sub.asked_value,
            ),
        )
        del self.subs[result.subtask_id]

    def _corroboration(
        self, sub: _Sub, criteria: list[Criterion], verdicts: list[Verdict], result: ExecutionResult
    ) -> Corroboration | None:
        """The derivation to ask for after an attempt that passed, or None: allowed
        (:func:`may_corroborate`), and not asked before in the subtask — or asked, but about
        another value than this attempt's, or to show this value that one call now backs,
        with an ask left (:func:`may_ask_again`)."""
        config = self.ctx.config
        if sub.asks >= config.corroborate_asks or not may_corroborate(config, result.attempt):
            return None
        ask = second_derivation_ask(
            request=self.requests.get(sub.task_id, ""),
            kind=self.kinds.get(sub.task_id, ""),
            task_criteria=self.task_criteria.get(sub.task_id, []),
            criteria=criteria,
            verdicts=verdicts,
            calls=sub.calls,
            output=result.output,
            shape=self.shapes.get(sub.task_id, ""),
            unbacked=config.corroborate_unbacked,
            by_effect=config.read_back_by_effect,
            in_place=config.read_back_in_place,
            evaluation=config.proof_by_evaluation,
            named_read=config.read_back_reads_named,
            unit_count=config.unit_count_phrase,
        )
        if ask is None or not may_ask_again(
            config,
            sub.asks,
            sub.asked_value,
            ask.value,
            asked_unbacked=sub.asked_unbacked,
            unbacked=ask.unbacked,
        ):
            return None
        return ask

    # ------------------------------------------------------------------ the ladder
    def _verdicts(
        self, env: Envelope, criteria: list[Criterion], result: ExecutionResult, sub: _Sub
    ) -> list[Verdict]:
        """Every criterion's verdict: rules first, then ONE model call for all the rest."""
        attempt = result.attempt
        by_id: dict[str, Verdict] = {}
        judged: list[Criterion] = []
        request = self.requests.get(sub.task_id)
        count_request = (request or "") if self.ctx.config.count_reads_answer else None
        for criterion in criteria:
            if not result.ok:
                observed: dict[str, Any] = {}
                if _computes(criterion):
                    # what code computes, for the retry to print (computed_run)
                    observed = rule_verdict(
                        criterion,
                        "",
                        [],
                        self.ctx.workspace,
                        attempt,
                        recorded=self._recorded(result.subtask_id, criterion.id, attempt),
                    ).observed
                by_id[criterion.id] = Verdict(
                    criterion_id=criterion.id,
                    passed=False,
                    failure_class=execution_failure_class(result),
                    evidence=result.error or "execution failed",
                    signal="rule",
                    attempt=attempt,
                    observed=observed,
                )
            elif criterion is IMPLICIT_CRITERION:
                by_id[criterion.id] = Verdict(
                    criterion_id=criterion.id, passed=True, evidence="completed", attempt=attempt
                )
            elif criterion.check is not None:
                by_id[criterion.id] = rule_verdict(
                    criterion,
                    result.output,
                    result.tool_calls,
                    self.ctx.workspace,
                    attempt,
                    recorded=self._recorded(result.subtask_id, criterion.id, attempt),
                    count_request=count_request,
                )
            else:
                judged.append(criterion)
        weak = (
            ungrounded(
                result.output,
                sub.calls,
                request=request,
                instruction=sub.subtask.instruction,
                checked=[(c, by_id[c.id]) for c in criteria if c.id in by_id],
                kind=self.kinds.get(sub.task_id, ""),
                count_reading=self.ctx.config.count_reads_answer,
            )
            if result.ok
            else None
        )
        undone = (  # the request itself, a change, and nothing changed: not done
            unchanged(
                request or "", self.kinds.get(sub.task_id, ""), sub.subtask.instruction, sub.calls
            )
            if result.ok and self.ctx.config.change_needs_effect
            else None
        )
        refuted = undone is not None or any(not v.passed for v in by_id.values())
        measured = any(  # code measured the workspace and the answer agrees: rules decide
            c.check is not None and computed(c.check, by_id[c.id].observed) and by_id[c.id].passed
            for c in criteria
            if c.id in by_id
        )
        if judged and weak is None and not refuted and not measured:
            for criterion, verdict in zip(
                judged, self._llm_verdicts(env, judged, result, sub, attempt), strict=True
            ):
                by_id[criterion.id] = verdict
        kept = [c for c in criteria if c.id in by_id or weak is not None]
        verdicts = grounding_verdicts(kept, [by_id.get(c.id) for c in kept], weak, attempt)
        if undone is not None:
            verdicts.append(
                Verdict(
                    criterion_id=CHANGED,
                    passed=False,
                    failure_class="logical",
                    evidence=undone,
                    attempt=attempt,
                )
            )
        return verdicts

    def _llm_verdicts(
        self,
        env: Envelope,
        criteria: list[Criterion],
        result: ExecutionResult,
        sub: _Sub,
        attempt: int,
    ) -> list[Verdict]:
        request = LLMRequest(
            role=self.name,
            tier="tool",
            task_id=sub.task_id,
            subtask_id=sub.subtask.subtask_id,
            max_output_tokens=self.ctx.config.output_caps.verdict,
            messages=[
                {"role": "system", "content": verdict_prompt("an Agent-Validator", criteria)},
                {
                    "role": "user",
                    "content": f"Subtask: {sub.subtask.instruction}\n"
                    + (
                        f"Criterion: {criteria[0].text}\n"
                        if len(criteria) == 1
                        else f"Criteria:\n{criteria_text(criteria)}\n"
                    )
                    + f"Tool results:\n{tool_results_text(result.tool_calls)}\n"
                    + f"Output:\n{result.output}",
                },
            ],
        )
        threshold = self.ctx.config.llm_confidence_threshold
        answers = model_verdicts(
            self.ctx.model(), request, criteria, threshold=threshold, attempt=attempt
        )
        return [
            self._confirm_low(env, c, sub, verdict, v, threshold, attempt)
            for c, (verdict, v) in zip(criteria, answers, strict=True)
        ]

    def _confirm_low(
        self,
        env: Envelope,
        criterion: Criterion,
        sub: _Sub,
        verdict: Verdict,
        v: VerdictAnswer | None,
        threshold: float,
        attempt: int,
    ) -> Verdict:
        """The human rung for a verdict the model gave with too little confidence."""
        if v is None or verdict.confidence >= threshold:
            return verdict
        confidence = verdict.confidence
        approved = self._ask_human(env, criterion, sub, v)
        return Verdict(
            criterion_id=criterion.id,
            passed=approved,
            failure_class=None if approved else (v.failure_class or "logical"),
            evidence=f"low model confidence ({confidence:.2f}); human "
            f"{'confirmed' if approved else 'did not confirm'}: {v.evidence}",
            signal="human",
            confidence=1.0 if approved else confidence,
            attempt=attempt,
        )

    def _ask_human(self, env: Envelope, criterion: Criterion, sub: _Sub, v: VerdictAnswer) -> bool:
        """The human rung: a ConfirmationRequest through the Queen, and its one decision.

        Fails closed: a denial, the Queen's timeout, the task's end or a stopped bus all
        count as "not confirmed".
        """
        request_id = self.ctx.new_id()
        inbox = self.open_inbox(
            (ConfirmationDecision, FinalResult, TaskCancelled), from_seq=env.seq + 1
        )
        try:
            self.reply(
                env,
                ConfirmationRequest(
                    request_id=request_id,
                    action=f"accept that '{criterion.text}' is met",
                    reason=f"model verdict {'pass' if v.passed else 'fail'} with low confidence: "
                    f"{v.evidence}",
                    subtask_id=sub.subtask.subtask_id,
                    timeout_s=self.ctx.config.confirmation_timeout_s,
                    gate="verdict",
                ),
            )
            while not self.ctx.bus.halted:
                got = inbox.get(timeout=1.0)
                if got is None:
                    continue
                body = got.body
                if isinstance(body, ConfirmationDecision) and body.request_id == request_id:
                    return body.approved
                if isinstance(body, FinalResult) and body.task_id == sub.task_id:
                    return False
                if isinstance(body, TaskCancelled) and got.task_id == sub.task_id:
                    return False
            return False
        finally:
            self.close_inbox(inbox)
