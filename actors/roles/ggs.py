"""R7 — Goal Gradient Solver (GGS): the controller of the medium loop.

Responsibilities
    Turn one round's fan-in into one decision (paper §5): the loss
    ``L = α·D + β·(1−Ω)·P + λ·Ω``, its gradient, the macro-state cascade of Appendix A,
    the Law 2 kill-switch, the replan budget, the MUST NOT sets taken from structured
    ToolCall records, and Megrams quantized by §6.3. The math is in
    :mod:`artoo.actors.roles._gradient` (pure, re-exported here); this module is the actor.
    Beyond the paper, the GGS is the one place a task ends — it publishes every
    FinalResult — so three more duties live here, each in its own handler:
    **deadlines** (``on_tick``: a task past its TaskRequest deadline, clock time less
    the time the operator paused it: the Equipment's ``paused_s``),
    **cost** (``on_llm_call`` keeps the ledger's records; ``FinalResult.cost`` is
    :func:`artoo.actors.runtime.ledger.task_cost`), and **crash and cancel to abandon**
    (``on_role_failed``, ``on_task_cancelled``).

Input contract (consumes)
    ``TaskRequest`` — a task starts: its deadline.
    ``TaskSpec`` — its task criteria, slug and environment (the TaskGradient is made).
    ``MemoryRecall`` — round 0's: the family tag, the first tag recall by meaning read
    (the episode megram is written under it, so paraphrases build one tag's evidence).
    ``DispatchManifest`` — a round's subtask criteria and groups (for D and the cost); the
    last one's subtasks are the episode's steps.
    ``ReplanRequest`` / ``OutcomeSummary`` — the Meta-Validator's fan-in: one decision.
    ``PlanRejected`` / ``StepFailed`` — no plan could run (or no task reading): the round's
    logical failure, decided by the same table (a Perceiver failure abandons at once, and
    so does the Planner's ``caution`` step: the operator denied the task at its
    intent-level Caution — reason ``caution_denied``, its output saying what was not done).
    ``LLMCall`` — the cost ledger; a call refused by the task's budget (``refused``) ends
    the task abandon, reason ``budget``, ``FinalResult.budget`` naming it.
    ``ConfirmationRequest`` / ``ConfirmationDecision`` — which Law 1 actions were denied
    (``FinalResult.law1_denied`` and its summary).
    ``RoleFailed`` — a crashed role's tasks end (abandon, reason "crash").
    ``TaskCancelled`` — cancel (the Queen's, or ``System.close``): abandon, naming the
    ticket the cancel answered (``FinalResult.ticket_id``).
    Timer ticks — deadlines.

Output contract (publishes)
    ``GGSDecision`` — every decision, with all of its inputs (for replay ``--verify``).
    ``PlanDirective`` — on an action state: the directive, MUST NOT sets, urgency and
    failure class.
    ``FinalResult`` — exactly one per task, on every path, with a structured ``reason``.
    ``MegramRecorded`` — the round's experience; GGS is the only writer to memory.

Constraints
    Does NOT call a model, plan, execute tools or validate results. Does NOT read memory.
    Decides from structured fields only (never from error or display text). Does NOT
    import another role module.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

import msgspec

from artoo.actors.runtime.ledger import CallRecord, task_cost
from artoo.actors.runtime.role import Equipment, Role, handles
from artoo.actors.tools import Redactor, secret_values
from artoo.schemas import (
    BudgetName,
    ConfirmationDecision,
    ConfirmationRequest,
    DispatchManifest,
    Envelope,
    FinalResult,
    GGSConfig,
    GGSDecision,
    LLMCall,
    MegramRecorded,
    MemoryRecall,
    Message,
    OutcomeSummary,
    PlanDirective,
    PlanRejected,
    ReplanRequest,
    RoleFailed,
    StepFailed,
    TaskCancelled,
    TaskRequest,
    TaskSpec,
)
from artoo.schemas.messages import EndReason

from ._gradient import (
    ACTION_STATES,
    TERMINAL_STATES,
    GGSStep,
    TaskGradient,
    distance,
    implausibility,
    loss,
    macro_state,
    not_done,
    quantize,
    resource_cost,
)

__all__ = [
    "ACTION_STATES",
    "GGS",
    "LAW1_TAG",
    "TERMINAL_STATES",
    "GGSStep",
    "TaskBook",
    "TaskGradient",
    "distance",
    "implausibility",
    "law1_summary",
    "loss",
    "macro_state",
    "not_done",
    "quantize",
    "ran_out",
    "resource_cost",
    "script_summary",
    "unplanned_evidence",
]

LAW1_TAG = "[LAW1]"
"""How a FinalResult's summary shows ``law1_denied`` to a person."""


