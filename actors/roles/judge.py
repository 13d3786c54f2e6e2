"""Judge — the health monitor: coded detectors over the bus, escalation tickets out.

Responsibilities:
    Watch every running task and raise an **EscalationTicket** when it degrades, by coded
    detectors (pure functions below, each with property tests), evaluated on every
    relevant message and on a timer (``Config.judge.interval_s``, default 10 s):

    - ``doom_loop``: the ``repeat_limit``-th (3rd) identical tool call — same tool, same
      arguments, same result — in a row within one subtask, across its attempts (high);
      critical when it goes on to ``doom_critical × repeat_limit`` (the 6th).
    - ``cycle``: a block of 2–4 calls (not all the same) repeated ``cycle_repeats`` (2)
      times in a row, results included (high). A poll whose results change, or a call
      repeated with other calls between, is neither.
    - ``stall``: a running task with no envelope for ``stall_s`` (60 s) of clock time;
      found within ``stall_s`` + one timer interval (high); critical from
      ``stall_critical_s`` (default 4 × ``stall_s``: Hive's 4 minutes), action cancel.
      Never for a task the operator paused (TaskPaused, until its TaskUnpaused) nor one
      waiting for the user's answer to a question (UserQuestion, until QuestionAnswered).
      A task resumed after its process stopped is watched from its TaskResumed on.
    - ``retry_storm``: ``retry_storm`` (5) CorrectionSignals after a failure in one task
      (medium); one asking for a second derivation of an answer that passed
      (``corroborate``) is no failure and does not count.
    - ``repeated_errors``: ``error_repeats`` (3) identical errors (failed tool calls of
      the same tool, exit code and error; or model calls failing the same way) (medium).
    - ``budget_burn``: ``budget_warn`` (80 %) of the task's call or token budget used
      (medium).
    - ``replan_budget``: the GGS's replans one short of ``Config.ggs.max_replans`` (low).
    - ``model_errors``: at least ``model_error_rate`` (50 %) of the task's model calls
      failed, after ``model_error_min_calls`` (4) calls (high).
    - ``model_opinion`` (only with ``model_rung``): the brain-tier model's verdict on a
      case the rules mark ambiguous (high, inspect), see below.

    **Critical escalation.** A finding more severe than the open ticket of its (task,
    detector) raises that ticket again: a new EscalationTicket message with the SAME
    ticket id and the higher severity, superseding the earlier one (the Queen's inbox
    holds the latest; ``Config.queen.auto_cancel = "critical"`` cancels on it). A
    finding more severe than a ticket resolved within ``cooldown_s`` (the operator said
    continue, and the loop went on) is ticketed anew despite the cool-down.

    **The model rung** (``Config.judge.model_rung``, default off: it costs a brain call
    and needs a brain model). The rules mark two cases ambiguous (pure functions in
    ``_judge_rung``): ``varying_repeat`` — the same tool and arguments ``repeat_limit``
    times in a row whose results differ (polling, or a loop whose output drifts?); and
    ``plateau`` — the GGS loss not better than its best for ``plateau_rounds`` (3)
    rounds while the task works on. Only those, at most once per (task, case), are put
    to the brain tier through the LLM gateway (logged as an LLMCall, replayable; charged
    to the task's budget), on a thread of its own so the tap and the detectors go on.
    ``healthy`` → a JudgeObservation noting the dismissal; ``degraded`` → a
    ``model_opinion`` ticket with the evidence seqs. It **fails closed**: an exception,
    a refusal (the task's budget), no answer within ``model_timeout_s`` of clock time,
    or an unparsable answer (after one repair) is a ``model_opinion`` ticket too, with
    ``error_kind`` set (``error``/``refused``/``timeout``/``unparsable``). A late
    answer, or one for a task that ended, is dropped.

    One open ticket per (task, detector); when the task ends every open ticket of it is
    resolved (TicketResolved, ``task_ended``). An operator's answer (``continue`` or
    ``cancel``) closes a ticket at once, and a closed (task, detector) is not ticketed
    again within ``cooldown_s``. The Queen's ``acknowledged`` (a ticket below
    ``queen.relay_at``, relayed to nobody) does not close it: the Queen acknowledges
    concurrently with the task's end, so letting it close the ticket would make the
    Judge's own messages depend on which came first — and a rerun could not repeat them.
    Each timer pass with running tasks publishes one JudgeObservation (running tasks,
    open tickets).

Input contract:
    Every envelope, through a bus tap (the Judge keeps state per task from UserRequest /
    TaskRequest to FinalResult); ticks (clock time).

Output contract:
    EscalationTicket (detector in ``kind``, severity, cause in ``summary``, evidence seqs
    and ranges, suggested ``action``; ``case`` and ``error_kind`` for ``model_opinion``),
    TicketResolved (``task_ended``), JudgeObservation, LLMCall (the model rung's, by the
    gateway).

Constraints:
    Does NOT cancel, correct or instruct a task: the Queen and the operator decide. Decides
    from structured fields (tool, arguments, ``ok``, exit code, kinds, budgets), never by
    parsing text; error texts are compared for identity only. The model is asked only
    about the ambiguous cases, never about one a rule decides, and its silence or
    nonsense never dismisses anything.
"""

