"""Deterministic criterion checks: the rules rung of the verification ladder.

A verifiable criterion that carries a :class:`artoo.schemas.Check` is decided by code,
before any LLM is asked (the verification ladder, docs/design.md A2). The vocabulary —
``kind``, ``path``, ``value``:

``exit_code``
    ``value``: the expected exit code (an integer; default 0). Passes when the
    attempt's exit code equals it; fails when no command reported one.
``file_exists``
    ``path``: a file or directory, relative to the workspace root (absolute paths
    must lie inside it). ``value``: ``true`` (default) — it must exist — or ``false`` —
    it must not.
``file_contains``
    ``path``: a workspace file (as for ``file_exists``). ``value``: a text. Passes when
    the file's content contains the text (case-sensitive). For a task that writes a file:
    the file is read, not the Executor's report of it.
``file_matches``
    ``path``: a workspace file. ``value``: a regular expression in RE2 syntax (as for
    ``output_matches``). Passes when it is found in the file's content. Both read the
    file race-free beneath the workspace (no symlink followed, at most 16 MiB, decoded
    as UTF-8 with replacement); a missing file fails as environmental.
``output_contains``
    ``value``: a text. Passes when the text occurs in the output (case-sensitive).
``output_matches``
    ``value``: a regular expression in RE2 syntax (Python's, less backreferences and
    lookaround). Passes when it is found in the output (``^``/``$`` match at line
    boundaries). It runs on RE2, in time linear in the output: a model-chosen pattern
    such as ``(a+)+$`` cannot freeze the process.
``json_path_equals``
    ``path``: ``$.a.b[0]`` reads the output as JSON; ``data/out.json:$.a`` reads that
    workspace file instead. Steps are ``.key``, ``['key']`` and ``[index]`` (negative
    indexes count from the end). The output is JSON when it parses whole, or else the
    first JSON object or array in it (a fenced code block counts). ``value``: the
    expected value; equal means equal JSON values of the same type (``1`` is not
    ``true``, ``"1"`` is not ``1``) — a string value that is itself JSON (``"[1, 2]"``)
    is also compared parsed. ``value`` left empty expects ``null``.
``count_equals``
    ``value``: the expected count (an integer). ``path`` picks the reading:
    ``lines`` counts the non-empty lines of the output; ``number`` takes the first
    integer the output states; empty (the default) takes the integer that a one-line
    output starts with (``42``, ``42 files``, ``  42 total`` from ``wc -l``) and
    otherwise counts non-empty lines. Only for a count known before the work starts (the
    request states it): a count the task asks for is measured by ``count_matches``.
``count_matches``
    For "how many …" when the answer is not known in advance: code measures the count in
    the workspace and the output must state that number — a model's count is never taken
    on its word. ``path``: a workspace file, a directory, or a glob (``src/**/*.py``;
    ``**`` spans directories; a wildcard does not match a leading ``.``). ``value``: what
    to count — ``lines`` (a last line without a newline counts; ``wc -l``'s figure, one
    less, is also accepted), ``lines containing <text>`` (as ``grep -c``; case-sensitive),
    ``words`` (as ``wc -w``), ``bytes``, ``chars``, summed over the files the path names,
    or ``files`` (the regular files a glob matches or a
    directory holds, at any depth; symlinks are neither followed nor counted). Passes when
    the count the output states equals the measured count: the one value of the numbers
    it states (:func:`.grounding.stated_count`) that stand alone (``todo.txt`` or ``v2``
    are not numbers) outside code spans, quoted commands or outputs, exit codes and
    command options (``-maxdepth 0``), those the request states set aside while others
    remain; several different values, or none, state no count and fail
    (``Config.count_reads_answer``; a log from before it took the first number standing
    alone).

``table_value``
    Written by code, never by the model (``Config.code_table_check``): ``path`` is the one
    CSV (``.tsv``: tab-separated) file a question names, ``value`` the question itself.
    Code reads the question against the file's header and rows (``_tables.resolve``: a
    total, mean, highest or lowest of the one numeric column named; how many rows meet a
    condition — a cell value of a named column, or a comparison with a number; which
    value of a named column has the largest or smallest value) and computes the value;
    the output must state it — the first number it states that the question does not (a
    mean: rounded to the stated decimals), or the name as a word and no other value of
    its column. A question code cannot read that way (a word that names no column, value
    or aggregate: "the most *expensive*") gets no value: the check passes and proves
    nothing (``observed["unresolved"]``; :func:`computed` is false), and the answer is
    held to its derivations as if it were not there.

``code_value``
    Written by code, never by the model (``Config.code_lookup_check``): ``path`` is the
    one Python file a question names — or, for where a name is defined, the directory
    (``.``: the workspace) — and ``value`` the question. Python's parser looks up what it
    asks (``_lookups.resolve_lookup``: a module-level constant's literal value, a class's
    base classes, the files that define a function or class of a name the question
    says), judged as ``table_value``'s names and numbers are (another candidate the
    question does not say itself — another class, another file — fails it); a question
    code cannot read so looks up nothing and proves nothing.
``into`` (``count_matches`` and ``table_value`` only)
    A value the request asks to write to a file ("count the TODO lines in notes/todo.txt
    and write the count to todo_count.txt"): the check judges that workspace file's
    content (its first 4,096 characters, logged as ``observed["written"]``) instead of
    the answer; a file not written fails as logical. Code writes such checks
    (``code_count_check``, ``_tables.code_table_check``).

Every result carries evidence (what was seen) and, on failure, a suggested
``failure_class``: ``environmental`` when the environment is missing something the check
needs to read (the file is missing, the JSON does not parse), ``logical`` when the work
itself is wrong (a different value, a missing match, a wrong exit code).

A check that cannot be evaluated at all — an unknown kind (the error lists the
vocabulary), a bad regex or JSON path, a value of the wrong type — raises ValueError,
so the caller can fall back to the next rung of the ladder.
"""