def _redactor() -> Callable[[str], str]:
    """Redacts the secret values of this process's environment (episode commands)."""
    return Redactor(secret_values())


def law1_summary(summary: str, denied: list[str], needed: list[str]) -> str:
    """The summary of a task in which the operator denied irreversible actions (pure).

    ``denied``: the denied actions; ``needed``: denied targets that every later plan still
    needed (the Planner's PlanRejected). Rendered from structured fields only.
    """
    what = "; ".join(denied) or "an irreversible action"
    if needed:
        head = (
            f"{LAW1_TAG} The only way found ({what}) was denied by the operator: every later "
            f"plan still needed {', '.join(needed)} and was rejected."
        )
    else:
        head = f"{LAW1_TAG} An irreversible action was denied by the operator ({what})."
    return f"{head} {summary}".strip()


def script_summary(summary: str, ran_out: list[str]) -> str:
    """The summary of an abandoned task whose ``scripted:`` model ran out of entries for
    the roles ``ran_out`` (pure): said plainly after it, as the likely cause."""
    roles = ", ".join(ran_out)
    return f"{summary} — the model script ran out: no entry left for {roles}".strip(" —")


def ran_out(roles: list[str], call: LLMCall) -> None:
    """Note ``call``'s role in ``roles`` if it is a ``scripted:`` call that failed (a
    script fails a call only when no entry is left for it)."""
    if call.error and call.refused is None and call.model.startswith("scripted:"):
        if call.role not in roles:
            roles.append(call.role)


def caution_not_done(request: str) -> str:
    """The output of a task the operator denied at its intent-level Caution (pure): what
    was not done — nothing of the request was run."""
    what = f": {request!r}" if request else ""
    return (
        f"Not done{what}. The operator denied the task (memory marks its intent caution: "
        "mixed outcomes before); nothing was planned or run."
    )


def unplanned_evidence(body: PlanRejected | StepFailed) -> str:
    """Why a round had no plan to run, as the GGS logs it (pure)."""
    if isinstance(body, PlanRejected):
        return "no plan keeps the MUST NOT set: " + "; ".join(body.violations)
    return f"{body.role}: {body.error}"


@dataclass
class TaskBook:
    """The GGS's per-task bookkeeping, beside the :class:`TaskGradient` — pure, fed the
    task's messages in seq order by :meth:`see`. The actor runs it live; ``artoo replay
    --verify`` runs the same code over the log to recompute each decision and FinalResult.

    ``started``/``deadline_s`` are the actor's (clock time); the rest is a function of the
    messages seen: the cost ledger's records and groups, the Law 1 actions denied (and the
    denied targets later plans still needed), the roles a scripted model ran out for.
    """

    started: float = 0.0
    deadline_s: float = float("inf")
    gradient: TaskGradient | None = None
    calls: list[CallRecord] = field(default_factory=list)
    groups: dict[str, tuple[int, int]] = field(default_factory=dict)  # subtask -> (round, seq)
    law1_requests: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    """Law 1 requests waiting for a decision: request id -> (action, target)."""
    denied: list[str] = field(default_factory=list)  # denied actions
    denied_targets: list[str] = field(default_factory=list)
    needed: list[str] = field(default_factory=list)  # denied targets plans still needed
    round: int = 0
    budgets: dict[str, int | None] = field(default_factory=dict)  # max_model_calls, max_tokens
    ran_out: list[str] = field(default_factory=list)  # roles a scripted model had no entry for
    policy: int = 0
    """The decision policy the task's TaskRequest recorded (``schemas.policy``)."""

    def see(
        self,
        body: Message,
        task_id: str,
        params: GGSConfig,
        new_id: Callable[[], str],
    ) -> None:
        """Take one of the task's messages in (the kinds the GGS keeps books on)."""
        if isinstance(body, TaskRequest):
            self.policy = body.policy
        elif isinstance(body, TaskSpec):
            self.gradient = TaskGradient(
                task_id,
                slug=body.slug,
                environment=body.environment,
                criteria=body.criteria,
                params=params,
                new_id=new_id,
                spec=body,
                redact=_redactor(),
                policy=self.policy,
            )
        elif isinstance(body, MemoryRecall):
            if body.round == 0 and self.gradient is not None:
                family = [r.space for r in body.recalled if r.recalled]
                self.gradient.family = family[0] if family else None
        elif isinstance(body, DispatchManifest):
            self.round = body.round
            for st in body.subtasks:
                self.groups[st.subtask_id] = (body.round, st.sequence)
                if self.gradient is not None:
                    self.gradient.add_criteria(st.criteria)
            if self.gradient is not None:
                self.gradient.plan = list(body.subtasks)
        elif isinstance(body, LLMCall):
            if body.refused is None:
                self.calls.append(CallRecord.of(body))
                ran_out(self.ran_out, body)
        elif isinstance(body, ConfirmationRequest):
            if body.gate == "law1" or (not body.gate and bool(body.tool)):  # older logs: a tool
                self.law1_requests[body.request_id] = (body.action or body.tool, body.target)
        elif isinstance(body, ConfirmationDecision):
            if body.request_id in self.law1_requests:
                action, target = self.law1_requests.pop(body.request_id)
                if not body.approved:
                    self.denied.append(action)
                    if self.gradient is not None:
                        self.gradient.denied.append(action)
                    if target:
                        self.denied_targets.append(target)
        elif isinstance(body, PlanRejected):
            for target in body.targets:
                if target in self.denied_targets and target not in self.needed:
                    self.needed.append(target)

    def refused_summary(self, call: LLMCall) -> str:
        """Why a task whose budget refused ``call`` ends: the budget and the figures."""
        made = len(self.calls)
        tokens = sum(c.tokens_in + c.tokens_out for c in self.calls)
        limit = self.budgets.get(call.refused or "")
        return f"budget spent: {call.refused} = {limit}; {made} model calls made, {tokens} tokens"

    def finish(self, result: FinalResult, elapsed_ms: float) -> FinalResult:
        """``result`` as the GGS publishes it: the cost, and what the summary must say of
        denied Law 1 actions and of a scripted model that ran out."""
        update: dict[str, object] = {"cost": task_cost(self.calls, self.groups, elapsed_ms)}
        spec = self.gradient.spec if self.gradient is not None else None
        if result.established is None and spec is not None and spec.kind:
            update["established"] = "none"  # ended outside a round: nothing established
        if self.denied:  # the output says what was not done, never the model's claim
            update["law1_denied"] = True
            update["summary"] = law1_summary(result.summary, self.denied, self.needed)
            update["output"] = not_done(self.denied)
        if self.ran_out and result.status == "abandon":
            summary = str(update.get("summary", result.summary))
            update["summary"] = script_summary(summary, self.ran_out)
        return msgspec.structs.replace(result, **update)


