"""``artoo replay --verify``: the Dispatcher's grouping and order, recomputed from each
logged plan with the functions the Dispatcher runs (:mod:`artoo.actors.roles.dispatcher`).

``dispatch``
    Each DispatchManifest's grouping (:func:`~artoo.actors.roles.dispatcher.group_subtasks`: by
    ``sequence``, ascending, plan order within a group) and each step after a group's last
    outcome (:func:`~artoo.actors.roles.dispatcher.after_group`): the SubTasks the Dispatcher
    sent are exactly the recomputed group's, in order, each as recomputed (the previous
    group's outputs injected into its context) and caused by its manifest; none is sent
    before the previous group has all its outcomes; after a failed group every later
    subtask gets a ``skipped`` outcome and none is sent; a group's subtasks are all sent
    before the Meta-Validator sums up the round or the next plan replaces it. Which pair a
    subtask went to is not recomputed (it depends on the other tasks' timing).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

import msgspec

from artoo.schemas import (
    DispatchManifest,
    Envelope,
    FinalResult,
    OutcomeSummary,
    ReplanRequest,
    SubTask,
    SubTaskOutcome,
    TaskCancelled,
)

from ._read import TaskLog
from ._report import VerifyReport, mismatch

__all__ = ["verify_dispatch"]


@dataclass
class _Run:
    manifest: Envelope
    round: int
    groups: list[list[SubTask]]
    index: int = 0
    send: deque[SubTask] = field(default_factory=deque)
    skip: deque[SubTask] = field(default_factory=deque)
    outstanding: set[str] = field(default_factory=set)
    outcomes: dict[str, SubTaskOutcome] = field(default_factory=dict)


def _dispatcher(env: Envelope) -> bool:
    return env.sender.split("/")[0] == "dispatcher"


class _Walk:
    """One task's dispatches, stepped the way the Dispatcher stepped them."""

    def __init__(self, task: TaskLog, report: VerifyReport) -> None:
        self.task = task
        self.report = report
        self.run: _Run | None = None

    def mismatch(self, seq: int, kind: str, name: str, logged: Any, recomputed: Any) -> None:
        mismatch(self.report, seq, kind, name, logged, recomputed, self.task.task_id)

    def step(self, step: Any) -> None:
        from artoo.actors.roles.dispatcher import DispatchStep

        assert isinstance(step, DispatchStep) and self.run is not None
        self.report.checked["dispatch"] += 1
        self.run.index = step.index
        self.run.send = deque(step.send)
        self.run.skip = deque(step.skip)
        self.run.outstanding = {st.subtask_id for st in step.send}

    def unsent(self, seq: int) -> None:
        """Every subtask still to send (or mark skipped) is named: it never went out."""
        if self.run is not None:
            for st in self.run.send:
                self.mismatch(seq, "SubTask", "(dispatched)", None, st.subtask_id)
            for st in self.run.skip:
                self.mismatch(seq, "SubTaskOutcome", "(skipped)", None, st.subtask_id)
            self.run.send.clear()
            self.run.skip.clear()

    def walk(self) -> None:
        from artoo.actors.roles.dispatcher import after_group, first_group, group_subtasks

        for env in self.task.envelopes:
            body = env.body
            if isinstance(body, DispatchManifest):
                self.unsent(env.seq)
                groups = group_subtasks(body.subtasks)
                self.run = _Run(env, body.round, groups)
                self.step(first_group(groups))
            elif isinstance(body, SubTask) and _dispatcher(env):
                self.sent(env, body)
            elif isinstance(body, SubTaskOutcome) and _dispatcher(env):
                self.skipped(env, body)
            elif isinstance(body, SubTaskOutcome) and self.run is not None:
                run = self.run
                if body.round != run.round or body.subtask_id not in run.outstanding:
                    continue
                run.outstanding.discard(body.subtask_id)
                run.outcomes[body.subtask_id] = body
                if not run.outstanding and not run.send:
                    self.step(after_group(run.groups, run.index, run.outcomes))
            elif isinstance(body, ReplanRequest | OutcomeSummary):
                if env.sender == "meta_validator" and self.run and body.round == self.run.round:
                    self.unsent(env.seq)  # the round summed up: all of it went out
            elif isinstance(body, FinalResult | TaskCancelled):
                self.run = None  # the Dispatcher forgets the task

    def sent(self, env: Envelope, body: SubTask) -> None:
        run = self.run
        if run is None or not run.send:  # no group of a plan may start now
            self.mismatch(env.seq, "SubTask", "(dispatched)", body.subtask_id, None)
            return
        expected = run.send.popleft()
        a, b = msgspec.to_builtins(body), msgspec.to_builtins(expected)
        for key in [*a, *(k for k in b if k not in a)]:
            if a.get(key) != b.get(key):
                self.mismatch(env.seq, "SubTask", key, a.get(key), b.get(key))
        if env.cause != run.manifest.seq:
            self.mismatch(env.seq, "SubTask", "(cause)", env.cause, run.manifest.seq)

    def skipped(self, env: Envelope, body: SubTaskOutcome) -> None:
        from artoo.actors.roles.dispatcher import skipped_outcome

        run = self.run
        if run is None or not run.skip:
            self.mismatch(env.seq, "SubTaskOutcome", "(skipped)", body.subtask_id, None)
            return
        expected = skipped_outcome(run.skip.popleft(), run.round)
        a, b = msgspec.to_builtins(body), msgspec.to_builtins(expected)
        for key in [*a, *(k for k in b if k not in a)]:
            if a.get(key) != b.get(key):
                self.mismatch(env.seq, "SubTaskOutcome", key, a.get(key), b.get(key))


def verify_dispatch(task: TaskLog, report: VerifyReport) -> None:
    """Recompute the Dispatcher's grouping and order for every plan of ``task``."""
    _Walk(task, report).walk()