from __future__ import annotations

import csv
import functools
import json
import os
import posixpath
import re
import stat
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import msgspec
import re2

from artoo.actors.tools import open_beneath
from artoo.schemas import Check
from artoo.schemas.messages import FailureClass

from ._counting import UNITS as _UNITS
from ._counting import count_command, measure, parse_unit, stated_number
from ._guards import (
    _integer,
    asks_count,
    asks_question,
    code_count_check,
    count_checked,
    guess_problem,
    measures_other,
    narrowed,
    widened,
)
from ._lookups import lookup_targets, resolve_lookup
from ._tables import TABLE_SUFFIXES, Resolved, parse_table, resolve, stated_values
from .grounding import stated_count, stated_numbers

__all__ = [
    "COMPUTED_KINDS",
    "VOCABULARY",
    "CheckResult",
    "asks_count",
    "asks_question",
    "check_problem",
    "code_count_check",
    "computed",
    "count_checked",
    "evaluate",
    "guess_problem",
    "judge_observed",
    "measures_other",
    "narrowed",
    "reads_workspace",
    "widened",
]

VOCABULARY: dict[str, str] = {
    "exit_code": "value = expected exit code (int, default 0)",
    "file_exists": "path = workspace file; value = true (default) or false for must-not-exist",
    "file_contains": "path = workspace file; value = text the file must contain",
    "file_matches": "path = workspace file; value = regex the file's content must match",
    "output_contains": "value = text that must occur in the output",
    "output_matches": "value = regex that re.search must find in the output",
    "json_path_equals": (
        "path = '$.a.b[0]' into the output as JSON, or 'file.json:$.a' into a workspace "
        "file; value = expected JSON value"
    ),
    "count_equals": (
        "value = expected int; path = '' (auto), 'lines' (non-empty lines) or 'number' "
        "(first integer stated); only for a count the request states"
    ),
    "count_matches": (
        "how many: path = workspace file, directory or glob (src/**/*.py); value = 'lines', "
        "'lines containing <text>', 'words', 'bytes', 'chars' or 'files'; code counts it, "
        "the output must state it"
    ),
}
"""The check kinds with a one-line description each (for the Perceiver's prompt)."""

_MAX_JSON_BYTES = 16 * 1024 * 1024  # a JSON file a check reads at most
_SNIPPET = 120


class CheckResult(msgspec.Struct, frozen=True, kw_only=True):
    """The decision of one check: passed, what was seen, and a failure class hint.

    ``observed``: for a check that reads the workspace, what it read there (the fact the
    decision rests on, e.g. ``{"exists": true, …}`` or the measured counts) — logged in
    the Verdict, so the decision can be recomputed from the log by :func:`judge_observed`.
    """

    passed: bool
    evidence: str
    failure_class: FailureClass | None = None
    observed: dict[str, Any] = {}


