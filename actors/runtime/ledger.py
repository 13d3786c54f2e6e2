"""The ledger: one reading of a task's figures, used by every face that shows them.

:func:`task_cost` (a task's LLMCall records to its Cost) is used by the GGS
(``FinalResult.cost``) and so by the System (``TaskHandle.usage``): one ledger, no second
count beside it. :class:`TaskFigures` is the one per-task projection of the log that the
replay table and diff, the audit report and the Auditor read their figures from, with one
definition of each: a **model call** is an LLMCall that was made (:func:`made`: one the
task's budget refused is recorded, and counted apart as a **refused call**); a **tool call**
is a ToolCallEnded (ExecutionResult's calls in logs older than it); a **convergence
failure** ends with a reason in :data:`CONVERGENCE_ENDS`.

The paper's two costs (§10): model calls and tokens, and the sequential chain — calls
outside any subtask count one by one, and of the subtasks that run side by side in one
group only the one with the most calls counts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from artoo.schemas import (
    Cost,
    ExecutionResult,
    FinalResult,
    GGSDecision,
    LLMCall,
    Message,
    ToolCallEnded,
)

__all__ = ["CONVERGENCE_ENDS", "CallRecord", "TaskFigures", "made", "task_cost", "task_figures"]

CONVERGENCE_ENDS: frozenset[str] = frozenset({"law2", "replan_budget"})
"""The FinalResult reasons that are convergence failures (paper §8: the gap not closing
across correction cycles — thrashing, not converging): Law 2's kill-switch (the loss
worsened twice running) and the replan budget spent. An end by Ω (time or budget) is a
resource end, not one of these; the Auditor also flags a loss that stopped improving while
the task still runs."""


def made(call: LLMCall) -> bool:
    """Whether a logged model call was made: one the task's budget refused was not."""
    return call.refused is None


@dataclass
class TaskFigures:
    """One task's figures, from its messages in seq order (:meth:`see` each)."""

    model_calls: int = 0
    refused_calls: int = 0
    model_errors: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    path: list[str] = field(default_factory=list)
    """The GGS's macro-states in order: one per round decided (a round whose plan was
    rejected is decided too, with no dispatch)."""
    status: str | None = None
    reason: str | None = None
    law1_denied: bool = False
    _ended_calls: int = 0
    _result_calls: int = 0

    @property
    def tokens(self) -> int:
        """Tokens in and out."""
        return self.tokens_in + self.tokens_out

    @property
    def rounds(self) -> int:
        """Rounds decided by the GGS."""
        return len(self.path)

    @property
    def tool_calls(self) -> int:
        """Tool calls: the ToolCallEnded records (an older log's ExecutionResult calls)."""
        return self._ended_calls or self._result_calls

    @property
    def convergence_failure(self) -> bool:
        """The task ended failing to converge (:data:`CONVERGENCE_ENDS`)."""
        return self.reason in CONVERGENCE_ENDS

    def see(self, body: Message) -> None:
        """Count one of the task's messages."""
        if isinstance(body, LLMCall):
            if not made(body):
                self.refused_calls += 1
                return
            self.model_calls += 1
            self.model_errors += body.error is not None
            record = CallRecord.of(body)
            self.tokens_in += record.tokens_in
            self.tokens_out += record.tokens_out
        elif isinstance(body, ToolCallEnded):
            self._ended_calls += 1
        elif isinstance(body, ExecutionResult):
            self._result_calls += len(body.tool_calls)
        elif isinstance(body, GGSDecision):
            self.path.append(body.directive)
        elif isinstance(body, FinalResult):
            self.status, self.reason = body.status, body.reason
            self.law1_denied = body.law1_denied


def task_figures(bodies: Iterable[Message]) -> TaskFigures:
    """The figures of a task whose messages are ``bodies`` (seq order)."""
    figures = TaskFigures()
    for body in bodies:
        figures.see(body)
    return figures


@dataclass(frozen=True, slots=True)
class CallRecord:
    """What the ledger keeps of one LLMCall."""

    subtask_id: str
    tokens_in: int
    tokens_out: int

    @classmethod
    def of(cls, call: LLMCall) -> CallRecord:
        """The record of a logged LLMCall (usage keys as litellm reports them)."""
        return cls(
            subtask_id=call.subtask_id,
            tokens_in=int(call.usage.get("prompt_tokens", 0)),
            tokens_out=int(call.usage.get("completion_tokens", 0)),
        )


def task_cost(
    calls: Iterable[CallRecord],
    groups: Mapping[str, tuple[int, int]],
    elapsed_ms: float,
) -> Cost:
    """A task's Cost from its model calls; ``groups`` maps subtask id → (round, sequence)."""
    per_subtask: dict[str, int] = {}
    loose = tokens_in = tokens_out = count = 0
    for call in calls:
        count += 1
        tokens_in += call.tokens_in
        tokens_out += call.tokens_out
        if call.subtask_id:
            per_subtask[call.subtask_id] = per_subtask.get(call.subtask_id, 0) + 1
        else:
            loose += 1
    per_group: dict[tuple[int, int], int] = {}
    for sid, n in per_subtask.items():
        key = groups.get(sid)
        if key is None:
            loose += n
        else:
            per_group[key] = max(per_group.get(key, 0), n)
    return Cost(
        model_calls=count,
        sequential_calls=loose + sum(per_group.values()),
        tokens_in=tokens_in,
        tokens_out=tokens_out,
        elapsed_ms=elapsed_ms,
    )
