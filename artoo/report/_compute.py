"""Building the audit report from envelopes: pure, one pass, deterministic (the same
envelopes and options give the same :class:`AuditDocument`)."""

from __future__ import annotations

import datetime as dt
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import msgspec

from artoo._ids import short_ids
from artoo.actors.runtime.ledger import CONVERGENCE_ENDS, made
from artoo.schemas import (
    AuditReport,
    ConfirmationDecision,
    ConfirmationRequest,
    CorrectionSignal,
    DispatchManifest,
    Envelope,
    EscalationTicket,
    ExecutionResult,
    FinalResult,
    GGSDecision,
    LLMCall,
    MegramDemoted,
    MegramForgotten,
    MegramRecorded,
    MemoryRecall,
    PlanRejected,
    QuestionAnswered,
    RoleFailed,
    SOPPromoted,
    StepFailed,
    SubTask,
    SubTaskOutcome,
    TagPotential,
    TaskCancelled,
    TaskPaused,
    TaskRequest,
    TaskResumed,
    TaskUnpaused,
    TicketResolved,
    UserQuestion,
    UserRequest,
)

from ._model import (
    Attention,
    AuditDocument,
    Decision,
    MemoryStats,
    PairRow,
    Period,
    Quantiles,
    RoleRow,
    RoleWindowRow,
    Step,
    Summary,
    TaskRow,
    ToolRow,
    WindowRow,
)

TOP_PAIRS = 5


def quantile(values: list[float], q: float) -> float | None:
    """The ``q`` quantile of ``values`` by linear interpolation between closest ranks
    (numpy's default, "type 7"); None for no values."""
    if not values:
        return None
    xs = sorted(values)
    pos = (len(xs) - 1) * q
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def _quantiles(values: list[float]) -> Quantiles:
    return Quantiles(
        n=len(values),
        p50=_r(quantile(values, 0.5)),
        p95=_r(quantile(values, 0.95)),
        p99=_r(quantile(values, 0.99)),
    )


def _r(x: float | None, digits: int = 3) -> float | None:
    return None if x is None else round(x, digits)


def _tokens(usage: dict[str, int]) -> tuple[int, int]:
    return int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0))


def _short(text: str, n: int = 160) -> str:
    one = " ".join(text.split())
    return one if len(one) <= n else one[: n - 1] + "…"


@dataclass
class _Task:
    task_id: str
    started: float
    first_seq: int
    text: str = ""
    final: FinalResult | None = None
    ended: float | None = None
    decisions: list[Decision] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    model_calls: int = 0
    tokens: int = 0
    losses: list[tuple[int, float]] = field(default_factory=list)


@dataclass
class _Acc:
    """Everything gathered in the one pass."""

    tasks: dict[str, _Task] = field(default_factory=dict)
    envelopes: int = 0
    first: Envelope | None = None
    last: Envelope | None = None
    latency: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    role_tokens: dict[str, int] = field(default_factory=Counter)
    role_errors: dict[str, int] = field(default_factory=Counter)
    step_failures: dict[str, int] = field(default_factory=Counter)
    crashes: dict[str, int] = field(default_factory=Counter)
    attempts: dict[str, int] = field(default_factory=dict)
    tool_calls: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    tool_errors: dict[str, int] = field(default_factory=Counter)
    refusals: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    tokens_in: int = 0
    tokens_out: int = 0
    model_errors: int = 0
    escalations: Counter[str] = field(default_factory=Counter)
    tickets: dict[str, str] = field(default_factory=dict)  # ticket id -> how it ended
    asked: dict[str, tuple[int, str | None]] = field(default_factory=dict)
    approved: int = 0
    denied: int = 0
    attention: list[Attention] = field(default_factory=list)
    memory: Counter[str] = field(default_factory=Counter)
    pairs: dict[tuple[str, str], PairRow] = field(default_factory=dict)
    events: list[tuple[float, str, object]] = field(default_factory=list)


