"""``artoo replay --rerun``: re-execute recorded tasks with every model answer and every tool
result served from the log, then compare the new log with the recorded one.

Each task runs on a fresh System over a scratch store (for ``--task``, seeded with the log
before the task, so memory is what the task saw), under a manual clock, with an empty
scratch workspace: nothing runs for real, there is no network and no key.

- **Model calls** are matched by (role, subtask, per-role call index): the n-th call of a
  role for a subtask gets the n-th recorded answer of that role for that subtask (brain
  roles, outside any subtask, by their n-th call in the task) — never by prompt hash.
  Rerun subtask ids are mapped to recorded ones by their place in the round's plan.
- **Tool calls** are matched by (subtask, attempt, call index) and get the recorded
  ToolCall and the very text the recorded model was shown; a recorded Law 1 confirmation
  of that call is asked again (the Queen and the operator decide as they did).
- A call the log cannot answer is itself a divergence, named.

The comparison is per sender, in order, normalised: times are not compared (``ts``,
``elapsed_ms``, ``latency_ms``, ``created_at``, ``at``); seqs — the envelope's ``cause``
and the fields that name seqs (``evidence``, ``evidence_ranges``, ``last_seq``) — are
mapped to the recorded ones by pairing each sender's envelopes in order; generated ids are
mapped (task and subtask ids) or masked (other 26-character ids); and numbers agree within
10⁻³ (Ω and so L depend on the task's elapsed time) — a decimal a text prints too, within
10⁻³ and its rounding (a summary's ``Ω=0.200`` is ``Ω=0.201`` once the elapsed time
crosses a last digit); an integer in a text agrees exactly.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from artoo._config import parse_setting
from artoo.schemas import (
    Config,
    ConfirmationDecision,
    ConfirmationRequest,
    Envelope,
    FinalResult,
    GGSDecision,
    LLMCall,
    QuestionAnswered,
    TaskPaused,
    TaskUnpaused,
    ToolCallEnded,
    UserQuestion,
    UserRequest,
    WorkspaceRestored,
)

from ._read import TaskLog, read_store, task_config
from ._served import _Served

__all__ = ["Divergence", "RerunReport", "rerun"]

_TIME_FIELDS = frozenset({"ts", "elapsed_ms", "latency_ms", "created_at", "last_recalled_at", "at"})
_SEQ_FIELDS = frozenset({"evidence", "evidence_ranges", "last_seq", "cause"})
_ID = re.compile(r"\b[0-9A-HJKMNP-TV-Z]{26}\b")
_TOLERANCE = 1e-3
_DECIMAL = re.compile(r"\d+\.\d+|\d+")
_NOT_COMPARED = frozenset({"body.config.durability", "body.config.recovery", "body.resumed_from"})


@dataclass(frozen=True)
class Divergence:
    """The first place a rerun parts from the record: the recorded envelope's seq (None
    when the rerun published a message the record does not have), its sender and kind,
    and the differing fields as ``(path, expected, actual)``."""

    seq: int | None
    role: str
    kind: str
    diff: list[tuple[str, Any, Any]] = field(default_factory=list)
    note: str = ""

    def __str__(self) -> str:
        head = f"seq {self.seq} {self.role} {self.kind}" if self.seq else f"{self.role} {self.kind}"
        lines = [f"first divergence at {head}" + (f": {self.note}" if self.note else "")]
        lines += [f"  {path}: expected {a!r}, got {b!r}" for path, a, b in self.diff[:20]]
        return "\n".join(lines)


@dataclass
class RerunReport:
    """What a rerun compared, and its first divergence (None: zero divergence)."""

    tasks: list[str] = field(default_factory=list)
    compared: int = 0
    divergence: Divergence | None = None
    unanswered: list[str] = field(default_factory=list)
    """Model or tool calls the log could not answer."""
    reran: list[dict[str, Any]] = field(default_factory=list)
    """How each rerun task ended: ``task``, ``status``, ``path`` (GGS macro-states), and
    the recorded ``recorded_status`` and ``recorded_path`` beside them; a what-if that
    needed an answer the log lacks has ``stopped`` (the first such call; the rerun task
    was cancelled there, so ``path`` ends with the last decision the record could carry)."""

    @property
    def ok(self) -> bool:
        """True when every rerun task logged what the record has."""
        return self.divergence is None

    def to_json(self) -> dict[str, Any]:
        """Plain data (``--json``)."""
        d = self.divergence
        return {
            "ok": self.ok,
            "tasks": self.tasks,
            "compared": self.compared,
            "unanswered": self.unanswered,
            "reran": self.reran,
            "divergence": None
            if d is None
            else msgspec.to_builtins(
                {"seq": d.seq, "role": d.role, "kind": d.kind, "note": d.note, "diff": d.diff}
            ),
        }


def rerun(
    store: str | Path,
    task_id: str | None = None,
    *,
    config: Config | None = None,
    settings: list[str] | None = None,
    timeout: float = 60.0,
) -> RerunReport:
    """Re-execute ``store``'s tasks (or ``task_id``) from the log and compare; the recorded
    store is only read. ``config`` defaults to the Config each task's TaskRequest logged
    (a log from before that: ``Config()`` with the number of effector pairs and the
    confirmation timeout the log shows); ``settings`` (``key=value``, see
    :func:`with_settings`) change it — a what-if: the first divergence is then the first
    decision the change alters, and a model answer the log does not hold is named in
    ``unanswered`` (the rerun never asks a model)."""
    envelopes, tasks = read_store(store, task_id)
    report = RerunReport()
    scratch = Path(tempfile.mkdtemp(prefix="artoo-rerun-"))
    try:
        (scratch / "workspace").mkdir()
        if task_id is not None:
            _seed(scratch / "store", [e for e in envelopes if e.seq < tasks[0].envelopes[0].seq])
        for task in tasks:
            report.tasks.append(task.task_id)
            served = _Served(task, what_if=bool(settings))
            cfg = with_settings(config or task_config(task, envelopes), settings or [])
            new = _run_task(task, served, scratch / "store", scratch / "workspace", cfg, timeout)
            ending = _ending(task.task_id, new, task.envelopes)
            if settings and served.unanswered:
                ending["stopped"] = served.unanswered[0]
            report.reran.append(ending)
            divergence, compared = _compare_task(task, new, served, what_if=bool(settings))
            report.compared += compared
            report.unanswered += served.unanswered
            if divergence is not None:
                report.divergence = divergence
                break
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return report


def _ending(task_id: str, new: list[Envelope], old: list[Envelope]) -> dict[str, Any]:
    def path(envs: list[Envelope]) -> list[str]:
        return [e.body.directive for e in envs if isinstance(e.body, GGSDecision)]

    def status(envs: list[Envelope]) -> str:
        ends = [e.body.status for e in envs if isinstance(e.body, FinalResult)]
        return ends[-1] if ends else "running"

    return {
        "task": task_id,
        "status": status(new),
        "path": path(new),
        "recorded_status": status(old),
        "recorded_path": path(old),
    }


def with_settings(config: Config, settings: list[str]) -> Config:
    """``config`` with each ``key=value`` applied (``ggs.delta=0.1``, ``max_retries=1``):
    the value is read as JSON (a number, ``true``, a list …), else taken as a string; the
    result is validated like any Config (a one-line ValueError naming the field)."""
    data = config.model_dump()
    for setting in settings:
        key, value = parse_setting(setting)
        *parents, leaf = key.split(".")
        node = data
        for name in parents:
            if not isinstance(node.get(name), dict):
                raise ValueError(f"--set {key}: {name!r} is not a Config section")
            node = node[name]
        if leaf not in node:
            raise ValueError(f"--set {key}: no such Config field")
        node[leaf] = value
    try:
        return Config.model_validate(data)
    except Exception as exc:  # pydantic's ValidationError: say it in one line
        first = str(exc).splitlines()
        raise ValueError(f"--set: {' '.join(first[1:3]) if len(first) > 2 else exc}") from None


def _seed(store: Path, prefix: list[Envelope]) -> None:
    from artoo.eventstore import EventLog

    with EventLog.open(store / "events", durability="none") as log:
        for start in range(0, len(prefix), 4096):
            log.append(prefix[start : start + 4096])


# --------------------------------------------------------------------------- running
def _run_task(
    task: TaskLog,
    served: _Served,
    store: Path,
    workspace: Path,
    config: Config,
    timeout: float,
    *,
    live: bool = False,
) -> list[Envelope]:
    """Run ``task`` again on a System over ``store``. A rerun: a manual clock, no tool
    runs (``workspace`` is an empty scratch directory). ``live`` (a fork): the wall
    clock, and tools run for real in ``workspace`` once the fork has left the record."""
    from artoo.actors.llm import LLMGateway
    from artoo.actors.runtime.clock import ManualClock, SystemClock
    from artoo.eventstore import EventLog
    from artoo.system import System

    request = next((e.body for e in task.envelopes if isinstance(e.body, UserRequest)), None)
    if request is None:
        raise ValueError(f"task {task.task_id} has no UserRequest in the log: nothing to rerun")
    models: dict[str, str] = {}
    for env in task.envelopes:
        if isinstance(env.body, LLMCall):
            models.setdefault(env.body.tier, env.body.model)
    for tier in ("brain", "tool"):
        models.setdefault(tier, "replay")
    replies = deque((e.body, e.ts) for e in task.envelopes if isinstance(e.body, QuestionAnswered))

    def on_question(_question: UserQuestion) -> str | None:
        """The recorded answer; a recorded timeout: the clock moves to it (the Queen then
        times the question out as it did)."""
        if not replies:
            return None
        answered, ts = replies.popleft()
        if answered.by == "operator":
            return answered.answer
        served._follow(ts)
        return None

    # the operator's answers; the Queen decides its own again (a timeout, no operator, the
    # task's end, the request's own consent: ``by`` queen or request)
    decisions = [
        e.body
        for e in task.envelopes
        if isinstance(e.body, ConfirmationDecision) and e.body.by not in ("queen", "request")
    ]
    operator = None
    if decisions:
        answers = deque(d.approved for d in decisions)

        def operator(_request: ConfirmationRequest) -> bool:
            return answers.popleft() if answers else False

    def gateway(bus: Any, clock: Any, new_id: Callable[[], str], budgets: Any) -> LLMGateway:
        def record(call: LLMCall, task_id: str | None = None) -> None:
            if getattr(served.answered, "live", False):  # (same thread as its complete)
                call = msgspec.structs.replace(call, model=served.live_model)
            bus.publish(call, sender=call.role, task_id=task_id)

        backends = {tier: served for tier in models}
        return LLMGateway(
            backends, models, record=record, clock=clock, new_id=new_id, budgets=budgets
        )

    # the scratch store's other open tasks are not this run's to resume
    config = config.model_copy(update={"recovery": "abandon"})
    clock = SystemClock() if live else ManualClock(start=task.started)
    if not live:
        served.clock = clock
    system = System(
        store,
        config=config,
        workspace=workspace,
        operator=operator,
        clock=clock,
        tools=(),
        gateway_factory=gateway,
        runs_tools=live,
        tool_runner=served.runner,
        recorded_verdicts=served,
        # asked of no one (``by="no_operator"``): the Queen takes the default at once again
        on_question=on_question if any(a.by != "no_operator" for a, _ in replies) else None,
    )
    try:
        system.subscribe(served.on_envelope)
        handle = system.submit(request.text, request.deadline_s)
        served.cancel = handle.cancel
        served.submitted.set()
        handle.result(timeout)
        system.flush(10.0)
    finally:
        system.close()
    served.ids[handle.task_id] = task.task_id
    with EventLog.open(store / "events", durability="none") as log:
        return list(log.read_task(handle.task_id))


# --------------------------------------------------------------------------- comparing
def _compare_task(
    task: TaskLog, new: list[Envelope], served: _Served, *, what_if: bool = False
) -> tuple[Divergence | None, int]:
    """The first divergence of ``new`` from the record, per sender in order, and how many
    recorded envelopes were compared."""
    if not any(isinstance(e.body, ToolCallEnded) for e in task.envelopes):
        # a record older than ToolCallEnded: the rerun's own are not compared
        new = [e for e in new if not isinstance(e.body, ToolCallEnded)]
    streams: dict[str, deque[Envelope]] = defaultdict(deque)
    for env in new:
        streams[env.sender].append(env)
    seqs = _seq_map(task, streams)
    compared = 0
    for env in task.envelopes:
        if env.sender == "system":  # the recovery of a store, not a decision of the run
            continue
        if isinstance(env.body, TaskPaused | TaskUnpaused | WorkspaceRestored):
            continue  # the operator's (a pause, an undo after the end), not the run's
        stream = streams[env.sender]
        kind = type(env.body).__name__
        if not stream:
            note = "the rerun did not publish it"
            if served.unanswered:
                note += f" ({served.unanswered[0]})"
            return Divergence(env.seq, env.sender, kind, note=note), compared
        got = stream.popleft()
        diff = _diff(_normal(env, served.ids), _normal(got, served.ids, seqs), "")
        # a rerun's store is scratch: its durability is not the record's
        # nor its recovery, and a resume is the record's, not a decision
        diff = [d for d in diff if d[0] not in _NOT_COMPARED]
        if what_if:  # the changed setting itself is logged (task, decisions): not a change
            diff = [
                d
                for d in diff
                if not d[0].startswith(("body.params.", "body.rationale", "body.config."))
            ]
        if diff:  # (a what-if names where it stopped beside the path, not here)
            note = served.unanswered[0] if served.unanswered and not what_if else ""
            return Divergence(env.seq, env.sender, kind, diff=diff, note=note), compared
        compared += 1
    for sender, stream in streams.items():
        if stream and sender != "system":
            extra = stream[0]
            return (
                Divergence(None, sender, type(extra.body).__name__, note="not in the record"),
                compared,
            )
    return None, compared


def _seq_map(task: TaskLog, streams: dict[str, deque[Envelope]]) -> dict[int, int]:
    """Rerun seq -> recorded seq, pairing each sender's envelopes in order."""
    at: dict[str, int] = defaultdict(int)
    pairs: dict[int, int] = {}
    for env in task.envelopes:
        stream = streams.get(env.sender, deque())
        i = at[env.sender]
        if i < len(stream):
            pairs[stream[i].seq] = env.seq
        at[env.sender] = i + 1
    return pairs


