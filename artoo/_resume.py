"""Resuming a task the stopped process left open, from the log (``Config.recovery``).

A task whose UserRequest is in the log and whose FinalResult is not was running when its
process stopped (SIGKILL, power loss, a worker that died). With ``recovery = "resume"``
(the default) :func:`resume_task` rebuilds it, as Temporal resumes a workflow from its
history:

- the task is submitted again under its own id; its roles run it again from the start,
  each model answer, tool result and Law 1 decision the log holds is served from the log
  (the very serving of ``artoo replay --rerun``: :class:`artoo.replay._served._Served`);
- each message the roles publish that the log already holds (the next one of its sender,
  of the same kind) is not logged again: the bus delivers the recorded envelope (its seq,
  its time shifted by the time the task was stopped) to the subscribers, so the roles'
  state is what it was, and what they cite (``cause``, evidence) are the logged seqs;
- from the first call the log cannot answer on, the task goes on live: the model is
  asked, tools run for real; what it publishes is logged with the ids it generated while
  rebuilding mapped back to the recorded ones, so the task's log reads as one run.

No model call is made twice: a call logged is served; one made and not logged (the
process died during it) has no answer in the log and is made again. A tool call logged
is served, not re-run. The task's deadline counts only the time it ran: the recorded
envelopes are delivered with their times shifted by ``TaskResumed.stopped_s``. A
:class:`~artoo.schemas.TaskResumed` marks the resume in the log, and the FinalResult says
``resumed_from`` (the last seq of the task before the resume).
"""

from __future__ import annotations

import logging
import re
import threading
from collections import defaultdict, deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from artoo.actors.runtime.bus import Replayed, Rewritten
from artoo.actors.tools import Confirm, ConfirmationNeeded, ToolOutcome, ToolRunner
from artoo.eventstore import MEMORY_EVENTS
from artoo.replay._read import TaskLog
from artoo.replay._served import _Served, _ServedTools
from artoo.schemas import (
    ConfirmationDecision,
    Envelope,
    FinalResult,
    MemoryRecall,
    Message,
    QuestionAnswered,
    TaskPaused,
    TaskResumed,
    TaskSpec,
    TaskUnpaused,
    ToolCall,
    UserQuestion,
    UserRequest,
)

if TYPE_CHECKING:
    from artoo.actors.llm import LLMRequest, LLMResponse
    from artoo.actors.runtime.bus import Bus
    from artoo.actors.runtime.clock import Clock
    from artoo.eventstore import EventLogBackend

    from ._pause import Pauses

__all__ = ["Resumer", "resume_task"]

logger = logging.getLogger("artoo")

_ID = re.compile(r"\b[0-9A-HJKMNP-TV-Z]{26}\b")
_NOT_REPLAYED = frozenset({TaskResumed, TaskPaused, TaskUnpaused})
"""Kinds never matched against the record: each resume logs its own; a pause is the
operator's, logged when it happens (:mod:`artoo._pause` restores the gate from the log)."""
_QUIET = frozenset(MEMORY_EVENTS)
"""Replayed kinds not delivered again: Memory applied them when they were logged."""
_AS_RECORDED = frozenset({MemoryRecall, TaskSpec})
"""Replayed kinds delivered with their recorded body: what memory held when the task first
ran (other tasks may have changed memory since), and the reading as the task first made it
— what it saw of the workspace (``TaskSpec.seen``), before the task's own changes (a file
it created is no longer one to create) — which is what replay recomputes from."""


@dataclass
class _Resume:
    """One task being resumed: what the log holds of it, per sender, not yet replayed."""

    task: TaskLog
    served: _Served
    from_seq: int
    shift: float
    streams: dict[str, deque[Envelope]] = field(default_factory=lambda: defaultdict(deque))
    decisions: dict[str, ConfirmationDecision] = field(default_factory=dict)
    answers: dict[str, QuestionAnswered] = field(default_factory=dict)
    later_stops: dict[int, float] = field(default_factory=dict)
    """seq -> the time the task was stopped after that envelope and before this resume
    (earlier resumes): added to its delivered time, so the task's age counts only the time
    it ran across every stop."""
    parted: bool = False
    """A message of a sender differed in kind from its next recorded one: from then on
    nothing more is matched (logged as published)."""


