"""R6 Auditor — the lateral observer whose principal is the human operator (paper §8).

Responsibilities:
    Watch every envelope and, per audit window (``Config.audit.window_s``, default 300 s
    of event time: an envelope belongs to window ⌊ts / window_s⌋), accumulate and then
    write one AuditReport to the audit log: tasks started (UserRequest) and ended by
    status, corrections (CorrectionSignal), replans (PlanDirective), the gap trend (L per
    GGS round per task), boundary violations, convergence failures, role drift and
    anomalies. Answer ``System.audit()`` with the report of the window so far.

    - **Boundary violations**: a message whose kind is outside its sender's Output
      contract (``Role.publishes``, one table derived from the roster:
      ``actors/runtime/contracts.py``), a message from an unknown sender, an effector role
      (Executor, Agent-Validator) publishing a MemoryQuery.
    - **Convergence failures**: a task's L not improving over 2 consecutive rounds
      (L_r ≥ L_{r-1} ≥ L_{r-2}; once per task), Law 2 fired (FinalResult.reason
      ``law2``), the replan budget spent (``replan_budget``).
    - **Role drift**, per role: failure rate, Executor retries per subtask, model latency
      p95 and tokens per call, each compared with the same role's earlier windows (at
      most ``drift_history``, at least ``drift_min_windows``): drift when the value is
      above median + ``drift_mads`` × max(MAD, floor), MAD the median absolute deviation
      and floor a per-metric minimum spread (:data:`DRIFT_FLOORS`), so a role whose
      history never varied is not flagged for noise. Higher is worse for all four.
    - **Anomalies**: model errors (LLMCall.error set), tool errors (a ToolCall that ran
      and failed, not a refusal), role crashes (RoleFailed), clean step failures
      (StepFailed), bodies of an unknown kind.

Input contract:
    Every envelope, through a bus **tap** (no subscription handler): a tap that dropped
    is caught up from the event log by seq, so envelopes are folded in seq order with no
    gap and no duplicate. Ticks (clock time) close a window once the clock passes its
    end; :class:`AuditNow` (asked by the System) returns the report so far. At start
    the fold resumes from the watermark (``_audit_mark``: its state at the last closed
    window, saved after each complete report) and reads only the envelopes after it;
    without a usable watermark it folds the log from seq 1.

Output contract:
    **Nothing on the bus.** AuditReports appended to the audit log (``<store>/audit``,
    hash-chained, through the ``AuditSeat`` only this role is given); the report so far
    to the System. A window with no envelope has no report.

Constraints:
    Does NOT publish any message, instruct or answer any role, read memory, or take
    instructions from a role (paper §8: non-participation). Decides from structured
    fields (kinds, senders, ``FinalResult.reason``, ``ExecutionResult.ok``,
    ``LLMCall.error`` set or not), never from text. Everything in a report except its
    ``live`` part (tap drops, envelopes re-read) is a function of the event log, so
    :func:`recompute_reports` gives the same reports offline.
"""

from __future__ import annotations

import math
from collections import Counter, deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import msgspec

from artoo.actors.runtime.contracts import Contracts
from artoo.actors.runtime.ledger import CONVERGENCE_ENDS, made
from artoo.actors.runtime.role import Equipment, Role
from artoo.schemas import (
    Anomaly,
    AuditConfig,
    AuditReport,
    BoundaryViolation,
    ConvergenceFailure,
    CorrectionSignal,
    DriftAlert,
    Envelope,
    ExecutionResult,
    FinalResult,
    GGSDecision,
    LiveStats,
    LLMCall,
    Message,
    PlanDirective,
    RoleFailed,
    RoleStats,
    StepFailed,
    TaskGap,
    UnknownMessage,
    UserRequest,
)

from ._audit_mark import FoldMark, mark_config, resume, save_mark

__all__ = [
    "DRIFT_FLOORS",
    "DRIFT_METRICS",
    "AuditFold",
    "AuditNow",
    "Auditor",
    "compare_reports",
    "drift_limit",
    "is_drift",
    "loss_stall",
    "median",
    "p95",
    "recompute_reports",
]

DRIFT_METRICS: tuple[str, ...] = (
    "failure_rate",
    "retries_per_subtask",
    "latency_p95_ms",
    "tokens_per_call",
)
"""The RoleStats fields judged for drift (higher is worse for each)."""

