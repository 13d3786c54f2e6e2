"""The operator's inbox on the System: what waits for a human, and the answers."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pykka

from artoo.actors.roles.queen import InboxItem, InboxQuery, OperatorAnswer, Queen

if TYPE_CHECKING:
    from artoo.actors.runtime.runner import RoleRunner

__all__ = ["DECISIONS", "OperatorInbox"]

DECISIONS: tuple[str, ...] = ("approve", "deny", "continue", "cancel", "pause", "resume")
"""What :meth:`OperatorInbox.answer` takes: ``approve``/``deny`` a confirmation,
``continue``/``cancel`` a ticket, ``pause``/``resume`` a running task (its id)."""


class OperatorInbox:
    """The System's operator face (mixed into :class:`artoo.System`): the Queen keeps the
    inbox; these ask it."""

    runner: RoleRunner
    _closed: bool

    def _pause_answer(self, task_id: str, decision: str) -> str | None:
        """Pause or resume ``task_id``: why not, or None when done (the System's)."""
        raise NotImplementedError

    def inbox(self, timeout: float = 3.0) -> list[InboxItem]:
        """What waits for the operator, oldest first: Law 1 confirmations not yet decided
        and escalation tickets the Queen relayed (``Config.queen.relay_at``) not yet
        answered. Each :class:`~artoo.actors.roles.queen.InboxItem` names the answers it takes."""
        if self._closed:
            raise RuntimeError("this System is closed")
        try:
            items: list[InboxItem] = self.runner.ref(Queen).ask(InboxQuery(), timeout=timeout)  # type: ignore[assignment]
        except pykka.Timeout:
            raise TimeoutError(f"the Queen did not answer within {timeout} s") from None
        return items

    def answer(self, item_id: str, decision: str, timeout: float = 3.0) -> None:
        """Answer one inbox item as the operator: ``approve`` or ``deny`` a confirmation,
        a question with one of its options (or free text when it has none), ``pause`` or
        ``resume`` a running task (``item_id`` its id), ``continue`` or ``cancel`` a ticket
        (a cancel ends the task: one FinalResult, abandon, ``reason="cancelled"``,
        ``ticket_id`` naming the ticket).

        Raises ValueError for an unknown decision, one the item does not take, or an item
        not (or no longer) open — decided already, timed out, or its task ended.
        """
        if self._closed:
            raise RuntimeError("this System is closed")
        if decision not in DECISIONS and not any(
            i.item_id == item_id and i.kind == "question" for i in self.inbox(timeout)
        ):
            raise ValueError(f"a decision is one of {', '.join(DECISIONS)}, not {decision!r}")
        if decision in ("pause", "resume"):  # the item is a running task
            refused = self._pause_answer(item_id, decision)
            if refused is not None:
                raise ValueError(refused)
            return
        try:
            answer = OperatorAnswer(item_id, decision)
            why: str | None = self.runner.ref(Queen).ask(answer, timeout=timeout)  # type: ignore[assignment]
        except pykka.Timeout:
            raise TimeoutError(f"the Queen did not answer within {timeout} s") from None
        if why is not None:
            raise ValueError(why)