def build_report(
    envelopes: Iterable[Envelope],
    *,
    since: float | None = None,
    until: float | None = None,
    task_id: str | None = None,
    window_s: float = 300.0,
    store: str = "",
    audit_chain: str = "no audit log in this store",
    audit_reports: Sequence[AuditReport] = (),
) -> AuditDocument:
    """The audit report of ``envelopes`` (in seq order) between ``since`` and ``until``
    (clock seconds, inclusive), of one task with ``task_id``. ``audit_reports`` (the
    Auditor's, from the store's audit log) add boundary violations and drift alerts to
    the attention list and the roles, and are the windows table."""
    acc = _Acc()
    for env in envelopes:
        if (since is not None and env.ts < since) or (until is not None and env.ts > until):
            continue
        if task_id is not None and env.task_id != task_id:
            continue
        _take(acc, env)
    reports = [
        r
        for r in _latest_per_window(audit_reports)
        if (since is None or r.window_end >= since) and (until is None or r.window_start <= until)
    ]
    return _document(acc, since, until, task_id, window_s, store, audit_chain, reports)


def _latest_per_window(reports: Sequence[AuditReport]) -> list[AuditReport]:
    """One report per window: a store reopened within a window has a partial report per
    close, each covering the window from its start (the Auditor resumes from its last
    closed window) — the one reaching furthest holds them all."""
    latest: dict[float, AuditReport] = {}
    for r in reports:
        kept = latest.get(r.window_start)
        if kept is None or (r.complete, r.last_seq) >= (kept.complete, kept.last_seq):
            latest[r.window_start] = r
    return [latest[start] for start in sorted(latest)]


def _task(acc: _Acc, env: Envelope) -> _Task | None:
    if env.task_id is None:
        return None
    task = acc.tasks.get(env.task_id)
    if task is None:
        task = acc.tasks[env.task_id] = _Task(env.task_id, env.ts, env.seq)
    return task


def _step(task: _Task | None, env: Envelope, kind: str, text: str, round_: int | None) -> None:
    if task is not None:
        task.steps.append(
            Step(
                seq=env.seq, t_s=round(env.ts - task.started, 3), kind=kind, round=round_, text=text
            )
        )


