"""Builders shared by the GGS tests."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from hypothesis import strategies as st

from artoo.actors.roles.ggs import TaskGradient
from artoo.schemas import SubTaskOutcome, Target, TaskSpec, ToolCall, Verdict

S = 1000.0  # one second in ms


# --------------------------------------------------------------------------- builders
def v(cid: str, passed: bool, fc: str | None = None, attempt: int = 1) -> Verdict:
    return Verdict(criterion_id=cid, passed=passed, failure_class=fc, attempt=attempt)  # type: ignore[arg-type]


def outcome(
    sid: str,
    verdicts: Sequence[Verdict] = (),
    *,
    status: str | None = None,
    history: Sequence[Verdict] | None = None,
    calls: Sequence[ToolCall] = (),
    fc: str | None = None,
) -> SubTaskOutcome:
    if status is None:
        status = "matched" if all(x.passed for x in verdicts) else "failed"
    return SubTaskOutcome(
        subtask_id=sid,
        status=status,  # type: ignore[arg-type]
        verdicts=list(verdicts),
        history=list(verdicts if history is None else history),
        tool_calls=list(calls),
        failure_class=fc,  # type: ignore[arg-type]
    )


def failing(sid: str, failed: int, total: int, fc: str = "environmental") -> SubTaskOutcome:
    """One subtask with ``total`` verifiable criteria of which ``failed`` failed."""
    verdicts = [v(f"{sid}.c{i}", i >= failed, None if i >= failed else fc) for i in range(total)]
    return outcome(sid, verdicts, fc=fc if failed else None)


def env_failure(sid: str, tool: str, target: str) -> SubTaskOutcome:
    call = ToolCall(tool=tool, target=target, ok=False, error="permission denied")
    return outcome(sid, [v(f"{sid}.c", False, "environmental")], calls=[call], fc="environmental")


def logical_failure(sid: str, *tools: str) -> SubTaskOutcome:
    calls = [ToolCall(tool=t, target=f"/w/{sid}", ok=True) for t in tools]
    return outcome(sid, [v(f"{sid}.c", False, "logical")], calls=calls, fc="logical")


def ids() -> object:
    counter = itertools.count(1)
    return lambda: f"id{next(counter):03d}"


def reading(
    text: str, kind: str = "", shape: str = "", targets: Sequence[tuple[str, str]] = ()
) -> TaskSpec:
    """A task's reading (TaskSpec) of ``text``: its kind, shape and ``(path, role)``
    targets; no kind, a reading from before kinds (no proof is computed)."""
    return TaskSpec(
        text=text,
        intent=text,
        slug="count-files",
        kind=kind,
        shape=shape,
        targets=[Target(path=p, role=r) for p, r in targets],  # type: ignore[arg-type]
    )


def gradient(**kw: object) -> TaskGradient:
    kw.setdefault("slug", "count-files")
    return TaskGradient("task-1", new_id=ids(), **kw)  # type: ignore[arg-type]


verdict_st = st.builds(
    Verdict,
    criterion_id=st.sampled_from(["a", "b", "c", "d"]),
    passed=st.booleans(),
    failure_class=st.sampled_from([None, "logical", "environmental"]),
    attempt=st.integers(1, 3),
)
outcome_st = st.builds(
    SubTaskOutcome,
    subtask_id=st.sampled_from(["s1", "s2", "s3"]),
    status=st.sampled_from(["matched", "failed", "skipped"]),
    verdicts=st.lists(verdict_st, max_size=4),
    history=st.lists(verdict_st, max_size=6),
    failure_class=st.sampled_from([None, "logical", "environmental"]),
)
