"""Queen — the front door and the relay to the human operator.

Responsibilities:
    Admit a user's request as a task (UserRequest → TaskRequest). Relay Law 1
    ConfirmationRequests to the operator (the host's callback given to ``System.open``)
    and publish the operator's answer as a ConfirmationDecision. With no operator, or
    when the operator does not answer within the request's timeout (clock time, checked
    on the timer tick), the answer is a denial. Exactly one decision per request.

Input contract:
    UserRequest, ConfirmationRequest, FinalResult (pending requests of an ended task are
    denied), timer ticks.

Output contract:
    TaskRequest, ConfirmationDecision.

Constraints:
    Does NOT plan, execute or judge work; does NOT end tasks (the GGS publishes every
    FinalResult); does NOT approve anything by itself — silence is a denial.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import ClassVar

from artoo.schemas import (
    ConfirmationDecision,
    ConfirmationRequest,
    Envelope,
    FinalResult,
    Message,
    TaskRequest,
    UserRequest,
)

from .base import Equipment, Operator, Role, handles

__all__ = ["Queen", "call_operator"]


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


@dataclass
class _Pending:
    env: Envelope
    deadline: float
    timeout: float


class Queen(Role):
    """The Queen actor."""

    name: ClassVar[str] = "queen"
    publishes: ClassVar[tuple[type[Message], ...]] = (TaskRequest, ConfirmationDecision)
    consumes: ClassVar[tuple[type[Message], ...]] = (UserRequest, ConfirmationRequest)
    wants_ticks: ClassVar[bool] = True

    def __init__(self, equipment: Equipment, instance: str | None = None) -> None:
        super().__init__(equipment, instance)
        self._lock = threading.Lock()  # operator threads decide too
        self.pending: dict[str, _Pending] = {}

    @handles(UserRequest)
    def on_user_request(self, env: Envelope) -> None:
        body: UserRequest = env.body
        deadline = self.ctx.config.task_deadline_s(body.deadline_s)
        calls, tokens = self.ctx.config.task_budget(body.max_model_calls, body.max_tokens)
        self.reply(
            env,
            TaskRequest(
                text=body.text, deadline_s=deadline, max_model_calls=calls, max_tokens=tokens
            ),
        )

    @handles(ConfirmationRequest)
    def on_confirmation_request(self, env: Envelope) -> None:
        body: ConfirmationRequest = env.body
        timeout = min(body.timeout_s, self.ctx.config.confirmation_timeout_s)
        operator = self.ctx.operator
        if operator is None:
            with self._lock:
                self._publish_decision(env, False, "no operator attached", "queen")
            return
        with self._lock:
            self.pending[body.request_id] = _Pending(env, self.ctx.clock.now() + timeout, timeout)

        def _ask() -> None:
            approved, why = call_operator(operator, body)
            self._decide(env, approved, why)

        threading.Thread(target=_ask, name="artoo-operator", daemon=True).start()

    @handles(FinalResult)
    def on_final_result(self, env: Envelope) -> None:
        result: FinalResult = env.body
        with self._lock:
            ended = [p.env for p in self.pending.values() if p.env.task_id == result.task_id]
        for pending in ended:
            self._decide(pending, False, "the task ended first", by="queen")

    def on_tick(self, now: float) -> None:
        with self._lock:
            due = [p for p in self.pending.values() if now >= p.deadline]
        for p in due:
            self._decide(p.env, False, f"no answer within {p.timeout:g} s", by="queen")

    def _decide(self, env: Envelope, approved: bool, why: str, *, by: str = "operator") -> None:
        """Publish the one decision of a pending request: the first caller wins (a late
        operator answer after the timeout's denial is dropped); thread-safe."""
        request: ConfirmationRequest = env.body
        with self._lock:
            if self.pending.pop(request.request_id, None) is None:
                return
            self._publish_decision(env, approved, why, by)

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
