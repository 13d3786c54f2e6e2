"""``artoo replay --rerun --model M``: a what-if that goes on live, into a forked store.

A plain what-if (:func:`artoo.replay.rerun` with ``settings``) stops at the first call
the log cannot answer. A **fork** answers it — and every call after it — with a live
model instead, in a new store of its own:

- the fork's event log starts as a copy of the parent's log up to the task (seqs
  1 … ``seq``), so memory is what the task saw, and ``fork.json`` in the fork names the
  parent store, that seq, the task, the settings and the model (:class:`ForkOrigin`);
- the task runs again under the changed Config; model answers, tool results and the
  verdicts of checks that read the workspace are served from the record until the first
  call the record cannot answer; from there on the run has left the record: the live
  model answers every call, tools run for real in ``workspace`` (in the sandbox the
  Config asks for, Law 1 as always; a confirmation with no recorded answer is denied),
  checks read ``workspace``;
- the fork's log is compared with the record as a rerun's is (the first divergence).

Tool effects of the recorded run are not re-applied to ``workspace``: it is used as it
is when the fork goes live.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from artoo.schemas import Config

from ._read import read_store, task_config
from ._rerun import (
    RerunReport,
    _compare_task,
    _ending,
    _run_task,
    _seed,
    _Served,
    with_settings,
)

__all__ = ["FORK_FILE", "ForkOrigin", "fork", "fork_origin", "origin_line"]

FORK_FILE = "fork.json"


class ForkOrigin(msgspec.Struct, frozen=True, kw_only=True):
    """Where a forked store came from (its ``fork.json``)."""

    parent: str
    """The parent store's absolute path."""
    seq: int
    """The last envelope copied from the parent's log (the fork's log continues after it)."""
    task_id: str
    """The recorded task the fork runs again."""
    settings: list[str] = []
    model: str = ""


def fork_origin(store: str | Path) -> ForkOrigin | None:
    """The store's :class:`ForkOrigin`, or None when it is not a fork."""
    path = Path(store) / FORK_FILE
    if not path.exists():
        return None
    return msgspec.json.decode(path.read_bytes(), type=ForkOrigin)


def fork(
    store: str | Path,
    task_id: str,
    *,
    model: str,
    into: str | Path,
    workspace: str | Path,
    settings: list[str] | None = None,
    config: Config | None = None,
    model_options: dict[str, Any] | None = None,
    timeout: float = 600.0,
) -> RerunReport:
    """Run ``task_id`` of ``store`` again in a new store ``into`` under ``settings``, from
    the record while it can answer and with ``model`` live after (see the module's
    docstring). The parent store is only read. ``reran[0]["live_from"]`` names the first
    call the record could not answer (absent: the fork never left the record).

    Raises ValueError for a store ``into`` that exists and is not empty, or a workspace
    that is not a directory.
    """
    from artoo.actors.llm import backend_options, resolve_backend

    target = Path(into)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise ValueError(f"the fork store {target} already exists and is not empty")
    ws = Path(workspace)
    if not ws.is_dir():
        raise ValueError(f"the workspace {ws} is not a directory")
    envelopes, [task] = read_store(store, task_id)
    cfg = with_settings(config or task_config(task, envelopes), settings or [])
    cfg = cfg.model_copy(update={"durability": Config().durability})
    first = task.envelopes[0].seq
    prefix = [e for e in envelopes if e.seq < first]
    _seed(target, prefix)
    origin = ForkOrigin(
        parent=str(Path(store).resolve()),
        seq=first - 1,
        task_id=task.task_id,
        settings=list(settings or []),
        model=model,
    )
    (target / FORK_FILE).write_bytes(msgspec.json.encode(origin))
    served = _Served(task)
    served.live = resolve_backend(model, **backend_options(model, cfg, model_options))
    served.live_model = model
    new = _run_task(task, served, target, ws, cfg, timeout, live=True)
    report = RerunReport(tasks=[task.task_id])
    ending = _ending(task.task_id, new, task.envelopes)
    if served.unanswered:
        ending["live_from"] = served.unanswered[0]
    ending["fork"] = str(target)
    report.reran.append(ending)
    report.divergence, report.compared = _compare_task(task, new, served, what_if=True)
    report.unanswered = list(served.unanswered)
    return report


def origin_line(store: str | Path) -> str | None:
    """One line saying where a forked store came from (None: not a fork)."""
    origin = fork_origin(store)
    if origin is None:
        return None
    how = " ".join([*(f"--set {s}" for s in origin.settings), f"--model {origin.model}"])
    return (
        f"forked from {origin.parent} at seq {origin.seq} (task {origin.task_id}; {how})"
        if origin.model
        else f"forked from {origin.parent} at seq {origin.seq} (task {origin.task_id})"
    )