def _take(acc: _Acc, env: Envelope) -> None:
    acc.envelopes += 1
    acc.first = acc.first or env
    acc.last = env
    body = env.body
    task = _task(acc, env)
    if isinstance(body, UserRequest | TaskRequest):
        if task is not None and not task.text:
            task.text = body.text
            acc.events.append((env.ts, "start", None))
            _step(task, env, "request", _short(body.text), None)
    elif isinstance(body, LLMCall) and not made(body):
        if task is not None:  # recorded, not made: the task's budget refused it
            _step(task, env, "model", f"{body.role}: refused, budget {body.refused} spent", None)
    elif isinstance(body, LLMCall):
        tin, tout = _tokens(body.usage)
        acc.tokens_in += tin
        acc.tokens_out += tout
        acc.latency[body.role].append(body.latency_ms)
        acc.role_tokens[body.role] += tin + tout
        acc.events.append((env.ts, "call", (body.latency_ms, tin + tout)))
        if body.error:
            acc.model_errors += 1
            acc.role_errors[body.role] += 1
        if task is not None:
            task.model_calls += 1
            task.tokens += tin + tout
            what = f"error: {_short(body.error, 100)}" if body.error else f"{tin}+{tout} tokens"
            _step(
                task,
                env,
                "model",
                f"{body.role} ({body.tier}, {body.model}) {body.latency_ms:.0f} ms, {what}",
                None,
            )
    elif isinstance(body, DispatchManifest):
        _step(
            task,
            env,
            "plan",
            f"round {body.round}: {len(body.subtasks)} subtask(s)"
            + (f"; MUST NOT {', '.join(body.must_not)}" if body.must_not else ""),
            body.round,
        )
    elif isinstance(body, SubTask):
        _step(
            task, env, "subtask", f"{body.subtask_id}: {_short(body.instruction, 120)}", body.round
        )
    elif isinstance(body, ExecutionResult):
        acc.attempts[body.subtask_id] = max(acc.attempts.get(body.subtask_id, 0), body.attempt)
        for call in body.tool_calls:
            acc.tool_calls[call.tool].append(call.elapsed_ms)
            if not call.ok:
                acc.tool_errors[call.tool] += 1
            if call.refusal:
                acc.refusals[call.tool][call.refusal] += 1
            acc.events.append((env.ts, "tool", not call.ok))
            state = "ok" if call.ok else (f"refused ({call.refusal})" if call.refusal else "failed")
            _step(
                task,
                env,
                "tool",
                f"{call.tool} {_short(str(call.args), 100)} → {state}",
                body.round,
            )
        _step(
            task,
            env,
            "attempt",
            f"{body.subtask_id} attempt {body.attempt}: stop={body.stop or '-'}",
            body.round,
        )
    elif isinstance(body, CorrectionSignal) and body.corroborate:
        value = _short(body.corroborate, 60)
        if body.unbacked:  # no tool result showed it
            text = f"asked to compute {value} with a tool"
        else:
            text = f"asked for a second derivation of {value}"
        _step(task, env, "corroboration", text, body.round)
    elif isinstance(body, CorrectionSignal):
        _step(task, env, "correction", _short(body.feedback, 140), body.round)
    elif isinstance(body, SubTaskOutcome):
        _step(
            task,
            env,
            "outcome",
            f"{body.subtask_id}: {body.status} after {body.attempts} attempt(s)",
            body.round,
        )
    elif isinstance(body, GGSDecision):
        decision = Decision(
            seq=env.seq,
            round=body.round,
            directive=body.directive,
            d=body.d,
            p=body.p,
            omega=body.omega,
            loss=body.loss,
            grad=body.grad,
            rationale=_short(body.rationale, 200),
        )
        if task is not None:
            task.decisions.append(decision)
            task.losses.append((body.round, body.loss))
        if body.directive not in ("accept", "success", "abandon"):
            acc.events.append((env.ts, "replan", None))
        _step(
            task,
            env,
            "decision",
            f"{body.directive}: D={body.d:.3f} P={body.p:.3f} "
            f"Ω={body.omega:.3f} L={body.loss:.3f} ∇L={body.grad:.3f}",
            body.round,
        )
    elif isinstance(body, PlanRejected | StepFailed):
        role = body.role if isinstance(body, StepFailed) else "planner"
        acc.step_failures[role] += 1
        _step(
            task,
            env,
            "step_failed",
            f"{role}: {_short(str(getattr(body, 'error', '')) or type(body).__name__, 140)}",
            None,
        )
    elif isinstance(body, RoleFailed):
        acc.crashes[body.role] += 1
        acc.attention.append(
            Attention(
                kind="role_failure",
                task_id=env.task_id,
                seqs=[env.seq],
                line=f"{body.role} crashed: {_short(body.error, 140)}",
            )
        )
    elif isinstance(body, ConfirmationRequest):
        acc.asked[body.request_id] = (env.seq, env.task_id)
        _step(task, env, "confirm?", f"{body.gate or 'law1'}: {_short(body.reason, 140)}", None)
    elif isinstance(body, ConfirmationDecision):
        asked = acc.asked.get(body.request_id)
        if body.approved:
            acc.approved += 1
        else:
            acc.denied += 1
            seqs = [asked[0], env.seq] if asked else [env.seq]
            acc.attention.append(
                Attention(
                    kind="denied_action",
                    task_id=env.task_id,
                    seqs=seqs,
                    line=f"denied by {body.by}: {_short(body.reason, 120) or 'no reason given'}",
                )
            )
        who = f"the request: {_short(body.reason, 140)}" if body.by == "request" else body.by
        _step(task, env, "confirmed" if body.approved else "denied", who, None)
    elif isinstance(body, TicketResolved):
        # the Judge's task_ended closes what nobody answered; it does not hide an answer
        if acc.tickets.get(body.ticket_id) == "open" or (
            body.ticket_id in acc.tickets and body.resolution != "task_ended"
        ):
            acc.tickets[body.ticket_id] = body.resolution
    elif isinstance(body, EscalationTicket):
        acc.escalations[body.severity] += 1
        acc.tickets[body.ticket_id] = "open"
        acc.attention.append(
            Attention(
                kind="escalation",
                task_id=env.task_id,
                seqs=[env.seq, *body.evidence],
                line=f"{body.severity} {body.kind}: {_short(body.summary, 120)}",
            )
        )
    elif isinstance(body, TaskCancelled):
        _step(task, env, "cancelled", body.reason, None)
    elif isinstance(body, TaskResumed):
        line = f"after the process stopped: rebuilt from the log to seq {body.from_seq}"
        _step(task, env, "resumed", f"{line}; stopped {body.stopped_s:.1f} s", None)
    elif isinstance(body, TaskPaused | TaskUnpaused):
        kind = "paused" if isinstance(body, TaskPaused) else "unpaused"
        why = f": {_short(body.reason, 120)}" if body.reason else ""
        _step(task, env, kind, body.by + why, None)
    elif isinstance(body, UserQuestion):
        choices = f" [{' / '.join(body.options)}]" if body.options else ""
        _step(task, env, "question?", f"{body.role}: {_short(body.text, 140)}{choices}", body.round)
    elif isinstance(body, QuestionAnswered):
        said = _short(body.answer, 140) if body.answer is not None else "no answer"
        _step(task, env, "answered", f"{body.by}: {said}", None)
    elif isinstance(body, MegramRecorded):
        acc.memory["written"] += 1
    elif isinstance(body, SOPPromoted):
        acc.memory["constraints" if body.kind == "constraint" else "sops"] += 1
    elif isinstance(body, MegramDemoted):
        acc.memory["demoted"] += 1
    elif isinstance(body, MegramForgotten):
        acc.memory["forgotten"] += 1
    elif isinstance(body, MemoryRecall):
        # the strongest pairs it lists, then the queried pair itself (same fields)
        listed: list[TagPotential | MemoryRecall] = [*body.avoid, *body.caution, body]
        for p in listed:
            acc.pairs[(p.space, p.entity)] = PairRow(
                space=p.space,
                entity=p.entity,
                attention=p.attention,
                decision=p.decision,
                action=p.action,
                seq=env.seq,
            )
    elif isinstance(body, FinalResult) and task is not None:
        task.final = body
        task.ended = env.ts
        acc.events.append((env.ts, "end", body.status))
        _step(
            task,
            env,
            "final",
            f"{body.status} ({body.reason or '-'}): {_short(body.summary, 160)}",
            None,
        )
        if body.reason in CONVERGENCE_ENDS:
            acc.attention.append(
                Attention(
                    kind="convergence_failure",
                    task_id=task.task_id,
                    seqs=[*[d.seq for d in task.decisions][-3:], env.seq],
                    line=f"{body.reason}: {_short(body.summary, 140)}",
                )
            )