class Resumer:
    """The resumes of one System: the bus's :class:`~artoo.actors.runtime.bus.ResumeHook`,
    the model and tool seams that serve the log, and the Queen's recorded decisions."""

    def __init__(self, *, sandboxed: bool = False) -> None:
        self.sandboxed = sandboxed
        """Shell commands run in the sandbox (their changes applied only when they end)."""
        self._tasks: dict[str, _Resume] = {}
        self._lock = threading.Lock()

    @property
    def tasks(self) -> dict[str, _Resume]:
        """The tasks being resumed, by id (each leaves at its FinalResult)."""
        return self._tasks

    def replays(self, task_id: str, seq: int) -> bool:
        """True when envelope ``seq`` of ``task_id`` is history a resume here replays (at or
        before its ``from_seq``): the bus must not deliver it again from the shared log (a
        PostgreSQL store's follower reads the stopped worker's envelopes, perhaps late), or
        the roles would see it twice — once read, once replayed."""
        resume = self.tasks.get(task_id)
        return resume is not None and seq <= resume.from_seq

    # ------------------------------------------------------------------ starting
    def add(self, task: TaskLog, *, now: float) -> _Resume:
        """Start resuming ``task`` (its envelopes in seq order)."""
        served = _Served(task)
        served.resuming = True
        last = task.envelopes[-1]
        resume = _Resume(task, served, from_seq=last.seq, shift=max(0.0, now - last.ts))
        stopped = 0.0
        for env in reversed(task.envelopes):
            if isinstance(env.body, TaskResumed):
                stopped += env.body.stopped_s
            elif stopped:
                resume.later_stops[env.seq] = stopped
        for env in task.envelopes:
            if type(env.body) in _NOT_REPLAYED or env.sender == "system":
                continue
            resume.streams[env.sender].append(env)
            if isinstance(env.body, ConfirmationDecision):
                resume.decisions[env.body.request_id] = env.body
            elif isinstance(env.body, QuestionAnswered):
                resume.answers[env.body.question_id] = env.body
        with self._lock:
            self._tasks[task.task_id] = resume
        return resume

    # ------------------------------------------------------------------ the bus
    def route(
        self, task_id: str | None, sender: str, to: str | None, cause: int | None, body: Message
    ) -> Replayed | Rewritten | None:
        """Called by the bus writer for each message of a resumed task (see the module)."""
        resume = self.tasks.get(task_id or "")
        if task_id is None or resume is None or type(body) in _NOT_REPLAYED:
            return None
        stream = resume.streams.get(sender)
        if stream and not resume.parted:
            recorded = stream[0]
            if type(recorded.body) is type(body):
                stream.popleft()
                self._learn(resume, body, recorded.body)
                if type(body) in _QUIET:
                    return Replayed(None)
                ts = recorded.ts + resume.shift + resume.later_stops.get(recorded.seq, 0.0)
                if type(body) in _AS_RECORDED:
                    body = recorded.body
                return Replayed(Envelope(recorded.seq, ts, task_id, sender, to, cause, body))
            resume.parted = True
            logger.warning(
                "resume of task %s: %s published %s where the log has %s (seq %s); "
                "logging as published from here on",
                task_id,
                sender,
                type(body).__name__,
                type(recorded.body).__name__,
                recorded.seq,
            )
        logged = self._translate(resume, body)
        if isinstance(logged, FinalResult):  # the end says it was resumed, and from where
            logged = msgspec.structs.replace(logged, resumed_from=resume.from_seq)
            with self._lock:
                self.tasks.pop(task_id, None)
            return Rewritten(logged, logged)
        return Rewritten(logged) if logged is not body else None

    def _learn(self, resume: _Resume, new: Message, old: Message) -> None:
        """Map the ids the rebuilt roles generated to the recorded ones, read off the same
        places of a replayed message and its recorded twin."""
        found: list[tuple[str, str]] = []

        def walk(a: Any, b: Any) -> None:
            if isinstance(a, dict) and isinstance(b, dict):
                for key, value in a.items():
                    if key in b:
                        walk(value, b[key])
            elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
                for x, y in zip(a, b, strict=True):
                    walk(x, y)
            elif isinstance(a, str) and isinstance(b, str) and a != b:
                ours, theirs = _ID.findall(a), _ID.findall(b)
                if len(ours) == len(theirs):
                    found.extend(p for p in zip(ours, theirs, strict=True) if p[0] != p[1])

        walk(msgspec.to_builtins(new), msgspec.to_builtins(old))
        if not found:
            return
        served = resume.served
        with served.lock:
            for ours, theirs in found:
                served.ids.setdefault(ours, theirs)
            served.lock.notify_all()

    def _translate(self, resume: _Resume, body: Message) -> Message:
        """``body`` with the rebuilt roles' ids replaced by the recorded ones."""
        ids = resume.served.ids
        if not ids:
            return body
        changed = False

        def walk(value: Any) -> Any:
            nonlocal changed
            if isinstance(value, dict):
                return {k: walk(v) for k, v in value.items()}
            if isinstance(value, list):
                return [walk(v) for v in value]
            if isinstance(value, str) and _ID.search(value):
                new = _ID.sub(lambda m: ids.get(m.group(0), m.group(0)), value)
                changed = changed or new != value
                return new
            return value

        data = walk(msgspec.to_builtins(body))
        if not changed:
            return body
        return msgspec.convert(data, type(body))

    # ------------------------------------------------------------------ the seams
    def backend(self, inner: Any) -> Any:
        """``inner`` (a tier's model backend) behind the log: a resumed task's calls the
        log answers are served from it."""
        return _ResumingBackend(self, inner)

    def runner(self, live: ToolRunner, *, task_id: str, confirm: Confirm) -> ToolRunner:
        """One attempt's tool runner (a ToolRunnerFactory): a resumed task's calls the log
        holds are served from it, the rest run ``live`` — the call that was under way when
        the process stopped only when it is known safe to run again (see
        :class:`_ResumedTools`)."""
        resume = self.tasks.get(task_id)
        if resume is None or resume.served.gone_live:
            return live
        return _ResumedTools(resume.served, live, confirm, sandboxed=self.sandboxed)

    def decision(self, task_id: str | None, request_id: str) -> ConfirmationDecision | None:
        """The logged decision of a confirmation a resumed task asks again (the Queen's
        :attr:`~artoo.actors.runtime.role.Equipment.recorded_decision`)."""
        resume = self.tasks.get(task_id or "")
        if resume is None:
            return None
        return resume.decisions.get(resume.served.ids.get(request_id, request_id))

    def answer(self, task_id: str | None, question_id: str) -> QuestionAnswered | None:
        """The logged answer of a question a resumed task asks again (the Queen's
        :attr:`~artoo.actors.runtime.role.Equipment.recorded_answer`)."""
        resume = self.tasks.get(task_id or "")
        if resume is None:
            return None
        return resume.answers.get(resume.served.ids.get(question_id, question_id))


