"""Per-task model budgets, enforced before each call (reserve, then commit the usage).

The System opens a task's budget when it submits the task (``Config.max_model_calls`` /
``max_tokens``, or the figures given to ``run``/``submit``); the LLMGateway reserves a call
before it makes it and commits the call's real tokens after. A call that would pass the
call budget, or any call once the tokens used reach the token budget, is not made:
:class:`BudgetSpent` is raised instead (and recorded as a refused LLMCall). So a call
budget of N makes exactly N calls; a token budget is overrun by at most the output of
the calls already in flight when it was reached (one, for a task whose calls are
sequential).
"""

from __future__ import annotations

import collections
import threading
from dataclasses import dataclass

from artoo.schemas import BudgetName

from ._types import LLMError

__all__ = ["BudgetSpent", "TaskBudgets", "TaskStopped"]

_STOPPED_KEPT = 100_000


class BudgetSpent(LLMError):
    """A model call refused because its task's budget is spent (structured fields)."""

    def __init__(self, budget: BudgetName, limit: int, calls: int, tokens: int) -> None:
        self.budget: BudgetName = budget
        self.limit = limit
        self.calls = calls
        self.tokens = tokens
        super().__init__(
            f"budget spent: {budget} = {limit} ({calls} model calls made, {tokens} tokens)"
        )


class TaskStopped(LLMError):
    """A model call not made because its task was cancelled (nothing starts after a
    cancel: the call would cost money for an answer no one reads)."""

    def __init__(self, task_id: str) -> None:
        self.task_id = task_id
        super().__init__(f"task {task_id} was cancelled: the model call is not made")


@dataclass
class _Account:
    max_calls: int | None
    max_tokens: int | None
    calls: int = 0
    tokens: int = 0


class TaskBudgets:
    """Every open task's budget and what it used (thread-safe; model calls run on many
    role threads at once)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._accounts: dict[str, _Account] = {}
        self._stopped: collections.OrderedDict[str, None] = collections.OrderedDict()

    def open(self, task_id: str, max_calls: int | None, max_tokens: int | None) -> None:
        """Start accounting ``task_id`` (None: no limit of that kind)."""
        with self._lock:
            self._accounts[task_id] = _Account(max_calls, max_tokens)

    def reserve(self, task_id: str | None) -> None:
        """Count one call about to be made; raise :class:`BudgetSpent` instead if it may
        not be. A task without an open budget is not limited."""
        if task_id is None:
            return
        with self._lock:
            if task_id in self._stopped:
                raise TaskStopped(task_id)
            account = self._accounts.get(task_id)
            if account is None:
                return
            if account.max_calls is not None and account.calls >= account.max_calls:
                raise BudgetSpent(
                    "max_model_calls", account.max_calls, account.calls, account.tokens
                )
            if account.max_tokens is not None and account.tokens >= account.max_tokens:
                raise BudgetSpent("max_tokens", account.max_tokens, account.calls, account.tokens)
            account.calls += 1

    def commit(self, task_id: str | None, tokens: int) -> None:
        """Add a made call's real tokens."""
        if task_id is None:
            return
        with self._lock:
            account = self._accounts.get(task_id)
            if account is not None:
                account.tokens += max(0, tokens)

    def used(self, task_id: str) -> tuple[int, int]:
        """``(calls, tokens)`` used by ``task_id`` so far ((0, 0) when not open)."""
        with self._lock:
            account = self._accounts.get(task_id)
            return (account.calls, account.tokens) if account is not None else (0, 0)

    def stop(self, task_id: str) -> None:
        """Mark ``task_id`` cancelled: from now on :meth:`reserve` raises
        :class:`TaskStopped` for it (kept after the task ends; the oldest marks go first)."""
        with self._lock:
            self._stopped[task_id] = None
            while len(self._stopped) > _STOPPED_KEPT:
                self._stopped.popitem(last=False)

    def stopped(self, task_id: str | None) -> bool:
        """True once :meth:`stop` marked ``task_id``."""
        with self._lock:
            return task_id is not None and task_id in self._stopped

    def close(self, task_id: str) -> None:
        """Stop accounting ``task_id`` (it ended)."""
        with self._lock:
            self._accounts.pop(task_id, None)