from __future__ import annotations

import math
import threading
from collections import deque
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import msgspec

from artoo.actors.runtime.role import Equipment, Role
from artoo.schemas import (
    CorrectionSignal,
    Envelope,
    EscalationTicket,
    ExecutionResult,
    FinalResult,
    GGSDecision,
    JudgeConfig,
    JudgeObservation,
    LLMCall,
    Message,
    QuestionAnswered,
    TaskPaused,
    TaskRequest,
    TaskResumed,
    TaskUnpaused,
    TicketResolved,
    ToolCall,
    UserQuestion,
)

from ._judge_rung import (
    Case,
    ErrorKind,
    OpinionOutcome,
    ask_opinion,
    doom_severity,
    opinion_request,
    plateau,
    run_length,
    stall_severity,
    varying_repeat,
)

__all__ = [
    "Judge",
    "Settle",
    "budget_burn",
    "call_key",
    "cycle_at",
    "repeat_at",
    "stalled",
]

Severity = Literal["low", "medium", "high", "critical"]


# --------------------------------------------------------------------------- detectors
def call_key(call: ToolCall) -> Hashable:
    """What makes two tool calls identical: tool, arguments, and what came back."""
    args = msgspec.json.encode(call.args, order="sorted")
    return (call.tool, args, call.ok, call.exit_code, call.refusal, call.output_preview)


def repeat_at(keys: Sequence[Hashable], limit: int) -> bool:
    """True when the last ``limit`` keys are identical (the ``limit``-th repeat in a row)."""
    if len(keys) < limit:
        return False
    last = keys[-1]
    return all(k == last for k in keys[-limit:])


def cycle_at(keys: Sequence[Hashable], repeats: int, periods: Sequence[int] = (2, 3, 4)) -> int:
    """The period p (2–4) of a block of calls, not all identical, that the last
    ``p × repeats`` keys repeat; 0 when none."""
    for p in periods:
        n = p * repeats
        if len(keys) < n:
            continue
        block = list(keys[-p:])
        if len(set(block)) < 2:
            continue
        tail = keys[-n:]
        if all(tail[i] == block[i % p] for i in range(n)):
            return p
    return 0


def stalled(last_seen: float, now: float, stall_s: float) -> bool:
    """True when a running task has been silent ``stall_s`` or longer."""
    return now - last_seen >= stall_s


def budget_burn(used: int, limit: int | None, warn: float) -> bool:
    """True when ``used`` reached the ``warn`` share of a budget (None: no budget)."""
    return limit is not None and used >= math.ceil(warn * limit)


# --------------------------------------------------------------------------- state
@dataclass
class _Task:
    started_seq: int
    last_seen: float
    paused: bool = False
    """Paused by the operator (TaskPaused): silence is expected, not a stall."""
    asking: bool = False
    """Waiting for the user's answer to a question (UserQuestion): likewise."""
    max_calls: int | None = None
    max_tokens: int | None = None
    keys: dict[str, list[Hashable]] = field(default_factory=dict)  # subtask → call keys
    args: dict[str, list[Hashable]] = field(default_factory=dict)  # subtask → tool+args
    previews: dict[str, list[str]] = field(default_factory=dict)  # subtask → results
    key_seqs: dict[str, list[int]] = field(default_factory=dict)
    corrections: list[int] = field(default_factory=list)
    errors: dict[Hashable, list[int]] = field(default_factory=dict)
    calls: int = 0
    failed_calls: list[int] = field(default_factory=list)
    tokens: int = 0
    open: dict[str, str] = field(default_factory=dict)  # detector → ticket id
    open_severity: dict[str, Severity] = field(default_factory=dict)
    resolved_at: dict[str, float] = field(default_factory=dict)
    resolved_severity: dict[str, Severity] = field(default_factory=dict)
    losses: list[float] = field(default_factory=list)
    loss_seqs: list[int] = field(default_factory=list)
    asked: set[str] = field(default_factory=set)  # ambiguous cases put to the model