READ_ONLY_TOOLS = frozenset({"read_file", "glob", "load_data", "run_tests"})
"""Built-in tools that change nothing: safe to run again (``run_tests`` discards whatever
the tests wrote, or runs them in a copy)."""


class _ResumedTools(_ServedTools):
    """A resumed attempt's tool runner. A call the log answers is served; the first it
    cannot answer, when the model's request for it is logged, was under way when the
    process stopped: it runs again at once only when that is known safe — a read-only tool,
    or a shell command in the sandbox (its changes are applied only when it ends; the
    kill came before its ToolCallEnded) — else the operator is asked first, through the
    Law 1 confirmation (denied: the call is not run, and the model is told)."""

    def __init__(
        self, served: _Served, live: ToolRunner, confirm: Confirm, *, sandboxed: bool
    ) -> None:
        super().__init__(served, live, confirm)
        self.sandboxed = sandboxed

    def call(
        self, name: str, args: dict[str, Any], *, subtask_id: str = "", attempt: int = 1
    ) -> ToolOutcome:
        was_live = self.served.gone_live
        outcome = self.served.tool(subtask_id, attempt, name, args, self.confirm)
        if outcome is not None:
            return outcome
        safe = name in READ_ONLY_TOOLS or (name == "shell" and self.sandboxed)
        if not was_live and not safe:
            asked = ConfirmationNeeded(
                tool=name,
                args=dict(args),
                target=None,
                reason="the process stopped during this call: its effects may be applied "
                "already, running it again may apply them twice",
                action=f"run {name} again after a restart",
                subtask_id=subtask_id,
                attempt=attempt,
                gate="resume",
            )
            if not self.confirm(asked):
                error = "not run again after the restart (the operator did not approve)"
                call = ToolCall(
                    tool=name,
                    args=dict(args),
                    ok=False,
                    error=error,
                    subtask_id=subtask_id,
                    attempt=attempt,
                    refusal="law1_denied",
                )
                return ToolOutcome(call=call, content=f"error: {error}")
        return self.live.call(name, args, subtask_id=subtask_id, attempt=attempt)