DRIFT_FLOORS: Mapping[str, float] = {
    "failure_rate": 0.05,
    "retries_per_subtask": 0.1,
    "latency_p95_ms": 50.0,
    "tokens_per_call": 20.0,
}
"""The least spread assumed per metric: the limit is median + k·max(MAD, floor)."""


# --------------------------------------------------------------------------- pure logic
def median(values: Sequence[float]) -> float:
    """The median of a non-empty sequence."""
    ordered = sorted(values)
    n = len(ordered)
    mid = n // 2
    return ordered[mid] if n % 2 else (ordered[mid - 1] + ordered[mid]) / 2.0


def p95(values: Sequence[float]) -> float:
    """The 95th percentile by nearest rank (an observed value) of a non-empty sequence."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


def drift_limit(
    history: Sequence[float], *, k: float, floor: float, min_windows: int
) -> tuple[float, float, float] | None:
    """``(limit, median, MAD)`` of ``history``, or None with fewer than ``min_windows``."""
    if len(history) < min_windows:
        return None
    med = median(history)
    mad = median([abs(x - med) for x in history])
    return med + k * max(mad, floor), med, mad


def is_drift(
    history: Sequence[float], value: float, *, k: float, floor: float, min_windows: int
) -> bool:
    """True when ``value`` is above the drift limit of ``history`` (see the module doc)."""
    limit = drift_limit(history, k=k, floor=floor, min_windows=min_windows)
    return limit is not None and value > limit[0]


def loss_stall(losses: Sequence[float]) -> int | None:
    """The first round index r ≥ 2 where L did not improve twice running
    (``losses[r] >= losses[r-1] >= losses[r-2]``), else None."""
    for r in range(2, len(losses)):
        if losses[r] >= losses[r - 1] >= losses[r - 2]:
            return r
    return None


def _kind(body: Any) -> str:
    return body.tag if isinstance(body, UnknownMessage) else type(body).__name__


def _role(sender: str) -> str:
    return sender.split("/", 1)[0]


@dataclass
class _RoleAcc:
    messages: int = 0
    failures: int = 0
    model_calls: int = 0
    model_errors: int = 0
    latencies: list[float] = field(default_factory=list)
    tokens: list[float] = field(default_factory=list)
    subtasks: set[tuple[str | None, str, int]] = field(default_factory=set)
    retries: int = 0

    def stats(self, role: str) -> RoleStats:
        n_sub = len(self.subtasks)
        return RoleStats(
            role=role,
            messages=self.messages,
            failures=self.failures,
            failure_rate=self.failures / self.messages if self.messages else None,
            model_calls=self.model_calls,
            model_errors=self.model_errors,
            latency_p95_ms=p95(self.latencies) if self.latencies else None,
            tokens_per_call=sum(self.tokens) / len(self.tokens) if self.tokens else None,
            subtasks=n_sub,
            retries=self.retries,
            retries_per_subtask=self.retries / n_sub if n_sub else None,
        )


@dataclass
class _Window:
    index: int
    first_seq: int = 0
    last_seq: int = 0
    envelopes: int = 0
    tasks_started: int = 0
    tasks_ended: Counter[str] = field(default_factory=Counter)
    corrections: int = 0
    replans: int = 0
    gaps: dict[str, TaskGap] = field(default_factory=dict)
    violations: list[BoundaryViolation] = field(default_factory=list)
    convergence: list[ConvergenceFailure] = field(default_factory=list)
    roles: dict[str, _RoleAcc] = field(default_factory=dict)
    anomalies: list[Anomaly] = field(default_factory=list)

    def role(self, name: str) -> _RoleAcc:
        acc = self.roles.get(name)
        if acc is None:
            acc = self.roles[name] = _RoleAcc()
        return acc


class AuditFold:
    """The Auditor's state as a fold over envelopes in seq order (no threads, no I/O).

    :meth:`feed` each envelope (seqs ascending); it returns the reports of the windows it
    closed. :meth:`close_due` closes the open window once the clock is past its end;
    :meth:`so_far` is the open window's report without closing it.
    """

    def __init__(self, contracts: Contracts, config: AuditConfig | None = None) -> None:
        self.contracts = contracts
        self.config = config or AuditConfig()
        self.next_seq = 1
        self._max_ts = -math.inf
        self._window: _Window | None = None
        self._losses: dict[str, list[tuple[int, float]]] = {}  # task → (seq, L) per round
        self._stalled: set[str] = set()
        self._history: dict[tuple[str, str], deque[float]] = {}
        self.mark: FoldMark | None = None
        """The state as of the last closed window (what the watermark saves)."""

    # ------------------------------------------------------------------ watermark
    def take_mark(self, next_seq: int) -> FoldMark:
        """The state of this fold (no window open) with ``next_seq`` the next seq to fold."""
        return FoldMark(
            next_seq=next_seq,
            max_ts=None if math.isinf(self._max_ts) else self._max_ts,
            losses={t: list(v) for t, v in self._losses.items()},
            stalled=sorted(self._stalled),
            history=[(role, metric, list(v)) for (role, metric), v in self._history.items()],
            config=mark_config(self.config),
        )

    def restore(self, mark: FoldMark) -> bool:
        """Put ``mark`` into this fresh fold; False (fold untouched) when the mark was made
        under another configuration."""
        if mark.config != mark_config(self.config) or self.next_seq != 1:
            return False
        self.next_seq = mark.next_seq
        self._max_ts = -math.inf if mark.max_ts is None else mark.max_ts
        self._losses = {t: list(v) for t, v in mark.losses.items()}
        self._stalled = set(mark.stalled)
        self._history = {
            (role, metric): deque(values, maxlen=self.config.drift_history)
            for role, metric, values in mark.history
        }
        return True

    # ------------------------------------------------------------------ windows
    def _start(self, index: int) -> float:
        return index * self.config.window_s

    @property
    def open_until(self) -> float | None:
        """The end of the open window (event time), or None when none is open."""
        return None if self._window is None else self._start(self._window.index + 1)

    def close_due(self, now: float) -> list[AuditReport]:
        """Close the open window if ``now`` is at or past its end."""
        end = self.open_until
        if end is None or now < end:
            return []
        report = self._close()
        self.mark = self.take_mark(self.next_seq)
        return [report]

    def _close(self) -> AuditReport:
        window = self._window
        assert window is not None
        report = self._report(window, complete=True)
        for stats in report.roles:
            for metric in DRIFT_METRICS:
                value = getattr(stats, metric)
                if value is not None:
                    self._series(stats.role, metric).append(float(value))
        self._window = None
        return report

    def _series(self, role: str, metric: str) -> deque[float]:
        key = (role, metric)
        series = self._history.get(key)
        if series is None:
            series = self._history[key] = deque(maxlen=self.config.drift_history)
        return series

    def so_far(self, now: float) -> AuditReport:
        """The report of the open window (``complete=False``), or an empty one for the
        window holding ``now``."""
        if self._window is not None:
            return self._report(self._window, complete=False)
        index = math.floor(now / self.config.window_s)
        return AuditReport(
            window_start=self._start(index), window_end=self._start(index + 1), complete=False
        )

    def _report(self, w: _Window, *, complete: bool) -> AuditReport:
        roles = [w.roles[name].stats(name) for name in sorted(w.roles)]
        return AuditReport(
            window_start=self._start(w.index),
            window_end=self._start(w.index + 1),
            first_seq=w.first_seq,
            last_seq=w.last_seq,
            complete=complete,
            envelopes=w.envelopes,
            tasks_started=w.tasks_started,
            tasks_ended=dict(sorted(w.tasks_ended.items())),
            corrections=w.corrections,
            replans=w.replans,
            gap_trend=list(w.gaps.values()),
            boundary_violations=list(w.violations),
            convergence_failures=list(w.convergence),
            roles=roles,
            drift=self._drift(roles),
            anomalies=list(w.anomalies),
        )

    def _drift(self, roles: list[RoleStats]) -> list[DriftAlert]:
        cfg = self.config
        alerts = []
        for stats in roles:
            for metric in DRIFT_METRICS:
                value = getattr(stats, metric)
                history = self._history.get((stats.role, metric))
                if value is None or history is None:
                    continue
                found = drift_limit(
                    history,
                    k=cfg.drift_mads,
                    floor=DRIFT_FLOORS[metric],
                    min_windows=cfg.drift_min_windows,
                )
                if found is not None and value > found[0]:
                    alerts.append(
                        DriftAlert(
                            role=stats.role,
                            metric=metric,
                            value=float(value),
                            median=found[1],
                            mad=found[2],
                            limit=found[0],
                            history=len(history),
                        )
                    )
        return alerts

    # ------------------------------------------------------------------ folding
    def feed(self, env: Envelope) -> list[AuditReport]:
        """Fold one envelope (the next seq); returns the reports of windows it closed."""
        if env.seq != self.next_seq:
            raise ValueError(f"the fold expects seq {self.next_seq}, got {env.seq}")
        self.next_seq = env.seq + 1
        self._max_ts = max(self._max_ts, env.ts)  # event time never runs backwards
        index = math.floor(self._max_ts / self.config.window_s)
        closed = []
        if self._window is not None and index > self._window.index:
            closed.append(self._close())
            self.mark = self.take_mark(env.seq)  # before this envelope is folded
        if self._window is None:
            self._window = _Window(index, first_seq=env.seq)
        w = self._window
        w.last_seq = env.seq
        w.envelopes += 1
        self._observe(w, env)
        return closed

    def _observe(self, w: _Window, env: Envelope) -> None:
        body = env.body
        kind = _kind(body)
        if isinstance(body, UnknownMessage):
            w.anomalies.append(
                Anomaly(
                    kind="unknown_message",
                    seq=env.seq,
                    role=env.sender,
                    task_id=env.task_id,
                    detail=body.tag,
                )
            )
        else:
            rule = self.contracts.check(env.sender, kind)
            if rule is not None:
                w.violations.append(
                    BoundaryViolation(
                        seq=env.seq, sender=env.sender, kind=kind, rule=rule, task_id=env.task_id
                    )
                )
        if isinstance(body, LLMCall):
            self._llm_call(w, env, body)
            return
        acc = w.role(_role(env.sender))
        acc.messages += 1
        if isinstance(body, UserRequest):
            w.tasks_started += 1
        elif isinstance(body, CorrectionSignal):
            w.corrections += not body.corroborate  # an ask after a pass is no correction
        elif isinstance(body, PlanDirective):
            w.replans += 1
        elif isinstance(body, GGSDecision):
            self._decision(w, env, body)
        elif isinstance(body, FinalResult):
            self._final(w, env, body)
        elif isinstance(body, ExecutionResult):
            self._execution(w, env, body, acc)
        elif isinstance(body, StepFailed):
            acc.failures += 1
            w.anomalies.append(
                Anomaly(
                    kind="step_failed",
                    seq=env.seq,
                    role=env.sender,
                    task_id=env.task_id,
                    detail=body.step,
                )
            )
        elif isinstance(body, RoleFailed):
            acc.failures += 1
            w.anomalies.append(
                Anomaly(
                    kind="role_crash",
                    seq=env.seq,
                    role=body.role,
                    task_id=env.task_id,
                    detail=body.error[:200],
                )
            )

    def _llm_call(self, w: _Window, env: Envelope, call: LLMCall) -> None:
        if not made(call):
            return  # the task's budget refused it (the GGS ends the task)
        acc = w.role(_role(call.role))
        acc.model_calls += 1
        acc.latencies.append(float(call.latency_ms))
        if call.error is not None:
            acc.model_errors += 1
            w.anomalies.append(
                Anomaly(
                    kind="model_error",
                    seq=env.seq,
                    role=call.role,
                    task_id=env.task_id,
                    detail=call.error[:200],
                )
            )
        else:
            acc.tokens.append(
                float(call.usage.get("prompt_tokens", 0) + call.usage.get("completion_tokens", 0))
            )

    def _execution(self, w: _Window, env: Envelope, body: ExecutionResult, acc: _RoleAcc) -> None:
        acc.subtasks.add((env.task_id, body.subtask_id, body.round))
        if body.attempt > 1:
            acc.retries += 1
        if not body.ok:
            acc.failures += 1
        for call in body.tool_calls:
            if not call.ok and call.refusal is None:
                w.anomalies.append(
                    Anomaly(
                        kind="tool_error",
                        seq=env.seq,
                        role=env.sender,
                        task_id=env.task_id,
                        detail=call.tool,
                    )
                )

    def _decision(self, w: _Window, env: Envelope, body: GGSDecision) -> None:
        task = env.task_id or ""
        gap = w.gaps.get(task) or TaskGap(task_id=task)
        w.gaps[task] = TaskGap(
            task_id=task, rounds=[*gap.rounds, body.round], losses=[*gap.losses, body.loss]
        )
        series = self._losses.setdefault(task, [])
        series.append((env.seq, body.loss))
        if task in self._stalled:
            return
        at = loss_stall([loss for _, loss in series])
        if at is not None:
            self._stalled.add(task)
            picked = series[at - 2 : at + 1]
            w.convergence.append(
                ConvergenceFailure(
                    task_id=task,
                    rule="loss_not_improving",
                    seqs=[s for s, _ in picked],
                    losses=[loss for _, loss in picked],
                )
            )

    def _final(self, w: _Window, env: Envelope, body: FinalResult) -> None:
        w.tasks_ended[body.status] += 1
        series = self._losses.pop(body.task_id, [])
        self._stalled.discard(body.task_id)
        if body.reason in CONVERGENCE_ENDS:
            w.convergence.append(
                ConvergenceFailure(
                    task_id=body.task_id,
                    rule="law2" if body.reason == "law2" else "replan_budget",
                    seqs=[*(s for s, _ in series), env.seq],
                    losses=[loss for _, loss in series],
                )
            )


def recompute_reports(
    envelopes: Iterable[Envelope],
    contracts: Contracts,
    config: AuditConfig | None = None,
    *,
    until: float | None = None,
    open_window: bool = False,
) -> list[AuditReport]:
    """The reports of an event log, recomputed offline (seq order from 1).

    Every window closed by a later envelope is reported; the last open window too, closed
    when ``until`` (clock time) is at or past its end, else as it stands
    (``complete=False``) when ``open_window``.
    """
    fold = AuditFold(contracts, config)
    out: list[AuditReport] = []
    for env in envelopes:
        out.extend(fold.feed(env))
    if until is not None:
        out.extend(fold.close_due(until))
    if open_window and fold.open_until is not None:
        out.append(fold.so_far(fold.open_until))
    return out


def compare_reports(
    live: Sequence[AuditReport],
    envelopes: Iterable[Envelope],
    contracts: Contracts,
    config: AuditConfig | None = None,
) -> list[str]:
    """Differences between the live reports of a store and their offline recomputation
    from its event log; empty when they are equal.

    Per window the latest live report counts (a window open when a System closed is
    written then with ``complete=False`` and again once complete). The log is folded up
    to the last seq the live reports cover; ``live`` parts are not compared.
    """
    latest: dict[float, AuditReport] = {}
    for report in live:
        latest[report.window_start] = report
    if not latest:
        return []
    last = max(latest.values(), key=lambda r: (r.window_start, r.last_seq))
    covered = [e for e in envelopes if e.seq <= last.last_seq]
    expected = recompute_reports(
        covered,
        contracts,
        config,
        until=last.window_end if last.complete else None,
        open_window=not last.complete,
    )
    problems = []
    by_start = {r.window_start: r for r in expected}
    for start, report in sorted(latest.items()):
        want = by_start.pop(start, None)
        if want is None:
            problems.append(f"window {start}: live report not recomputed from the log")
        elif want != report.recomputable():
            problems.append(f"window {start}: live report differs from the recomputation")
    problems.extend(f"window {start}: recomputed, no live report" for start in sorted(by_start))
    return problems


# --------------------------------------------------------------------------- the actor
@dataclass(frozen=True)
class AuditNow:
    """Asked of the Auditor by the System: the report of the window so far."""


class Auditor(Role):
    """The Auditor actor: a tap, the fold, the audit log. Publishes nothing."""

    name: ClassVar[str] = "auditor"
    publishes: ClassVar[tuple[type[Message], ...]] = ()
    wants_ticks: ClassVar[bool] = True

    def __init__(self, equipment: Equipment, instance: str | None = None) -> None:
        super().__init__(equipment, instance)
        self._seat = equipment.audit
        self._fold = AuditFold(self._seat.contracts, equipment.config.audit) if self._seat else None
        self._tap: Any = None
        self._seen_drops = 0
        self._live_drops = 0
        self._live_caught = 0
        self._written: tuple[float, int, bool] = (-math.inf, 0, False)
        self.resumed_from = 1
        """The seq this session's fold started from (1: the whole log; more: the
        watermark's)."""
        self.replayed = 0
        """Envelopes read from the event log at start (after the watermark)."""

    def on_start(self) -> None:
        """Open the tap first, then fold the log so far (nothing is missed between)."""
        super().on_start()
        if self._seat is None:
            self.log.warning("auditor started without an audit seat: it does nothing")
            return
        self._tap = self.ctx.bus.tap(maxsize=self.ctx.config.audit.tap_size)
        for r in self._seat.log.reports():
            self._written = max(self._written, (r.window_end, r.last_seq, r.complete))
        assert self._fold is not None
        last = self.ctx.bus.last_seq
        self.resumed_from, why = resume(self._fold.restore, self._seat.log.directory, last)
        if why:
            self.log.warning(f"audit watermark not used ({why}): replaying the event log")
        self._catch_up(self.ctx.bus.last_seq, live=False)
        self.replayed = self._fold.next_seq - self.resumed_from

    def on_stop(self) -> None:
        """Write the open window as it stands (``complete=False``), close the tap."""
        if self._fold is not None and self._tap is not None:
            try:
                self._sync()
                end = self._fold.open_until
                if end is not None:
                    self._write(self._fold.so_far(end))
            except Exception:  # the log may be closing: the next session writes it
                self.log.exception("could not write the open audit window at stop")
            self._tap.close()
        super().on_stop()

    def on_receive(self, message: Any) -> Any:
        """AuditNow → the report so far; everything else as any role."""
        if isinstance(message, AuditNow):
            if self._fold is None:
                raise RuntimeError("this Auditor has no audit seat")
            self._sync()
            report = self._fold.so_far(self.ctx.clock.now())
            live = LiveStats(
                tap_drops=self._live_drops,
                caught_up=self._live_caught,
                resumed_from=self.resumed_from,
                replayed=self.replayed,
            )
            return msgspec.structs.replace(report, live=live)
        return super().on_receive(message)

    def on_tick(self, now: float) -> None:
        """Fold what the tap holds; close the open window once ``now`` is past its end."""
        if self._fold is None:
            return
        self._drain()
        end = self._fold.open_until
        if end is not None and now >= end:
            # every envelope stamped before ``now`` is committed once a flush returns
            self._sync(flush=True)
            for report in self._fold.close_due(now):
                self._write(report)

    # ------------------------------------------------------------------ internals
    def _drain(self) -> None:
        tap = self._tap
        if tap is None:
            return
        while (env := tap.get(timeout=0)) is not None:
            self._take(env)
        dropped = tap.dropped
        self._live_drops += dropped - self._seen_drops
        self._seen_drops = dropped

    def _take(self, env: Envelope) -> None:
        assert self._fold is not None
        if env.seq < self._fold.next_seq:
            return  # already folded from the log
        if env.seq > self._fold.next_seq:
            self._catch_up(env.seq - 1)  # the tap dropped these
        self._feed(env)

    def _catch_up(self, to_seq: int, *, live: bool = True) -> None:
        assert self._fold is not None and self._seat is not None
        if to_seq < self._fold.next_seq:
            return
        for env in self._seat.events.read(self._fold.next_seq, to_seq):
            if live:
                self._live_caught += 1
            self._feed(env)

    def _sync(self, *, flush: bool = False) -> None:
        self._drain()
        if flush:
            try:
                self.ctx.bus.flush(1.0)
            except Exception:  # a failed bus: fold what the log has
                self.log.warning("bus flush failed before closing an audit window")
        self._catch_up(self.ctx.bus.last_seq)

    def _feed(self, env: Envelope) -> None:
        assert self._fold is not None
        for report in self._fold.feed(env):
            self._write(report)

    def _write(self, report: AuditReport) -> None:
        assert self._seat is not None
        mark = (report.window_end, report.last_seq, report.complete)
        if mark > self._written:  # else written already (by an earlier session)
            live = LiveStats(tap_drops=self._live_drops, caught_up=self._live_caught)
            self._live_drops = self._live_caught = 0
            self._seat.log.append(msgspec.structs.replace(report, live=live))
            self._written = mark
        fold_mark = self._fold.mark if self._fold is not None else None
        if report.complete and fold_mark is not None:
            save_mark(self._seat.log.directory, fold_mark)  # after its report
