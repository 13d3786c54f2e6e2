"""Ending the tasks a killed process left open (every task ends in one FinalResult).

When a process dies mid-task (SIGKILL, power loss) the log holds the task's UserRequest
and no FinalResult. At ``System.open``, before any role runs, :func:`end_orphans` writes
``FinalResult(abandon, "interrupted: the process stopped after seq N")`` for each such
task, so it ends exactly once: the next open finds it ended.

On a PostgreSQL store many Systems write at once, so an open task may be another live
System's: there a task is ended when its lease is lost (its writer's session is gone,
:mod:`artoo.eventstore._pgtasks`), by the one System that claimed it, through
:func:`take_over`, which resumes it from the log (:mod:`artoo._resume`) or ends it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from artoo.schemas import FinalResult, UserRequest
from artoo.schemas.messages import EndReason

__all__ = ["TakeOver", "end_orphans", "open_tasks", "open_tasks_scanned", "take_over"]


def open_tasks(log: Any) -> list[str]:
    """Task ids with a UserRequest and no FinalResult in ``log``, in start order.

    A log with a per-task index it can list (LevelDB: ``task_ids``) is read task by task
    from each task's end back to its FinalResult — the log itself is never scanned; any
    other log is read whole once (decoding each envelope).
    """
    if hasattr(log, "task_ids") and hasattr(log, "read_task_reversed"):
        found: list[tuple[int, str]] = []
        for task_id in log.task_ids():
            first = None  # the first UserRequest after the task's last FinalResult
            for env in log.read_task_reversed(task_id):
                if isinstance(env.body, FinalResult):
                    break
                if isinstance(env.body, UserRequest):
                    first = env.seq
            if first is not None:
                found.append((first, task_id))
        return [task_id for _, task_id in sorted(found)]
    return open_tasks_scanned(log)


def open_tasks_scanned(log: Any) -> list[str]:
    """:func:`open_tasks` by reading the whole log once (any log)."""
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
        summary = f"interrupted: the process stopped after seq {last}"
        _abandon(bus, task_id, summary, "interrupted", sender)
    bus.flush()
    return orphans


TakeOver = Literal["resumed", "ended", "had_ended", "not_started"]


def take_over(
    log: Any,
    bus: Any,
    task_id: str,
    worker: str,
    *,
    sender: str,
    resume: Callable[[str], object] | None = None,
) -> TakeOver:
    """Take over a task whose worker died (claimed by this System, exactly once).

    ``"resumed"``: ``resume(task_id)`` (:func:`artoo._resume.resume_task`) rebuilt it from
    its envelopes and it goes on here. ``"ended"``: with no ``resume`` (or none possible:
    the log holds no UserRequest of it) it ends with ``FinalResult(abandon,
    reason="worker_lost")`` naming the worker and the task's last logged seq.
    ``"had_ended"``: the log already holds its FinalResult (the worker logged it and died
    before marking the row done). ``"not_started"``: the log holds nothing of it — the
    caller runs it from its request.

    The dead worker can append nothing more (its session, which appended, is gone), so
    what the log holds of the task is final.
    """
    last = 0
    started = False
    for env in log.read_task(task_id):
        if isinstance(env.body, FinalResult):
            return "had_ended"
        started = started or isinstance(env.body, UserRequest)
        last = env.seq
    if not last:
        return "not_started"
    if resume is not None and started:
        resume(task_id)
        return "resumed"
    _abandon(bus, task_id, f"worker lost: {worker} stopped after seq {last}", "worker_lost", sender)
    return "ended"


def _abandon(bus: Any, task_id: str, summary: str, reason: EndReason, sender: str) -> None:
    """Publish the task's one FinalResult: abandon, for ``reason``."""
    bus.publish(
        FinalResult(task_id=task_id, status="abandon", summary=summary, reason=reason),
        sender=sender,
        task_id=task_id,
    )
