"""Serving a recorded task's answers: model calls, tool calls, confirmations and verdicts
from its log, with the map of a re-execution's ids to the recorded ones.

Used by ``artoo replay --rerun`` (:mod:`._rerun`), by a fork that goes on live
(:mod:`._fork`) and by the resume of a task a stopped process left open
(:mod:`artoo._resume`): each serves what the log holds and, past the first call the log
cannot answer, goes live (a fork, a resume) or stops (a rerun).
"""

from __future__ import annotations

import threading
from collections import defaultdict, deque
from collections.abc import Callable
from typing import Any

import msgspec

from artoo.actors.roles.executor import AFTER_RESULT
from artoo.actors.runtime.role import VerdictKey
from artoo.actors.tools import Confirm, ConfirmationNeeded, ToolOutcome, ToolRunner
from artoo.schemas import (
    ConfirmationRequest,
    CorrectionSignal,
    DispatchManifest,
    Envelope,
    ExecutionResult,
    FinalResult,
    LLMCall,
    OutcomeSummary,
    ReplanRequest,
    SubTaskOutcome,
    TaskResumed,
    TaskSpec,
    ToolCall,
    ToolCallEnded,
    Verdict,
)

from ._read import TaskLog

__all__ = ["_Served", "_ServedTools"]

_EXECUTOR_REFUSALS = frozenset(
    {"blocked_tool", "repeated_failure", "caution_denied", "repeated_call"}
)
"""Refusals the Executor makes itself, without asking its tool runner: a rerun's Executor
makes them again (or, differing, diverges on its own), so they are never a served call —
served, the call after one in its attempt would meet the refused one and be "not in the
log"."""


