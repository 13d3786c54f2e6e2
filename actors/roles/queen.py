"""Queen — the front door, the relay to the human operator, and escalation handling.

Responsibilities:
    Admit a user's request as a task (UserRequest → TaskRequest). Relay Law 1
    ConfirmationRequests to the operator (the host's ``operator`` callback) and publish
    the operator's answer as a ConfirmationDecision. With no operator a request is denied
    at once, unless the host holds confirmations for its inbox (``System.open(inbox=True)``):
    then it waits for ``System.answer``. An unanswered request is denied at its timeout
    (clock time, checked on the timer tick). Exactly one decision per request.

    The request's own consent (``Config.request_consent``, on by default): the user's
    request is the operator's own words. A Law 1 request (gate ``law1``) whose every
    observed effect that asks is a deletion the task's reading names (a ``delete`` target
    of ``TaskSpec.targets``) and the request spells out is approved at once,
    ``by="request"``, with the reason from
    :func:`~artoo.actors.verification._consent.request_consent` (a modification of a
    reading's target never asks: it is reversible by construction). The Queen keeps each
    task's request text, kind and targets from its TaskSpec for this.
    Anything else goes to the operator as above. A resumed task's logged decision still
    comes first.

    Take the Judge's EscalationTickets (Hive: the Queen subscribes to tickets on the bus):

    - a ticket milder than ``Config.queen.relay_at`` (default ``high``) is acknowledged
      (TicketResolved ``acknowledged``) and not relayed;
    - with ``Config.queen.auto_cancel = "critical"``, a critical ticket whose suggested
      action is ``cancel`` cancels its task at once (TicketResolved ``cancel`` by the
      Queen, then TaskCancelled naming the ticket). The Judge's stall (from
      ``judge.stall_critical_s``) and doom loop (from ``doom_critical × repeat_limit``
      calls) are critical with action cancel; an escalation arrives as the same ticket id
      again with severity critical, and replaces the earlier entry in the inbox;
    - every other ticket goes to the operator: the ``on_ticket`` callback (its answer
      ``cancel`` / ``continue``) and the inbox (``System.inbox`` / ``System.answer``).
      The first answer wins; ``continue`` resolves the ticket, ``cancel`` resolves it and
      cancels the task. An unanswered ticket stays open until its task ends (the Judge
      resolves it ``task_ended``).

    Relay a role's UserQuestion to the user: the ``on_question`` callback (its answer, or
    None to leave it) and the inbox (``System.answer(question_id, text)``: one of the
    question's options, or free text when it has none). The first valid answer is
    published as a QuestionAnswered. Unanswered at ``Config.question_timeout_s`` (clock
    time): with ``question_on_timeout = "default"`` the question's default (None given:
    "" — the role decides without it), with ``"abandon"`` no answer and a TaskCancelled.
    With no ``on_question`` and no inbox (``System.open(inbox=False)``) no one can
    answer: the same at once, ``by="no_operator"``.

    Cancel a task on the host's CancelRequest (``TaskHandle.cancel()``). Every cancel is a
    TaskCancelled the GGS turns into the task's one FinalResult (abandon, ``cancelled``,
    ``ticket_id`` naming the ticket a cancel answered).

Input contract:
    UserRequest, TaskSpec (the request's text, kind and targets, kept for its consent),
    ConfirmationRequest, EscalationTicket, UserQuestion, CancelRequest, FinalResult (the
    task's pending requests are denied, its tickets leave the inbox, its TaskSpec is
    forgotten), timer ticks; from the System: :class:`InboxQuery` and
    :class:`OperatorAnswer`.

Output contract:
    TaskRequest, ConfirmationDecision, TicketResolved, QuestionAnswered, TaskCancelled.

Constraints:
    Does NOT plan, execute or judge work; does NOT end tasks (the GGS publishes every
    FinalResult); approves by itself only one thing — a Law 1 request the user's own
    request consents to (``Config.request_consent``, above); anything else is the
    operator's, and silence is a denial; cancels by itself only what the configured
    policy names. Decides from structured fields (severity, action, gate, effects, ids);
    the one text it reads is the user's request, for its consent, by the pure
    :func:`~artoo.actors.verification._consent.request_consent`.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from artoo.actors.runtime.role import Equipment, Operator, Role, TicketOperator, handles
from artoo.actors.verification._consent import request_consent
from artoo.schemas import (
    POLICY,
    CancelRequest,
    ConfirmationDecision,
    ConfirmationRequest,
    Envelope,
    EscalationTicket,
    FinalResult,
    Message,
    QuestionAnswered,
    TaskCancelled,
    TaskRequest,
    TaskSpec,
    TicketResolved,
    UserQuestion,
    UserRequest,
)

__all__ = [
    "SEVERITY_RANK",
    "InboxItem",
    "InboxQuery",
    "OperatorAnswer",
    "Queen",
    "call_operator",
    "call_ticket_operator",
    "question_problem",
]

SEVERITY_RANK: dict[str, int] = {"low": 0, "medium": 1, "high": 2, "critical": 3}
"""Severities in order: a ticket at or above ``Config.queen.relay_at`` is relayed."""

Decision = Literal["approve", "deny", "continue", "cancel"]


def call_operator(operator: Operator, request: ConfirmationRequest) -> tuple[bool, str]:
    """Ask ``operator`` about ``request``; (approved, why). Fails closed: an exception or
    any answer but True denies. Blocks as long as the operator does."""
    try:
        answer = operator(request)
    except Exception as exc:
        return False, f"operator failed: {type(exc).__name__}: {exc}"
    if answer is True:
        return True, "approved by operator"
    return False, "denied by operator"


def call_ticket_operator(operator: TicketOperator, ticket: EscalationTicket) -> str | None:
    """Tell ``operator`` of ``ticket``; ``"cancel"``, ``"continue"`` or None (no decision:
    the ticket stays in the inbox). An exception is no decision."""
    try:
        answer = operator(ticket)
    except Exception:
        return None
    return answer if answer in ("cancel", "continue") else None


@dataclass(frozen=True)
class InboxItem:
    """One thing waiting for the operator: a Law 1 confirmation or a relayed ticket."""

    item_id: str
    """The request id or ticket id: what ``System.answer`` takes."""
    kind: Literal["confirmation", "ticket", "question"]
    task_id: str | None
    summary: str
    answers: tuple[str, ...]
    """The decisions it takes: ``approve``/``deny``, ``continue``/``cancel``, a
    question's options (empty: a question answered in free text)."""
    since: float
    """Clock time it arrived."""
    severity: str | None = None
    """A ticket's severity (None for a confirmation)."""
    deadline: float | None = None
    """A confirmation's clock-time deadline (denied then)."""
    message: ConfirmationRequest | EscalationTicket | UserQuestion | None = None


