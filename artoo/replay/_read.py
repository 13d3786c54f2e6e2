"""Reading a store's event log for replay: every envelope, grouped by task, in seq order."""

from __future__ import annotations

import gc
from dataclasses import dataclass, field
from pathlib import Path

from artoo.schemas import Envelope, FinalResult, UserRequest

__all__ = ["TaskLog", "read_store"]


@dataclass
class TaskLog:
    """One task's envelopes in seq order, with what a reader asks of them first."""

    task_id: str
    envelopes: list[Envelope] = field(default_factory=list)

    @property
    def text(self) -> str:
        """The task as the user wrote it ("" when the log has no UserRequest for it)."""
        for env in self.envelopes:
            if isinstance(env.body, UserRequest):
                return env.body.text
        return ""

    @property
    def final(self) -> FinalResult | None:
        """The task's FinalResult, if it ended."""
        for env in reversed(self.envelopes):
            if isinstance(env.body, FinalResult):
                return env.body
        return None

    @property
    def started(self) -> float:
        """The time of the task's first envelope."""
        return self.envelopes[0].ts if self.envelopes else 0.0


def read_store(
    store: str | Path, task_id: str | None = None
) -> tuple[list[Envelope], list[TaskLog]]:
    """Every envelope of ``store``'s event log in seq order, and the tasks in the order they
    started (only ``task_id`` when given; a ``ValueError`` when the log has no such task).

    The store must not be open in another process (``StoreLocked``).
    """
    from artoo.eventstore import EventLog

    path = Path(store)
    if not (path / "events").exists():
        raise ValueError(f"{path} is not an artoo store (no events/ directory)")
    paused = gc.isenabled()
    gc.disable()  # a million new objects would set off full collections, each walking them all
    try:
        # read_only: no key scan at open; reading every seq checks them all anyway
        with EventLog.open(path / "events", durability="none", read_only=True) as log:
            envelopes = list(log.read())
        tasks: dict[str, TaskLog] = {}
        for env in envelopes:
            if env.task_id:
                task = tasks.get(env.task_id)
                if task is None:
                    task = tasks[env.task_id] = TaskLog(env.task_id)
                task.envelopes.append(env)
    finally:
        if paused:
            gc.enable()
    if task_id is not None:
        if task_id not in tasks:
            raise ValueError(f"no task {task_id} in {path}")
        return envelopes, [tasks[task_id]]
    return envelopes, list(tasks.values())