# --------------------------------------------------------------------------- serving
class _Served:
    """One recorded task's answers: model calls, tool calls, confirmations, and the map of
    the rerun's ids to the recorded ones."""

    def __init__(self, task: TaskLog, *, what_if: bool = False) -> None:
        self.task = task
        self.what_if = what_if
        self.cancel: Callable[[], Any] | None = None  # the rerun task's cancel, once submitted
        self.submitted = threading.Event()
        self.ended = threading.Event()  # the rerun task's FinalResult was published
        self.live: Any = None  # a fork's live model (an LLMBackend): see _fork
        self.live_model = ""  # its model string, recorded on the calls it answers
        self.resuming = False  # a resume: past the record, tools run for real
        self.gone_live = False  # a fork left the record: every call from now on is live
        self.answered = threading.local()  # .live: this thread's last call went live
        self.lock = threading.Condition()
        self.model: dict[tuple[str, str], deque[LLMCall]] = defaultdict(deque)
        self.model_ts: dict[int, float] = {}  # id(recorded LLMCall) -> when it was logged
        self.clock: Any = None  # a rerun's ManualClock: it follows the recorded answers
        self.clock_lock = threading.Lock()
        # (subtask, attempt) -> its calls, each with the text the model was shown (None: a
        # log older than ToolCallEnded, where it is recovered from the model's next request)
        self.tools: dict[tuple[str, int], deque[tuple[ToolCall, str | None]]] = defaultdict(deque)
        self.asked: dict[str, list[ConfirmationRequest]] = defaultdict(list)
        self.shown: dict[str, str] = {}  # tool_call_id -> the text the model was shown
        self.manifests: dict[int, DispatchManifest] = {}
        self.ids: dict[str, str] = {}  # rerun id -> recorded id
        self.verdicts: dict[VerdictKey, Verdict] = {}  # the logged verdicts
        self.unanswered: list[str] = []
        # a log with ToolCallEnded records serves them; an older one, ExecutionResult's calls
        events = any(isinstance(e.body, ToolCallEnded) for e in task.envelopes)
        stopped = 0.0  # the time the task was stopped before a resume does not count
        for env in task.envelopes:
            body = env.body
            if isinstance(body, TaskResumed):
                stopped += body.stopped_s
            elif isinstance(body, LLMCall):
                self.model[(body.role, body.subtask_id)].append(body)
                self.model_ts[id(body)] = env.ts - stopped
                for message in body.request.get("messages", []):
                    if isinstance(message, dict) and message.get("role") == "tool":
                        shown = str(message.get("content"))
                        # logs of an earlier Executor end each result with the hint; the
                        # tool's own result is what comes before it
                        shown = shown.removesuffix(f"\n\n{AFTER_RESULT}")
                        self.shown[str(message.get("tool_call_id"))] = shown
            elif isinstance(body, ToolCallEnded):
                call = body.call
                if call.refusal not in _EXECUTOR_REFUSALS:
                    self.tools[(call.subtask_id, call.attempt)].append((call, body.shown))
            elif isinstance(body, ExecutionResult) and not events:
                for call in body.tool_calls:
                    if call.refusal not in _EXECUTOR_REFUSALS:
                        self.tools[(body.subtask_id, body.attempt)].append((call, None))
            elif isinstance(body, CorrectionSignal | SubTaskOutcome):
                for v in [*body.verdicts, *getattr(body, "history", [])]:
                    key = VerdictKey(v.criterion_id, subtask_id=body.subtask_id, attempt=v.attempt)
                    self.verdicts[key] = v
            elif isinstance(body, ReplanRequest | OutcomeSummary):
                for v in body.task_verdicts:
                    self.verdicts[VerdictKey(v.criterion_id, round=body.round)] = v
            elif isinstance(body, ConfirmationRequest):
                self.asked[body.subtask_id].append(body)
            elif isinstance(body, DispatchManifest):
                self.manifests.setdefault(body.round, body)

    def verdict(self, key: VerdictKey) -> Verdict | None:
        """The logged verdict of a check that reads the workspace (the rerun has none);
        None once a fork went live (the check then reads the fork's workspace)."""
        if self.gone_live:
            return None
        if key.subtask_id:
            key = key._replace(subtask_id=self.recorded(key.subtask_id))
        return self.verdicts.get(key)

    def reading(self) -> TaskSpec | None:
        """The logged TaskSpec (what the reading saw of the recorded workspace); None once
        a fork went live."""
        if self.gone_live:
            return None
        return next((e.body for e in self.task.envelopes if isinstance(e.body, TaskSpec)), None)

    def recorded(self, new_id: str) -> str:
        """The recorded id of a rerun subtask id (a rerun waits briefly for its manifest;
        a resume learns ids as the bus commits, before anyone sees them: no wait)."""
        if not new_id:
            return ""
        with self.lock:
            if not self.resuming:
                self.lock.wait_for(lambda: new_id in self.ids, timeout=5.0)
            return self.ids.get(new_id, new_id)

    def on_envelope(self, env: Envelope) -> None:
        """Learn the rerun's ids from its plans, and see its end (a tap on the rerun's
        bus)."""
        if isinstance(env.body, FinalResult):
            self.ended.set()
        if not isinstance(env.body, DispatchManifest):
            return
        recorded = self.manifests.get(env.body.round)
        if recorded is None:
            return
        with self.lock:
            for new, old in zip(env.body.subtasks, recorded.subtasks, strict=False):
                self.ids[new.subtask_id] = old.subtask_id
            self.lock.notify_all()

    def _follow(self, ts: float | None) -> None:
        """Move the rerun's clock to when the served answer was logged: the task's age at
        each decision (Ω, and so L) is then the recorded one, not that of a rerun that
        takes no time (on a loaded machine the difference showed in Ω's third decimal)."""
        clock = self.clock
        if clock is None or ts is None:
            return
        with self.clock_lock:
            ahead = ts - clock.now()
            if ahead > 0:
                clock.advance(ahead)

    def _stop(self) -> None:
        """A what-if stops where the log holds no answer: the first unanswerable call
        cancels the rerun task, so nothing after it is made up from a failed call (the GGS
        ends the task with its one FinalResult; the path shows the decisions before)."""
        if not self.what_if:
            return
        if len(self.unanswered) == 1:
            self.submitted.wait(10.0)
            if self.cancel is not None:
                self.cancel()
        # hold the call until the task has ended, so its failure cannot race the cancel
        self.ended.wait(30.0)

    # ---- the model
    def complete(self, request: Any, live: Any = None) -> Any:
        """The recorded answer of ``request``; past the record, ``live`` (a resume's
        backend of the request's tier) or the fork's :attr:`live` model answers."""
        from artoo.actors.llm import LLMError, LLMResponse, ToolCallRequest

        live = live if live is not None else self.live
        self.answered.live = self.gone_live
        if self.gone_live:
            return live.complete(request)
        subtask = self.recorded(request.subtask_id)
        with self.lock:
            queue = self.model.get((request.role, subtask))
            call = queue.popleft() if queue else None
        if call is None:
            what = f"model call of {request.role}" + (f" for subtask {subtask}" if subtask else "")
            self.unanswered.append(f"no recorded answer: {what}")
            if live is not None:  # a fork, a resume: from here on the live model answers
                self.gone_live = self.answered.live = True
                return live.complete(request)
            self._stop()
            raise LLMError(f"no recorded call: {what}")
        self._follow(self.model_ts.get(id(call)))
        if call.error is not None:
            raise LLMError(call.error)
        return LLMResponse(
            content=call.response,
            tool_calls=msgspec.convert(call.tool_calls, list[ToolCallRequest]),
            usage=dict(call.usage),
            model=call.model,
        )

    # ---- the tools
    def runner(self, live: ToolRunner, *, task_id: str, confirm: Confirm) -> ToolRunner:
        """One attempt's tool runner (a :class:`ToolRunnerFactory`): the recorded calls,
        then ``live`` once a fork has left the record."""
        return _ServedTools(self, live, confirm)

    def tool(
        self, subtask_id: str, attempt: int, name: str, args: dict[str, Any], confirm: Confirm
    ) -> ToolOutcome | None:
        """The recorded outcome of a call; None once a fork went live (the tool runs)."""
        if self.gone_live:
            return None  # a fork that left the record: the Executor runs the tool for real
        subtask = self.recorded(subtask_id)
        with self.lock:
            queue = self.tools.get((subtask, attempt))
            served = queue.popleft() if queue else None
        call, shown = served if served is not None else (None, None)
        if call is None or call.tool != name or call.args != args:
            what = f"tool call {name} {args} (subtask {subtask}, attempt {attempt})"
            self.unanswered.append(f"not in the log: {what}")
            if self.live is not None or self.resuming:
                self.gone_live = True
                return None
            self._stop()
            refused = ToolCall(
                tool=name,
                args=args,
                ok=False,
                error=f"replay: {what} is not in the log",
                subtask_id=subtask_id,
                attempt=attempt,
            )
            return ToolOutcome(call=refused, content=f"error: {refused.error}")
        asked = (
            None  # refused unasked: a later call with the same arguments asked
            if call.refusal == "lost_lines"
            else next(
                (r for r in self.asked[subtask] if r.args == args and r.gate != "caution"), None
            )
        )
        if asked is not None:
            self.asked[subtask].remove(asked)
            confirm(
                ConfirmationNeeded(
                    tool=asked.tool,
                    args=dict(asked.args),
                    target=asked.target,
                    reason=asked.reason,
                    action=asked.action,
                    subtask_id=subtask_id,
                    attempt=attempt,
                    effects=tuple(asked.effects),
                )
            )
        content = shown if shown is not None else self._shown(call)
        return ToolOutcome(
            call=msgspec.structs.replace(call, subtask_id=subtask_id), content=content
        )

    def _shown(self, call: ToolCall) -> str:
        """What the model was shown, in a log older than ToolCallEnded: the tool message
        of the model's next request."""
        for env in self.task.envelopes:  # the model's call id of this tool call
            body = env.body
            if isinstance(body, LLMCall) and body.subtask_id == call.subtask_id:
                for tc in body.tool_calls:
                    if tc.get("name") == call.tool and tc.get("arguments") == call.args:
                        shown = self.shown.get(str(tc.get("id")))
                        if shown is not None:
                            return shown
        return call.output_preview if call.ok else f"error: {call.error}"


class _ServedTools:
    """A :class:`ToolRunner` for one attempt of a rerun: each call served from the record,
    the live registry once a fork has left it."""

    def __init__(self, served: _Served, live: ToolRunner, confirm: Confirm) -> None:
        self.served, self.live, self.confirm = served, live, confirm

    def call(
        self, name: str, args: dict[str, Any], *, subtask_id: str = "", attempt: int = 1
    ) -> ToolOutcome:
        outcome = self.served.tool(subtask_id, attempt, name, args, self.confirm)
        if outcome is None:
            return self.live.call(name, args, subtask_id=subtask_id, attempt=attempt)
        return outcome
