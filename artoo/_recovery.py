"""Ending the tasks a killed process left open (every task ends in one FinalResult).

When a process dies mid-task (SIGKILL, power loss) the log holds the task's UserRequest
and no FinalResult. At ``System.open``, before any role runs, :func:`end_orphans` writes
``FinalResult(abandon, "interrupted: the process stopped after seq N")`` for each such
task, so it ends exactly once: the next open finds it ended.

On a PostgreSQL store many Systems write at once, so an open task may be another live
System's: there a task is ended when its lease is lost (its writer's session is gone,
:mod:`artoo.eventstore._pgtasks`), by the one System that claimed it, through
:func:`take_over` — the one place a resume-after-crash replaces the ending.
"""

from __future__ import annotations

from typing import Any, Literal

from artoo.schemas import FinalResult, UserRequest

__all__ = ["TakeOver", "end_orphans", "open_tasks", "take_over"]


def open_tasks(log: Any) -> list[str]:
    """Task ids with a UserRequest and no FinalResult in ``log``, in start order.

    Reads the whole log once (decoding each envelope).
    """
    started: dict[str, None] = {}
    for env in log.read():
        body = env.body
        if isinstance(body, UserRequest) and env.task_id:
            started[env.task_id] = None
        elif isinstance(body, FinalResult):
            started.pop(body.task_id, None)
    return list(started)


def end_orphans(log: Any, bus: Any, *, sender: str, skip: Any = None) -> list[str]:
    """Publish an "interrupted" FinalResult for every open task in ``log``; returns them.
    ``skip(task_ids)`` names those to leave open (a PostgreSQL store's queued tasks)."""
    orphans = open_tasks(log)
    if orphans and skip is not None:
        kept = skip(orphans)
        orphans = [t for t in orphans if t not in kept]
    if not orphans:
        return []
    last = log.last_seq
    for task_id in orphans:
        bus.publish(
            FinalResult(
                task_id=task_id,
                status="abandon",
                summary=f"interrupted: the process stopped after seq {last}",
                reason="interrupted",
            ),
            sender=sender,
            task_id=task_id,
        )
    bus.flush()
    return orphans


TakeOver = Literal["ended", "had_ended", "not_started"]


def take_over(log: Any, bus: Any, task_id: str, worker: str, *, sender: str) -> TakeOver:
    """Take over a task whose worker died (claimed by this System, exactly once): today it
    is ended with ``FinalResult(abandon, reason="worker_lost")`` naming the worker and the
    task's last logged seq (``"ended"``). ``"had_ended"``: the log already holds its
    FinalResult (the worker logged it and died before marking the row done).
    ``"not_started"``: the log holds nothing of it — the caller runs it from its request.

    The dead worker can append nothing more (its session, which appended, is gone), so
    what the log holds of the task is final; a resume from the log would start here.
    """
    last = 0
    for env in log.read_task(task_id):
        if isinstance(env.body, FinalResult):
            return "had_ended"
        last = env.seq
    if not last:
        return "not_started"
    bus.publish(
        FinalResult(
            task_id=task_id,
            status="abandon",
            summary=f"worker lost: {worker} stopped after seq {last}",
            reason="worker_lost",
        ),
        sender=sender,
        task_id=task_id,
    )
    return "ended"