def evaluate(
    check: Check,
    *,
    output: str,
    exit_code: int | None,
    workspace: str | os.PathLike[str],
    count_request: str | None = None,
) -> CheckResult:
    """Decide ``check`` against an attempt's output, exit code and workspace.

    ``count_request`` (``Config.count_reads_answer``: the user's request; None, a log from
    before it): a ``count_matches`` takes the count the output states as
    :func:`.grounding.stated_count` reads it — no number of a code span, a quoted
    command, an exit code or an option, none the request states while others remain,
    and none when several remain — instead of the first number standing alone.

    Raises ValueError when the check is malformed (see the module docstring).
    """
    observe = _OBSERVERS.get(check.kind) if reads_workspace(check) else None
    if check.into and check.kind not in _INTO_KINDS:
        raise ValueError(f"{check.kind}: into is only for {' and '.join(_INTO_KINDS)}")
    if observe is not None:
        observed = observe(check, Path(workspace))
        if check.into:
            observed = {**observed, **_observe_written(check, Path(workspace))}
        result = _judge(check, output, observed, count_request)
        return msgspec.structs.replace(result, observed=observed)
    rule = _RULES.get(check.kind)
    if rule is None:
        kinds = ", ".join(VOCABULARY)
        raise ValueError(f"unknown check kind {check.kind!r}; the vocabulary is: {kinds}")
    return rule(check, output, exit_code, Path(workspace))


def judge_observed(
    check: Check, *, output: str, observed: dict[str, Any], count_request: str | None = None
) -> CheckResult:
    """Decide a workspace-reading ``check`` from what it read (``CheckResult.observed``,
    as logged) and the output: the same decision :func:`evaluate` made, without the
    workspace (pure; ``count_request`` as :func:`evaluate`'s).

    Raises ValueError when ``check`` does not read the workspace or is malformed.
    """
    if not reads_workspace(check) or check.kind not in _JUDGES:
        raise ValueError(f"a {check.kind} check does not read the workspace")
    result = _judge(check, output, observed, count_request)
    return msgspec.structs.replace(result, observed=observed)


_INTO_KINDS = ("count_matches", "table_value")
_WRITTEN = 4096  # the characters of a written file a check logs and judges at most


def _observe_written(check: Check, workspace: Path) -> dict[str, Any]:
    """What the file a value is written to holds (``{"written": …}``, its first 4,096
    characters), or why it cannot be read (``{"unwritten": …}``)."""
    read = _read_text(Check(kind=check.kind, path=check.into), workspace)
    if isinstance(read, dict):
        return {"unwritten": read["missing"]}
    text, _ = read
    return {"written": text[:_WRITTEN]}


def _judge(
    check: Check, output: str, observed: dict[str, Any], count_request: str | None = None
) -> CheckResult:
    """The judge of ``check``'s kind, on the output — or, for a value written to a file
    (``into``), on that file's content: a file not written fails as logical."""
    judge = _JUDGES[check.kind]
    if check.kind == "count_matches" and count_request is not None:
        judge = functools.partial(_judge_count, request=count_request)
    if not check.into:
        return judge(check, output, observed)
    if "unwritten" in observed:
        return _fail(f"the value is to be written to {observed['unwritten']}", "logical")
    result = judge(check, str(observed.get("written", "")), observed)
    evidence = result.evidence.replace("the output", f"'{check.into}'")
    return msgspec.structs.replace(result, evidence=evidence)


def check_problem(check: Check, workspace: str | os.PathLike[str]) -> str | None:
    """Why ``check`` cannot be used (an unknown kind, a path outside the workspace, a value
    of the wrong type for its kind), or None. A dry run of :func:`evaluate` (it only
    reads), so a plan is checked by the same rules its checks will be decided by."""
    try:
        evaluate(check, output="", exit_code=0, workspace=workspace)
    except ValueError as exc:
        return str(exc)
    return None


def reads_workspace(check: Check) -> bool:
    """True when ``check`` reads the workspace (a file or a count measured there), so its
    verdict cannot be recomputed from the event log alone (pure)."""
    if check.kind in ("file_exists", "file_contains", "file_matches", "count_matches"):
        return True
    if check.kind in COMPUTED_KINDS:
        return True
    return check.kind == "json_path_equals" and not check.path.strip().startswith("$")


