"""The audit report's schema: one msgspec Struct the Markdown, JSON and HTML are all
rendered from (``artoo audit --format json`` is this struct encoded; its JSON schema is
:func:`report_schema`). New fields get defaults; a field's type never changes."""

from __future__ import annotations

from typing import Any

import msgspec


class Period(msgspec.Struct, frozen=True, kw_only=True):
    """The time the report covers (UTC epoch seconds) and the seqs it read."""

    start: float | None = None
    end: float | None = None
    first_seq: int | None = None
    last_seq: int | None = None
    envelopes: int = 0


class Summary(msgspec.Struct, frozen=True, kw_only=True):
    """The report's first section."""

    tasks: int = 0
    by_status: dict[str, int] = {}
    """Tasks by final status (``accept``, ``success``, ``abandon``; ``running`` for a task
    with no FinalResult in the period)."""
    success_rate: float | None = None
    """(accept + success) / ended tasks; None when no task ended."""
    task_time_p50_s: float | None = None
    task_time_p95_s: float | None = None
    model_calls: int = 0
    model_errors: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost: str = "not known"
    """Money spent where the log says it (it never does yet: no price table is kept)."""
    escalations: int = 0
    escalations_by_severity: dict[str, int] = {}
    escalations_ended: dict[str, int] = {}
    """How the escalations ended: by TicketResolved resolution, ``open`` for none yet."""
    law1_asked: int = 0
    law1_approved: int = 0
    law1_denied: int = 0
    audit_chain: str = "no audit log in this store"
    """The verdict of the audit log's hash-chain check."""


class Attention(msgspec.Struct, frozen=True, kw_only=True):
    """One thing an operator should look at first."""

    kind: str
    """``convergence_failure``, ``denied_action``, ``escalation``, ``role_failure``,
    ``boundary_violation`` or ``drift``."""
    task_id: str | None = None
    seqs: list[int] = []
    """The evidence: seqs of the envelopes that show it."""
    line: str = ""


class Decision(msgspec.Struct, frozen=True, kw_only=True):
    """One GGS decision as the timeline shows it."""

    seq: int
    round: int
    directive: str
    d: float
    p: float
    omega: float
    loss: float
    grad: float
    rationale: str = ""


class Step(msgspec.Struct, frozen=True, kw_only=True):
    """One line of a task's timeline."""

    seq: int
    t_s: float
    """Seconds since the task started."""
    kind: str
    round: int | None = None
    text: str = ""


class TaskRow(msgspec.Struct, frozen=True, kw_only=True):
    """One task: its end, its path and its timeline."""

    task_id: str
    text: str = ""
    status: str = "running"
    reason: str | None = None
    path: list[str] = []
    """The GGS directives in order, e.g. ``["change_path", "accept"]``."""
    rounds: int = 0
    model_calls: int = 0
    tokens: int = 0
    time_s: float | None = None
    started: float | None = None
    summary: str = ""
    law1_denied: bool = False
    established: str | None = None
    """How the answer was established (``FinalResult.established``: code / model / none;
    None for a task still running or from an older log)."""
    established_by: str = ""
    """The rule that established it by code, in words (``FinalResult.established_by``;
    empty when none is named)."""
    decisions: list[Decision] = []
    timeline: list[Step] = []
    answer: str = ""
    """The FinalResult's output (what the task answered), cut to 300 characters."""
    short_id: str = ""
    """The shortest prefix of ``task_id`` no other task of the report shares (at least 8
    characters): every command taking a task id accepts it."""


class Quantiles(msgspec.Struct, frozen=True, kw_only=True):
    """p50, p95 and p99 of a sample (None when empty)."""

    n: int = 0
    p50: float | None = None
    p95: float | None = None
    p99: float | None = None


class RoleRow(msgspec.Struct, frozen=True, kw_only=True):
    """One role's model calls and failures."""

    role: str
    calls: int = 0
    latency_ms: Quantiles = Quantiles()
    tokens_per_call: float | None = None
    failure_rate: float | None = None
    """Model calls that failed, per call."""
    retry_rate: float | None = None
    """Executor attempts beyond the first, per subtask (executor only)."""
    step_failures: int = 0
    crashes: int = 0
    drift: list[str] = []


class RoleWindowRow(msgspec.Struct, frozen=True, kw_only=True):
    """One role in one of the Auditor's windows (with the drift alerts it raised)."""

    start: float
    role: str
    model_calls: int = 0
    failure_rate: float | None = None
    latency_p95_ms: float | None = None
    tokens_per_call: float | None = None
    retries_per_subtask: float | None = None
    drift: list[str] = []


class ToolRow(msgspec.Struct, frozen=True, kw_only=True):
    """One tool's calls."""

    tool: str
    calls: int = 0
    errors: int = 0
    error_rate: float | None = None
    median_ms: float | None = None
    refusals: dict[str, int] = {}


class PairRow(msgspec.Struct, frozen=True, kw_only=True):
    """A tag pair's potentials as memory last reported them in the period."""

    space: str
    entity: str
    attention: float
    decision: float
    action: str
    seq: int


class MemoryStats(msgspec.Struct, frozen=True, kw_only=True):
    """What happened to memory in the period."""

    megrams_written: int = 0
    sops_promoted: int = 0
    constraints_promoted: int = 0
    demotions: int = 0
    forgets: int = 0
    strongest_avoid: list[PairRow] = []
    strongest_exploit: list[PairRow] = []


class WindowRow(msgspec.Struct, frozen=True, kw_only=True):
    """Statistics of one window of time (the Auditor's window length)."""

    start: float
    end: float
    tasks_started: int = 0
    tasks_ended: int = 0
    by_status: dict[str, int] = {}
    model_calls: int = 0
    latency_p95_ms: float | None = None
    tokens: int = 0
    replans: int = 0
    tool_errors: int = 0
    boundary_violations: int = 0
    drift_alerts: int = 0
    complete: bool = True
    """False for a report written before its window ended (at a System's close)."""
    source: str = "log"
    """``auditor`` when the row is one of the Auditor's AuditReports (its audit log),
    ``log`` when computed here from the event log (a store without an audit log)."""


class AuditDocument(msgspec.Struct, frozen=True, kw_only=True):
    """The whole report (``artoo audit``): every section, in the order it is shown."""

    version: int = 1
    store: str = ""
    filters: dict[str, Any] = {}
    period: Period = Period()
    summary: Summary = Summary()
    attention: list[Attention] = []
    tasks: list[TaskRow] = []
    roles: list[RoleRow] = []
    role_windows: list[RoleWindowRow] = []
    """Per role per window, from the Auditor's reports (empty without an audit log)."""
    tools: list[ToolRow] = []
    memory: MemoryStats = MemoryStats()
    window_s: float = 300.0
    windows: list[WindowRow] = []


def report_schema() -> dict[str, Any]:
    """The JSON schema of :class:`AuditDocument` (what ``--format json`` writes)."""
    return msgspec.json.schema(AuditDocument)