@dataclass(frozen=True)
class InboxQuery:
    """Asked of the Queen by the System: the open inbox items, oldest first."""


@dataclass(frozen=True)
class OperatorAnswer:
    """Asked of the Queen by the System: answer one inbox item. The Queen returns None
    when answered, else why not (no such open item; a decision it does not take)."""

    item_id: str
    decision: str
    """A Decision, or a question's answer."""


@dataclass
class _Pending:
    env: Envelope
    deadline: float
    timeout: float
    since: float


@dataclass
class _Ticket:
    env: Envelope
    since: float


class Queen(Role):
    """The Queen actor."""

    name: ClassVar[str] = "queen"
    publishes: ClassVar[tuple[type[Message], ...]] = (
        TaskRequest,
        ConfirmationDecision,
        TicketResolved,
        TaskCancelled,
        QuestionAnswered,
    )
    consumes: ClassVar[tuple[type[Message], ...]] = (
        UserRequest,
        ConfirmationRequest,
        EscalationTicket,
        CancelRequest,
        UserQuestion,
        TaskSpec,
    )
    # the Judge judges a hop behind the bus: a ticket may land after its task's end, and
    # whether it is acknowledged must not depend on that race (a rerun repeats it)
    after_end: ClassVar[tuple[type[Message], ...]] = (EscalationTicket,)
    wants_ticks: ClassVar[bool] = True

    def __init__(self, equipment: Equipment, instance: str | None = None) -> None:
        super().__init__(equipment, instance)
        self._lock = threading.Lock()  # operator threads decide too
        self.pending: dict[str, _Pending] = {}
        self.tickets: dict[str, _Ticket] = {}
        self.questions: dict[str, _Pending] = {}
        self.specs: dict[str, TaskSpec] = {}
        """task id -> its TaskSpec (the request's text, kind and targets): what it
        consents to."""

    # ------------------------------------------------------------------ tasks
    @handles(UserRequest)
    def on_user_request(self, env: Envelope) -> None:
        body: UserRequest = env.body
        deadline = self.ctx.config.task_deadline_s(body.deadline_s)
        calls, tokens = self.ctx.config.task_budget(body.max_model_calls, body.max_tokens)
        self.reply(
            env,
            TaskRequest(
                text=body.text,
                deadline_s=deadline,
                max_model_calls=calls,
                max_tokens=tokens,
                config=self.ctx.config.model_dump(mode="json"),
                policy=POLICY,
            ),
        )

    @handles(TaskSpec)
    def on_task_spec(self, env: Envelope) -> None:
        body: TaskSpec = env.body
        if env.task_id:
            with self._lock:
                self.specs[env.task_id] = body

    @handles(CancelRequest)
    def on_cancel_request(self, env: Envelope) -> None:
        body: CancelRequest = env.body
        if env.task_id:
            self.reply(env, TaskCancelled(reason=body.reason or "cancelled by the host"))

    @handles(FinalResult)
    def on_final_result(self, env: Envelope) -> None:
        result: FinalResult = env.body
        with self._lock:
            self.specs.pop(result.task_id, None)
            ended = [p.env for p in self.pending.values() if p.env.task_id == result.task_id]
            for ticket_id in [
                t for t, v in self.tickets.items() if v.env.task_id == result.task_id
            ]:
                del self.tickets[ticket_id]  # the Judge resolves it: task_ended
            for question_id in [
                q for q, p in self.questions.items() if p.env.task_id == result.task_id
            ]:
                del self.questions[question_id]  # no one waits for it any more
        for pending in ended:
            self._decide(pending, False, "the task ended first", by="queen")

    # ------------------------------------------------------------------ confirmations
    @handles(ConfirmationRequest)
    def on_confirmation_request(self, env: Envelope) -> None:
        body: ConfirmationRequest = env.body
        timeout = min(body.timeout_s, self.ctx.config.confirmation_timeout_s)
        served = self.ctx.recorded_decision
        logged = served(env.task_id, body.request_id) if served is not None else None
        if logged is not None:  # a resumed task asks again what the log has decided
            with self._lock:
                self._publish_decision(env, logged.approved, logged.reason, logged.by)
            return
        consent = self._consent(env)
        if consent is not None:  # the user's request already said yes to exactly this
            with self._lock:
                self._publish_decision(env, True, consent, "request")
            return
        operator = self.ctx.operator
        if operator is None and not self.ctx.hold_confirmations:
            with self._lock:
                self._publish_decision(env, False, "no operator attached", "queen")
            return
        now = self.ctx.clock.now()
        with self._lock:
            self.pending[body.request_id] = _Pending(env, now + timeout, timeout, now)
        if operator is None:
            return  # held for System.answer

        def _ask() -> None:
            approved, why = call_operator(operator, body)
            self._decide(env, approved, why)

        self.background("operator", _ask)

    def _consent(self, env: Envelope) -> str | None:
        """Why the task's own request consents to the Law 1 request ``env``
        (:func:`~artoo.actors.verification._consent.request_consent`), or None: another
        gate, ``Config.request_consent`` off, or the task's TaskSpec not seen. The Config is
        the System's, the one its TaskRequest logs (a rerun runs under the logged one)."""
        body: ConfirmationRequest = env.body
        if body.gate not in ("law1", "") or not self.ctx.config.request_consent:
            return None
        with self._lock:
            spec = self.specs.get(env.task_id) if env.task_id else None
        if spec is None:
            return None
        return request_consent(spec.text, spec.targets, body.effects, kind=spec.kind)

    def on_tick(self, now: float) -> None:
        with self._lock:
            due = [p for p in self.pending.values() if now >= p.deadline]
            unanswered = [q for q in self.questions.values() if now >= q.deadline]
        for p in due:
            self._decide(p.env, False, f"no answer within {p.timeout:g} s", by="queen")
        for q in unanswered:
            self._timed_out(q)

    # ------------------------------------------------------------------ questions
    @handles(UserQuestion)
    def on_user_question(self, env: Envelope) -> None:
        body: UserQuestion = env.body
        served = self.ctx.recorded_answer
        logged = served(env.task_id, body.question_id) if served is not None else None
        now = self.ctx.clock.now()
        timeout = min(body.timeout_s, self.ctx.config.question_timeout_s)
        with self._lock:
            self.questions[body.question_id] = _Pending(env, now + timeout, timeout, now)
        if logged is not None:  # a resumed task asks again what the log has answered
            self._answer_question(env, logged.answer, by=logged.by)
            return
        operator = self.ctx.question_operator
        if operator is None and not self.ctx.hold_confirmations:
            # no one to ask (no on_question, no inbox): unanswered at once, as at the
            # timeout, rather than a wait no one can end (a Law 1 request is decided so too)
            self._timed_out(self.questions[body.question_id], by="no_operator")
            return
        if operator is None:
            return  # in the inbox, for System.answer

        def _ask() -> None:
            try:
                answer = operator(body)
            except Exception as exc:  # a broken callback leaves the question to the inbox
                self.log.warning("on_question failed", error=repr(exc))
                return
            if answer is not None and question_problem(body, answer) is None:
                self._answer_question(env, answer)

        self.background("question", _ask)

    def _timed_out(self, q: _Pending, *, by: str = "timeout") -> None:
        body: UserQuestion = q.env.body
        if self.ctx.config.question_on_timeout == "abandon":
            if self._answer_question(q.env, None, by=by):
                why = "no one to ask" if by == "no_operator" else f"within {q.timeout:g} s"
                self.ctx.bus.publish(
                    TaskCancelled(reason=f"no answer to a question {why}"),
                    sender=self.sender,
                    task_id=q.env.task_id,
                    cause=q.env.seq,
                )
            return
        self._answer_question(q.env, body.default or "", by=by)

    def _answer_question(self, env: Envelope, answer: str | None, *, by: str = "operator") -> bool:
        """Publish the one answer of an open question (first wins); True when this did."""
        body: UserQuestion = env.body
        with self._lock:
            if self.questions.pop(body.question_id, None) is None:
                return False
            self.ctx.bus.publish(
                QuestionAnswered(question_id=body.question_id, answer=answer, by=by),
                sender=self.sender,
                task_id=env.task_id,
                cause=env.seq,
            )
        return True

    def _decide(self, env: Envelope, approved: bool, why: str, *, by: str = "operator") -> bool:
        """Publish the one decision of a pending request: the first caller wins (a late
        operator answer after the timeout's denial is dropped); thread-safe. True when
        this call decided."""
        request: ConfirmationRequest = env.body
        with self._lock:
            if self.pending.pop(request.request_id, None) is None:
                return False
            self._publish_decision(env, approved, why, by)
        return True

    def _publish_decision(self, env: Envelope, approved: bool, why: str, by: str) -> None:
        request: ConfirmationRequest = env.body
        self.ctx.bus.publish(
            ConfirmationDecision(
                request_id=request.request_id, approved=approved, by=by, reason=why
            ),
            sender=self.sender,
            task_id=env.task_id,
            cause=env.seq,
        )
        self.log.info(
            "confirmation decided",
            task=env.task_id,
            request=request.request_id,
            approved=approved,
            why=why,
        )

    # ------------------------------------------------------------------ tickets
    @handles(EscalationTicket)
    def on_ticket(self, env: Envelope) -> None:
        ticket: EscalationTicket = env.body
        rules = self.ctx.config.queen
        if SEVERITY_RANK[ticket.severity] < SEVERITY_RANK[rules.relay_at]:
            self._resolve(
                env,
                "acknowledged",
                by="queen",
                reason=f"{ticket.severity} is below queen.relay_at ({rules.relay_at})",
            )
            return
        if env.task_id is not None and self.task_ended(env.task_id):
            return  # raised a hop behind the task's end: nobody to relay it to
        with self._lock:
            self.tickets[ticket.ticket_id] = _Ticket(env, self.ctx.clock.now())
        if (
            rules.auto_cancel == "critical"
            and ticket.severity == "critical"
            and ticket.action == "cancel"
        ):
            self._close_ticket(
                ticket.ticket_id, "cancel", by="queen", reason="queen.auto_cancel: critical"
            )
            return
        operator = self.ctx.ticket_operator
        if operator is None:
            return  # in the inbox until answered or the task ends

        def _tell() -> None:
            answer = call_ticket_operator(operator, ticket)
            if answer == "cancel":
                self._close_ticket(ticket.ticket_id, "cancel", by="operator")
            elif answer == "continue":
                self._close_ticket(ticket.ticket_id, "continue", by="operator")

        self.background("ticket-operator", _tell)

    def _close_ticket(
        self,
        ticket_id: str,
        resolution: Literal["continue", "cancel"],
        *,
        by: str,
        reason: str = "",
    ) -> bool:
        """Resolve an open ticket (the first answer wins; thread-safe); a ``cancel`` then
        cancels its task naming the ticket. True when this call resolved it."""
        with self._lock:
            entry = self.tickets.pop(ticket_id, None)
            if entry is None:
                return False
            self._resolve(entry.env, resolution, by=by, reason=reason)
            if resolution == "cancel" and entry.env.task_id:
                ticket: EscalationTicket = entry.env.body
                self.ctx.bus.publish(
                    TaskCancelled(
                        reason=f"ticket {ticket_id} ({ticket.kind}, {ticket.severity}): "
                        f"{ticket.summary}",
                        ticket_id=ticket_id,
                    ),
                    sender=self.sender,
                    task_id=entry.env.task_id,
                    cause=entry.env.seq,
                )
        self.log.warning("ticket answered", ticket=ticket_id, resolution=resolution, by=by)
        return True

    def _resolve(
        self,
        env: Envelope,
        resolution: Literal["continue", "cancel", "acknowledged"],
        *,
        by: str,
        reason: str,
    ) -> None:
        ticket: EscalationTicket = env.body
        self.ctx.bus.publish(
            TicketResolved(ticket_id=ticket.ticket_id, resolution=resolution, by=by, reason=reason),
            sender=self.sender,
            task_id=env.task_id,
            cause=env.seq,
        )

    # ------------------------------------------------------------------ the inbox
    def on_receive(self, message: Any) -> Any:
        """The System's inbox questions, then the bus (see :class:`Role`)."""
        if isinstance(message, InboxQuery):
            return self.inbox()
        if isinstance(message, OperatorAnswer):
            return self.answer(message.item_id, message.decision)
        return super().on_receive(message)

    def inbox(self) -> list[InboxItem]:
        """The open items, oldest first: pending confirmations and relayed tickets."""
        with self._lock:
            items = [_confirmation_item(p) for p in self.pending.values()]
            items += [_ticket_item(t) for t in self.tickets.values()]
            items += [_question_item(q) for q in self.questions.values()]
        return sorted(items, key=lambda i: i.since)

    def answer(self, item_id: str, decision: str) -> str | None:
        """Answer one open item as the operator; None when answered, else why not."""
        with self._lock:
            pending = self.pending.get(item_id)
            is_ticket = item_id in self.tickets
            question = self.questions.get(item_id)
        if question is not None:
            problem = question_problem(question.env.body, decision)
            if problem is not None:
                return problem
            return None if self._answer_question(question.env, decision) else _gone(item_id)
        if pending is not None:
            if decision not in ("approve", "deny"):
                return f"{item_id} is a confirmation: approve or deny, not {decision}"
            approved = decision == "approve"
            why = "approved by operator" if approved else "denied by operator"
            return None if self._decide(pending.env, approved, why) else _gone(item_id)
        if is_ticket:
            if decision not in ("continue", "cancel"):
                return f"{item_id} is a ticket: continue or cancel, not {decision}"
            resolution: Literal["continue", "cancel"] = (
                "continue" if decision == "continue" else "cancel"
            )
            done = self._close_ticket(item_id, resolution, by="operator")
            return None if done else _gone(item_id)
        return _gone(item_id)