def _document(
    acc: _Acc,
    since: float | None,
    until: float | None,
    task_id: str | None,
    window_s: float,
    store: str,
    audit_chain: str,
    reports: list[AuditReport],
) -> AuditDocument:
    _from_auditor(acc, reports, task_id)
    drift_by_role: dict[str, list[str]] = defaultdict(list)
    for report in reports:
        for alert in report.drift:
            drift_by_role[alert.role].append(f"{alert.metric} at {_clock(report.window_start)}")
    rows = [_task_row(t) for t in sorted(acc.tasks.values(), key=lambda t: t.first_seq)]
    short = short_ids(r.task_id for r in rows)
    rows = [msgspec.structs.replace(r, short_id=short[r.task_id]) for r in rows]
    statuses = Counter(r.status for r in rows)
    ended = [r for r in rows if r.status != "running"]
    good = sum(1 for r in ended if r.status in ("accept", "success"))
    times = [r.time_s for r in ended if r.time_s is not None]
    summary = Summary(
        tasks=len(rows),
        by_status=dict(sorted(statuses.items())),
        success_rate=_r(good / len(ended), 4) if ended else None,
        task_time_p50_s=_r(quantile(times, 0.5)),
        task_time_p95_s=_r(quantile(times, 0.95)),
        model_calls=sum(len(v) for v in acc.latency.values()),
        model_errors=acc.model_errors,
        tokens_in=acc.tokens_in,
        tokens_out=acc.tokens_out,
        escalations=sum(acc.escalations.values()),
        escalations_by_severity=dict(sorted(acc.escalations.items())),
        escalations_ended=dict(sorted(Counter(acc.tickets.values()).items())),
        law1_asked=len(acc.asked),
        law1_approved=acc.approved,
        law1_denied=acc.denied,
        audit_chain=audit_chain,
    )
    retries = [a - 1 for a in acc.attempts.values()]
    roles = []
    for role in sorted(
        set(acc.latency) | set(acc.step_failures) | set(acc.crashes) | set(drift_by_role)
    ):
        calls = len(acc.latency.get(role, []))
        roles.append(
            RoleRow(
                role=role,
                calls=calls,
                latency_ms=_quantiles(acc.latency.get(role, [])),
                tokens_per_call=_r(acc.role_tokens[role] / calls, 1) if calls else None,
                failure_rate=_r(acc.role_errors[role] / calls, 4) if calls else None,
                retry_rate=_r(sum(retries) / len(retries), 4)
                if role == "executor" and retries
                else None,
                step_failures=acc.step_failures[role],
                crashes=acc.crashes[role],
                drift=drift_by_role.get(role, []),
            )
        )
    tools = [
        ToolRow(
            tool=name,
            calls=len(elapsed),
            errors=acc.tool_errors[name],
            error_rate=_r(acc.tool_errors[name] / len(elapsed), 4),
            median_ms=_r(quantile(elapsed, 0.5)),
            refusals=dict(sorted(acc.refusals[name].items())),
        )
        for name, elapsed in sorted(acc.tool_calls.items())
    ]
    pairs = sorted(acc.pairs.values(), key=lambda p: (p.decision, p.space, p.entity))
    memory = MemoryStats(
        megrams_written=acc.memory["written"],
        sops_promoted=acc.memory["sops"],
        constraints_promoted=acc.memory["constraints"],
        demotions=acc.memory["demoted"],
        forgets=acc.memory["forgotten"],
        strongest_avoid=[p for p in pairs if p.action == "avoid"][:TOP_PAIRS],
        strongest_exploit=[p for p in reversed(pairs) if p.action == "exploit"][:TOP_PAIRS],
    )
    filters: dict[str, object] = {}
    if since is not None:
        filters["since"] = since
    if until is not None:
        filters["until"] = until
    if task_id is not None:
        filters["task"] = task_id
    return AuditDocument(
        store=store,
        filters=filters,
        period=Period(
            start=acc.first.ts if acc.first else None,
            end=acc.last.ts if acc.last else None,
            first_seq=acc.first.seq if acc.first else None,
            last_seq=acc.last.seq if acc.last else None,
            envelopes=acc.envelopes,
        ),
        summary=summary,
        attention=_ordered(acc.attention),
        tasks=rows,
        roles=roles,
        tools=tools,
        memory=memory,
        window_s=window_s,
        windows=[_window(r) for r in reports] if reports else _windows(acc, window_s),
        role_windows=[
            RoleWindowRow(
                start=r.window_start,
                role=s.role,
                model_calls=s.model_calls,
                failure_rate=s.failure_rate,
                latency_p95_ms=s.latency_p95_ms,
                tokens_per_call=s.tokens_per_call,
                retries_per_subtask=s.retries_per_subtask,
                drift=[d.metric for d in r.drift if d.role == s.role],
            )
            for r in reports
            for s in r.roles
            if s.model_calls  # a role that made no model call has no figures here
        ],
    )


