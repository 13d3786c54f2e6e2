"""Two runs side by side (``artoo diff``): their envelopes aligned by message kind and
role, where they part, and how their macro-states, calls, tokens and time differ."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any

from artoo.actors.runtime.ledger import task_figures
from artoo.schemas import (
    DispatchManifest,
    Envelope,
    ExecutionResult,
    FinalResult,
    GGSDecision,
    LLMCall,
    MemoryRecall,
)

from ._read import TaskLog

__all__ = ["RunDiff", "RunSummary", "diff_runs", "render_diff", "summarize"]


@dataclass(frozen=True)
class RunSummary:
    """One run's figures."""

    task_id: str
    text: str
    status: str
    path: list[str]
    """The GGS macro-states in order."""
    model_calls: int
    tokens: int
    tool_calls: int
    time_s: float
    envelopes: int

    def to_json(self) -> dict[str, Any]:
        """As JSON-ready values."""
        return dict(self.__dict__)


@dataclass(frozen=True)
class RunDiff:
    """The alignment of run A and run B (:func:`diff_runs`)."""

    a: RunSummary
    b: RunSummary
    common: int
    """Envelopes matched in order (same kind, same role)."""
    parted_a: Envelope | None
    """A's first envelope not matched (None: A is all matched up to where B parts)."""
    parted_b: Envelope | None
    blocks: list[tuple[str, list[Envelope], list[Envelope]]] = field(default_factory=list)
    """The alignment as runs of ``equal``, ``replace``, ``delete`` (A only), ``insert``
    (B only)."""

    @property
    def changed(self) -> list[tuple[Envelope, Envelope]]:
        """Matched pairs whose content differs where it carries a decision: a plan (its
        SHOULD PREFER / MUST NOT lines and subtasks), a GGS decision, a memory recall,
        a tool choice, the end."""
        out = []
        for op, xs, ys in self.blocks:
            if op != "equal":
                continue
            for x, y in zip(xs, ys, strict=True):
                if isinstance(x.body, _DECIDING) and _content(x) != _content(y):
                    out.append((x, y))
        return out

    @property
    def saved(self) -> dict[str, float]:
        """What B spent less than A (negative: more): model calls, tokens, tool calls, s."""
        return {
            "model_calls": self.a.model_calls - self.b.model_calls,
            "tokens": self.a.tokens - self.b.tokens,
            "tool_calls": self.a.tool_calls - self.b.tool_calls,
            "time_s": round(self.a.time_s - self.b.time_s, 3),
        }

    def to_json(self) -> dict[str, Any]:
        """As JSON-ready values (envelopes as their seq, sender and kind)."""

        def brief(env: Envelope | None) -> dict[str, Any] | None:
            return None if env is None else {"seq": env.seq, "sender": env.sender, "kind": env.kind}

        return {
            "a": self.a.to_json(),
            "b": self.b.to_json(),
            "common": self.common,
            "parted": {"a": brief(self.parted_a), "b": brief(self.parted_b)},
            "saved": self.saved,
            "changed": [{"a": brief(x), "b": brief(y)} for x, y in self.changed],
            "blocks": [
                {"op": op, "a": [brief(e) for e in xs], "b": [brief(e) for e in ys]}
                for op, xs, ys in self.blocks
            ],
        }


def _role(sender: str) -> str:
    return sender.split("/", 1)[0]


def _key(env: Envelope) -> tuple[str, str]:
    return env.kind, _role(env.sender)


def summarize(task: TaskLog) -> RunSummary:
    """A run's status, macro-state path, calls, tokens and time."""
    figures = task_figures(e.body for e in task.envelopes)
    final = task.final
    ends = [e.ts for e in task.envelopes if isinstance(e.body, FinalResult)]
    return RunSummary(
        task_id=task.task_id,
        text=task.text,
        status=final.status if final else "running",
        path=figures.path,
        model_calls=figures.model_calls,
        tokens=figures.tokens,
        tool_calls=figures.tool_calls,
        time_s=round((ends[0] if ends else task.envelopes[-1].ts) - task.started, 3)
        if task.envelopes
        else 0.0,
        envelopes=len(task.envelopes),
    )


