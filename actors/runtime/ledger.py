"""The cost ledger: one pure function from a task's LLMCall records to its Cost.

Used by the GGS (``FinalResult.cost``) and so by the System (``TaskHandle.usage``): one
ledger, no second count beside it. The paper's two costs (§10): model calls and tokens,
and the sequential chain — calls outside any subtask count one by one, and of the
subtasks that run side by side in one group only the one with the most calls counts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from artoo.schemas import Cost, LLMCall

__all__ = ["CallRecord", "task_cost"]


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