def _normal(env: Envelope, ids: dict[str, str], seqs: dict[int, int] | None = None) -> Any:
    """An envelope as compared: no times; rerun ids and, in the fields that name seqs,
    rerun seqs mapped to the recorded ones (``seqs``); other generated ids masked."""

    def seq(value: Any) -> Any:
        if seqs is None:
            return value
        if isinstance(value, list):
            return [seq(v) for v in value]
        return seqs.get(value, value) if isinstance(value, int) else value

    def walk(value: Any) -> Any:
        if isinstance(value, dict):
            return {
                k: seq(walk(v)) if k in _SEQ_FIELDS else walk(v)
                for k, v in value.items()
                if k not in _TIME_FIELDS
            }
        if isinstance(value, list):
            return [walk(v) for v in value]
        if isinstance(value, str):
            return _ID.sub(lambda m: ids.get(m.group(0), m.group(0)), value)
        return value

    mapped = walk(
        {
            "to": env.to,
            "cause": env.cause,
            "type": type(env.body).__name__,
            "body": msgspec.to_builtins(env.body),
        }
    )
    recorded = set(ids.values())
    return _mask(mapped, recorded)


def _mask(value: Any, keep: set[str]) -> Any:
    if isinstance(value, dict):
        return {k: _mask(v, keep) for k, v in value.items()}
    if isinstance(value, list):
        return [_mask(v, keep) for v in value]
    if isinstance(value, str):
        return _ID.sub(lambda m: m.group(0) if m.group(0) in keep else "<id>", value)
    return value