COMPUTED_KINDS = ("table_value", "code_value")
"""The checks code writes whose value code computes from the request and the workspace —
or, when it cannot read the request so, computes nothing (``observed["unresolved"]``)."""


def computed(check: Check, observed: dict[str, Any]) -> bool:
    """Whether a passed verdict of ``check`` rests on what code read or computed in the
    workspace (pure): any check that reads it, but a ``table_value`` or ``code_value``
    that computed no value (``observed["unresolved"]``: its pass proves nothing)."""
    if not reads_workspace(check):
        return False
    return not (check.kind in COMPUTED_KINDS and "unresolved" in observed)


# =========================================================================== rules
def _exit_code(check: Check, output: str, exit_code: int | None, workspace: Path) -> CheckResult:
    expected = 0 if check.value is None else _integer(check.value, "exit_code")
    if exit_code is None:
        return _fail("no exit code was recorded (no command ran)", "logical")
    if exit_code == expected:
        return _pass(f"exit code {exit_code}, as expected")
    return _fail(f"exit code {exit_code}, expected {expected}", "logical")


def _file_exists_value(check: Check) -> bool:
    if check.value not in (None, True, False):
        raise ValueError(f"file_exists: value must be true or false, got {check.value!r}")
    return check.value is not False


def _observe_file_exists(check: Check, workspace: Path) -> dict[str, Any]:
    _file_exists_value(check)
    path, shown = _workspace_path(check.path, workspace, "file_exists")
    exists = os.path.lexists(path)
    if path.is_symlink():  # a name that exists; where it points is not looked at
        seen = f"'{shown}' exists (a symlink, not followed)"
    elif exists:
        what = "a directory" if path.is_dir() else f"{path.stat().st_size} bytes"
        seen = f"'{shown}' exists ({what})"
    else:
        seen = f"'{shown}' does not exist"
    return {"exists": exists, "seen": seen}


def _judge_file_exists(check: Check, output: str, observed: dict[str, Any]) -> CheckResult:
    want = _file_exists_value(check)
    seen = str(observed.get("seen", ""))
    if bool(observed.get("exists")) == want:
        return _pass(seen)
    return _fail(seen, "environmental" if want else "logical")


def _output_contains(
    check: Check, output: str, exit_code: int | None, workspace: Path
) -> CheckResult:
    if check.value is None or isinstance(check.value, bool) or check.value == "":
        raise ValueError("output_contains: value must be a non-empty text")
    needle = str(check.value)
    at = output.find(needle)
    if at >= 0:
        return _pass(f"found {needle!r} at character {at}: {_around(output, at, len(needle))}")
    return _fail(f"{needle!r} not in the output ({_describe(output)})", "logical")


_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False  # a bad pattern is our ValueError, not a line on stderr


def _pattern(check: Check) -> Any:
    """The compiled RE2 pattern of a ``*_matches`` check; ValueError when unusable."""
    if not isinstance(check.value, str) or not check.value:
        raise ValueError(f"{check.kind}: value must be a non-empty regular expression")
    try:
        return re2.compile("(?m)" + check.value, options=_RE2_OPTIONS)
    except re2.error as exc:
        reason = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else exc
        raise ValueError(
            f"{check.kind}: bad regular expression {check.value!r}: {reason}"
        ) from None