ANSWER_MAX = 2000
"""Characters a free-text answer may have."""


def question_problem(question: UserQuestion, answer: str) -> str | None:
    """Why ``answer`` does not answer ``question`` (not one of its options; empty or too
    long free text), or None (pure)."""
    if question.options:
        if answer not in question.options:
            return f"answer one of: {', '.join(question.options)}"
        return None
    if not answer.strip():
        return "an answer is some text"
    if len(answer) > ANSWER_MAX:
        return f"an answer is at most {ANSWER_MAX} characters"
    return None


def _question_item(q: _Pending) -> InboxItem:
    body: UserQuestion = q.env.body
    return InboxItem(
        item_id=body.question_id,
        kind="question",
        task_id=q.env.task_id,
        summary=f"{body.role} asks: {body.text}",
        answers=tuple(body.options),
        since=q.since,
        deadline=q.deadline,
        message=body,
    )


def _gone(item_id: str) -> str:
    return f"no open inbox item {item_id}"


def _confirmation_item(p: _Pending) -> InboxItem:
    body: ConfirmationRequest = p.env.body
    return InboxItem(
        item_id=body.request_id,
        kind="confirmation",
        task_id=p.env.task_id,
        summary=f"{body.gate or 'law1'}: {body.action} — {body.reason}",
        answers=("approve", "deny"),
        since=p.since,
        deadline=p.deadline,
        message=body,
    )


def _ticket_item(t: _Ticket) -> InboxItem:
    body: EscalationTicket = t.env.body
    return InboxItem(
        item_id=body.ticket_id,
        kind="ticket",
        task_id=t.env.task_id,
        summary=f"{body.kind}: {body.summary} (suggests {body.action})",
        answers=("continue", "cancel"),
        since=t.since,
        severity=body.severity,
        message=body,
    )
