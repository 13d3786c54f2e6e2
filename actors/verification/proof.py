"""How a task's answer was established: by code, or only on a model's word (policy 1).

``FinalResult.established`` says whether what the task claims was proven (docs/proof.md).
The GGS ends a task ``accept`` only when it was (``code``, or ``human``); anything less
ends ``success`` at best. Everything here is pure, over the logged reading (TaskSpec),
verdicts and tool calls, so ``artoo replay --verify`` recomputes it.

- **A question** (kind question or mixed) is proven when two derivations agree on the
  value its answer states: the answer traced to a tool result of this task
  (``answered``), and a second one that never saw the first answer, by another method —
  code wherever the file's format allows (a ``value_at``, ``count_matches`` or
  ``evaluates`` check that derived a value the answer states), else a fresh conversation
  (``SubTaskOutcome.asked``) whose answer states the same value, shown by a call of its
  own by a method the first conversation did not use. Values compare by the shape's
  normalizer (versions as versions, lists as sets).
- **A change** (change, creation or mixed) is proven by its effect: something was applied
  to a target (``changed``), every applied effect lies in the reading's targets or was
  approved by a person, every structured target still parses, and either a value the
  request gives reads back or the workspace's tests ran before and after with no
  regression (``tests``). A change no check read back is never ``accept``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import msgspec

from artoo.schemas import (
    POLICY,
    Check,
    Criterion,
    Established,
    SubTaskOutcome,
    TaskSpec,
    ToolCall,
    Verdict,
)

from ._values import items, normal, same_set, stated, states
from .checks import COMPUTED, computed
from .derive import applied_effects, evaluation_of, method, showing
from .reading import answers

__all__ = ["Ask", "established", "how_established", "second_derivation"]


class Ask(msgspec.Struct, frozen=True, kw_only=True):
    """A second derivation to ask for: the value the first answer states (kept for the
    proof, never shown to the fresh conversation) and the methods it must not repeat —
    as a person reads them, and as code refuses them (``derive.method``)."""

    value: str
    methods: list[str] = []
    avoid: list[list[str]] = []

    def feedback(self) -> str:
        """What the fresh conversation is told besides the request (no value)."""
        if not self.methods:
            return "Work it out yourself with the tools."
        return "Work it out with another method than: " + "; ".join(self.methods) + "."


def how_established(value: str | None, by: str = "") -> str:
    """A FinalResult's ``established`` (and ``established_by``) in words (pure)."""
    words = {
        "code": "established by code",
        "model": "rests on a model's word",
        "human": "confirmed by a person",
        "none": "not established",
    }
    said = words.get(value or "", "")
    return f"{said}: {by}" if said and by else said


def _checks_passed(
    criteria: Mapping[str, Criterion], verdicts: Iterable[Verdict]
) -> list[tuple[Criterion, Verdict]]:
    return [
        (c, v)
        for v in verdicts
        if v.passed and (c := criteria.get(v.criterion_id)) is not None and c.check is not None
    ]


def _code_derived(
    checked: Sequence[tuple[Criterion, Verdict]],
    calls: Sequence[ToolCall] = (),
    shape: str = "",
    policy: int = 1,
) -> Verdict | None:
    """The first passed code derivation that derived a value (pure). From policy 3, a
    call code ran derives a number, boolean or version only when what it gave is one: a
    list's repr an answer echoes is not the count asked (docs/decisions/0003)."""
    for c, v in checked:
        assert c.check is not None
        if c.check.kind in COMPUTED and not c.check.into and computed(c.check, v.observed):
            if policy >= 3 and c.check.kind == "evaluates" and not _gives(c.check, calls, shape):
                continue
            return v
    return None


def _gives(check: Check, calls: Sequence[ToolCall], shape: str) -> bool:
    """Whether code's run of the check's call gave a value of ``shape`` (pure): what it
    returned or printed, or what it raised; any value for a shape that is not a scalar."""
    result = evaluation_of(calls, str(check.value))
    if result is None or "raised" in result or shape not in ("number", "boolean", "version"):
        return result is not None
    given = (result.get("str"), result.get("repr"), str(result.get("printed", "")).strip())
    return any(g and normal(str(g), shape) is not None for g in given)


def _derivation_text(call: ToolCall) -> str:
    if call.tool == "shell":
        return f"`{call.args.get('command', '')}`"
    args = ", ".join(f"{k}={v}" for k, v in sorted(call.args.items()))
    return f"{call.tool}({args})"


def _agreed(value: str, shape: str, outcome: SubTaskOutcome, output: str) -> str | None:
    """How two conversations of ``outcome`` derived ``value`` by different methods, or
    None: the fresh one's answer (and the round's) states it, conversation 0 and
    conversation 1 each have a call that shows it, and some pair differs in method."""
    if shape == "list":
        asked = items(value)
        if not (same_set(items(outcome.output), asked) and same_set(items(output), asked)):
            return None
        first = [c for c in outcome.tool_calls if c.conversation == 0]
        second = [c for c in outcome.tool_calls if c.conversation >= 1]
        if not (first and second):
            return None
        return f"two conversations named the same {len(asked)} items"
    if not (states(outcome.output, value, shape) and states(output, value, shape)):
        return None
    shown = showing(value, outcome.tool_calls, shape)
    first = [c for c in shown if c.conversation == 0]
    second = [c for c in shown if c.conversation >= 1]
    for a in first:
        for b in second:
            if method(a.tool, a.args) != method(b.tool, b.args):
                return f"{value} by {_derivation_text(a)} and, afresh, {_derivation_text(b)}"
    return None