def _read_workspace_file(check: Check, workspace: Path, limit: int) -> tuple[bytes, str] | str:
    """The first bytes of the workspace file ``check.path`` (at most ``limit`` + 1) and its
    shown name, read race-free beneath the workspace with no symlink followed; or a text
    saying why it cannot be read. ValueError for a path outside the workspace."""
    path, shown = _workspace_path(check.path, workspace, check.kind)
    if path.is_symlink() or not path.is_file():
        return f"'{shown}' does not exist (or is not a regular file)"
    try:  # race-free beneath the workspace, no symlink followed, never blocking
        fd = open_beneath(workspace.resolve(), shown, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        return f"'{shown}' cannot be read beneath the workspace: {exc}"
    with open(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return f"'{shown}' is not a regular file"
        return f.read(limit + 1), shown


def _read_text(check: Check, workspace: Path) -> tuple[str, str] | dict[str, Any]:
    """The workspace file ``check.path`` as text (UTF-8, with replacement) and its shown
    name, or the observation of why it cannot be read (``{"missing": …}``; at most
    16 MiB)."""
    read = _read_workspace_file(check, workspace, _MAX_JSON_BYTES)
    if isinstance(read, str):
        return {"missing": read}
    raw, shown = read
    if len(raw) > _MAX_JSON_BYTES:
        return {"missing": f"'{shown}' is over {_MAX_JSON_BYTES:,} bytes"}
    return raw.decode("utf-8", errors="replace"), shown


def _content_value(check: Check) -> Any:
    if check.kind == "file_matches":
        return _pattern(check)
    if not isinstance(check.value, str | int | float) or isinstance(check.value, bool):
        raise ValueError(f"{check.kind}: value must be a non-empty text")
    if check.value == "":
        raise ValueError(f"{check.kind}: value must be a non-empty text")
    return str(check.value)


def _observe_file_content(check: Check, workspace: Path) -> dict[str, Any]:
    """Whether the file holds the text / a match (``{"found", "seen"}``), or why it could
    not be read (``{"missing": …}``). The file's content is not logged: what it showed is."""
    wanted = _content_value(check)
    read = _read_text(check, workspace)
    if isinstance(read, dict):
        return read
    text, shown = read
    if check.kind == "file_matches":
        m = wanted.search(text)
        if m:
            seen = f"/{check.value}/ matched {_clip(m.group())!r} in '{shown}'"
            return {"found": True, "seen": seen}
        seen = f"no match for /{check.value}/ in '{shown}' ({_describe(text)})"
        return {"found": False, "seen": seen}
    at = text.find(wanted)
    if at >= 0:
        seen = f"'{shown}' contains {wanted!r}: {_around(text, at, len(wanted))}"
        return {"found": True, "seen": seen}
    return {"found": False, "seen": f"'{shown}' does not contain {wanted!r} ({_describe(text)})"}


def _judge_file_content(check: Check, output: str, observed: dict[str, Any]) -> CheckResult:
    _content_value(check)
    if "missing" in observed:
        return _fail(str(observed["missing"]), "environmental")
    seen = str(observed.get("seen", ""))
    return _pass(seen) if observed.get("found") else _fail(seen, "logical")


def _output_matches(
    check: Check, output: str, exit_code: int | None, workspace: Path
) -> CheckResult:
    pattern = _pattern(check)
    m = pattern.search(output)
    if m:
        return _pass(f"/{check.value}/ matched {_clip(m.group())!r} at character {m.start()}")
    return _fail(f"no match for /{check.value}/ in the output ({_describe(output)})", "logical")


def _json_path_equals(
    check: Check, output: str, exit_code: int | None, workspace: Path
) -> CheckResult:
    _, expression = _split_json_path(check.path)  # the output's (see reads_workspace)
    steps = _json_steps(expression)
    try:
        document = _json_in(output)
    except ValueError:
        return _fail(f"the output is not JSON ({_describe(output)})", "environmental")
    return _json_compare(check, expression, steps, document, "the output")


def _json_compare(
    check: Check, expression: str, steps: list[str | int], document: Any, where: str
) -> CheckResult:
    try:
        actual = _walk(document, steps)
    except LookupError as exc:
        return _fail(f"{exc} in {where}", "logical")
    expected = check.value
    seen = f"{expression} in {where} is {_show(actual)}"
    if _equal(actual, expected):
        return _pass(seen)
    return _fail(f"{seen}, expected {_show(expected)}", "logical")


_MAX_OBSERVED_JSON = 16 * 1024  # a JSON value logged as observed at most (encoded)


def _observe_json_file(check: Check, workspace: Path) -> dict[str, Any]:
    """The value at the check's JSON path in its workspace file (``{"value": …}``), or
    why there is none (``{"missing": …}``: the environment's; ``{"lookup": …}``: the
    path does not lead to a value). A value over 16 KiB is logged as its comparison
    with the check's value (``{"large": …, "equal": …}``)."""
    source, expression = _split_json_path(check.path)
    steps = _json_steps(expression)
    assert source is not None
    path, shown = _workspace_path(source, workspace, "json_path_equals")
    if not path.is_file() or path.is_symlink():
        return {"missing": f"'{shown}' does not exist"}
    try:  # race-free beneath the workspace, no symlink followed, never blocking
        fd = open_beneath(workspace.resolve(), shown, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        return {"missing": f"'{shown}' cannot be read beneath the workspace: {exc}"}
    with open(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return {"missing": f"'{shown}' is not a regular file"}
        raw = f.read(_MAX_JSON_BYTES + 1)
    if len(raw) > _MAX_JSON_BYTES:
        return {"missing": f"'{shown}' is over {_MAX_JSON_BYTES:,} bytes"}
    try:
        document = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        return {"missing": f"'{shown}' is not valid JSON: {exc}"}
    try:
        actual = _walk(document, steps)
    except LookupError as exc:
        return {"lookup": f"{exc} in '{shown}'"}
    if len(json.dumps(actual)) > _MAX_OBSERVED_JSON:
        return {
            "large": f"{expression} in '{shown}' is {_show(actual)}",
            "equal": _equal(actual, check.value),
        }
    return {"value": actual, "where": f"'{shown}'"}


def _judge_json_file(check: Check, output: str, observed: dict[str, Any]) -> CheckResult:
    _, expression = _split_json_path(check.path)
    if "missing" in observed:
        return _fail(str(observed["missing"]), "environmental")
    if "lookup" in observed:
        return _fail(str(observed["lookup"]), "logical")
    if "large" in observed:
        seen = str(observed["large"])
        if observed.get("equal"):
            return _pass(seen)
        return _fail(f"{seen}, expected {_show(check.value)}", "logical")
    document = observed.get("value")
    return _json_compare(check, expression, [], document, str(observed.get("where", "")))


def _count_equals(check: Check, output: str, exit_code: int | None, workspace: Path) -> CheckResult:
    expected = _integer(check.value, "count_equals")
    mode = check.path.strip()
    if mode not in ("", "lines", "number"):
        raise ValueError(f"count_equals: path must be '', 'lines' or 'number', got {mode!r}")
    lines = [line for line in output.splitlines() if line.strip()]
    if mode == "number":
        m = re.search(r"-?\d+", output)
        if m is None:
            return _fail(f"the output states no number ({_describe(output)})", "logical")
        count, how = int(m.group()), "the output states"
    elif mode == "" and len(lines) == 1 and (m := re.match(r"^\s*(-?\d+)\b", lines[0])):
        count, how = int(m.group(1)), "the output states"
    else:
        count, how = len(lines), "non-empty lines counted:"
    if count == expected:
        return _pass(f"{how} {count}, as expected")
    return _fail(f"{how} {count}, expected {expected}", "logical")


def _count_unit(check: Check) -> tuple[str, str | None]:
    parsed = parse_unit(check.value)
    if parsed is None:
        raise ValueError(
            f"count_matches: value must be one of {', '.join(_UNITS)}, got {check.value!r}"
        )
    return parsed


def _observe_count(check: Check, workspace: Path) -> dict[str, Any]:
    unit, containing = _count_unit(check)
    measured = measure(check.path, unit, workspace, containing)
    if isinstance(measured, str):  # nothing to count: the environment lacks it
        return {"missing": measured}
    counts, seen = measured
    observed: dict[str, Any] = {"counts": sorted(counts), "seen": seen}
    directory = (workspace / check.path.strip()).is_dir()
    command = count_command(check.path.strip(), check.value, directory=directory)
    if command is not None and not check.into:  # what prints it, for a retry to run
        observed["command"] = command
    return observed


def _judge_count(
    check: Check, output: str, observed: dict[str, Any], request: str | None = None
) -> CheckResult:
    _count_unit(check)
    if "missing" in observed:
        return _fail(str(observed["missing"]), "environmental")
    counts = {int(c) for c in observed.get("counts", [])}
    seen = str(observed.get("seen", ""))
    stated = stated_number(output) if request is None else stated_count(output, request)
    if stated is None and request is not None and stated_numbers(output, request, quoted=True):
        shown = ", ".join(dict.fromkeys(stated_numbers(output, request, quoted=True)))
        return _fail(
            f"{seen}; the output states no one count ({shown}: {_describe(output)})", "logical"
        )
    if stated is None:
        return _fail(f"{seen}; the output states no number ({_describe(output)})", "logical")
    if stated in counts:
        return _pass(f"{seen}; the output states {stated}")
    return _fail(f"{seen}; the output states {stated}", "logical")


def _question(check: Check) -> str:
    """The question a computed check (``table_value``, ``code_value``) holds as its value;
    ValueError when it holds none, or a table check names no table."""
    if not isinstance(check.value, str) or not check.value.strip():
        raise ValueError(f"{check.kind}: value must be the question (a non-empty text)")
    if check.kind == "table_value" and not check.path.lower().endswith(TABLE_SUFFIXES):
        raise ValueError(f"table_value: path must be a .csv or .tsv file, got {check.path!r}")
    return check.value


def _observe_table(check: Check, workspace: Path) -> dict[str, Any]:
    """What code computed from the table (``{"values", "numbers", "others", "approximate",
    "seen"}``), why it computed nothing (``{"unresolved": …}``), or why the file could not
    be read (``{"missing": …}``)."""
    question = _question(check)
    read = _read_text(check, workspace)
    if isinstance(read, dict):
        return read
    text, shown = read
    try:
        header, rows = parse_table(text, shown)
    except (ValueError, csv.Error) as exc:
        return {"unresolved": f"'{shown}' does not read as a table: {exc}"}
    resolved = resolve(question, header, rows, shown, check.into)
    if isinstance(resolved, str):
        return {"unresolved": f"code cannot compute it from '{shown}': {resolved}"}
    return msgspec.to_builtins(resolved)


def _observe_code(check: Check, workspace: Path) -> dict[str, Any]:
    """What code looked up in the Python code the question names (as ``table_value``'s
    observation), why it found nothing (``{"unresolved": …}``), or why nothing could be
    read (``{"missing": …}``)."""
    question = _question(check)
    path, shown = _workspace_path(check.path, workspace, check.kind)
    if lookup_targets(question) == "file" or path.is_file():
        names = [shown]
    elif path.is_dir() and not path.is_symlink():
        names = sorted(
            posixpath.relpath(str(p), str(workspace.resolve()))
            for p in path.resolve().rglob("*.py")
            if p.is_file() and not p.is_symlink()
        )[:_MAX_SOURCES]
    else:
        return {"missing": f"'{shown}' does not exist"}
    sources: dict[str, str] = {}
    for name in names:
        read = _read_text(Check(kind=check.kind, path=name), workspace)
        if isinstance(read, dict):
            if name == shown:
                return read
            continue
        sources[read[1]] = read[0]
    resolved = resolve_lookup(question, sources, shown)
    if isinstance(resolved, str):
        return {"unresolved": f"code cannot look it up in '{shown}': {resolved}"}
    return msgspec.to_builtins(resolved)


_MAX_SOURCES = 200  # the Python files under a directory a code_value check reads at most


def _judge_computed(check: Check, output: str, observed: dict[str, Any]) -> CheckResult:
    question = _question(check)
    if "missing" in observed:
        return _fail(str(observed["missing"]), "environmental")
    if "unresolved" in observed:
        return _pass(f"{observed['unresolved']}: no proof either way")
    resolved = msgspec.convert(observed, Resolved)
    given = {_decimal(n) for n in stated_numbers(question)}
    stated = [n for n in stated_numbers(output, question) if _decimal(n) not in given]
    problem = stated_values(resolved, stated, output, question)
    if problem is None:
        return _pass(f"{resolved.seen}; the output states it")
    return _fail(f"{resolved.seen}; {problem}", "logical")


def _decimal(token: str) -> Decimal | None:
    try:
        return Decimal(token.replace(",", ""))
    except InvalidOperation:
        return None


_Rule = Callable[[Check, str, "int | None", Path], CheckResult]
_RULES: dict[str, _Rule] = {  # the checks decided from the output and exit code alone
    "exit_code": _exit_code,
    "output_contains": _output_contains,
    "output_matches": _output_matches,
    "json_path_equals": _json_path_equals,
    "count_equals": _count_equals,
}
# a check that reads the workspace: what it read (logged), then the decision from that
_OBSERVERS: dict[str, Callable[[Check, Path], dict[str, Any]]] = {
    "file_exists": _observe_file_exists,
    "file_contains": _observe_file_content,
    "file_matches": _observe_file_content,
    "json_path_equals": _observe_json_file,
    "count_matches": _observe_count,
    "table_value": _observe_table,
    "code_value": _observe_code,
}
_JUDGES: dict[str, Callable[[Check, str, dict[str, Any]], CheckResult]] = {
    "file_exists": _judge_file_exists,
    "file_contains": _judge_file_content,
    "file_matches": _judge_file_content,
    "json_path_equals": _judge_json_file,
    "count_matches": _judge_count,
    "table_value": _judge_computed,
    "code_value": _judge_computed,
}


# =========================================================================== helpers
def _pass(evidence: str) -> CheckResult:
    return CheckResult(passed=True, evidence=evidence)


def _fail(evidence: str, failure_class: FailureClass) -> CheckResult:
    return CheckResult(passed=False, evidence=evidence, failure_class=failure_class)


def _workspace_path(raw: str, workspace: Path, kind: str) -> tuple[Path, str]:
    if not raw.strip():
        raise ValueError(f"{kind}: path is empty")
    root = workspace.resolve()
    path = Path(os.path.normpath(root / raw))
    if path != root and root not in path.parents:
        raise ValueError(f"{kind}: path {raw!r} is outside the workspace")
    return path, path.relative_to(root).as_posix()


def _clip(text: str, limit: int = _SNIPPET) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _around(text: str, at: int, width: int) -> str:
    start = max(0, at - 40)
    return repr(_clip(text[start : at + width + 40]))


def _describe(output: str) -> str:
    if not output:
        return "the output is empty"
    tail = output.rstrip()[-_SNIPPET:]
    return f"{len(output)} chars, ending {tail!r}"


def _show(value: Any) -> str:
    return _clip(json.dumps(value, ensure_ascii=False))


# --------------------------------------------------------------------------- JSON
_STEP = re.compile(r"\.([^.\[\]]+)|\[\s*(-?\d+)\s*\]|\[\s*'([^']*)'\s*\]|\[\s*\"([^\"]*)\"\s*\]")


def _split_json_path(path: str) -> tuple[str | None, str]:
    path = path.strip()
    if not path:
        raise ValueError("json_path_equals: path is empty (use '$' for the whole output)")
    if path.startswith("$"):
        return None, path
    source, sep, expression = path.rpartition(":$")
    if not sep or not source:
        raise ValueError(f"json_path_equals: path {path!r} must be '$…' or 'file.json:$…'")
    return source, "$" + expression


def _json_steps(expression: str) -> list[str | int]:
    steps: list[str | int] = []
    at = 1
    while at < len(expression):
        m = _STEP.match(expression, at)
        if m is None:
            raise ValueError(f"json_path_equals: cannot read {expression!r} at {expression[at:]!r}")
        key, index, single, double = m.groups()
        steps.append(
            int(index)
            if index is not None
            else next(s for s in (key, single, double) if s is not None)
        )
        at = m.end()
    return steps


def _walk(document: Any, steps: list[str | int]) -> Any:
    node = document
    walked = "$"
    for step in steps:
        if isinstance(step, int):
            if not isinstance(node, list):
                raise LookupError(f"{walked} is not an array")
            if not -len(node) <= step < len(node):
                raise LookupError(f"no index {step} at {walked} (length {len(node)})")
            node = node[step]
            walked += f"[{step}]"
        else:
            if not isinstance(node, dict):
                raise LookupError(f"{walked} is not an object")
            if step not in node:
                raise LookupError(f"no key {step!r} at {walked}")
            node = node[step]
            walked += f".{step}"
    return node


def _json_in(output: str) -> Any:
    """The JSON value of the output: the whole text, a fenced block, or the first
    object or array in it."""
    text = output.strip()
    try:
        return json.loads(text)
    except ValueError:
        pass
    fenced = re.search(r"```(?:json)?[ \t]*\n(.*?)```", output, re.DOTALL)
    if fenced:
        try:
            return json.loads(fenced.group(1))
        except ValueError:
            pass
    decoder = json.JSONDecoder()
    for tries, m in enumerate(re.finditer(r"[\[{]", output)):
        if tries >= 50:
            break
        try:
            return decoder.raw_decode(output, m.start())[0]
        except ValueError:
            continue
    raise ValueError("no JSON value in the output")


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    return type(a) is type(b) and a == b


def _equal(actual: Any, expected: Any) -> bool:
    if _same(actual, expected):
        return True
    if isinstance(expected, str) and not isinstance(actual, str):
        try:
            return _same(actual, json.loads(expected))
        except ValueError:
            return False
    return False
