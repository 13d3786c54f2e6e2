"""Offline replay of a store's event log (``artoo replay``).

- :func:`timeline` — each task as a narrative read top to bottom; :func:`task_table` — one
  row per task.
- :func:`verify` — recompute every deterministic decision from its logged inputs and list
  each disagreement (:class:`VerifyReport`).

The store must not be open in another process: replay reads the log, never writes it.
"""

from ._read import TaskLog, read_store
from ._timeline import TaskRow, TimelineEntry, TimelineTask, task_table, timeline
from ._verify import Mismatch, VerifyReport, verify

__all__ = [
    "Mismatch",
    "TaskLog",
    "TaskRow",
    "TimelineEntry",
    "TimelineTask",
    "VerifyReport",
    "read_store",
    "task_table",
    "timeline",
    "verify",
]