def _diff(a: Any, b: Any, path: str) -> list[tuple[str, Any, Any]]:
    if isinstance(a, dict) and isinstance(b, dict):
        out: list[tuple[str, Any, Any]] = []
        for key in [*a, *(k for k in b if k not in a)]:
            out += _diff(a.get(key), b.get(key), f"{path}.{key}" if path else str(key))
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [
            d
            for i, (x, y) in enumerate(zip(a, b, strict=True))
            for d in _diff(x, y, f"{path}[{i}]")
        ]
    if (
        isinstance(a, float | int)
        and isinstance(b, float | int)
        and not isinstance(a, bool)
        and not isinstance(b, bool)
    ):
        return [] if abs(a - b) <= _TOLERANCE else [(path, a, b)]
    if isinstance(a, str) and isinstance(b, str) and _same_text(a, b):
        return []
    return [] if a == b else [(path, a, b)]


def _same_text(a: str, b: str) -> bool:
    """Whether two texts differ at most in decimals that agree within :data:`_TOLERANCE`
    as printed: the words and integers alike, each pair of decimals no further apart
    than the tolerance plus their rounding (one unit of the last printed place)."""
    if a == b:
        return True
    if _DECIMAL.split(a) != _DECIMAL.split(b):
        return False
    for x, y in zip(_DECIMAL.findall(a), _DECIMAL.findall(b), strict=True):
        if x == y:
            continue
        if "." not in x or "." not in y:
            return False
        places = max(len(x.split(".")[1]), len(y.split(".")[1]))
        if abs(float(x) - float(y)) > _TOLERANCE + 10.0**-places + 1e-12:
            return False
    return True
