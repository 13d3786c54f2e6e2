"""The checks code writes from a reading: the rules rung of the verification ladder.

Every criterion of a task is written by code from its checked reading
(:func:`.reading.criteria_of`) and carries one :class:`artoo.schemas.Check`, decided here
before any model is asked. The vocabulary (policy 1):

``answered``
    The answer states a value of its ``shape`` that a tool result of the task shows
    (a list: every item it names). ``text``: any answer passes, and proves nothing.
``value_at``
    ``path`` a structured file, ``key`` inside it: the file's own parser (TOML, YAML,
    INI, JSON, CSV, Python's AST) reads the value there; the answer (or the ``into``
    file) must state it, by the ``shape``'s normalizer. A key that is not there, or
    names several different values, computes nothing (the pass proves nothing).
``count_matches``
    ``path`` a file, directory or glob; ``value`` ``lines``, ``words``, ``bytes``,
    ``chars``, ``files`` or ``lines containing <text>``: code counts; the answer states it.
``evaluates``
    ``value`` a Python call, ``path`` the module: code's own run of it in the sandbox
    (a ``ToolCall`` with ``by == "code"``) gave a value or an exception; the answer
    states it. Never run: computes nothing.
``changed``
    The task applied a change to a target of its reading (no target to write: any).
``parses``
    ``path`` still parses in its format after the change.
``reads_back``
    ``value`` is in ``path`` (or a changed file) after the change — at ``key`` by the
    file's parser when it has one, else as text — or was the request's old value: it was
    in a line the change removed and is gone.
``tests``
    The workspace's tests, run by code before and after the change: none that passed
    fails, and each test ``value`` names (space-separated) passes.

A check that reads the workspace logs what it read (``observed``), so
:func:`judge_observed` recomputes its verdict from the log.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Sequence
from datetime import date, datetime, time
from pathlib import Path
from typing import Any

import msgspec

from artoo.actors.tools import open_beneath
from artoo.schemas import Check, Target, ToolCall
from artoo.schemas.messages import FailureClass

from ._counting import measure, parse_unit
from ._formats import format_of, lookup, parse, parse_error
from ._tests import not_passing, outcomes_of, regressions
from ._values import items, same, same_set, stated, states
from .derive import applied_effects, evaluation_of, traced

__all__ = [
    "COMPUTED",
    "KINDS",
    "CheckResult",
    "computed",
    "evaluate",
    "judge_observed",
    "reads_workspace",
]

KINDS = (
    "answered",
    "value_at",
    "count_matches",
    "evaluates",
    "changed",
    "parses",
    "reads_back",
    "tests",
)
COMPUTED = ("value_at", "count_matches", "evaluates")
"""The kinds whose pass is a value code derived (when it could derive one)."""
_READS = ("value_at", "count_matches", "parses", "reads_back")
_MAX_READ = 8 * 1024 * 1024
_WRITTEN = 4096
_SNIPPET = 120


class CheckResult(msgspec.Struct, frozen=True, kw_only=True):
    """The decision of one check, what it read (``observed``), and a failure class."""

    passed: bool
    evidence: str
    failure_class: FailureClass | None = None
    observed: dict[str, Any] = {}


def reads_workspace(check: Check) -> bool:
    """Whether ``check`` reads the workspace (its verdict is recomputed from ``observed``)."""
    return check.kind in _READS or bool(check.into)


def computed(check: Check, observed: dict[str, Any]) -> bool:
    """Whether a passed verdict of ``check`` rests on a value code derived (pure)."""
    if check.kind == "value_at":
        return "values" in observed and len(_distinct(observed["values"])) == 1
    if check.kind == "count_matches":
        return bool(observed.get("counts"))
    if check.kind == "evaluates":
        return bool(observed.get("evaluated"))  # recomputed from the calls by the judge
    return False


def evaluate(
    check: Check,
    *,
    output: str,
    calls: Sequence[ToolCall] = (),
    workspace: str | os.PathLike[str],
    targets: Sequence[Target] = (),
) -> CheckResult:
    """Decide ``check`` on an answer (``output``), the task's ``calls`` so far, the
    workspace and the reading's ``targets``. ValueError for an unknown kind."""
    if check.kind not in KINDS:
        raise ValueError(f"unknown check kind {check.kind!r}; the vocabulary is {KINDS}")
    root = Path(workspace)
    observed: dict[str, Any] = {}
    if check.kind == "value_at":
        observed = _observe_value(check, root)
    elif check.kind == "count_matches":
        observed = _observe_count(check, root)
    elif check.kind == "parses":
        observed = _observe_parses(check, root)
    elif check.kind == "reads_back":
        observed = _observe_read_back(check, root, calls, targets)
    elif check.kind == "evaluates":
        observed = {"evaluated": evaluation_of(calls, str(check.value)) is not None}
    if check.into:
        observed = {**observed, **_observe_written(check.into, root)}
    return judge_observed(check, output=output, calls=calls, observed=observed, targets=targets)


