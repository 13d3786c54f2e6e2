"""Pausing a task: the operator holds it, and it makes no model or tool call meanwhile.

``TaskHandle.pause()`` / ``resume()``, ``System.answer(task_id, "pause" | "resume")`` and
``/pause`` ``/resume`` in ``artoo repl`` publish a :class:`~artoo.schemas.TaskPaused` or
:class:`~artoo.schemas.TaskUnpaused` (sender ``host``) and set the task's gate:

- a model call or tool call of a paused task waits at the gate (in the role's thread)
  until the task is resumed — or cancelled or closed: then the call is not made;
- its deadline clock stops: the GGS counts a task's age less the time it was paused
  (:meth:`Pauses.paused_s`, the Equipment's ``paused_s``);
- the Judge raises no stall ticket for a paused task;
- the pause is in the log: a task paused when its process stopped is resumed from the log
  paused (:func:`artoo._resume.resume_task` restores the gate), and waits for the operator.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from artoo.actors.llm import LLMRequest, LLMResponse, TaskStopped
from artoo.actors.tools import ToolOutcome, ToolRunner
from artoo.schemas import Envelope, TaskPaused, TaskResumed, TaskUnpaused, ToolCall

__all__ = ["Pauses"]

_WAIT_S = 0.05


@dataclass
class _State:
    running: threading.Event = field(default_factory=threading.Event)
    paused_at: float | None = None
    paused_s: float = 0.0
    asked_at: float | None = None
    """Waiting for the user's answer to a question since (its deadline stands too)."""


class Pauses:
    """The paused tasks of one System and the gate in front of their model and tool calls.

    ``publish(body, task_id)`` logs a pause event; ``now()`` is clock time; ``stopped(task)``
    is True once the task was cancelled (its calls are then not made).
    """

    def __init__(
        self,
        publish: Callable[[Any, str], None],
        now: Callable[[], float],
        stopped: Callable[[str], bool],
    ) -> None:
        self._publish, self._now, self._stopped = publish, now, stopped
        self._states: dict[str, _State] = {}
        self._lock = threading.Lock()
        self._closed = threading.Event()

    # ------------------------------------------------------------------ the operator
    def pause(self, task_id: str, *, by: str = "host", reason: str = "") -> bool:
        """Pause ``task_id``; False when it is paused already."""
        with self._lock:
            state = self._states.setdefault(task_id, _State())
            if state.paused_at is not None:
                return False
            state.paused_at = self._now()
            state.running.clear()
        self._publish(TaskPaused(by=by, reason=reason), task_id)
        return True

    def resume(self, task_id: str, *, by: str = "host", reason: str = "") -> bool:
        """Resume a paused ``task_id``; False when it is not paused."""
        with self._lock:
            state = self._states.get(task_id)
            if state is None or state.paused_at is None:
                return False
            state.paused_s += max(0.0, self._now() - state.paused_at)
            state.paused_at = None
        self._publish(TaskUnpaused(by=by, reason=reason), task_id)
        state.running.set()
        return True

    def paused(self, task_id: str) -> bool:
        """True while ``task_id`` is paused."""
        state = self._states.get(task_id)
        return state is not None and state.paused_at is not None

    def paused_s(self, task_id: str, now: float) -> float:
        """Seconds ``task_id`` has been paused, or waiting for the user's answer to a
        question, up to ``now`` (its deadline clock stood)."""
        state = self._states.get(task_id)
        if state is None:
            return 0.0
        stood = state.paused_s
        for since in (state.paused_at, state.asked_at):
            if since is not None:
                stood += max(0.0, now - since)
        return stood

    def asked(self, task_id: str, at: float) -> None:
        """The task asks the user a question at clock time ``at``: its deadline stands."""
        with self._lock:
            state = self._states.setdefault(task_id, _State())
            if not state.running.is_set() and state.paused_at is None:
                state.running.set()  # a new state: not paused
            if state.asked_at is None:
                state.asked_at = at

    def answered(self, task_id: str, at: float) -> None:
        """The question was answered at ``at``: the deadline goes on."""
        with self._lock:
            state = self._states.get(task_id)
            if state is not None and state.asked_at is not None:
                state.paused_s += max(0.0, at - state.asked_at)
                state.asked_at = None

    def restore(self, task_id: str, envelopes: Iterable[Envelope]) -> bool:
        """Set ``task_id``'s gate from its logged pause events (a resume at open); the time
        paused between them is counted, the time the process was stopped is not. True when
        the task is paused."""
        state = _State()
        last = None
        stops = 0.0  # the times the process was stopped since the pause began
        for env in envelopes:
            last = env.ts
            if isinstance(env.body, TaskPaused) and state.paused_at is None:
                state.paused_at, stops = env.ts, 0.0
            elif isinstance(env.body, TaskResumed):
                stops += env.body.stopped_s
            elif isinstance(env.body, TaskUnpaused) and state.paused_at is not None:
                state.paused_s += max(0.0, env.ts - state.paused_at - stops)
                state.paused_at = None
        if state.paused_at is not None and last is not None:
            state.paused_s += max(0.0, last - state.paused_at - stops)  # up to the stop
            state.paused_at = self._now()  # paused from the resume on
        else:
            state.running.set()
        with self._lock:
            self._states[task_id] = state
        return state.paused_at is not None

    def forget(self, task_id: str) -> None:
        """The task ended: drop its state (a waiting call goes on, to find it stopped)."""
        with self._lock:
            state = self._states.pop(task_id, None)
        if state is not None:
            state.running.set()

    def close(self) -> None:
        """Wake every waiting call (the System is closing)."""
        self._closed.set()
        with self._lock:
            states = list(self._states.values())
        for state in states:
            state.running.set()

    # ------------------------------------------------------------------ the gate
    def wait(self, task_id: str | None) -> bool:
        """Block while ``task_id`` is paused; False when it was cancelled or the System
        closed meanwhile (the call must not be made)."""
        state = self._states.get(task_id or "")
        if state is None or state.running.is_set():
            return True
        while not state.running.wait(_WAIT_S):
            if self._closed.is_set() or self._stopped(task_id or ""):
                return False
        return not (self._closed.is_set() or self._stopped(task_id or ""))

    def backend(self, inner: Any) -> Any:
        """``inner`` (a tier's model backend) behind the gate."""
        return _PausedBackend(self, inner)

    def tools(self, live: ToolRunner, task_id: str) -> ToolRunner:
        """``live`` (one attempt's tool runner) behind the gate."""
        return _PausedTools(self, live, task_id)


class _PausedBackend:
    def __init__(self, pauses: Pauses, inner: Any) -> None:
        self.pauses, self.inner = pauses, inner

    def complete(self, request: LLMRequest) -> LLMResponse:
        if not self.pauses.wait(request.task_id):
            raise TaskStopped(request.task_id or "")
        response: LLMResponse = self.inner.complete(request)
        return response

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class _PausedTools:
    def __init__(self, pauses: Pauses, live: ToolRunner, task_id: str) -> None:
        self.pauses, self.live, self.task_id = pauses, live, task_id

    def call(
        self, name: str, args: dict[str, Any], *, subtask_id: str = "", attempt: int = 1
    ) -> ToolOutcome:
        if not self.pauses.wait(self.task_id):
            error = "not run: the task was stopped while paused"
            call = ToolCall(
                tool=name, args=args, ok=False, error=error, subtask_id=subtask_id, attempt=attempt
            )
            return ToolOutcome(call=call, content=f"error: {error}")
        return self.live.call(name, args, subtask_id=subtask_id, attempt=attempt)