def _clock(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%H:%M:%SZ")


def _from_auditor(acc: _Acc, reports: list[AuditReport], task_id: str | None) -> None:
    """The Auditor's findings that the event log alone does not show: boundary
    violations and role drift (convergence failures are already read from the log)."""
    for report in reports:
        for v in report.boundary_violations:
            if task_id is None or v.task_id == task_id:
                acc.attention.append(
                    Attention(
                        kind="boundary_violation",
                        task_id=v.task_id,
                        seqs=[v.seq],
                        line=f"{v.sender} published {v.kind} ({v.rule.replace('_', ' ')})",
                    )
                )
        if task_id is not None:
            continue
        for d in report.drift:
            acc.attention.append(
                Attention(
                    kind="drift",
                    seqs=[report.first_seq, report.last_seq],
                    line=f"{d.role} {d.metric} {d.value:.3g} in the window from "
                    f"{_clock(report.window_start)}, above {d.limit:.3g} (median {d.median:.3g}, "
                    f"MAD {d.mad:.3g} over {d.history} earlier windows)",
                )
            )


def _window(r: AuditReport) -> WindowRow:
    latencies = [s.latency_p95_ms for s in r.roles if s.latency_p95_ms is not None]
    return WindowRow(
        start=r.window_start,
        end=r.window_end,
        tasks_started=r.tasks_started,
        tasks_ended=sum(r.tasks_ended.values()),
        by_status=dict(sorted(r.tasks_ended.items())),
        model_calls=sum(s.model_calls for s in r.roles),
        latency_p95_ms=_r(max(latencies)) if latencies else None,
        tokens=round(sum((s.tokens_per_call or 0) * s.model_calls for s in r.roles)),
        replans=r.replans,
        tool_errors=sum(1 for a in r.anomalies if a.kind == "tool_error"),
        boundary_violations=len(r.boundary_violations),
        drift_alerts=len(r.drift),
        complete=r.complete,
        source="auditor",
    )


_ATTENTION_ORDER = {
    "escalation": 0,
    "convergence_failure": 1,
    "boundary_violation": 2,
    "drift": 3,
    "role_failure": 4,
    "denied_action": 5,
}


def _ordered(items: list[Attention]) -> list[Attention]:
    return sorted(items, key=lambda a: (_ATTENTION_ORDER.get(a.kind, 9), a.seqs[:1], a.line))


def _task_row(t: _Task) -> TaskRow:
    final = t.final
    return TaskRow(
        task_id=t.task_id,
        text=_short(t.text, 200),
        status=final.status if final else "running",
        reason=final.reason if final else None,
        path=[d.directive for d in t.decisions],
        rounds=len(t.decisions),
        model_calls=t.model_calls,
        tokens=t.tokens,
        time_s=_r(t.ended - t.started) if t.ended is not None else None,
        started=t.started,
        summary=_short(final.summary, 300) if final else "",
        answer=_short(final.output, 300) if final else "",
        law1_denied=final.law1_denied if final else False,
        established=final.established if final else None,
        established_by=final.established_by if final else "",
        decisions=t.decisions,
        timeline=t.steps,
    )


def _windows(acc: _Acc, window_s: float) -> list[WindowRow]:
    if not acc.events or window_s <= 0:
        return []
    origin = math.floor(acc.events[0][0] / window_s) * window_s
    buckets: dict[int, list[tuple[float, str, object]]] = defaultdict(list)
    for event in acc.events:
        buckets[int((event[0] - origin) // window_s)].append(event)
    out = []
    for index in sorted(buckets):
        events = buckets[index]
        latencies = [v[0] for _, k, v in events if k == "call"]  # type: ignore[index]
        statuses = Counter(str(v) for _, k, v in events if k == "end")
        out.append(
            WindowRow(
                start=origin + index * window_s,
                end=origin + (index + 1) * window_s,
                tasks_started=sum(1 for _, k, _v in events if k == "start"),
                tasks_ended=sum(statuses.values()),
                by_status=dict(sorted(statuses.items())),
                model_calls=len(latencies),
                latency_p95_ms=_r(quantile(latencies, 0.95)),
                tokens=sum(v[1] for _, k, v in events if k == "call"),  # type: ignore[index]
                replans=sum(1 for _, k, _v in events if k == "replan"),
                tool_errors=sum(1 for _, k, v in events if k == "tool" and v),
            )
        )
    return out
