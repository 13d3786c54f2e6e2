"""Offline replay of a store's event log (``artoo replay``).

- :func:`timeline` — each task as a narrative read top to bottom; :func:`task_table` — one
  row per task.
- :func:`verify` — recompute every deterministic decision from its logged inputs and list
  each disagreement (:class:`VerifyReport`).
- :func:`diff_runs` — two runs aligned by message kind and role, where they part, and
  what one saved over the other (:class:`RunDiff`, :func:`render_diff`).
- :func:`rerun` — re-execute tasks with every model answer and tool result served from the
  log, and report the first divergence (:class:`RerunReport`); with ``settings``, a
  what-if.
- :func:`fork` — a what-if that goes on live with a model into a new store recording its
  parent store and seq (:class:`ForkOrigin`, :func:`fork_origin`).

The store must not be open in another process: replay reads the log, never writes it.
"""

from ._diff import RunDiff, RunSummary, diff_runs, render_diff
from ._fork import ForkOrigin, fork, fork_origin
from ._read import TaskLog, read_store
from ._rerun import Divergence, RerunReport, rerun
from ._timeline import TaskRow, TimelineEntry, TimelineTask, task_table, timeline
from ._verify import Mismatch, VerifyReport, verify

__all__ = [
    "Divergence",
    "ForkOrigin",
    "Mismatch",
    "RerunReport",
    "RunDiff",
    "RunSummary",
    "TaskLog",
    "TaskRow",
    "TimelineEntry",
    "TimelineTask",
    "VerifyReport",
    "diff_runs",
    "fork",
    "fork_origin",
    "read_store",
    "render_diff",
    "rerun",
    "task_table",
    "timeline",
    "verify",
]
