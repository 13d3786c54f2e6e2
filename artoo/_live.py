"""The live view of ``artoo run``: what the task is doing, as it happens.

One line (or a few) per envelope that means something to an operator — the task's
reading and criteria, the plan's subtasks, each tool command the Executor is about to
run, verdicts, each GGS decision — and, on a terminal, a spinner with the elapsed time
below them (model calls take seconds and log nothing until they end).
:func:`describe` is pure: an envelope → the lines it shows.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any

from rich.console import Console, RenderableType
from rich.text import Text

from artoo.schemas import (
    ConfirmationRequest,
    CorrectionSignal,
    DispatchManifest,
    Envelope,
    EscalationTicket,
    ExecutionResult,
    GGSDecision,
    LLMCall,
    OutcomeSummary,
    RoleFailed,
    SubTaskOutcome,
    TaskSpec,
    Verdict,
)

__all__ = ["LiveView", "describe", "shorten", "summary_of"]

_WIDTH = 100
_CONTROL = {c: f"\\x{c:02x}" for c in (*range(0x00, 0x20), *range(0x7F, 0xA0)) if c not in (9,)}


def shorten(text: str, width: int = _WIDTH) -> str:
    """``text`` on one line, cut at a word boundary with an ellipsis when too long."""
    flat = " ".join(str(text).split())
    if len(flat) <= width:
        return flat
    cut = flat[: width - 1]
    space = cut.rfind(" ")
    if space > width // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:") + "…"


def summary_of(status: str, summary: str) -> str:
    """A FinalResult's summary without a leading repeat of its status (``accept: …``)."""
    head = f"{status}:"
    return summary[len(head) :].lstrip() if summary.startswith(head) else summary


def _t(text: str, style: str = "") -> Text:
    return Text(str(text).translate(_CONTROL), style=style)


def _verdict(v: Verdict, indent: str) -> Text:
    mark, style = ("✓", "green") if v.passed else ("✗", "red")
    line = _t(f"{indent}{mark} {v.criterion_id} ", style)
    line.append_text(_t(f"({v.signal}) {shorten(v.evidence, 80)}".rstrip(), "dim"))
    return line


def _command(call: dict[str, Any]) -> str:
    name = str(call.get("name", "?"))
    args = call.get("arguments", {})
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except json.JSONDecodeError:
            args = {"arguments": args}
    if name == "shell" and isinstance(args, dict) and "command" in args:
        return f"$ {args['command']}"
    shown = (
        ", ".join(f"{k}={v!r}" for k, v in (args or {}).items()) if isinstance(args, dict) else ""
    )
    return f"{name}({shown})"


def describe(env: Envelope) -> list[Text]:
    """The lines the live view shows for ``env`` (none for bookkeeping messages)."""
    body = env.body
    if isinstance(body, TaskSpec):
        lines = [_t("task: ", "bold") + _t(shorten(body.intent))]
        lines += [_t(f"  criterion {c.id}: {shorten(c.text, 80)}", "dim") for c in body.criteria]
        return lines
    if isinstance(body, DispatchManifest):
        lines = [_t(f"plan (round {body.round}):", "bold")]
        lines += [_t(f"  must not: {shorten(m, 80)}", "yellow") for m in body.must_not]
        lines += [_t(f"  prefer: {shorten(m, 80)}", "cyan") for m in body.should_prefer]
        lines += [
            _t(f"  {i}. {shorten(st.instruction, 90)}")
            for i, st in enumerate(body.subtasks, start=1)
        ]
        return lines
    if isinstance(body, LLMCall):
        if body.refused:
            return [_t(f"  model call of {body.role} not made: {body.refused} spent", "red")]
        if body.error:
            return [_t(f"  model error ({body.role}): {shorten(body.error, 80)}", "red")]
        return [_t(f"  {_command(call)}", "cyan") for call in body.tool_calls]
    if isinstance(body, ExecutionResult):
        failed = [c for c in body.tool_calls if not c.ok]
        return [
            _t(f"    {c.tool} failed: {shorten(c.error or c.refusal or '', 80)}", "red")
            for c in failed
        ]
    if isinstance(body, CorrectionSignal) and body.corroborate:
        value = shorten(body.corroborate, 60)
        if body.unbacked:  # no tool result showed it
            return [_t(f"  {value} asked to be computed with a tool", "cyan")]
        return [_t(f"  second derivation of {value} asked", "cyan")]
    if isinstance(body, CorrectionSignal):
        return [_t(f"  retry: {shorten(body.feedback, 90)}", "yellow")]
    if isinstance(body, SubTaskOutcome):
        style = "green" if body.status == "matched" else "red"
        lines = [_t(f"  subtask {body.status}", style)]
        lines += [_verdict(v, "    ") for v in body.verdicts]
        return lines
    if isinstance(body, OutcomeSummary):
        return [_verdict(v, "  ") for v in body.task_verdicts]
    if isinstance(body, GGSDecision):
        line = _t(f"GGS round {body.round}: ", "bold") + _t(body.directive, "magenta")
        line.append_text(
            _t(f"  D={body.d:.2f} P={body.p:.2f} Ω={body.omega:.2f} L={body.loss:.2f}", "dim")
        )
        return [line]
    if isinstance(body, ConfirmationRequest):
        return [_t(f"confirmation needed: {shorten(body.action, 90)}", "yellow")]
    if isinstance(body, EscalationTicket):
        return [_t(f"ticket ({body.severity}): {shorten(body.summary, 90)}", "yellow")]
    if isinstance(body, RoleFailed):
        return [_t(f"role {body.role} crashed: {shorten(body.error, 80)}", "red")]
    return []


class _Elapsed:
    """The spinner's text: recomputed at every refresh."""

    def __init__(self, started: float, clock: Callable[[], float]) -> None:
        self.started = started
        self.clock = clock
        self.doing = "reading the task"

    def __rich__(self) -> RenderableType:
        return Text(f"{self.doing} · {self.clock() - self.started:.1f} s", style="dim")


class LiveView:
    """Prints :func:`describe`'s lines for each envelope; on a terminal, a spinner with
    the elapsed time stays below them until :meth:`stop`."""

    def __init__(
        self,
        console: Console,
        *,
        clock: Callable[[], float] = time.monotonic,
        spinner: bool | None = None,
    ) -> None:
        self.console = console
        self._lock = threading.Lock()
        self._elapsed = _Elapsed(clock(), clock)
        use_spinner = console.is_terminal if spinner is None else spinner
        self._status = console.status(self._elapsed) if use_spinner else None

    def start(self) -> None:
        """Show the spinner (on a terminal)."""
        if self._status is not None:
            self._status.start()

    def stop(self) -> None:
        """Remove the spinner."""
        if self._status is not None:
            self._status.stop()

    def __call__(self, env: Envelope) -> None:
        """Show ``env`` (a subscriber callback)."""
        lines = describe(env)
        with self._lock:
            self._elapsed.doing = _doing(env, self._elapsed.doing)
            for line in lines:
                self.console.print(line, overflow="fold")


def _doing(env: Envelope, before: str) -> str:
    body = env.body
    if isinstance(body, TaskSpec):
        return "planning"
    if isinstance(body, DispatchManifest):
        return "executing the plan"
    if isinstance(body, SubTaskOutcome):
        return "validating"
    if isinstance(body, GGSDecision):
        return "deciding the next round"
    return before
