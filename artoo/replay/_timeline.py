"""The timeline of a run: each task's envelopes as a narrative a person reads top to bottom
(``artoo replay STORE --task ID``), and a one-row-per-task overview (``artoo replay STORE``)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from artoo.actors.runtime.ledger import task_figures
from artoo.actors.verification.proof import how_established
from artoo.schemas import (
    ConfirmationDecision,
    ConfirmationRequest,
    CorrectionSignal,
    Criterion,
    DispatchManifest,
    Envelope,
    ExecutionResult,
    FinalResult,
    GGSDecision,
    LLMCall,
    MegramDemoted,
    MegramForgotten,
    MegramRecalled,
    MegramRecorded,
    MemoryQuery,
    MemoryRecall,
    OutcomeSummary,
    PlanDirective,
    PlanRejected,
    QuestionAnswered,
    ReplanRequest,
    RoleFailed,
    SOPPromoted,
    StepFailed,
    SubTask,
    SubTaskOutcome,
    TaskCancelled,
    TaskPaused,
    TaskRequest,
    TaskResumed,
    TaskSpec,
    TaskUnpaused,
    ToolCall,
    UnknownMessage,
    UserQuestion,
    UserRequest,
    Verdict,
    WorkspaceRestored,
)

from ._read import TaskLog, read_store

__all__ = ["TaskRow", "TimelineEntry", "TimelineTask", "task_table", "timeline"]


@dataclass(frozen=True)
class TimelineEntry:
    """One line of the narrative: the envelope's seq, seconds since the task started, who
    sent it, its kind, the line, and indented detail lines (tool calls, subtasks, verdicts)."""

    seq: int
    t: float
    sender: str
    kind: str
    text: str
    detail: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class TimelineTask:
    """One task's narrative."""

    task_id: str
    text: str
    status: str | None
    reason: str | None
    entries: list[TimelineEntry]

    def to_json(self) -> dict[str, Any]:
        """Plain data (``--json``)."""
        return asdict(self)


@dataclass(frozen=True)
class TaskRow:
    """One task in the overview: how it ended, its rounds and macro-states, and its cost."""

    task_id: str
    text: str
    status: str | None
    reason: str | None
    states: list[str]
    rounds: int
    model_calls: int
    tool_calls: int
    tokens_in: int
    tokens_out: int
    elapsed_s: float
    first_seq: int
    last_seq: int
    refused_calls: int = 0
    """Model calls the task's budget refused (not made, so not among ``model_calls``)."""

    def to_json(self) -> dict[str, Any]:
        """Plain data (``--json``)."""
        return asdict(self)


def task_table(store: str | Path) -> list[TaskRow]:
    """One row per task of ``store``, in the order the tasks started."""
    _, tasks = read_store(store)
    return [_row(task) for task in tasks]


def timeline(store: str | Path, task_id: str | None = None) -> list[TimelineTask]:
    """The narrative of every task of ``store`` (or of ``task_id`` only), top to bottom."""
    _, tasks = read_store(store, task_id)
    return [_narrate(task) for task in tasks]


def _row(task: TaskLog) -> TaskRow:
    figures = task_figures(e.body for e in task.envelopes)
    last = task.envelopes[-1]
    return TaskRow(
        task_id=task.task_id,
        text=task.text,
        status=figures.status,
        reason=figures.reason,
        states=figures.path,
        rounds=figures.rounds,
        model_calls=figures.model_calls,
        tool_calls=figures.tool_calls,
        tokens_in=figures.tokens_in,
        tokens_out=figures.tokens_out,
        elapsed_s=round(last.ts - task.started, 3),
        first_seq=task.envelopes[0].seq,
        last_seq=last.seq,
        refused_calls=figures.refused_calls,
    )


