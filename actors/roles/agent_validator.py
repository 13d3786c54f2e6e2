"""R4a Agent-Validator — sensor and controller of the fast loop.

Responsibilities:
    Check each ExecutionResult of its pair against the subtask's criteria with the
    verification ladder: a criterion with a ``check`` (every criterion code writes from
    the reading) is decided by code over the answer, the subtask's calls so far and the
    workspace; any other by a tool-tier model verdict with a confidence, a verdict under
    the threshold going to a human (a ConfirmationRequest through the Queen). On
    failure, send a CorrectionSignal naming the failure class and retry, at most
    ``max_retries`` times; then publish the one SubTaskOutcome of the subtask. An attempt
    that passed, answering a question whose value no code derivation proved, is not
    given on yet: a CorrectionSignal with ``corroborate`` set asks for a second
    derivation in a fresh conversation that sees nothing of the first answer, told only
    which methods not to repeat (``proof.second_derivation``; once a subtask; no retry).
    The attempt that follows ends the subtask: it passed and states the same value (by
    the shape's normalizer) — matched, the proof decides whether the two derivations
    agree by different methods; it passed stating another value — failed, logical, the
    two derivations disagree; it failed — the first answer's outcome, matched, with the
    value asked about (the proof finds no agreement).

Input contract:
    SubTask and ExecutionResult, both addressed ``to`` this pair; TaskSpec (the reading
    the checks and the proof read).

Output contract:
    CorrectionSignal (addressed to the pair), SubTaskOutcome, ConfirmationRequest (human
    rung of the ladder); LLMCall for each model call.

Constraints:
    Fails closed — a model error, an unparsable verdict, a low-confidence verdict nobody
    confirms, or a failed execution never counts as a pass. Does NOT retry a subtask
    whose irreversible action the operator denied, or whose attempt ended on a model
    outage. Does NOT execute tools; does NOT judge the whole task (the Meta-Validator
    does); never reads the request's wording for a decision.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import msgspec

from artoo.actors.llm import LLMRequest
from artoo.actors.runtime.role import Equipment, Role, VerdictKey, handles
from artoo.actors.verification._values import items, same_set, states
from artoo.actors.verification.answers import VerdictAnswer
from artoo.actors.verification.ladder import (
    criteria_text,
    execution_failure_class,
    majority_class,
    model_verdicts,
    rule_verdict,
    tool_results_text,
    verdict_prompt,
)
from artoo.actors.verification.proof import Ask, second_derivation
from artoo.schemas import (
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
    "AGREE",
    "IMPLICIT_CRITERION",
    "AgentValidator",
    "after_ask",
]

IMPLICIT_CRITERION = Criterion(id="done", text="the subtask completed without error")
AGREE = "agree"
"""The ``criterion_id`` of the verdict that fails a subtask whose two derivations
disagree: no criterion of the subtask's, the proof's own."""


def after_ask(
    *,
    ask: Ask,
    shape: str,
    asked: ExecutionResult,
    asked_verdicts: Sequence[Verdict],
    result: ExecutionResult,
    verdicts: Sequence[Verdict],
    history: Sequence[Verdict],
    calls: Sequence[ToolCall],
) -> SubTaskOutcome:
    """The one outcome of a subtask after the attempt that answered an ask for a second
    derivation (pure; the module's rule): the fresh answer, matched, when it passed and
    states the value asked about; failed (:data:`AGREE`), when it passed stating another;
    the first answer's, matched, when it did not pass (the proof finds no agreement)."""
    base = SubTaskOutcome(
        subtask_id=result.subtask_id,
        round=result.round,
        attempts=result.attempt,
        tool_calls=list(calls),
        asked=ask.value,
        history=list(history),
    )
    if not all(v.passed for v in verdicts):
        return msgspec.structs.replace(
            base,
            output=asked.output,
            verdicts=list(asked_verdicts),
            reason=f"attempt {result.attempt} derived nothing: the first answer stands",
        )
    if shape == "list":
        agree = same_set(items(result.output), items(ask.value))
    else:
        agree = states(result.output, ask.value, shape)
    if agree:
        return msgspec.structs.replace(base, output=result.output, verdicts=list(verdicts))
    why = f"two derivations disagree: first {ask.value}, afresh {result.output.strip()[:120]}"
    failed = Verdict(
        criterion_id=AGREE,
        passed=False,
        failure_class="logical",
        evidence=why,
        attempt=result.attempt,
    )
    return msgspec.structs.replace(
        base,
        output=result.output,
        verdicts=[*verdicts, failed],
        status="failed",
        failure_class="logical",
        history=[*history, failed],
        reason=why,
    )


@dataclass
class _Sub:
    subtask: SubTask
    task_id: str
    history: list[Verdict] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    asked: tuple[ExecutionResult, list[Verdict], Ask] | None = None
    """The attempt a second derivation was asked of, its verdicts, and the ask."""


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
        self.specs: dict[str, TaskSpec] = {}

    def active_tasks(self) -> list[str]:
        return sorted({s.task_id for s in self.subs.values()})

    def forget_task(self, task_id: str) -> None:
        for sid in [k for k, s in self.subs.items() if s.task_id == task_id]:
            del self.subs[sid]
        self.specs.pop(task_id, None)

    @handles(TaskSpec)
    def on_task_spec(self, env: Envelope) -> None:
        self.specs[env.task_id or ""] = env.body

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
        spec = self.specs.get(sub.task_id) or TaskSpec(text="", intent="", slug="")
        criteria = sub.subtask.criteria or [IMPLICIT_CRITERION]
        denied = [c for c in result.tool_calls if c.refusal == "law1_denied"]
        if denied:  # an action a human did not allow: retrying will not change it
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
            verdicts = self._verdicts(env, criteria, result, sub, spec)
        sub.history.extend(verdicts)
        if sub.asked is not None:  # the answer to an ask ends the subtask
            asked, asked_verdicts, made = sub.asked
            self.reply(
                env,
                after_ask(
                    ask=made,
                    shape=spec.shape,
                    asked=asked,
                    asked_verdicts=asked_verdicts,
                    result=result,
                    verdicts=verdicts,
                    history=sub.history,
                    calls=sub.calls,
                ),
            )
            del self.subs[result.subtask_id]
            return
        passed = all(v.passed for v in verdicts)
        final = bool(denied) or result.stop == "model_error"
        fclass = majority_class(verdicts)
        retry = result.attempt <= self.ctx.config.max_retries and not final
        ask: Ask | None = None
        if passed and not final:
            ask = second_derivation(
                spec=spec,
                criteria={c.id: c for c in criteria},
                verdicts=verdicts,
                calls=sub.calls,
                output=result.output,
            )
        if ask is not None or (not passed and retry):
            if ask is not None:
                sub.asked = (result, verdicts, ask)
                feedback = ask.feedback()
            else:
                feedback = "; ".join(
                    f"{v.criterion_id}: {v.evidence or 'failed'}" for v in verdicts if not v.passed
                )
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
                    avoid=ask.avoid if ask is not None else [],
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
            ),
        )
        del self.subs[result.subtask_id]

    # ------------------------------------------------------------------ the ladder
    def _verdicts(
        self,
        env: Envelope,
        criteria: list[Criterion],
        result: ExecutionResult,
        sub: _Sub,
        spec: TaskSpec,
    ) -> list[Verdict]:
        """Every criterion's verdict: rules first, then ONE model call for the rest (only
        when no rule failed)."""
        attempt = result.attempt
        by_id: dict[str, Verdict] = {}
        judged: list[Criterion] = []
        for criterion in criteria:
            if not result.ok:
                by_id[criterion.id] = Verdict(
                    criterion_id=criterion.id,
                    passed=False,
                    failure_class=execution_failure_class(result),
                    evidence=result.error or "execution failed",
                    attempt=attempt,
                )
            elif criterion is IMPLICIT_CRITERION:
                by_id[criterion.id] = Verdict(
                    criterion_id=criterion.id, passed=True, evidence="completed", attempt=attempt
                )
            elif criterion.check is not None:
                by_id[criterion.id] = rule_verdict(
                    criterion,
                    result.output,
                    sub.calls,
                    self.ctx.workspace,
                    attempt,
                    targets=spec.targets,
                    recorded=self._recorded(result.subtask_id, criterion.id, attempt),
                )
            else:
                judged.append(criterion)
        refuted = any(not v.passed for v in by_id.values())
        if judged and not refuted:
            for criterion, verdict in zip(
                judged, self._llm_verdicts(env, judged, result, sub, attempt), strict=True
            ):
                by_id[criterion.id] = verdict
        return [by_id[c.id] for c in criteria if c.id in by_id]

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