def _question(
    spec: TaskSpec,
    checked: Sequence[tuple[Criterion, Verdict]],
    outcomes: Sequence[SubTaskOutcome],
    output: str,
    calls: Sequence[ToolCall],
    policy: int,
) -> str | None:
    if spec.shape in ("", "text"):
        return None  # free text: no value code could compare
    derived = _code_derived(checked, calls, spec.shape, policy)
    if derived is not None:
        return derived.evidence
    for o in outcomes:
        if o.asked:
            how = _agreed(o.asked, spec.shape, o, output)
            if how is not None:
                return how
    return None


def _in_scope(path: str, spec: TaskSpec) -> bool:
    for t in spec.targets:
        if t.role == "read":
            continue
        if path == t.path.rstrip("/") or (t.path.endswith("/") and path.startswith(t.path)):
            return True
    return False


def _change(
    spec: TaskSpec, checked: Sequence[tuple[Criterion, Verdict]], calls: Sequence[ToolCall]
) -> str | None:
    kinds = {c.check.kind for c, _ in checked if c.check is not None}
    if "changed" not in kinds:
        return None
    applied = applied_effects(calls)
    if not applied:
        return None
    for call, effect in applied:
        approved = any(check.ask for check in call.law1)
        if not approved and not _in_scope(effect.path, spec):
            return None
    read_back = [v for c, v in checked if c.check is not None and c.check.kind == "reads_back"]
    tests = [v for c, v in checked if c.check is not None and c.check.kind == "tests"]
    paths = ", ".join(dict.fromkeys(e.path for _, e in applied))
    into = [
        v
        for c, v in checked
        if c.check is not None
        and c.check.kind in COMPUTED
        and c.check.into
        and computed(c.check, v.observed)
    ]
    if into:
        return f"{paths} holds what code derived: {into[0].evidence}"
    found = [v for v in read_back if v.observed.get("found")]
    if found:
        return f"read back in {paths}: " + "; ".join(v.evidence for v in found)
    if tests:
        return f"{paths} changed; " + tests[-1].evidence
    return None


def established(
    *,
    spec: TaskSpec,
    criteria: Mapping[str, Criterion],
    task_verdicts: Sequence[Verdict],
    outcomes: Iterable[SubTaskOutcome],
    output: str,
    earlier: Sequence[ToolCall] = (),
    policy: int = POLICY,
) -> tuple[Established | None, str]:
    """How a round's answer was established, and by what (pure; the module's rule):
    ``none`` when some verdict failed or none passed; ``model`` when some verdict is a
    model's, or the question's value or the change was not proven; ``human`` when a
    person confirmed a verdict; ``code`` otherwise. None for a task read without a kind.
    ``earlier``: the calls of the task's earlier rounds (their changes are the task's);
    ``policy``: the task's (``TaskRequest.policy``)."""
    if not spec.kind:
        return None, ""
    outcomes = list(outcomes)
    verdicts = [*task_verdicts, *(v for o in outcomes for v in o.verdicts)]
    if not verdicts or not all(v.passed for v in verdicts):
        return "none", ""
    if any(o.status != "matched" for o in outcomes):
        return "none", ""
    if any(v.signal == "llm" for v in verdicts):
        return "model", ""
    checked = _checks_passed(criteria, verdicts)
    calls = [*earlier, *(c for o in outcomes for c in o.tool_calls)]
    notes = []
    if answers(spec.kind):
        how = _question(spec, checked, outcomes, output, calls, policy)
        if how is None:
            return "model", ""
        notes.append(how)
    if spec.kind != "question":
        how = _change(spec, checked, calls)
        if how is None:
            return "model", ""
        notes.append(how)
    by = "; ".join(notes)
    return ("human" if any(v.signal == "human" for v in verdicts) else "code"), by


def second_derivation(
    *,
    spec: TaskSpec,
    criteria: Mapping[str, Criterion],
    verdicts: Sequence[Verdict],
    calls: Sequence[ToolCall],
    output: str,
) -> Ask | None:
    """The value to ask a fresh conversation to derive again after an attempt that
    passed, or None (pure): a request that answers, with a value shape; every verdict
    passed and none a model's; no code derivation derived the value; the answer states a
    value of its shape (a list: its items) that a call of the first conversation shows.
    The methods that showed it go with the ask, to be avoided."""
    if not answers(spec.kind) or spec.shape in ("", "text"):
        return None
    if not verdicts or not all(v.passed for v in verdicts):
        return None
    if any(v.signal == "llm" for v in verdicts):
        return None
    if _code_derived(_checks_passed(criteria, verdicts)) is not None:
        return None
    first = [c for c in calls if c.conversation == 0]
    if spec.shape == "list":
        named = items(output)
        return Ask(value=", ".join(named)) if named else None
    for value in stated(output, spec.shape):
        shown = showing(value, first, spec.shape)
        if shown:
            methods = list(dict.fromkeys(_derivation_text(c) for c in shown))[:3]
            avoid = [list(m) for m in dict.fromkeys(method(c.tool, c.args) for c in shown)]
            return Ask(value=value, methods=methods, avoid=avoid)
    return None
