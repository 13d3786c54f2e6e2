"""R3 Executor — the plant of the fast loop: runs one subtask with tools.

Responsibilities:
    For one addressed SubTask, run a tool-calling loop with the tool-tier model: offer
    the tools (minus the blocked ones), run each call through the ToolRegistry (which
    confines files to the workspace, refuses blocked targets and gates Law 1), feed the
    results back, and stop at the model's final answer. A retry (CorrectionSignal)
    continues the same conversation with the validator's feedback.

Input contract:
    SubTask and CorrectionSignal, both addressed ``to`` this pair.

Output contract:
    ExecutionResult (with every structured ToolCall); ConfirmationRequest for an
    irreversible action (Law 1), whose ConfirmationDecision it waits for.

Constraints:
    Does NOT judge its own output; does NOT query memory (its context comes from the
    Planner through SubTask.context); does NOT call a blocked tool or touch a blocked
    target; at most ``max_turns`` model turns per attempt; the same call three times in
    a row ends the attempt as a doom loop.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from artoo.schemas import (
    ConfirmationDecision,
    ConfirmationRequest,
    CorrectionSignal,
    Envelope,
    ExecutionResult,
    FinalResult,
    Message,
    SubTask,
    ToolCall,
)

from .base import Role
from .llm import LLMError, LLMRequest, assistant_message, tool_message
from .tools import ToolRegistry

__all__ = ["DOOM_REPEATS", "Executor", "is_doom_loop", "subtask_prompt"]

DOOM_REPEATS = 3

SYSTEM_PROMPT = """You are an Executor of artoo. Carry out the subtask with the tools offered,
then answer with the result in plain text (no tool call). Report exactly what the tools
returned; never claim what you did not do."""


def subtask_prompt(st: SubTask) -> str:
    """The user message that states a subtask (pure)."""
    parts = [f"Subtask: {st.instruction}"]
    if st.criteria:
        parts.append("Success criteria:\n" + "\n".join(f"- {c.text}" for c in st.criteria))
    if st.context:
        parts.append(st.context)
    if st.blocked_tools or st.blocked_targets:
        parts.append("MUST NOT use: " + ", ".join([*st.blocked_tools, *st.blocked_targets]))
    return "\n\n".join(parts)


def is_doom_loop(calls: list[tuple[str, str]], repeats: int = DOOM_REPEATS) -> bool:
    """True when the last ``repeats`` calls are the same (name, arguments)."""
    return len(calls) >= repeats and len(set(calls[-repeats:])) == 1


@dataclass
class _Run:
    subtask: SubTask
    task_id: str
    cause: int
    messages: list[dict[str, Any]] = field(default_factory=list)
    attempt: int = 0


class Executor(Role):
    """The Executor actor (one per effector pair)."""

    name: ClassVar[str] = "executor"
    consumes: ClassVar[tuple[type[Message], ...]] = ()
    addressed: ClassVar[tuple[type[Message], ...]] = (SubTask, CorrectionSignal)

    def __init__(self, ctx, instance=None) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx, instance)
        self.runs: dict[str, _Run] = {}
        self._decisions: dict[str, ConfirmationDecision] = {}
        self._ended: set[str] = set()
        self._tap: Any = None

    def active_tasks(self) -> list[str]:
        return sorted({r.task_id for r in self.runs.values()})

    def forget_task(self, task_id: str) -> None:
        for sid in [s for s, r in self.runs.items() if r.task_id == task_id]:
            del self.runs[sid]

    # ------------------------------------------------------------------ handlers
    def on_sub_task(self, env: Envelope) -> None:
        st: SubTask = env.body
        run = _Run(subtask=st, task_id=env.task_id or "", cause=env.seq)
        run.messages = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": subtask_prompt(st)},
        ]
        self.runs[st.subtask_id] = run
        self._attempt(run)

    def on_correction_signal(self, env: Envelope) -> None:
        body: CorrectionSignal = env.body
        run = self.runs.get(body.subtask_id)
        if run is None:
            return
        run.cause = env.seq
        run.messages.append(
            {"role": "user", "content": f"The validator rejected the result: {body.feedback}"}
        )
        self._attempt(run)

    # ------------------------------------------------------------------ the loop
    def _registry(self, run: _Run) -> ToolRegistry:
        store = self.ctx.store or Path(self.ctx.workspace) / ".artoo"
        reg = ToolRegistry(
            Path(self.ctx.workspace),
            Path(store) / "spill",
            blocked_targets=tuple(run.subtask.blocked_targets),
            confirm=lambda needed: self._confirm(run, needed),
        )
        for fn in self.ctx.services.get("host_tools", ()):
            reg.register(fn)
        return reg

    def _attempt(self, run: _Run) -> None:
        # while an attempt runs the mailbox is not read: a tap brings the confirmations and
        # task ends it must see (opened per attempt, so an idle pair holds nothing)
        self._tap = self.ctx.bus.tap(maxsize=1_000, kinds=[ConfirmationDecision, FinalResult])
        try:
            self._run_attempt(run)
        finally:
            self._tap.close()
            self._tap = None
            self._decisions.clear()
            self._ended.clear()

    def _run_attempt(self, run: _Run) -> None:
        run.attempt += 1
        st = run.subtask
        registry = self._registry(run)
        blocked = set(st.blocked_tools)
        specs = [s for s in registry.specs() if s.name not in blocked]
        if st.tools:
            wanted = set(st.tools) | {"load_data"}
            specs = [s for s in specs if s.name in wanted] or specs
        calls: list[ToolCall] = []
        seen: list[tuple[str, str]] = []
        output, error = "", None
        for _turn in range(self.ctx.config.max_turns):
            if self._task_ended(run.task_id):
                error = "task ended"
                break
            request = LLMRequest(
                role=self.name,
                tier="tool",
                messages=list(run.messages),
                tools=specs,
                task_id=run.task_id,
                subtask_id=st.subtask_id,
            )
            try:
                response = self.ctx.gateway.complete(request)  # type: ignore[union-attr]
            except LLMError as exc:
                error = f"model call failed: {exc}"
                break
            if not response.tool_calls:
                output = response.content or ""
                run.messages.append({"role": "assistant", "content": output})
                break
            run.messages.append(assistant_message(response))
            doom = False
            for tc in response.tool_calls:
                seen.append((tc.name, json.dumps(tc.arguments, sort_keys=True)))
                if tc.name in blocked:
                    call = ToolCall(
                        tool=tc.name,
                        args=dict(tc.arguments),
                        ok=False,
                        error=f"blocked tool {tc.name} (MUST NOT)",
                        subtask_id=st.subtask_id,
                        attempt=run.attempt,
                    )
                    content = f"error: {call.error}"
                else:
                    outcome = registry.call(
                        tc.name, dict(tc.arguments), subtask_id=st.subtask_id, attempt=run.attempt
                    )
                    call, content = outcome.call, outcome.content
                calls.append(call)
                run.messages.append(tool_message(tc.id, content))
                if is_doom_loop(seen):
                    doom = True
                    break
            if doom:
                error = f"doom loop: the same call {seen[-1][0]} {DOOM_REPEATS} times in a row"
                break
        else:
            error = f"turn cap reached ({self.ctx.config.max_turns} turns)"
        self.publish(
            ExecutionResult(
                subtask_id=st.subtask_id,
                round=st.round,
                attempt=run.attempt,
                ok=error is None,
                output=output,
                tool_calls=calls,
                error=error,
            ),
            task_id=run.task_id,
            to=self.instance,
            cause=run.cause,
        )

    # ------------------------------------------------------------------ Law 1 and task ends
    def _poll(self, timeout: float | None) -> None:
        env = self._tap.get(timeout=timeout) if self._tap is not None else None
        while env is not None:
            body = env.body
            if isinstance(body, ConfirmationDecision):
                self._decisions[body.request_id] = body
            elif isinstance(body, FinalResult):
                self._ended.add(body.task_id)
            env = self._tap.get(timeout=0)

    def _task_ended(self, task_id: str) -> bool:
        self._poll(0)
        return task_id in self._ended

    def _confirm(self, run: _Run, needed: Any) -> bool:
        request_id = self.ctx.new_id()
        timeout = self.ctx.config.confirmation_timeout_s
        self.publish(
            ConfirmationRequest(
                request_id=request_id,
                action=str(getattr(needed, "action", "") or getattr(needed, "command", "")),
                reason=str(getattr(needed, "reason", "irreversible action")),
                tool=str(getattr(needed, "tool", "")),
                args=dict(getattr(needed, "args", {}) or {}),
                target=getattr(needed, "target", None),
                subtask_id=run.subtask.subtask_id,
                timeout_s=timeout,
            ),
            task_id=run.task_id,
            cause=run.cause,
        )
        deadline = time.monotonic() + timeout + 5.0  # the Queen answers by ``timeout``
        while request_id not in self._decisions:
            if run.task_id in self._ended:
                return False
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            self._poll(min(remaining, 0.5))
        return self._decisions.pop(request_id).approved