def _narrate(task: TaskLog) -> TimelineTask:
    entries = []
    for env in task.envelopes:
        text, detail = _describe(env)
        entries.append(
            TimelineEntry(
                seq=env.seq,
                t=round(env.ts - task.started, 3),
                sender=env.sender + (f" → {env.to}" if env.to else ""),
                kind=_kind(env.body),
                text=text,
                detail=detail,
            )
        )
    final = task.final
    return TimelineTask(
        task_id=task.task_id,
        text=task.text,
        status=final.status if final else None,
        reason=final.reason if final else None,
        entries=entries,
    )


def _kind(body: object) -> str:
    return body.tag if isinstance(body, UnknownMessage) else type(body).__name__


def _clip(text: str, limit: int = 160) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _criterion(c: Criterion) -> str:
    check = (
        f", check {c.check.kind}" + (f" {c.check.path}" if c.check.path else "") if c.check else ""
    )
    return f"{c.id} [{c.mode}{check}]: {_clip(c.text, 100)}"


def _verdict(v: Verdict) -> str:
    mark = "pass" if v.passed else f"FAIL ({v.failure_class or 'unclassified'})"
    return f"{v.criterion_id}: {mark} by {v.signal}, attempt {v.attempt}: {_clip(v.evidence, 120)}"


def _tool(c: ToolCall) -> str:
    where = f" {c.target}" if c.target else ""
    if c.refusal:
        state = f"REFUSED ({c.refusal})"
    elif c.ok:
        state = "ok" + (f", exit {c.exit_code}" if c.exit_code is not None else "")
    else:
        state = "FAILED" + (f", exit {c.exit_code}" if c.exit_code is not None else "")
    why = f": {_clip(c.error, 100)}" if c.error else ""
    command = c.args.get("command")
    shown = f" `{_clip(command, 80)}`" if isinstance(command, str) else ""
    return f"tool {c.tool}{where}{shown} {state} ({c.elapsed_ms:.0f} ms){why}"


def _blocked(tools: list[str], targets: list[str]) -> str:
    parts = [f"tools {', '.join(tools)}"] if tools else []
    parts += [f"targets {', '.join(targets)}"] if targets else []
    return "; MUST NOT " + "; ".join(parts) if parts else ""


