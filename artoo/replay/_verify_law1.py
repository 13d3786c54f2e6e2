"""``artoo replay --verify``: Law 1's decisions, recomputed from the ToolCalls that logged
them, and the confirmations they needed checked against what happened.

``law1``
    Each decision in a ToolCall's ``law1`` (gate by gate), by the function the tool
    registry decided with (:mod:`artoo.actors.law1`): ``effects``, ``reversible`` and
    ``scope`` from the call's logged ``effects`` (each with its kept before-image) and the
    reading its logged SubTask carried (``SubTask.kind``, ``SubTask.targets``:
    :func:`~artoo.actors.law1.decide_by_effect`, which is
    :func:`~artoo.actors.law1.decide_effects` where the reading names no targets);
    ``parser`` and ``remote`` from
    the logged command on an empty workspace (:func:`~artoo.actors.law1.decide_command`,
    :func:`~artoo.actors.law1.decide_remote`). A parser's verdict that depended on the
    workspace's files (``reads_workspace``: the runtime found it differs from the empty
    workspace's) is not recomputable from the log (``skipped``); nor is a ToolCall of a log
    written before ``ToolCall.law1`` existed.
``law1_confirm``
    Each decision that asks: the attempt logged a ConfirmationRequest for it, in call order,
    with the call's tool and arguments and the decision's reason, target and effects; a
    call whose request was denied, or never answered (a timeout, the task's end), was
    refused (``law1_denied``) and did not run (fail closed), with no later gate; an approved
    call, or one no gate asked about, was not refused by Law 1; no request is left over.
    A call a policy-0 Executor refused unasked for the lines it would lose (refusal
    ``lost_lines``, a rule retired with policy 0) logged no request: it is taken as
    logged (``VerifyReport.retired``). A ``scope``
    decision that refuses unasked (a change during a question) logged no request: the
    call was refused ``out_of_scope`` and did not run; no call is refused so without it.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import msgspec

from artoo.schemas import (
    ConfirmationDecision,
    ConfirmationRequest,
    Envelope,
    ExecutionResult,
    Law1Check,
    SubTask,
    TaskRequest,
    ToolCall,
)

from ._read import TaskLog
from ._report import VerifyReport, mismatch

__all__ = ["recompute_law1", "verify_law1"]

_GATED = ("shell", "write_file")
"""The tools Law 1 judges (the built-ins that change the workspace)."""

BY_EFFECT = ("effects", "reversible", "scope")
"""The bases of a decision by the call's effects (its logged ``effects``)."""


def recompute_law1(
    check: Law1Check, call: ToolCall, subtask: SubTask | None = None
) -> Law1Check | None:
    """``check`` decided again from what ``call`` logged (and, by effect, the reading of
    the ``subtask`` it served), or None when the log does not hold its inputs (a parser's
    verdict that read the workspace's files)."""
    from artoo.actors.law1 import Scope, decide_by_effect, decide_command, decide_remote

    if check.basis in BY_EFFECT:
        scope = Scope.of(subtask) if subtask is not None else None
        return msgspec.structs.replace(decide_by_effect(call.effects, scope), command=check.command)
    command = check.command or call.args.get("command")
    if not isinstance(command, str) or check.reads_workspace:
        return None
    if check.basis == "parser":
        redo = decide_command(command, None, target=check.target)
    else:
        redo = decide_remote(command, None, network=check.network, target=check.target)
    return msgspec.structs.replace(redo, command=check.command)


def verify_law1(task: TaskLog, report: VerifyReport) -> None:
    """Recompute every Law 1 decision of ``task`` and check its confirmations."""
    caused: dict[int, list[Envelope]] = {}
    answers: dict[str, ConfirmationDecision] = {}
    subtasks: dict[str, SubTask] = {}
    text = next((e.body.text for e in task.envelopes if isinstance(e.body, TaskRequest)), None)
    for env in task.envelopes:
        if env.cause is not None:
            caused.setdefault(env.cause, []).append(env)
        if isinstance(env.body, ConfirmationDecision):
            answers[env.body.request_id] = env.body
        if isinstance(env.body, SubTask):
            subtasks[env.body.subtask_id] = env.body
    for env in task.envelopes:
        if isinstance(env.body, ExecutionResult) and env.cause is not None:
            requests = [
                e
                for e in caused.get(env.cause, [])
                if isinstance(e.body, ConfirmationRequest)
                and _law1_gate(e.body)
                and e.body.subtask_id == env.body.subtask_id
                and e.seq < env.seq
            ]
            subtask = subtasks.get(env.body.subtask_id)
            _Attempt(env, deque(requests), answers, report, text, subtask).run()


def _law1_gate(request: ConfirmationRequest) -> bool:
    return request.gate == "law1" or (not request.gate and bool(request.tool))