def diff_runs(a: TaskLog, b: TaskLog) -> RunDiff:
    """Align run ``a`` with run ``b`` by (message kind, role) — the longest matching blocks
    in order (:class:`difflib.SequenceMatcher`, no junk heuristic) — and find where they
    part."""
    xs, ys = a.envelopes, b.envelopes
    matcher = difflib.SequenceMatcher(None, [_key(e) for e in xs], [_key(e) for e in ys],
                                      autojunk=False)  # fmt: skip
    blocks: list[tuple[str, list[Envelope], list[Envelope]]] = []
    parted_a = parted_b = None
    common = 0
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        blocks.append((op, xs[i1:i2], ys[j1:j2]))
        if op == "equal":
            common += i2 - i1
        elif parted_a is None and parted_b is None:
            parted_a = xs[i1] if i1 < i2 else None
            parted_b = ys[j1] if j1 < j2 else None
    return RunDiff(summarize(a), summarize(b), common, parted_a, parted_b, blocks)


def describe(env: Envelope) -> str:
    """One line for an envelope in a diff: the plan's lines for a DispatchManifest, the
    directive for a GGS decision, the potentials for a recall."""
    body = env.body
    head = f"{env.seq:>6} {env.sender:<22} {env.kind}"
    if isinstance(body, DispatchManifest):
        lines = [*(f"SHOULD PREFER {x}" for x in body.should_prefer),
                 *(f"MUST NOT {x}" for x in body.must_not),
                 *(f"subtask: {s.instruction}" for s in body.subtasks)]  # fmt: skip
        return head + " — " + "; ".join(lines)
    if isinstance(body, GGSDecision):
        return head + f" — {body.directive} L={body.loss:.3f}"
    if isinstance(body, MemoryRecall):
        return head + f" — {body.action} ({len(body.sops)} SOPs, decision {body.decision:+.2f})"
    if isinstance(body, LLMCall):
        return head + f" — {body.role} {body.model}"
    if isinstance(body, ExecutionResult):
        return head + " — " + (", ".join(c.tool for c in body.tool_calls) or "no tool call")
    if isinstance(body, FinalResult):
        return head + f" — {body.status}: {body.summary[:100]}"
    return head


_DECIDING = (DispatchManifest, GGSDecision, MemoryRecall, ExecutionResult, FinalResult)


def _content(env: Envelope) -> str:
    return describe(env).split(env.kind, 1)[1]


def _fewer(saved: float, unit: str, verb: str = "", fmt: str = ",") -> str:
    """What B saved, said from B's side: ``7 fewer model calls``, ``used 2,547 more tokens``."""
    if not saved:
        return f"{verb}as many {unit}" if unit != "s" else f"{verb}as long"
    less = "fewer" if unit != "s" else "less"
    more = "more"
    amount = format(abs(saved), fmt)
    if unit == "s":
        return f"{verb}{amount} s {less if saved > 0 else more}"
    return f"{verb}{amount} {less if saved > 0 else more} {unit}"


def render_diff(d: RunDiff, limit: int = 60) -> str:
    """The diff for a person: both runs' figures, where they part, what B saved, and the
    envelopes only one run has (``-`` A only, ``+`` B only)."""
    out = []
    for name, run in (("A", d.a), ("B", d.b)):
        out.append(
            f"{name}  {run.task_id}  {run.status}  {' → '.join(run.path) or '-'}  "
            f"{run.model_calls} model calls, {run.tokens:,} tokens, {run.tool_calls} tool "
            f"calls, {run.time_s:.3f} s  — {run.text}"
        )
    out.append(
        f"{d.common} envelopes match in order (of A's {d.a.envelopes} and B's {d.b.envelopes})"
    )
    if d.parted_a is None and d.parted_b is None:
        out.append("the runs do not part: same kinds from the same roles, in the same order")
    else:
        out.append("they part at:")
        out.append("  A: " + (describe(d.parted_a) if d.parted_a else "(nothing: A had ended)"))
        out.append("  B: " + (describe(d.parted_b) if d.parted_b else "(nothing: B had ended)"))
    s = d.saved
    out.append(
        "B against A: B made "
        + ", ".join(
            (
                _fewer(s["model_calls"], "model calls"),
                _fewer(s["tokens"], "tokens", "used "),
                _fewer(s["tool_calls"], "tool calls"),
                _fewer(s["time_s"], "s", "took ", ".3f"),
            )
        )
    )
    if d.changed:
        out.append("matched, but decided differently (A, then B):")
        for x, y in d.changed[:limit]:
            out.append(f"  A {describe(x)}")
            out.append(f"  B {describe(y)}")
    lines = []
    for op, xs, ys in d.blocks:
        if op == "equal":
            continue
        lines += [f"  - {describe(e)}" for e in xs]
        lines += [f"  + {describe(e)}" for e in ys]
    if lines:
        out.append("only in one run (- A, + B):")
        out += lines[:limit]
        if len(lines) > limit:
            out.append(f"  … {len(lines) - limit} more")
    return "\n".join(out) + "\n"