def _describe(env: Envelope) -> tuple[str, list[str]]:
    b = env.body
    if isinstance(b, UserRequest):
        return f"task: {_clip(b.text, 200)}", []
    if isinstance(b, TaskRequest):
        deadline = f" (deadline {b.deadline_s:g} s)" if b.deadline_s else ""
        return f"admitted{deadline}", []
    if isinstance(b, TaskSpec):
        return (
            f"read as {b.intent!r} (kind {b.kind or 'not recorded'}"
            + (f", answer {b.shape}" if b.shape else "")
            + f", slug {b.slug}, env {b.environment})",
            [_criterion(c) for c in b.criteria],
        )
    if isinstance(b, MemoryQuery):
        return f"memory read: {b.space} / {b.entity} (round {b.round})", []
    if isinstance(b, MemoryRecall):
        text = (
            f"memory: attention {b.attention:.2f}, decision {b.decision:+.2f} → {b.action}; "
            f"{len(b.sops)} SOPs, {len(b.avoid)} avoid, {len(b.caution)} caution"
        )
        detail = [f"SOP {m.space}/{m.entity} σ={m.sigma:+.0f}: {_clip(m.content)}" for m in b.sops]
        detail += [f"avoid {p.space} {p.entity} ({p.decision:+.2f})" for p in b.avoid]
        detail += [f"caution {p.space} {p.entity} ({p.decision:+.2f})" for p in b.caution]
        for r in b.recalled:  # recall by meaning: what was found, read or flagged
            flag = "DISTRACTOR" if r.distractor else "read" if r.recalled else "not read"
            detail.append(
                f"recalled {flag}: {r.space} {_clip(r.text)!r} (kw {r.keyword_rank or '-'}, "
                f"vec {r.vector_rank or '-'}, cos {r.vector:.2f})"
            )
        detail += [f"episode {m.id}: {_clip(m.request)!r}" for m in b.episodes]
        return text, detail
    if isinstance(b, DispatchManifest):
        detail = [f"SHOULD PREFER: {x}" for x in b.should_prefer]
        detail += [f"MUST NOT: {x}" for x in b.must_not]
        detail += [f"CAUTION: {x}" for x in b.caution]
        for st in b.subtasks:
            detail.append(f"subtask {st.subtask_id} (group {st.sequence}): {_clip(st.instruction)}")
            detail += [f"  {_criterion(c)}" for c in st.criteria]
        return f"round {b.round} plan: {len(b.subtasks)} subtasks — {_clip(b.rationale)}", detail
    if isinstance(b, SubTask):
        return f"subtask {b.subtask_id} (round {b.round}) sent to {env.to}", []
    if isinstance(b, LLMCall):
        tokens = f"{b.usage.get('prompt_tokens', 0)}→{b.usage.get('completion_tokens', 0)} tokens"
        error = f" ERROR: {_clip(b.error, 120)}" if b.error else ""
        sub = f" subtask {b.subtask_id}" if b.subtask_id else ""
        return (
            f"model call: {b.role} ({b.tier}) {b.model}{sub}, {b.latency_ms:.0f} ms, {tokens}"
            f"{error}",
            [],
        )
    if isinstance(b, ExecutionResult):
        error = f": {_clip(b.error, 120)}" if b.error else ""
        return (
            f"attempt {b.attempt} of subtask {b.subtask_id}: {'ok' if b.ok else 'not ok'}, "
            f"stopped on {b.stop}{error} — output {_clip(b.output, 120)!r}",
            [_tool(c) for c in b.tool_calls],
        )
    if isinstance(b, CorrectionSignal) and b.corroborate:  # passed: no failure
        value = _clip(b.corroborate, 60)
        what = (  # no tool result showed the value: shown by one, in the same conversation
            f"to compute {value} with a tool"
            if b.unbacked
            else f"for a second derivation of {value}"
        )
        return (
            f"subtask {b.subtask_id}: attempt {b.attempt} passed, asked {what}: "
            f"{_clip(b.feedback, 120)}",
            [_verdict(v) for v in b.verdicts],
        )
    if isinstance(b, CorrectionSignal):
        return (
            f"retry subtask {b.subtask_id} after attempt {b.attempt} "
            f"({b.failure_class or 'unclassified'}): {_clip(b.feedback, 120)}",
            [_verdict(v) for v in b.verdicts],
        )
    if isinstance(b, SubTaskOutcome):
        earlier = sorted({v.attempt for v in b.verdicts if v.attempt != b.attempts})
        return (
            f"subtask {b.subtask_id}: {b.status} after {b.attempts} attempts"
            # a fallback: the attempt after an ask for a second derivation did not pass,
            # or passed without answering (its reason says so)
            + (f", on attempt {earlier[0]}'s answer" if len(earlier) == 1 else "")
            + (f" ({b.failure_class})" if b.failure_class else "")
            + (f" — {_clip(b.reason, 120)}" if b.reason else ""),
            [_verdict(v) for v in b.verdicts],
        )
    if isinstance(b, ReplanRequest | OutcomeSummary):
        what = "replan requested" if isinstance(b, ReplanRequest) else "every criterion passed"
        return (
            f"round {b.round} fan-in: {what} ({len(b.outcomes)} outcomes)",
            [_verdict(v) for v in b.task_verdicts],
        )
    if isinstance(b, GGSDecision):
        return (
            f"GGS round {b.round}: D={b.d:.3f} P={b.p:.3f} Ω={b.omega:.3f} L={b.loss:.3f} "
            f"∇L={b.grad:+.3f} → {b.directive.upper()} (urgency {b.urgency}, {b.replans} "
            f"replans, Law 2 count {b.law2_worsening})"
            + _blocked(b.blocked_tools, b.blocked_targets),
            [b.rationale] if b.rationale else [],
        )
    if isinstance(b, PlanDirective):
        return (
            f"directive for round {b.round}: {b.directive}"
            + (f" ({b.failure_class})" if b.failure_class else "")
            + _blocked(b.blocked_tools, b.blocked_targets),
            [],
        )
    if isinstance(b, MegramRecorded):
        m = b.megram
        return (
            f"memory write: {m.space} / {m.entity} {m.state} (f={m.f:g} σ={m.sigma:+g} k={m.k:g})",
            [_clip(m.content)],
        )
    if isinstance(b, MegramRecalled):
        return f"memory recalled {len(b.ids)} megrams", []
    if isinstance(b, MegramForgotten | MegramDemoted):
        verb = "forgot" if isinstance(b, MegramForgotten) else "demoted"
        return f"memory {verb} {b.id}: {b.reason}", []
    if isinstance(b, SOPPromoted):
        return f"SOP promoted ({b.kind}): {_clip(b.megram.content)}", []
    if isinstance(b, ConfirmationRequest):
        return (
            f"confirmation asked ({b.gate or 'law1'}): {_clip(b.action, 120)} — "
            f"{_clip(b.reason, 120)}",
            [],
        )
    if isinstance(b, ConfirmationDecision):
        verdict = "APPROVED" if b.approved else "DENIED"
        who = "the request" if b.by == "request" else b.by
        return f"confirmation {verdict} by {who}" + (f": {b.reason}" if b.reason else ""), []
    if isinstance(b, PlanRejected):
        return f"plan rejected (round {b.round})", list(b.violations)
    if isinstance(b, StepFailed):
        return f"{b.role} could not {b.step} (round {b.round}): {_clip(b.error, 160)}", []
    if isinstance(b, RoleFailed):
        return f"role {b.role} crashed: {_clip(b.error, 160)}", []
    if isinstance(b, TaskCancelled):
        return f"cancelled{' (system closing)' if b.closing else ''}: {b.reason}", []
    if isinstance(b, UserQuestion):
        choices = f" [{' / '.join(b.options)}]" if b.options else " [free text]"
        default = f" (default {b.default})" if b.default else ""
        return f"QUESTION ({b.role}): {_clip(b.text, 200)}{choices}{default}", []
    if isinstance(b, QuestionAnswered):
        return (
            f"ANSWER by {b.by}: {_clip(b.answer, 200)}"
            if b.answer is not None
            else f"NO ANSWER ({b.by})",
            [],
        )
    if isinstance(b, TaskPaused | TaskUnpaused):
        verb = "PAUSED" if isinstance(b, TaskPaused) else "UNPAUSED"
        return f"{verb} by {b.by}" + (f": {b.reason}" if b.reason else ""), []
    if isinstance(b, WorkspaceRestored):
        calls = ", ".join(str(seq) for seq in b.seqs)
        return (
            f"UNDONE by {b.by}: {len(b.paths)} path(s) restored from the tool calls at seq {calls}",
            [_clip(", ".join(b.paths), 240)],
        )
    if isinstance(b, TaskResumed):
        return (
            f"RESUMED after the process stopped: rebuilt from {b.replayed} logged envelopes "
            f"(to seq {b.from_seq}); stopped {b.stopped_s:.2f} s, not counted",
            [],
        )
    if isinstance(b, FinalResult):
        c = b.cost
        resumed = f" [resumed from seq {b.resumed_from}]" if b.resumed_from is not None else ""
        return (
            f"FINAL {b.status.upper()} ({b.reason}){resumed}: {_clip(b.summary, 240)}",
            [
                f"output: {_clip(b.output, 200)!r}",
                *(
                    [how_established(b.established, b.established_by)]
                    if b.established is not None
                    else []
                ),
                f"cost: {c.model_calls} model calls ({c.sequential_calls} sequential), "
                f"{c.tokens_in} tokens in, {c.tokens_out} out, {c.elapsed_ms / 1000:.2f} s; "
                f"{b.replans} replans",
            ],
        )
    return _kind(b), []