def judge_observed(
    check: Check,
    *,
    output: str,
    calls: Sequence[ToolCall] = (),
    observed: dict[str, Any],
    targets: Sequence[Target] = (),
) -> CheckResult:
    """The decision :func:`evaluate` made, from what it read (as logged) — pure."""
    if check.kind not in KINDS:
        raise ValueError(f"unknown check kind {check.kind!r}; the vocabulary is {KINDS}")
    if check.into:
        if "unwritten" in observed:
            return _fail(f"the value is to be written to {check.into}: {observed['unwritten']}")
        output = str(observed.get("written", ""))
    result = _JUDGES[check.kind](check, output, calls, observed, targets)
    return msgspec.structs.replace(result, observed=observed)


# --------------------------------------------------------------------------- observing
def _read(root: Path, rel: str) -> bytes | str:
    """A workspace file's bytes (no symlink followed, bounded), or why not."""
    try:
        fd = open_beneath(root, rel.strip().removeprefix("./"), os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        return f"{rel} cannot be read: {exc.strerror or exc}"
    with open(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return f"{rel} is not a regular file"
        data = f.read(_MAX_READ + 1)
    return data if len(data) <= _MAX_READ else f"{rel} is over {_MAX_READ:,} bytes"


def _plain(value: Any) -> Any:
    """A parsed value as JSON can log it (dates as ISO text; anything else as text)."""
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, list | tuple | set | frozenset):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return str(value)


def _observe_value(check: Check, root: Path) -> dict[str, Any]:
    data = _read(root, check.path)
    if isinstance(data, str):
        return {"unresolved": data}
    parsed = parse(check.path, data)
    if parsed.error is not None:
        return {"unresolved": f"{check.path} does not parse: {parsed.error}"}
    found = lookup(parsed, check.key)
    if not found:
        return {"unresolved": f"no key {check.key!r} in {check.path}"}
    return {
        "format": parsed.format,
        "keys": [".".join(str(k) for k in e.key) for e in found],
        "values": [_plain(e.value) for e in found],
    }


def _observe_count(check: Check, root: Path) -> dict[str, Any]:
    parsed = parse_unit(check.value)
    if parsed is None:
        return {"missing": f"no unit to count in {check.value!r}"}
    unit, containing = parsed
    try:
        measured = measure(check.path, unit, root, containing)
    except ValueError as exc:
        return {"missing": str(exc)}
    if isinstance(measured, str):
        return {"missing": measured}
    counts, seen = measured
    return {"counts": sorted(counts), "seen": seen}


def _observe_parses(check: Check, root: Path) -> dict[str, Any]:
    data = _read(root, check.path)
    if isinstance(data, str):
        return {"missing": data}
    return {"format": format_of(check.path), "error": parse_error(check.path, data)}


def _changed_files(calls: Sequence[ToolCall], targets: Sequence[Target]) -> list[str]:
    paths = [e.path for _, e in applied_effects(calls) if e.change in ("created", "modified")]
    return list(dict.fromkeys(paths))


def _observe_read_back(
    check: Check, root: Path, calls: Sequence[ToolCall], targets: Sequence[Target]
) -> dict[str, Any]:
    value = str(check.value if check.value is not None else "")
    files = [check.path] if check.path else _changed_files(calls, targets)
    found: list[str] = []
    read: list[str] = []
    for rel in files:
        data = _read(root, rel)
        if isinstance(data, str):
            continue
        read.append(rel)
        if check.key and format_of(rel) not in ("text",):
            parsed = parse(rel, data)
            if parsed.error is None and any(
                same(_plain(e.value), value, "value") for e in lookup(parsed, check.key)
            ):
                found.append(f"{rel} at {check.key}")
                continue
        if " ".join(value.split()) in " ".join(data.decode("utf-8", "replace").split()):
            found.append(rel)
    removed = any(
        value in line[1:]
        for _, e in applied_effects(calls)
        for line in (e.diff or "").splitlines()
        if line.startswith("-")
    )
    return {"found": found, "read": read, "removed": removed and not found}


def _observe_written(path: str, root: Path) -> dict[str, Any]:
    data = _read(root, path)
    if isinstance(data, str):
        return {"unwritten": data}
    return {"written": data.decode("utf-8", "replace")[:_WRITTEN]}


# --------------------------------------------------------------------------- judging
def _distinct(values: Iterable[Any]) -> list[Any]:
    out: list[Any] = []
    for v in values:
        if not any(same(v, w, "value") for w in out):
            out.append(v)
    return out


def _clip(text: str) -> str:
    one = " ".join(text.split())
    return one if len(one) <= _SNIPPET else one[: _SNIPPET - 1] + "…"


def _pass(evidence: str) -> CheckResult:
    return CheckResult(passed=True, evidence=evidence)


def _fail(evidence: str, cls: FailureClass = "logical") -> CheckResult:
    return CheckResult(passed=False, evidence=evidence, failure_class=cls)


def _answered(
    check: Check, output: str, calls: Sequence[ToolCall], _o: dict[str, Any], _t: Any
) -> CheckResult:
    shape = check.shape or "text"
    if not output.strip():
        return _fail("no answer was given")
    if shape == "text":
        return _pass("a free-text answer (no value to trace)")
    if shape == "list":  # its completeness is the derivations' to agree on (the proof)
        named = items(output)
        shown_items = [i for i in named if traced(i, calls, "name")]
        if not shown_items:
            shown_items = [v for v in stated(output, "value") if traced(v, calls, "value")]
        if not shown_items:
            return _fail(f"no tool result shows what the answer names ({_clip(output)})")
        return _pass(f"the answer names {', '.join(shown_items[:5])}, shown by a tool result")
    values = stated(output, shape)
    if not values:
        return _fail(f"the answer states no {shape} ({_clip(output)})")
    shown = [v for v in values if traced(v, calls, shape)]
    if not shown:  # a value the answer marks (a code span, quotes), shown as it is written
        shown = [
            v for v in stated(output, "value") if v not in values and traced(v, calls, "value")
        ]
    if not shown:
        return _fail(f"the answer states {', '.join(values[:3])}, which no tool result shows")
    return _pass(f"the answer states {shown[0]}, shown by a tool result")


def _value_at(
    check: Check, output: str, _c: Sequence[ToolCall], observed: dict[str, Any], _t: Any
) -> CheckResult:
    if "unresolved" in observed:
        return _pass(f"code derives nothing: {observed['unresolved']}")
    values = _distinct(observed.get("values", []))
    where = f"{check.key} in {check.path} ({observed.get('format', '?')})"
    if len(values) != 1:
        return _pass(f"code derives nothing: {where} names {len(values)} different values")
    want = values[0]
    shape = check.shape or "value"
    if isinstance(want, list):
        ok = same_set(items(output), [str(v) for v in want])
    else:  # by the reading's shape, or as the value the file holds (a version read as a name)
        ok = states(output, want, shape) or states(output, want, "value")
    if ok:
        return _pass(f"code reads {_clip(str(want))} at {where}; the answer states it")
    # the value code read stays in ``observed``: told it, a model would copy it, and its
    # answer would no longer be a derivation of its own
    return _fail(f"the answer does not state the value at {where}")


def _count(
    check: Check, output: str, _c: Sequence[ToolCall], observed: dict[str, Any], _t: Any
) -> CheckResult:
    if "missing" in observed:
        return _fail(str(observed["missing"]), "environmental")
    counts = [int(c) for c in observed.get("counts", [])]
    seen = str(observed.get("seen", ""))
    numbers = stated(output, "number")
    if not numbers:
        return _fail(f"the answer states no number of {check.value} in {check.path}")
    if any(states(output, c, "number") for c in counts) and same(numbers[0], counts[0], "number"):
        return _pass(f"{seen}; the answer states {counts[0]}")
    return _fail(
        f"the answer states {numbers[0]}: not the {check.value} code counts in {check.path}"
    )


def _evaluates(
    check: Check, output: str, calls: Sequence[ToolCall], observed: dict[str, Any], _t: Any
) -> CheckResult:
    result = evaluation_of(calls, str(check.value))
    if result is None:
        return _pass(f"code derives nothing: {check.value} was not run")
    if "raised" in result:
        name = str(result["raised"]).split(":", 1)[0]
        if states(output, name, "name"):
            return _pass(f"{check.value} raises {name}; the answer says so")
        return _fail(f"the answer does not state what {check.value} raises when it runs")
    shape = check.shape or "value"
    candidates = [str(result.get("str", "")), str(result.get("repr", ""))]
    printed = str(result.get("printed", "")).strip()
    if printed:
        candidates.append(printed)
    if any(c and (states(output, c, shape) or states(output, c, "value")) for c in candidates):
        return _pass(f"code ran {check.value}: {_clip(candidates[1])}; the answer states it")
    return _fail(f"the answer does not state what {check.value} gives when it runs")


def _in_targets(path: str, targets: Sequence[Target]) -> bool:
    for t in targets:
        if t.role == "read":
            continue
        if path == t.path.rstrip("/") or (t.path.endswith("/") and path.startswith(t.path)):
            return True
    return False


def _changed(
    _k: Check, _o: str, calls: Sequence[ToolCall], _ob: dict[str, Any], targets: Sequence[Target]
) -> CheckResult:
    applied = [e for _, e in applied_effects(calls)]
    writable = [t for t in targets if t.role != "read"]
    hit = [e for e in applied if not writable or _in_targets(e.path, writable)]
    if not hit:
        if applied:
            return _fail(
                "no target of the request changed (only "
                + ", ".join(e.path for e in applied[:3])
                + ")"
            )
        return _fail("nothing was changed: no effect was applied to the workspace")
    return _pass("changed: " + ", ".join(dict.fromkeys(f"{e.path} ({e.change})" for e in hit)))


def _parses(
    check: Check, _o: str, _c: Sequence[ToolCall], observed: dict[str, Any], _t: Any
) -> CheckResult:
    if "missing" in observed:
        return _fail(str(observed["missing"]))
    if observed.get("error"):
        return _fail(
            f"{check.path} no longer parses as {observed.get('format')}: {observed['error']}"
        )
    return _pass(f"{check.path} parses as {observed.get('format')}")


def _reads_back(
    check: Check, _o: str, _c: Sequence[ToolCall], observed: dict[str, Any], _t: Any
) -> CheckResult:
    found = observed.get("found", [])
    if found:
        return _pass(f"{check.value!r} reads back in {', '.join(found)}")
    if observed.get("removed"):
        return _pass(f"{check.value!r} was the request's old value: the change removed it")
    read = observed.get("read", [])
    where = ", ".join(read) or check.path or "no changed file"
    return _fail(f"{check.value!r} does not read back in {where}")


def _tests(
    check: Check, _o: str, calls: Sequence[ToolCall], _ob: dict[str, Any], _t: Any
) -> CheckResult:
    runs: list[tuple[int, dict[str, str]]] = []
    for i, c in enumerate(calls):
        got = outcomes_of(c) if c.tool == "run_tests" and c.by == "code" else None
        if got is not None:
            runs.append((i, got))
    changes = [i for i, c in enumerate(calls) if c.ok and c.refusal is None and c.effects]
    last_change = max(changes, default=-1)
    after = [o for i, o in runs if i > last_change]
    before = [o for i, o in runs if i < last_change]
    if not after:
        return _fail("the workspace's tests were not run after the change", "environmental")
    names = str(check.value or "").split()
    missing = not_passing(after[-1], names) if names else []
    lost = regressions(before[0], after[-1]) if before else []
    if lost:
        return _fail(f"tests that passed before fail now: {', '.join(lost[:5])}")
    if missing:
        return _fail(f"named tests do not pass: {', '.join(missing[:5])}")
    passed = len([v for v in after[-1].values() if v == "passed"])
    return _pass(f"the workspace's tests: {passed} pass, none that passed before fails")


_JUDGES: dict[str, Any] = {
    "answered": _answered,
    "value_at": _value_at,
    "count_matches": _count,
    "evaluates": _evaluates,
    "changed": _changed,
    "parses": _parses,
    "reads_back": _reads_back,
    "tests": _tests,
}