def _legacy(call: ToolCall) -> bool:
    """A call Law 1 judged that logged no decision (a log older than ``ToolCall.law1``)."""
    return (
        call.tool in _GATED
        and not call.law1
        and (call.ok or call.exit_code is not None or call.refusal == "law1_denied")
    )


class _Attempt:
    """One ExecutionResult's tool calls, against the ConfirmationRequests of its attempt."""

    def __init__(
        self,
        env: Envelope,
        requests: deque[Envelope],
        answers: dict[str, ConfirmationDecision],
        report: VerifyReport,
        request: str | None = None,
        subtask: SubTask | None = None,
    ) -> None:
        self.env = env
        self.request = request  # the task's text (TaskRequest), None when not logged
        self.subtask = subtask  # the SubTask the attempt served (its reading), if logged
        self.result: ExecutionResult = env.body
        self.requests = requests
        self.answers = answers
        self.report = report

    def mismatch(self, seq: int, kind: str, name: str, logged: Any, recomputed: Any) -> None:
        mismatch(self.report, seq, kind, name, logged, recomputed, self.env.task_id)

    def run(self) -> None:
        calls = self.result.tool_calls
        legacy = sum(1 for c in calls if _legacy(c))
        if not legacy and self.requests:  # a request no logged decision can have asked
            legacy = sum(1 for c in calls if c.tool in _GATED and not c.law1)
        if legacy:  # its requests cannot be matched to calls: none of it is checked
            self.report.skipped["law1"] += legacy
            return
        for i, call in enumerate(self.result.tool_calls):
            if call.law1:
                self.call(i, call)
        for left in self.requests:
            self.mismatch(left.seq, "ConfirmationRequest", "(asked)", True, False)

    def call(self, i: int, call: ToolCall) -> None:
        where = f"tool_calls[{i}]"
        denied: Law1Check | None = None
        for j, logged in enumerate(call.law1):
            if denied is not None:  # fail closed: nothing is judged after a denial
                self.mismatch(self.env.seq, "ExecutionResult", f"{where}.law1[{j}]", logged, None)
                continue
            redo = recompute_law1(logged, call, self.subtask)
            if redo is None:
                self.report.skipped["law1"] += 1
                decision = logged
            else:
                self.report.checked["law1"] += 1
                a, b = msgspec.to_builtins(logged), msgspec.to_builtins(redo)
                for key in a.keys() | b.keys():
                    if a.get(key) != b.get(key):
                        self.mismatch(
                            self.env.seq,
                            "ExecutionResult",
                            f"{where}.law1[{j}].{key}",
                            a.get(key),
                            b.get(key),
                        )
                decision = redo
            if decision.basis == "scope" and not decision.ask and decision.reason:
                denied = decision  # refused unasked, out of the reading's scope
            elif decision.ask and call.refusal == "lost_lines":
                self.unasked(where, call)  # refused unasked: no request was logged
                denied = decision
            elif decision.ask and not self.confirmed(where, call, decision):
                denied = decision
        self.report.checked["law1_confirm"] += 1
        if denied is not None:
            unasked = denied.basis == "scope" and not denied.ask
            allowed = ("out_of_scope",) if unasked else ("law1_denied", "lost_lines")
            if call.refusal not in allowed:
                self.mismatch(
                    self.env.seq, "ExecutionResult", f"{where}.refusal", call.refusal, allowed[0]
                )
            by_effect = denied.basis in BY_EFFECT
            ran = call.exit_code is not None or (not by_effect and bool(call.effects))
            if ran:  # a denied command never runs (a denied sandboxed one is discarded)
                self.mismatch(self.env.seq, "ExecutionResult", f"{where}.(ran)", True, False)
        elif call.refusal in ("law1_denied", "out_of_scope"):
            self.mismatch(self.env.seq, "ExecutionResult", f"{where}.refusal", call.refusal, None)

    def unasked(self, where: str, call: ToolCall) -> None:
        """A ``lost_lines`` refusal: a rule of policy 0 (it read the request's words
        against the lines a change lost), retired with it — taken as logged."""
        self.report.retired["law1_confirm"] += 1

    def confirmed(self, where: str, call: ToolCall, decision: Law1Check) -> bool:
        """Match the next ConfirmationRequest to ``decision``; True when it was approved."""
        if not self.requests:
            self.mismatch(
                self.env.seq, "ExecutionResult", f"{where}.(ConfirmationRequest)", None, decision
            )
            return False
        env = self.requests.popleft()
        request: ConfirmationRequest = env.body
        expected = {
            "tool": call.tool,
            "args": call.args,
            "reason": decision.reason,
            "target": decision.target,
            "effects": call.effects if decision.basis in BY_EFFECT else (),
        }
        for key, value in expected.items():
            logged = getattr(request, key)
            if msgspec.to_builtins(logged) != msgspec.to_builtins(value):
                self.mismatch(env.seq, "ConfirmationRequest", key, logged, value)
        answer = self.answers.get(request.request_id)
        return answer is not None and answer.approved