_SEVERITY: dict[str, Severity] = {
    "doom_loop": "high",
    "cycle": "high",
    "stall": "high",
    "retry_storm": "medium",
    "repeated_errors": "medium",
    "budget_burn": "medium",
    "replan_budget": "low",
    "model_errors": "high",
    "model_opinion": "high",
}
_RANK: dict[str, int] = {"low": 0, "medium": 1, "high": 2, "critical": 3}


def _ranges(seqs: Sequence[int]) -> list[list[int]]:
    out: list[list[int]] = []
    for seq in sorted(set(seqs)):
        if out and seq == out[-1][1] + 1:
            out[-1][1] = seq
        else:
            out.append([seq, seq])
    return out


# --------------------------------------------------------------------------- the actor
class Judge(Role):
    """The Judge actor: a tap, per-task state, the detectors, tickets."""

    name: ClassVar[str] = "judge"
    publishes: ClassVar[tuple[type[Message], ...]] = (
        EscalationTicket,
        TicketResolved,
        JudgeObservation,
        LLMCall,
    )
    wants_ticks: ClassVar[bool] = True

    def __init__(self, equipment: Equipment, instance: str | None = None) -> None:
        super().__init__(equipment, instance)
        self.cfg: JudgeConfig = equipment.config.judge
        self.tasks: dict[str, _Task] = {}
        self._tap: Any = None
        self._next_seq = 0
        self._last_pass = -math.inf
        self._seen: deque[Envelope] = deque()
        self._woken = threading.Event()
        self._pending: dict[tuple[str, str], tuple[float, list[int]]] = {}

    def on_start(self) -> None:
        """Open the tap and a pump thread that wakes the actor when envelopes arrive (so
        every relevant message is judged when it comes); only what happens from now on
        is judged."""
        super().on_start()
        self._tap = self.ctx.bus.tap()
        self._next_seq = self.ctx.bus.last_seq + 1
        self.background("tap", self._pump)

    def on_stop(self) -> None:
        """Judge what was committed before the stop, then close the tap (the pump ends
        with it) — so a task that ended just before a close still gets its tickets
        resolved (actor thread)."""
        if self._tap is not None:
            try:
                self._drain()  # what the pump handed over, then the rest from the log
                for env in self.ctx.bus.read(self._next_seq):
                    self._see(env)
            except Exception:  # a failed bus: nothing more can be published anyway
                self.log.exception("could not judge the last envelopes at stop")
            self._tap.close()
        super().on_stop()

    def _pump(self) -> None:  # pump thread: tap → the actor's queue, one wake at a time
        tap = self._tap
        while (env := tap.get()) is not None:
            self._seen.append(env)
            if not self._woken.is_set():
                self._woken.set()
                try:
                    self.actor_ref.tell(_Wake())
                except Exception:  # the actor stopped
                    return

    def on_receive(self, message: Any) -> Any:
        """A wake from the pump: judge what arrived."""
        if isinstance(message, _Wake):
            self._woken.clear()
            self._drain()
            return None
        if isinstance(message, _Opinion):
            self._drain()
            self._opinion(message)
            return None
        if isinstance(message, Settle):
            self._drain_to(self.ctx.bus.last_seq)
            return None
        return super().on_receive(message)

    def active_tasks(self) -> list[str]:
        return list(self.tasks)

    def on_tick(self, now: float) -> None:
        """Judge what the tap holds; every ``interval_s``, look for stalls."""
        self._drain()
        if now - self._last_pass < self.cfg.interval_s:
            return
        self._last_pass = now
        self._drain_to(self.ctx.bus.last_seq)  # judge all that was committed before now
        for task_id, task in list(self.tasks.items()):
            if task.paused or task.asking:
                continue  # silent by the operator's will, or waiting for the user
            silent = now - task.last_seen
            severity = stall_severity(silent, self.cfg.stall_s, self.cfg.stall_critical_s)
            if severity is not None:
                self._ticket(
                    task_id,
                    "stall",
                    f"no message for {silent:.0f} s (stall_s {self.cfg.stall_s:g})",
                    [task.started_seq],
                    action="cancel",
                    severity=severity,
                )
        for (task_id, case), (asked_at, evidence) in list(self._pending.items()):
            if now - asked_at >= self.cfg.model_timeout_s:
                del self._pending[(task_id, case)]
                self._opinion_failed(
                    task_id, case, evidence, "timeout", f"no answer in {now - asked_at:.0f} s"
                )
        if self.tasks:
            open_tickets = sum(len(t.open) for t in self.tasks.values())
            self.publish(
                JudgeObservation(
                    summary=f"{len(self.tasks)} running, {open_tickets} open tickets",
                    healthy=open_tickets == 0,
                    metrics={"running": float(len(self.tasks)), "open": float(open_tickets)},
                ),
                task_id=None,
                cause=None,
            )

    # ------------------------------------------------------------------ reading
    def _drain(self) -> None:
        tap = self._tap
        if tap is None:
            return
        batch = []
        while self._seen:
            batch.append(self._seen.popleft())
        batch.extend(tap.catch_up())  # what the tap dropped, re-read from the log
        for env in sorted(batch, key=lambda e: e.seq):
            if env.seq >= self._next_seq:
                self._see(env)

    def _drain_to(self, seq: int) -> None:
        """Judge everything up to ``seq``: what the pump handed over, then the rest read
        from the log — no waiting for the pump, which is a hop behind the tap (what it
        hands over later is skipped by seq)."""
        self._drain()
        if self._next_seq <= seq:
            for env in self.ctx.bus.read(self._next_seq, seq):
                self._see(env)

    def _see(self, env: Envelope) -> None:
        self._next_seq = env.seq + 1
        body = env.body
        task_id = env.task_id
        if isinstance(body, TaskRequest) and task_id:
            self.tasks[task_id] = _Task(
                env.seq, env.ts, max_calls=body.max_model_calls, max_tokens=body.max_tokens
            )
            return
        if isinstance(body, TaskResumed) and task_id and task_id not in self.tasks:
            # a task resumed after its process stopped: watched from here on
            self.tasks[task_id] = _Task(env.seq, env.ts, paused=body.paused, asking=body.waiting)
            return
        if task_id is None or env.sender == self.sender:
            return
        task = self.tasks.get(task_id)
        if task is None:
            return
        task.last_seen = max(task.last_seen, env.ts)
        if isinstance(body, TaskPaused | TaskUnpaused):
            task.paused = isinstance(body, TaskPaused)
        elif isinstance(body, UserQuestion | QuestionAnswered):
            task.asking = isinstance(body, UserQuestion)
        elif isinstance(body, FinalResult):
            self._resolve_all(task_id, task, env)
        elif isinstance(body, TicketResolved) and body.resolution != "acknowledged":
            for detector, ticket_id in list(task.open.items()):  # an operator's answer
                if ticket_id == body.ticket_id:
                    del task.open[detector]
                    task.resolved_at[detector] = self.ctx.clock.now()
                    task.resolved_severity[detector] = task.open_severity.pop(detector)
        elif isinstance(body, ExecutionResult):
            self._execution(task_id, task, env, body)
        elif isinstance(body, CorrectionSignal) and not body.corroborate:
            task.corrections.append(env.seq)
            if len(task.corrections) >= self.cfg.retry_storm:
                self._ticket(
                    task_id,
                    "retry_storm",
                    f"{len(task.corrections)} corrections",
                    task.corrections,
                    action="inspect",
                )
        elif isinstance(body, LLMCall) and body.refused is None:
            self._model_call(task_id, task, env, body)
        elif isinstance(body, GGSDecision):
            task.losses.append(body.loss)
            task.loss_seqs.append(env.seq)
            rounds = self.cfg.plateau_rounds
            if body.directive not in _TERMINAL and plateau(task.losses, rounds):
                self._ambiguous(
                    task_id,
                    task,
                    "plateau",
                    task.loss_seqs[-rounds - 1 :],
                    "Loss per round: " + ", ".join(f"{x:.3f}" for x in task.losses[-8:]),
                )
            limit = self.ctx.config.ggs.max_replans
            if limit and body.replans >= limit - 1 and body.directive not in _TERMINAL:
                self._ticket(
                    task_id,
                    "replan_budget",
                    f"{body.replans} of {limit} replans done",
                    [env.seq],
                    action="inspect",
                )

    def _execution(self, task_id: str, task: _Task, env: Envelope, body: ExecutionResult) -> None:
        keys = task.keys.setdefault(body.subtask_id, [])
        args = task.args.setdefault(body.subtask_id, [])
        seqs = task.key_seqs.setdefault(body.subtask_id, [])
        previews = task.previews.setdefault(body.subtask_id, [])
        limit = self.cfg.repeat_limit
        for call in body.tool_calls:
            keys.append(call_key(call))
            args.append((call.tool, msgspec.json.encode(call.args, order="sorted")))
            seqs.append(env.seq)
            previews.append(f"ok={call.ok} {call.error or call.output_preview}"[:300])
            run = run_length(keys)
            if severity := doom_severity(run, limit, self.cfg.doom_critical):
                self._ticket(
                    task_id,
                    "doom_loop",
                    f"{call.tool} called {run} times in a row with the "
                    f"same arguments and result (subtask {body.subtask_id})",
                    seqs[-run:],
                    action="cancel",
                    severity=severity,
                )
            elif period := cycle_at(keys, self.cfg.cycle_repeats):
                evidence = seqs[-period * self.cfg.cycle_repeats :]
                self._ticket(
                    task_id,
                    "cycle",
                    f"a cycle of {period} calls repeated {self.cfg.cycle_repeats} times "
                    f"(subtask {body.subtask_id})",
                    evidence,
                    action="cancel",
                )
            elif varying_repeat(args, keys, limit):
                self._ambiguous(
                    task_id,
                    task,
                    "varying_repeat",
                    seqs[-limit:],
                    f"Tool {call.tool}, arguments {call.args!r}; the last {limit} results:\n"
                    + "\n".join(f"- {p}" for p in previews[-limit:]),
                )
            if not call.ok and call.refusal is None:
                key = ("tool", call.tool, call.exit_code, call.error)
                self._error(task_id, task, key, env.seq, f"{call.tool} failed the same way")

    def _model_call(self, task_id: str, task: _Task, env: Envelope, call: LLMCall) -> None:
        task.calls += 1
        task.tokens += int(call.usage.get("prompt_tokens", 0)) + int(
            call.usage.get("completion_tokens", 0)
        )
        if call.error is not None:
            task.failed_calls.append(env.seq)
            self._error(
                task_id, task, ("model", call.role, call.error), env.seq, "model calls failed"
            )
            failed = len(task.failed_calls)
            if (
                task.calls >= self.cfg.model_error_min_calls
                and failed / task.calls >= self.cfg.model_error_rate
            ):
                self._ticket(
                    task_id,
                    "model_errors",
                    f"{failed} of {task.calls} model calls failed",
                    task.failed_calls,
                    action="inspect",
                )
        for used, limit, what in (
            (task.calls, task.max_calls, "model calls"),
            (task.tokens, task.max_tokens, "tokens"),
        ):
            if budget_burn(used, limit, self.cfg.budget_warn):
                self._ticket(
                    task_id,
                    "budget_burn",
                    f"{used} of {limit} {what} used",
                    [env.seq],
                    action="inspect",
                )

    def _error(self, task_id: str, task: _Task, key: Hashable, seq: int, what: str) -> None:
        seqs = task.errors.setdefault(key, [])
        seqs.append(seq)
        if len(seqs) >= self.cfg.error_repeats:
            self._ticket(
                task_id,
                "repeated_errors",
                f"{what} {len(seqs)} times",
                seqs,
                action="inspect",
            )

    # ------------------------------------------------------------------ tickets
    def _ticket(
        self,
        task_id: str,
        detector: str,
        cause: str,
        evidence: Sequence[int],
        *,
        action: Literal["inspect", "cancel", "continue"],
        severity: Severity | None = None,
        case: str | None = None,
        error_kind: ErrorKind | None = None,
    ) -> None:
        """Raise a ticket: one open ticket per (task, detector). A more severe finding
        of an open ticket raises it again, same ticket id, the higher severity (it
        supersedes the earlier message); a resolved (task, detector) is not ticketed
        again within ``cooldown_s`` unless the finding is more severe than before."""
        task = self.tasks.get(task_id)
        if task is None:
            return
        severity = severity or _SEVERITY[detector]
        ticket_id = task.open.get(detector)
        if ticket_id is not None:
            if _RANK[severity] <= _RANK[task.open_severity[detector]]:
                return
        else:
            resolved = task.resolved_at.get(detector)
            if (
                resolved is not None
                and self.ctx.clock.now() - resolved < self.cfg.cooldown_s
                and _RANK[severity] <= _RANK[task.resolved_severity[detector]]
            ):
                return
            ticket_id = self.ctx.new_id()
        task.open[detector] = ticket_id
        task.open_severity[detector] = severity
        seqs = sorted(set(evidence))
        self.publish(
            EscalationTicket(
                ticket_id=ticket_id,
                severity=severity,
                kind=detector,
                summary=cause,
                evidence=seqs,
                evidence_ranges=_ranges(seqs),
                action=action,
                case=case,
                error_kind=error_kind,
            ),
            task_id=task_id,
            cause=seqs[-1] if seqs else None,
        )
        self.log.warning("ticket", task=task_id, detector=detector, severity=severity, cause=cause)

    def _resolve_all(self, task_id: str, task: _Task, env: Envelope) -> None:
        for ticket_id in task.open.values():
            self.publish(
                TicketResolved(ticket_id=ticket_id, resolution="task_ended", by=self.sender),
                task_id=task_id,
                cause=env.seq,
            )
        self.tasks.pop(task_id, None)
        for key in [k for k in self._pending if k[0] == task_id]:
            del self._pending[key]  # a late opinion on an ended task is dropped

    # ------------------------------------------------------------------ the model rung
    def _ambiguous(
        self, task_id: str, task: _Task, case: Case, evidence: Sequence[int], facts: str
    ) -> None:
        """A case the rules cannot decide: with ``judge.model_rung``, ask the brain tier
        once per (task, case), off the actor's thread; without it, nothing."""
        if not self.cfg.model_rung or case in task.asked:
            return
        task.asked.add(case)
        seqs = sorted(set(evidence))
        self._pending[(task_id, case)] = (self.ctx.clock.now(), seqs)
        request = msgspec.structs.replace(
            opinion_request(task_id, case, facts),
            max_output_tokens=self.ctx.config.output_caps.judge,
        )
        ref = self.actor_ref
        gateway = self.ctx.gateway

        def _ask() -> None:  # the model thread: never raises, always tells the actor
            if gateway is None:
                outcome = OpinionOutcome(error_kind="error", error="this System has no model")
            else:
                outcome = ask_opinion(gateway, request)
            try:
                ref.tell(_Opinion(task_id, case, outcome))
            except Exception:  # the Judge stopped
                return

        self.background("opinion", _ask)

    def _opinion(self, message: _Opinion) -> None:
        entry = self._pending.pop((message.task_id, message.case), None)
        if entry is None:
            return  # timed out already, or its task ended
        _, evidence = entry
        outcome = message.outcome
        if outcome.opinion is None:
            kind = outcome.error_kind or "unparsable"
            self._opinion_failed(message.task_id, message.case, evidence, kind, outcome.error)
        elif outcome.opinion.verdict == "degraded":
            self._ticket(
                message.task_id,
                "model_opinion",
                f"{message.case}: the model judged it degraded: {outcome.opinion.reason}",
                evidence,
                action="inspect",
                case=message.case,
            )
        else:
            self.publish(
                JudgeObservation(
                    summary=f"{message.case} dismissed: the model judged it healthy: "
                    f"{outcome.opinion.reason}",
                    healthy=True,
                ),
                task_id=message.task_id,
                cause=evidence[-1] if evidence else None,
            )

    def _opinion_failed(
        self, task_id: str, case: str, evidence: list[int], kind: ErrorKind, error: str
    ) -> None:
        """The rung fails closed: no usable opinion is a ticket, never a dismissal."""
        self._ticket(
            task_id,
            "model_opinion",
            f"{case}: no usable model opinion ({kind}): {error}",
            evidence,
            action="inspect",
            case=case,
            error_kind=kind,
        )


_TERMINAL = frozenset({"accept", "success", "abandon"})


@dataclass(frozen=True)
class Settle:
    """Asked by the System before it stops the roles: judge everything committed so far
    now, not a tap's hop later — so the tickets (and ``task_ended`` resolutions) about a
    task that just ended are published while the Queen still runs to answer them."""


@dataclass(frozen=True)
class _Wake:
    """Told by the Judge's pump thread: envelopes are waiting."""


@dataclass(frozen=True)
class _Opinion:
    """Told by a model thread: the outcome of one ambiguous case."""

    task_id: str
    case: str
    outcome: OpinionOutcome