class _ResumingBackend:
    """A tier's backend behind a :class:`Resumer`."""

    def __init__(self, resumer: Resumer, inner: Any) -> None:
        self.resumer, self.inner = resumer, inner

    def complete(self, request: LLMRequest) -> LLMResponse:
        resume = self.resumer.tasks.get(request.task_id or "")
        if resume is None or resume.served.gone_live:
            return self.inner.complete(request)
        return resume.served.complete(request, live=self.inner)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class ResumingSystem(Protocol):
    """What :func:`resume_task` takes of a System (:class:`artoo.System` is one)."""

    log: EventLogBackend
    bus: Bus
    clock: Clock
    resumer: Resumer
    pauses: Pauses

    def _start(self, task_id: str, request: UserRequest) -> Any:
        """Publish ``request`` as task ``task_id``; its TaskHandle."""
        ...


def resume_task(system: ResumingSystem, task_id: str) -> Any:
    """Resume ``task_id`` of ``system``'s log — a task whose process stopped before its
    FinalResult — reading only its envelopes (the log's per-task index); returns its
    TaskHandle. The entry point for any host that knows a task's process is gone (a
    System at open, a worker pool whose worker died).

    Raises ValueError when the log has no UserRequest for it or it has ended.
    """
    envelopes = list(system.log.read_task(task_id))
    request = next((e.body for e in envelopes if isinstance(e.body, UserRequest)), None)
    if request is None:
        raise ValueError(f"task {task_id} has no UserRequest in the log: nothing to resume")
    if any(isinstance(e.body, FinalResult) for e in envelopes):
        raise ValueError(f"task {task_id} has ended: nothing to resume")
    resume = system.resumer.add(TaskLog(task_id, envelopes), now=system.clock.now())
    paused = system.pauses.restore(task_id, envelopes)  # paused when it stopped: paused still
    asked = {e.body.question_id for e in envelopes if isinstance(e.body, UserQuestion)}
    asked -= {e.body.question_id for e in envelopes if isinstance(e.body, QuestionAnswered)}
    system.bus.publish(
        TaskResumed(
            from_seq=resume.from_seq,
            replayed=len(envelopes),
            stopped_s=round(resume.shift, 6),
            paused=paused,
            waiting=bool(asked),
        ),
        sender="system",
        task_id=task_id,
    )
    return system._start(task_id, request)
