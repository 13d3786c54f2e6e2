"""Dispatcher — runs a plan's subtasks group by group on the effector pairs.

Responsibilities:
    Take a DispatchManifest, group its subtasks by ``sequence``, and send each group's
    subtasks to free Executor–Agent-Validator pairs (addressed SubTasks), at most
    ``max_parallel`` at once across all tasks. When a group has all its outcomes, inject
    its outputs into the next group's context and send that group; after a failed group,
    mark every later subtask ``skipped``.

Input contract:
    DispatchManifest, SubTaskOutcome.

Output contract:
    SubTask (addressed ``to`` one pair), SubTaskOutcome(status="skipped").

Constraints:
    Does NOT execute or judge; does NOT change a plan; never drops a subtask — one that
    finds no free pair waits in a FIFO queue.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

import msgspec

from artoo.actors.runtime.role import Equipment, Role, handles
from artoo.schemas import (
    DispatchManifest,
    Envelope,
    Message,
    SubTask,
    SubTaskOutcome,
)

__all__ = [
    "DispatchStep",
    "Dispatcher",
    "after_group",
    "first_group",
    "group_subtasks",
    "inject_outputs",
    "skipped_outcome",
]


def group_subtasks(subtasks: list[SubTask]) -> list[list[SubTask]]:
    """Subtasks grouped by ``sequence``, groups in ascending order, input order within."""
    groups: dict[int, list[SubTask]] = {}
    for st in subtasks:
        groups.setdefault(st.sequence, []).append(st)
    return [groups[k] for k in sorted(groups)]


def inject_outputs(subtask: SubTask, previous: list[tuple[SubTask, str]]) -> SubTask:
    """``subtask`` with the previous group's outputs appended to its context."""
    if not previous:
        return subtask
    lines = ["Outputs of the previous step:"]
    lines += [f"- {st.instruction}: {out}" for st, out in previous]
    context = (subtask.context + "\n\n" if subtask.context else "") + "\n".join(lines)
    return msgspec.structs.replace(subtask, context=context)


@dataclass(frozen=True)
class DispatchStep:
    """What the Dispatcher does next in one plan: send ``send`` (one group, the previous
    group's outputs injected), mark ``skip`` skipped (every later subtask, after a failed
    group); ``index`` is the group now running (``len(groups)``: none)."""

    index: int
    send: tuple[SubTask, ...] = ()
    skip: tuple[SubTask, ...] = ()


def first_group(groups: list[list[SubTask]]) -> DispatchStep:
    """The step a plan starts with: its first group, as planned (pure)."""
    return DispatchStep(0, tuple(groups[0]) if groups else ())


def after_group(
    groups: list[list[SubTask]], index: int, outcomes: Mapping[str, SubTaskOutcome]
) -> DispatchStep:
    """The step once group ``index`` has all its ``outcomes`` (by subtask id; pure): the
    next group with this group's outputs injected when every outcome matched, else every
    later subtask skipped."""
    group = groups[index]
    if any(outcomes[st.subtask_id].status != "matched" for st in group):
        return DispatchStep(len(groups), skip=tuple(st for g in groups[index + 1 :] for st in g))
    if index + 1 >= len(groups):
        return DispatchStep(len(groups))
    previous = [(st, outcomes[st.subtask_id].output) for st in group]
    return DispatchStep(index + 1, tuple(inject_outputs(st, previous) for st in groups[index + 1]))


def skipped_outcome(subtask: SubTask, round: int) -> SubTaskOutcome:
    """The outcome the Dispatcher publishes for a subtask of plan ``round`` that it skips
    (pure)."""
    return SubTaskOutcome(
        subtask_id=subtask.subtask_id,
        round=round,
        status="skipped",
        reason="an earlier group failed",
    )


@dataclass
class _TaskRun:
    round: int
    groups: list[list[SubTask]]
    cause: int
    index: int = 0
    outstanding: dict[str, str] = field(default_factory=dict)  # subtask_id -> pair ("" queued)
    outcomes: dict[str, SubTaskOutcome] = field(default_factory=dict)


class Dispatcher(Role):
    """The Dispatcher actor."""

    name: ClassVar[str] = "dispatcher"
    publishes: ClassVar[tuple[type[Message], ...]] = (SubTask, SubTaskOutcome)
    consumes: ClassVar[tuple[type[Message], ...]] = (DispatchManifest, SubTaskOutcome)

    def __init__(self, equipment: Equipment, instance: str | None = None) -> None:
        super().__init__(equipment, instance)
        if not equipment.pairs:
            raise ValueError("the Dispatcher needs at least one effector pair")
        self.free: deque[str] = deque(equipment.pairs)
        self.busy: dict[str, tuple[str, str]] = {}  # pair -> (task_id, subtask_id)
        self.queue: deque[tuple[str, SubTask, int]] = deque()
        self.runs: dict[str, _TaskRun] = {}

    def active_tasks(self) -> list[str]:
        return list(self.runs)

    def forget_task(self, task_id: str) -> None:
        self.runs.pop(task_id, None)
        self.queue = deque(q for q in self.queue if q[0] != task_id)
        for pair, (tid, _) in list(self.busy.items()):
            if tid == task_id:
                del self.busy[pair]
                self.free.append(pair)
        self._pump()

    @handles(DispatchManifest)
    def on_dispatch_manifest(self, env: Envelope) -> None:
        body: DispatchManifest = env.body
        task_id = env.task_id or ""
        self.forget_task(task_id)  # a new round replaces the old one
        run = _TaskRun(round=body.round, groups=group_subtasks(body.subtasks), cause=env.seq)
        self.runs[task_id] = run
        self._step(task_id, run, first_group(run.groups), env.seq)

    def _step(self, task_id: str, run: _TaskRun, step: DispatchStep, cause: int) -> None:
        run.index = step.index
        for st in step.skip:
            self.publish(skipped_outcome(st, run.round), task_id=task_id, cause=cause)
        for st in step.send:
            run.outstanding[st.subtask_id] = ""
            self.queue.append((task_id, st, run.cause))
        self._pump()

    def _pump(self) -> None:
        while self.free and self.queue:
            task_id, st, cause = self.queue.popleft()
            pair = self.free.popleft()
            self.busy[pair] = (task_id, st.subtask_id)
            run = self.runs.get(task_id)
            if run is not None:
                run.outstanding[st.subtask_id] = pair
            self.publish(st, task_id=task_id, to=pair, cause=cause)

    @handles(SubTaskOutcome)
    def on_sub_task_outcome(self, env: Envelope) -> None:
        body: SubTaskOutcome = env.body
        if env.sender == self.sender:
            return  # our own "skipped" notices
        task_id = env.task_id or ""
        for pair, (tid, sid) in list(self.busy.items()):
            if tid == task_id and sid == body.subtask_id:
                del self.busy[pair]
                self.free.append(pair)
        run = self.runs.get(task_id)
        if run is not None and body.round == run.round and body.subtask_id in run.outstanding:
            del run.outstanding[body.subtask_id]
            run.outcomes[body.subtask_id] = body
            if not run.outstanding:
                self._group_done(task_id, run, env.seq)
        self._pump()

    def _group_done(self, task_id: str, run: _TaskRun, cause: int) -> None:
        self._step(task_id, run, after_group(run.groups, run.index, run.outcomes), cause)
