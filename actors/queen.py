"""Queen — the front door and the relay to the human operator.

Responsibilities:
    Admit a user's request as a task (UserRequest → TaskRequest). Relay Law 1
    ConfirmationRequests to the operator (the host's callback given to ``System.open``)
    and publish the operator's answer as a ConfirmationDecision. With no operator, or
    when the operator does not answer within the request's timeout, the answer is a
    denial.

Input contract:
    UserRequest, ConfirmationRequest, FinalResult.

Output contract:
    TaskRequest, ConfirmationDecision.

Constraints:
    Does NOT plan, execute or judge work; does NOT end tasks (the GGS publishes every
    FinalResult); does NOT approve anything by itself — silence is a denial.
"""

from __future__ import annotations

import threading
from typing import ClassVar

from artoo.schemas import (
    ConfirmationDecision,
    ConfirmationRequest,
    Envelope,
    Message,
    TaskRequest,
    UserRequest,
)

from .base import Operator, Role

__all__ = ["Queen", "ask_operator"]


def ask_operator(
    operator: Operator | None, request: ConfirmationRequest, timeout_s: float
) -> tuple[bool, str]:
    """Ask ``operator`` about ``request`` in a helper thread; (approved, why).

    Fails closed: no operator, an exception, a non-True answer or no answer within
    ``timeout_s`` all deny.
    """
    if operator is None:
        return False, "no operator attached"
    answer: list[bool | None] = []
    errors: list[str] = []

    def _ask() -> None:
        try:
            answer.append(operator(request))
        except Exception as exc:
            errors.append(f"{type(exc).__name__}: {exc}")

    t = threading.Thread(target=_ask, name="artoo-operator", daemon=True)
    t.start()
    t.join(timeout_s)
    if t.is_alive():
        return False, f"no answer within {timeout_s:g} s"
    if errors:
        return False, f"operator failed: {errors[0]}"
    if answer and answer[0] is True:
        return True, "approved by operator"
    return False, "denied by operator"


class Queen(Role):
    """The Queen actor."""

    name: ClassVar[str] = "queen"
    consumes: ClassVar[tuple[type[Message], ...]] = (UserRequest, ConfirmationRequest)

    def on_user_request(self, env: Envelope) -> None:
        body: UserRequest = env.body
        deadline = (
            body.deadline_s if body.deadline_s is not None else self.ctx.config.task_timeout_s
        )
        self.publish(TaskRequest(text=body.text, deadline_s=deadline))

    def on_confirmation_request(self, env: Envelope) -> None:
        body: ConfirmationRequest = env.body
        timeout = min(body.timeout_s, self.ctx.config.confirmation_timeout_s)
        bus, sender, operator = self.ctx.bus, self.sender, self.ctx.operator

        def _relay() -> None:
            approved, why = ask_operator(operator, body, timeout)
            bus.publish(
                ConfirmationDecision(
                    request_id=body.request_id,
                    approved=approved,
                    by="operator" if operator is not None else "queen",
                    reason=why,
                ),
                sender=sender,
                task_id=env.task_id,
                cause=env.seq,
            )

        threading.Thread(target=_relay, name="artoo-confirm", daemon=True).start()
