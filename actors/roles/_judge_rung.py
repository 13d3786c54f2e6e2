"""The Judge's model rung and its escalation rules: pure functions, one model call.

Which cases the coded rules mark **ambiguous** (they neither ticket nor dismiss them):

- ``varying_repeat``: the same tool with the same arguments called ``repeat_limit`` times
  in a row whose results are NOT all the same — polling (healthy) or a loop whose output
  drifts (a timestamp, a counter)? Identical results are a doom loop (unambiguous).
- ``plateau``: the GGS's loss has not improved on its best for ``plateau_rounds`` rounds
  in a row while the task keeps working — slow progress or no progress?

Only these are put to the brain-tier model (``Config.judge.model_rung``, default off: it
costs a call and needs a brain model), at most once per (task, case). The answer is one
:class:`Opinion` (``verdict`` healthy/degraded, ``reason``); :func:`ask_opinion` never
raises and fails closed: an exception, a refusal (the task's budget), an unparsable or
invalid answer is an :class:`OpinionOutcome` with ``error_kind`` set, which the Judge
tickets like ``degraded``.

Escalation to **critical** (:func:`stall_severity`, :func:`doom_severity`): a stall of
``stall_critical_s`` (default 4 × ``stall_s``: Hive's 4 minutes at the default), and a
doom loop that goes on to ``doom_critical × repeat_limit`` identical calls in a row.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, Literal

import msgspec

from artoo.actors.llm import LLMRequest, LLMResponse, ask_structured
from artoo.actors.llm._budget import BudgetSpent

__all__ = [
    "ErrorKind",
    "Opinion",
    "OpinionOutcome",
    "ask_opinion",
    "doom_severity",
    "opinion_request",
    "plateau",
    "run_length",
    "stall_severity",
    "varying_repeat",
]

ErrorKind = Literal["error", "refused", "timeout", "unparsable"]
Case = Literal["varying_repeat", "plateau"]


# --------------------------------------------------------------------------- ambiguity
def varying_repeat(args: Sequence[Hashable], results: Sequence[Hashable], limit: int) -> bool:
    """True when the last ``limit`` calls share tool and arguments (``args``) but their
    results (``results``, the full call keys) are not all identical."""
    if len(args) < limit or len(results) < limit:
        return False
    last = args[-1]
    if any(a != last for a in args[-limit:]):
        return False
    return len(set(results[-limit:])) > 1


def plateau(losses: Sequence[float], rounds: int) -> bool:
    """True when none of the last ``rounds`` losses is below the best loss before them
    (lower is better; there must be at least one earlier loss)."""
    if rounds < 1 or len(losses) <= rounds:
        return False
    return min(losses[-rounds:]) >= min(losses[:-rounds])


# --------------------------------------------------------------------------- escalation
def run_length(keys: Sequence[Hashable]) -> int:
    """How many keys at the end are identical to the last one (0 for none)."""
    if not keys:
        return 0
    last, n = keys[-1], 0
    for k in reversed(keys):
        if k != last:
            break
        n += 1
    return n


def stall_severity(
    silent_s: float, stall_s: float, critical_s: float | None
) -> Literal["high", "critical"] | None:
    """A silence's severity: None under ``stall_s``; critical from ``critical_s``
    (None: 4 × ``stall_s``); high between."""
    limit = 4 * stall_s if critical_s is None else critical_s
    if silent_s >= max(limit, stall_s):
        return "critical"
    if silent_s >= stall_s:
        return "high"
    return None


def doom_severity(run: int, limit: int, critical: int) -> Literal["high", "critical"] | None:
    """A run of ``run`` identical calls: high from ``limit``, critical from
    ``critical × limit``."""
    if run >= critical * limit:
        return "critical"
    if run >= limit:
        return "high"
    return None


# --------------------------------------------------------------------------- the call
class Opinion(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The model's answer on one ambiguous case."""

    verdict: Literal["healthy", "degraded"]
    reason: str


class OpinionOutcome(msgspec.Struct, frozen=True, kw_only=True):
    """What the rung ended with: an :class:`Opinion`, or the kind of failure (fail closed)."""

    opinion: Opinion | None = None
    error_kind: ErrorKind | None = None
    error: str = ""


class _Watch:
    """A gateway proxy that remembers a budget refusal (ask_structured folds every
    LLMError into one failure; the Judge names a refusal as such)."""

    def __init__(self, gateway: Any) -> None:
        self.gateway = gateway
        self.refused: BudgetSpent | None = None

    def complete(self, request: LLMRequest) -> LLMResponse:
        try:
            response: LLMResponse = self.gateway.complete(request)
        except BudgetSpent as spent:
            self.refused = spent
            raise
        return response


def ask_opinion(gateway: Any, request: LLMRequest) -> OpinionOutcome:
    """Ask for an :class:`Opinion` (one repair on an invalid answer); never raises."""
    watch = _Watch(gateway)
    try:
        answer = ask_structured(watch, request, Opinion)
    except Exception as exc:  # a gateway or backend bug: fail closed
        return OpinionOutcome(error_kind="error", error=f"{type(exc).__name__}: {exc}")
    if answer.ok and answer.value is not None:
        return OpinionOutcome(opinion=answer.value)
    if watch.refused is not None:
        return OpinionOutcome(error_kind="refused", error=str(watch.refused))
    if answer.raw is None:  # no answer came: the call failed
        return OpinionOutcome(error_kind="error", error=answer.error or "model call failed")
    return OpinionOutcome(error_kind="unparsable", error=answer.error or "no valid answer")


def opinion_request(task_id: str, case: Case, facts: str) -> LLMRequest:
    """The request put to the brain tier for one ambiguous case."""
    question = {
        "varying_repeat": "The same tool call (same arguments) was made several times in a "
        "row and its results differ. Is this healthy polling or progress, or a loop?",
        "plateau": "The task keeps working but its goal gap (loss, lower is better) has "
        "not improved for several rounds. Is it still progressing, or stuck?",
    }[case]
    return LLMRequest(
        role="judge",
        tier="brain",
        task_id=task_id,
        messages=[
            {
                "role": "system",
                "content": "You are the health Judge of artoo, an agent runtime. Coded rules "
                "found a case they cannot decide. Answer healthy or degraded, with a short "
                "reason.",
            },
            {"role": "user", "content": f"{question}\n\n{facts}"},
        ],
    )
