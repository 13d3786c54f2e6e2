"""The Auditor's report (paper §8): what one audit window saw, as msgspec Structs.

An :class:`AuditReport` is not a bus message (the Auditor publishes nothing on the bus);
it is written to the store's audit log and handed to the operator. Every part of it except
:class:`LiveStats` is a function of the event log alone, so a report can be recomputed
offline and compared with the one written live. The schema-evolution rules of
``messages.py`` apply: new fields get defaults and go last; a field's type never changes.
"""

from __future__ import annotations

from typing import Literal

import msgspec

__all__ = [
    "Anomaly",
    "AnomalyKind",
    "AuditReport",
    "BoundaryRule",
    "BoundaryViolation",
    "ConvergenceFailure",
    "ConvergenceRule",
    "DriftAlert",
    "LiveStats",
    "RoleStats",
    "TaskGap",
]

BoundaryRule = Literal["outside_contract", "unknown_sender", "effector_memory_query"]
"""Why a published message broke a role boundary."""
ConvergenceRule = Literal["loss_not_improving", "law2", "replan_budget"]
"""Why a task failed to converge."""
AnomalyKind = Literal["model_error", "tool_error", "role_crash", "step_failed", "unknown_message"]
"""An event worth the operator's eye that is not itself a boundary or convergence failure."""


class TaskGap(msgspec.Struct, frozen=True, kw_only=True, tag="TaskGap"):
    """A task's loss L per GGS round decided in the window (the gap trend)."""

    task_id: str
    rounds: list[int] = []
    losses: list[float] = []


class BoundaryViolation(msgspec.Struct, frozen=True, kw_only=True, tag="BoundaryViolation"):
    """A message whose sender may not publish its kind (the roster's Output contracts)."""

    seq: int
    sender: str
    kind: str
    rule: BoundaryRule
    task_id: str | None = None


class ConvergenceFailure(msgspec.Struct, frozen=True, kw_only=True, tag="ConvergenceFailure"):
    """A task thrashing instead of converging; ``seqs`` are the evidence envelopes."""

    task_id: str
    rule: ConvergenceRule
    seqs: list[int] = []
    losses: list[float] = []


class RoleStats(msgspec.Struct, frozen=True, kw_only=True, tag="RoleStats"):
    """One role's figures in one window (``None``: nothing to measure this window).

    ``failure_rate`` is failures (StepFailed, RoleFailed, a failed ExecutionResult) over
    the role's published messages (LLMCall records excluded); ``retries_per_subtask`` is
    Executor attempts after the first per subtask attempted; latency and tokens come from
    the role's LLMCall records (tokens: prompt + completion).
    """

    role: str
    messages: int = 0
    failures: int = 0
    failure_rate: float | None = None
    model_calls: int = 0
    model_errors: int = 0
    latency_p95_ms: float | None = None
    tokens_per_call: float | None = None
    subtasks: int = 0
    retries: int = 0
    retries_per_subtask: float | None = None


class DriftAlert(msgspec.Struct, frozen=True, kw_only=True, tag="DriftAlert"):
    """A role's metric above ``limit`` = median + k·max(MAD, floor) of its earlier windows."""

    role: str
    metric: str
    value: float
    median: float
    mad: float
    limit: float
    history: int


class Anomaly(msgspec.Struct, frozen=True, kw_only=True, tag="Anomaly"):
    """One anomalous event; ``detail`` is for people, decisions read ``kind``."""

    kind: AnomalyKind
    seq: int
    role: str = ""
    task_id: str | None = None
    detail: str = ""


class LiveStats(msgspec.Struct, frozen=True, kw_only=True, tag="LiveStats"):
    """What only the live Auditor can see (not in the log, so not recomputable):
    envelopes its tap dropped and the envelopes it re-read from the log instead."""

    tap_drops: int = 0
    caught_up: int = 0
    resumed_from: int = 0
    """``System.audit()`` only: the seq this session's Auditor started folding from (1:
    the whole event log; more: its watermark). 0 in reports written to the audit log."""
    replayed: int = 0
    """``System.audit()`` only: the envelopes it read from the event log at start."""


class AuditReport(msgspec.Struct, frozen=True, kw_only=True, tag="AuditReport"):
    """One audit window: ``[window_start, window_end)`` in event time, seqs
    ``first_seq..last_seq`` (0 when empty). ``complete`` is False for a report of a window
    still open (``System.audit()``)."""

    window_start: float
    window_end: float
    first_seq: int = 0
    last_seq: int = 0
    complete: bool = True
    envelopes: int = 0
    tasks_started: int = 0
    tasks_ended: dict[str, int] = {}
    corrections: int = 0
    """CorrectionSignals after a failed attempt (an ask for a second derivation of a
    passing answer, ``CorrectionSignal.corroborate``, is not a correction)."""
    replans: int = 0
    gap_trend: list[TaskGap] = []
    boundary_violations: list[BoundaryViolation] = []
    convergence_failures: list[ConvergenceFailure] = []
    roles: list[RoleStats] = []
    drift: list[DriftAlert] = []
    anomalies: list[Anomaly] = []
    live: LiveStats = LiveStats()

    def recomputable(self) -> AuditReport:
        """This report without its live-only part: what an offline recomputation equals."""
        return msgspec.structs.replace(self, live=LiveStats())
