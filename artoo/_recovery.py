"""Ending the tasks a killed process left open (every task ends in one FinalResult).

When a process dies mid-task (SIGKILL, power loss) the log holds the task's UserRequest
and no FinalResult. At ``System.open``, before any role runs, :func:`end_orphans` writes
``FinalResult(abandon, "interrupted: the process stopped after seq N")`` for each such
task, so it ends exactly once: the next open finds it ended.
"""

from __future__ import annotations

from typing import Any

from artoo.schemas import FinalResult, UserRequest

__all__ = ["end_orphans", "open_tasks", "open_tasks_scanned"]


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


def end_orphans(log: Any, bus: Any, *, sender: str) -> list[str]:
    """Publish an "interrupted" FinalResult for every open task in ``log``; returns them."""
    orphans = open_tasks(log)
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