class GGS(Role):
    """The Goal Gradient Solver actor: the only role that publishes FinalResult."""

    name: ClassVar[str] = "ggs"
    publishes: ClassVar[tuple[type[Message], ...]] = (
        GGSDecision,
        PlanDirective,
        FinalResult,
        MegramRecorded,
    )
    consumes: ClassVar[tuple[type[Message], ...]] = (
        TaskRequest,
        TaskSpec,
        MemoryRecall,
        DispatchManifest,
        ReplanRequest,
        OutcomeSummary,
        PlanRejected,
        StepFailed,
        LLMCall,
        ConfirmationRequest,
        ConfirmationDecision,
        RoleFailed,
        TaskCancelled,
    )
    wants_ticks: ClassVar[bool] = True

    def __init__(self, equipment: Equipment, instance: str | None = None) -> None:
        super().__init__(equipment, instance)
        self.params = equipment.config.ggs
        self.books: dict[str, TaskBook] = {}

    def active_tasks(self) -> list[str]:
        return list(self.books)

    def forget_task(self, task_id: str) -> None:
        self.books.pop(task_id, None)

    def _book(self, env: Envelope) -> TaskBook | None:
        return self.books.get(env.task_id or "")

    # ------------------------------------------------------------------ bookkeeping
    @handles(TaskRequest)
    def on_task_request(self, env: Envelope) -> None:
        body: TaskRequest = env.body
        deadline = self.ctx.config.task_deadline_s(body.deadline_s)
        self.books[env.task_id or ""] = TaskBook(
            started=env.ts,
            deadline_s=deadline,
            budgets={"max_model_calls": body.max_model_calls, "max_tokens": body.max_tokens},
            policy=body.policy,
        )

    @handles(TaskSpec, MemoryRecall, DispatchManifest, ConfirmationRequest, ConfirmationDecision)
    def on_books(self, env: Envelope) -> None:
        book = self._book(env)
        if book is not None:
            book.see(env.body, env.task_id or "", self.params, self.ctx.new_id)

    @handles(LLMCall)
    def on_llm_call(self, env: Envelope) -> None:
        book = self._book(env)
        if book is None:
            return
        call: LLMCall = env.body
        book.see(call, env.task_id or "", self.params, self.ctx.new_id)
        if call.refused is not None:  # refused by the task's budget: the task ends
            summary = book.refused_summary(call)
            self._abandon(env.task_id or "", summary, "budget", cause=env.seq, budget=call.refused)

    # ------------------------------------------------------------------ decisions
    def _elapsed_ms(self, book: TaskBook, at: float | None = None) -> float:
        """The task's age in ms at clock time ``at`` (default: now)."""
        now = self.ctx.clock.now() if at is None else at
        return max(0.0, (now - book.started) * 1000.0)

    def _publish_step(self, env: Envelope, step: GGSStep) -> None:
        for message in step.messages():
            if isinstance(message, FinalResult):
                self._final(env.task_id or "", message, cause=env.seq)
            else:
                self.reply(env, message)

    @handles(ReplanRequest, OutcomeSummary)
    def on_round(self, env: Envelope) -> None:
        book = self._book(env)
        if book is None or book.gradient is None:
            return
        # a round is scored at the time its outcome was logged: the same when a resumed
        # task's roles are rebuilt from the log (artoo._resume) as when it was first run
        now = env.ts
        step = book.gradient.step(env.body, elapsed_ms=self._elapsed_ms(book, now), now=now)
        self._publish_step(env, step)

    @handles(PlanRejected)
    def on_plan_rejected(self, env: Envelope) -> None:
        book = self._book(env)
        if book is None or book.gradient is None:
            return
        body: PlanRejected = env.body
        book.see(body, env.task_id or "", self.params, self.ctx.new_id)
        self._unplanned(env, book, body.round, unplanned_evidence(body))

    @handles(StepFailed)
    def on_step_failed(self, env: Envelope) -> None:
        book = self._book(env)
        if book is None:
            return
        body: StepFailed = env.body
        if book.gradient is None:  # no task reading: nothing to plan or score
            self._abandon(
                env.task_id or "",
                f"the task could not be read: {body.error}",
                "step_failed",
                cause=env.seq,
            )
            return
        if body.step == "caution":  # the operator said no: no later round can change it
            self._abandon(
                env.task_id or "",
                f"the operator denied the task at its intent-level Caution: {body.error}",
                "caution_denied",
                cause=env.seq,
                output=caution_not_done(book.gradient.request),
            )
            return
        self._unplanned(env, book, body.round, unplanned_evidence(body))

    def _unplanned(self, env: Envelope, book: TaskBook, round: int, evidence: str) -> None:
        assert book.gradient is not None
        step = book.gradient.step_unplanned(
            round, evidence, elapsed_ms=self._elapsed_ms(book, env.ts), now=env.ts
        )
        self._publish_step(env, step)

    def _final(self, task_id: str, result: FinalResult, *, cause: int | None) -> None:
        book = self.books.get(task_id)
        if book is not None:
            result = book.finish(result, self._elapsed_ms(book))
        self.publish(result, task_id=task_id, cause=cause)
        self.log.info("task ended", task=task_id, status=result.status, reason=result.reason)
        self.books.pop(task_id, None)
        self._finish(task_id)

    def _abandon(
        self,
        task_id: str,
        summary: str,
        reason: EndReason,
        *,
        cause: int | None,
        budget: BudgetName | None = None,
        ticket_id: str | None = None,
        output: str = "",
    ) -> None:
        if self.is_finished(task_id):
            return
        book = self.books.get(task_id)
        gradient = book.gradient if book is not None else None
        self._final(
            task_id,
            FinalResult(
                task_id=task_id,
                status="abandon",
                summary=summary,
                output=output,
                replans=gradient.replans if gradient is not None else 0,
                loss=gradient.loss_prev if gradient is not None else None,
                reason=reason,
                budget=budget,
                ticket_id=ticket_id,
            ),
            cause=cause,
        )

    @handles(RoleFailed)
    def on_role_failed(self, env: Envelope) -> None:
        body: RoleFailed = env.body
        for task_id in body.task_ids:
            summary = f"role {body.role} crashed: {body.error}"
            self._abandon(task_id, summary, "crash", cause=env.seq)

    @handles(TaskCancelled)
    def on_task_cancelled(self, env: Envelope) -> None:
        body: TaskCancelled = env.body
        if not env.task_id:
            return
        if body.closing:
            self._abandon(env.task_id, "system closed", "closed", cause=env.seq)
        else:
            summary = f"cancelled: {body.reason or 'by request'}"
            self._abandon(
                env.task_id, summary, "cancelled", cause=env.seq, ticket_id=body.ticket_id
            )

    def on_tick(self, now: float) -> None:
        """Deadlines, on the timer (actor thread); ``now`` is clock time."""
        paused = self.ctx.paused_s
        for task_id, book in list(self.books.items()):
            stood = paused(task_id, now) if paused is not None else 0.0  # paused: not counted
            if now - book.started - stood > book.deadline_s:
                summary = f"deadline exceeded ({book.deadline_s:g} s)"
                self._abandon(task_id, summary, "deadline", cause=None)
