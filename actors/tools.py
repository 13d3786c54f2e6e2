"""The Executor's tools: a registry of built-in and host-registered tools.

Equipment of the Executor (R3), not a role: it imports only ``artoo.schemas``, its
sibling ``law1`` and the standard library.

Built-in tools (their JSON schemas come from the type hints and docstrings below):

* ``glob(pattern)`` — workspace paths matching a glob pattern.
* ``read_file(path, offset=0, limit=SPILL_LIMIT)`` — a page of a text file (offsets in
  characters).
* ``write_file(path, content)`` — create or replace a text file.
* ``shell(command, timeout_s=None)`` — run a command with cwd = workspace, a timeout and
  an output cap; the result carries the exit code, stdout and stderr (a non-zero exit or
  a timeout makes the call ``ok=False``).
* ``load_data(filename, offset=0, limit=SPILL_LIMIT)`` — read a spilled result back.

Hosts add their own with :meth:`ToolRegistry.register`.

Guards, in the order they apply to a call:

1. **Arguments** are checked against the tool's schema; a wrong call never raises, it
   gives a ToolCall with ``ok=False`` and an error naming the problem.
2. **Workspace confinement**: file tools resolve paths inside the workspace root only;
   ``..`` escapes, absolute paths outside and symlinks leading outside are refused.
3. **Blocked targets** (DESIGN §4.1) are refused, matched on the resolved path and its
   parents (for ``shell``: on every path-like argument, redirection and the program).
4. **Law 1**: before ``shell`` or ``write_file`` runs an irreversible action (see
   :mod:`artoo.actors.law1`) the registry calls ``confirm``; denied → ``ok=False`` with
   an error starting ``"[LAW1] denied: "``.

Results follow Hive's spillover pattern: the full result of every call that ran is
saved to ``spill_dir/{tool}_{n}.txt`` (``n`` monotonic across tools, restored from the
files already there). The model's context gets the result whole when it fits in
:data:`CONTEXT_LIMIT` characters, otherwise its head and tail within that limit and the
file name; over :data:`SPILL_LIMIT` characters the content ends with the pointer
``Use load_data(filename='shell_3.txt') to read the full result.`` and the ToolCall's
``spill_ref`` names the file. ``load_data`` results are never spilled again; a page over
:data:`SPILL_LIMIT` is cut with a pagination hint.
"""

from __future__ import annotations

import inspect
import os
import re
import shutil
import signal
import subprocess
import threading
import time
import types
import typing
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

import msgspec

from artoo.actors.law1 import ShellSyntaxError, classify_shell, classify_write, parse_commands
from artoo.schemas import Refusal, ToolCall, ToolSpec

__all__ = [
    "CONTEXT_LIMIT",
    "SPILL_LIMIT",
    "ConfirmationNeeded",
    "ToolOutcome",
    "ToolRegistry",
    "deny",
    "head_tail",
]

CONTEXT_LIMIT = 4 * 1024
"""Characters of a result that go into the model's context (head + tail)."""

SPILL_LIMIT = 30 * 1024
"""Results longer than this get a load_data pointer and a ToolCall.spill_ref."""

_SHELL = shutil.which("bash") or "/bin/sh"
_TARGET_PARAMS = ("path", "file", "filename", "target", "directory", "dir", "url")
_SPILL_NAME = re.compile(r"^.+_(\d+)\.txt$")
_TOOL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")

F = TypeVar("F", bound=Callable[..., Any])


class ConfirmationNeeded(msgspec.Struct, frozen=True, kw_only=True):
    """An irreversible action waiting for a yes (the Executor turns it into a
    ConfirmationRequest on the bus)."""

    tool: str
    args: dict[str, Any]
    target: str | None
    reason: str
    action: str
    subtask_id: str = ""
    attempt: int = 1


class ToolOutcome(msgspec.Struct, frozen=True, kw_only=True):
    """What one call gives: the structured ToolCall record (``call``; for ``shell`` it
    carries the exit code), the text the model sees (``content``) and the full result
    (``output``)."""

    call: ToolCall
    content: str
    output: str = ""


def deny(request: ConfirmationNeeded) -> bool:
    """The default ``confirm``: every irreversible action is denied."""
    return False


def head_tail(text: str, limit: int = CONTEXT_LIMIT) -> str:
    """``text`` itself if it fits in ``limit`` characters, else its head and tail with
    ``"… [N chars omitted] …"`` between them, ``limit`` characters at most."""
    if len(text) <= limit:
        return text
    marker_len = len(f"\n… [{'9' * len(str(len(text)))} chars omitted] …\n")
    budget = limit - marker_len
    if budget <= 1:
        return text[:limit]
    head, tail = budget - budget // 2, budget // 2
    return f"{text[:head]}\n… [{len(text) - head - tail} chars omitted] …\n{text[-tail:]}"


# =========================================================================== internals
class _ToolError(Exception):
    """A call that could not run (refused or failed before producing output)."""

    def __init__(
        self, message: str, target: str | None = None, refusal: Refusal | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.target = target
        self.refusal = refusal


class _BadArgs(Exception):
    pass


@dataclass(frozen=True, slots=True)
class _Call:
    args: dict[str, Any]
    subtask_id: str
    attempt: int
    blocked: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _Result:
    text: str
    target: str | None
    ok: bool = True
    error: str | None = None
    exit_code: int | None = None


@dataclass(frozen=True, slots=True)
class _Param:
    name: str
    check: Callable[[Any], Any]
    required: bool
    default: Any


@dataclass(frozen=True, slots=True)
class _Tool:
    spec: ToolSpec
    params: tuple[_Param, ...]
    run: Callable[[dict[str, Any], _Call], _Result]
    spill: bool = True


# --------------------------------------------------------------------------- schemas
def _type_schema(tp: Any) -> tuple[dict[str, Any], Callable[[Any], Any]]:
    """The JSON schema of a type hint and a checker that validates (and coerces) a value."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if tp is Any:
        return {}, lambda v: v
    if tp is str:
        return {"type": "string"}, _checker(lambda v: isinstance(v, str), "a string")
    if tp is bool:
        return {"type": "boolean"}, _checker(lambda v: isinstance(v, bool), "a boolean")
    if tp is int:
        return {"type": "integer"}, _check_int
    if tp is float:
        return {"type": "number"}, _check_float
    if origin is Literal:
        kinds = {type(a) for a in args}
        schema: dict[str, Any] = {"enum": list(args)}
        json_type = {str: "string", int: "integer", bool: "boolean", float: "number"}
        if len(kinds) == 1 and next(iter(kinds)) in json_type:
            schema["type"] = json_type[next(iter(kinds))]

        def check_literal(v: Any) -> Any:
            if any(v == a and type(v) is type(a) for a in args):
                return v
            raise _BadArgs(f"must be one of {list(args)!r}, got {v!r}")

        return schema, check_literal
    if origin in (typing.Union, types.UnionType):
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1 and len(args) == 2:
            inner, check = _type_schema(rest[0])
            return {"anyOf": [inner, {"type": "null"}]}, lambda v: None if v is None else check(v)
        raise TypeError(f"unsupported union type {tp!r} (only X | None)")
    if tp is list or origin is list:
        item_schema, check_item = _type_schema(args[0]) if args else ({}, lambda v: v)

        def check_list(v: Any) -> Any:
            if not isinstance(v, list):
                raise _BadArgs(f"must be an array, got {_json_type(v)}")
            return [check_item(x) for x in v]

        return {"type": "array", "items": item_schema}, check_list
    if tp is dict or origin is dict:
        return {"type": "object"}, _checker(lambda v: isinstance(v, dict), "an object")
    raise TypeError(f"unsupported parameter type {tp!r}")


def _checker(ok: Callable[[Any], bool], what: str) -> Callable[[Any], Any]:
    def check(v: Any) -> Any:
        if not ok(v):
            raise _BadArgs(f"must be {what}, got {_json_type(v)}")
        return v

    return check


def _check_int(v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise _BadArgs(f"must be an integer, got {_json_type(v)}")
    if isinstance(v, float):
        if not v.is_integer():
            raise _BadArgs(f"must be an integer, got {v!r}")
        return int(v)
    return v


def _check_float(v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise _BadArgs(f"must be a number, got {_json_type(v)}")
    return float(v)


def _json_type(v: Any) -> str:
    names = {str: "string", bool: "boolean", int: "integer", float: "number", list: "array"}
    return "null" if v is None else names.get(type(v), "object" if isinstance(v, dict) else "?")


_SECTION = re.compile(
    r"^(Args|Arguments|Parameters|Params|Returns?|Yields?|Raises|Examples?|Notes?):\s*$"
)
_ARG_LINE = re.compile(r"^(\*{0,2}\w+)\s*(\([^)]*\))?\s*:\s*(.*)$")
_SPHINX = re.compile(r"^:param\s+(?:[\w\[\], |]+\s+)?(\w+):\s*(.*)$")


def _parse_doc(doc: str | None) -> tuple[str, dict[str, str]]:
    """A docstring's summary and its per-parameter descriptions (Google or Sphinx)."""
    lines = inspect.cleandoc(doc or "").splitlines()
    summary: list[str] = []
    params: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    for line in lines:
        stripped = line.strip()
        header = _SECTION.match(stripped)
        sphinx = _SPHINX.match(stripped)
        if header and not line.startswith(" "):
            section, current = header.group(1), None
        elif sphinx:
            section, current = "Args", sphinx.group(1)
            params[current] = sphinx.group(2).strip()
        elif section is None:
            summary.append(line)
        elif section in ("Args", "Arguments", "Parameters", "Params") and stripped:
            entry = _ARG_LINE.match(stripped)
            indent = len(line) - len(line.lstrip())
            if entry and (current is None or indent <= _indent_of(lines, current)):
                current = entry.group(1).lstrip("*")
                params[current] = entry.group(3).strip()
            elif current is not None:
                params[current] = f"{params[current]} {stripped}".strip()
    text = "\n".join(summary).strip()
    return re.sub(r"(?<!\n)\n(?!\n)", " ", text), params


def _indent_of(lines: list[str], name: str) -> int:
    for line in lines:
        if re.match(rf"^\s*\*{{0,2}}{re.escape(name)}\s*(\([^)]*\))?\s*:", line):
            return len(line) - len(line.lstrip())
    return 0


_BUILTIN_SPECS: dict[tuple[Any, str], tuple[ToolSpec, tuple[_Param, ...]]] = {}


def _describe(
    fn: Callable[..., Any], name: str, *, skip: int
) -> tuple[ToolSpec, tuple[_Param, ...]]:
    """A ToolSpec (JSON-schema parameters) and argument checkers from a function."""
    summary, docs = _parse_doc(fn.__doc__)
    hints = typing.get_type_hints(fn)
    properties: dict[str, Any] = {}
    required: list[str] = []
    params: list[_Param] = []
    for p in list(inspect.signature(fn).parameters.values())[skip:]:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise TypeError(f"tool {name}: *{p.name} parameters are not supported")
        if p.name not in hints:
            raise TypeError(f"tool {name}: parameter '{p.name}' needs a type hint")
        schema, check = _type_schema(hints[p.name])
        if p.name in docs:
            schema = {**schema, "description": docs[p.name]}
        has_default = p.default is not inspect.Parameter.empty
        if has_default:
            schema = {**schema, "default": p.default}
        else:
            required.append(p.name)
        properties[p.name] = schema
        params.append(_Param(p.name, check, not has_default, p.default if has_default else None))
    parameters = {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }
    return ToolSpec(name=name, description=summary, parameters=parameters), tuple(params)


def _bind(tool: _Tool, args: Any) -> dict[str, Any]:
    if not isinstance(args, dict):
        raise _BadArgs(f"arguments must be a JSON object, got {_json_type(args)}")
    known = {p.name for p in tool.params}
    unknown = sorted(set(args) - known)
    if unknown:
        expected = ", ".join(p.name for p in tool.params) or "none"
        raise _BadArgs(f"unexpected argument(s) {', '.join(unknown)} (expected: {expected})")
    bound: dict[str, Any] = {}
    for p in tool.params:
        if p.name in args:
            try:
                bound[p.name] = p.check(args[p.name])
            except _BadArgs as exc:
                raise _BadArgs(f"argument '{p.name}' {exc}") from None
        elif p.required:
            raise _BadArgs(f"missing required argument '{p.name}'")
        else:
            bound[p.name] = p.default
    return bound


# --------------------------------------------------------------------------- shell
@dataclass(frozen=True, slots=True)
class _Run:
    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool
    dropped: int


class _Budget:
    """The output cap shared by stdout and stderr of one run."""

    def __init__(self, cap: int) -> None:
        self._lock = threading.Lock()
        self.remaining = cap
        self.dropped = 0

    def take(self, n: int) -> int:
        with self._lock:
            keep = min(n, self.remaining)
            self.remaining -= keep
            self.dropped += n - keep
            return keep


def _drain(stream: typing.IO[bytes], budget: _Budget, chunks: list[bytes]) -> None:
    try:
        fd = stream.fileno()
        while data := os.read(fd, 65536):
            keep = budget.take(len(data))
            if keep:
                chunks.append(data[:keep])
    except OSError:
        pass
    finally:
        stream.close()


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _run_shell(command: str, cwd: Path, timeout_s: float, cap: int) -> _Run:
    """Run ``command`` in its own process group; kill the group at the timeout."""
    proc = subprocess.Popen(
        [_SHELL, "-c", command],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    deadline = time.monotonic() + timeout_s
    budget = _Budget(cap)
    out: list[bytes] = []
    err: list[bytes] = []
    assert proc.stdout is not None and proc.stderr is not None
    readers = [
        threading.Thread(target=_drain, args=(proc.stdout, budget, out), daemon=True),
        threading.Thread(target=_drain, args=(proc.stderr, budget, err), daemon=True),
    ]
    for reader in readers:
        reader.start()
    timed_out = False
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(proc)
        proc.wait()
    for reader in readers:  # children left in the background may hold the pipes open
        reader.join(timeout=max(0.05, deadline - time.monotonic()))
    if any(r.is_alive() for r in readers):
        _kill_group(proc)
        for reader in readers:
            reader.join(timeout=1.0)
    return _Run(
        exit_code=None if timed_out else proc.returncode,
        stdout=b"".join(out).decode("utf-8", "replace"),
        stderr=b"".join(err).decode("utf-8", "replace"),
        timed_out=timed_out,
        dropped=budget.dropped,
    )


def _format_run(run: _Run, timeout_s: float, cap: int) -> str:
    if run.timed_out:
        lines = [f"timed out after {timeout_s:g} s; process killed"]
    elif run.exit_code is not None and run.exit_code < 0:
        lines = [f"killed by signal {-run.exit_code}"]
    else:
        lines = [f"exit code: {run.exit_code}"]
    if run.stdout:
        lines.append("--- stdout ---\n" + run.stdout.rstrip("\n"))
    if run.stderr:
        lines.append("--- stderr ---\n" + run.stderr.rstrip("\n"))
    if run.dropped:
        lines.append(f"[output capped at {cap:,} bytes; {run.dropped:,} bytes dropped]")
    return "\n".join(lines)


def _render(value: Any) -> str:
    """A host function's return value as text (JSON pretty-printed for paging)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    try:
        return msgspec.json.format(msgspec.json.encode(value), indent=2).decode()
    except (TypeError, msgspec.EncodeError):
        return str(value)


def _record_args(args: Any) -> dict[str, Any]:
    """Arguments as kept in the ToolCall record (long strings cut to CONTEXT_LIMIT)."""
    if not isinstance(args, dict):
        return {}
    return {
        str(k): head_tail(v) if isinstance(v, str) else v for k, v in args.items() if _encodable(v)
    }


def _encodable(value: Any) -> bool:
    try:
        msgspec.msgpack.encode(value)
    except (TypeError, msgspec.EncodeError, OverflowError):
        return False
    return True


def _last_spill_number(spill_dir: Path) -> int:
    numbers = [int(m.group(1)) for p in spill_dir.iterdir() if (m := _SPILL_NAME.match(p.name))]
    return max(numbers, default=0)


_PATHISH = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,7}$")


# =========================================================================== the registry
class ToolRegistry:
    """The tools one Executor may call, with confinement, blocked targets, Law 1 and
    spillover applied to every call.

    ``workspace`` is the root file tools are confined to and ``shell`` runs in;
    ``spill_dir`` receives the full result of every call; ``blocked_targets`` are
    workspace-relative (or absolute) paths, or program names, that no call may touch;
    ``confirm`` is asked before an irreversible action (default: :func:`deny`);
    ``clock`` is the monotonic clock that times calls.
    """

    def __init__(
        self,
        workspace: str | os.PathLike[str],
        spill_dir: str | os.PathLike[str],
        *,
        blocked_targets: Iterable[str] = (),
        shell_timeout_s: float = 30.0,
        output_cap: int = 1_000_000,
        confirm: Callable[[ConfirmationNeeded], bool] = deny,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        root = Path(workspace)
        if not root.is_dir():
            raise ValueError(f"workspace {str(root)!r} is not a directory")
        if shell_timeout_s <= 0 or output_cap <= 0:
            raise ValueError("shell_timeout_s and output_cap must be positive")
        self.workspace = root.resolve()
        self._given_root = Path(os.path.abspath(root))
        self.spill_dir = Path(spill_dir)
        self.spill_dir.mkdir(parents=True, exist_ok=True)
        self.blocked_targets = tuple(blocked_targets)
        self.shell_timeout_s = shell_timeout_s
        self.output_cap = output_cap
        self._confirm = confirm
        self._clock = clock
        self._lock = threading.Lock()
        self._counter = _last_spill_number(self.spill_dir)
        self._tools: dict[str, _Tool] = {}
        for name, method in (
            ("glob", self._glob),
            ("read_file", self._read_file),
            ("write_file", self._write_file),
            ("shell", self._shell),
            ("load_data", self._load_data),
        ):
            key = (method.__func__, name)
            if key not in _BUILTIN_SPECS:  # describing a function is slow; do it once
                _BUILTIN_SPECS[key] = _describe(method, name, skip=1)
            spec, params = _BUILTIN_SPECS[key]
            self._tools[name] = _Tool(
                spec, params, lambda a, c, m=method: m(c, **a), spill=name != "load_data"
            )

    # ----------------------------------------------------------------- public API
    def specs(self, only: Iterable[str] | None = None) -> list[ToolSpec]:
        """The tools as described to the model (all, or those named in ``only``)."""
        if only is None:
            return [t.spec for t in self._tools.values()]
        wanted = set(only)
        return [t.spec for name, t in self._tools.items() if name in wanted]

    def register(self, fn: F, *, name: str | None = None) -> F:
        """Add a host function as a tool; its schema comes from its type hints
        (``str``, ``int``, ``float``, ``bool``, ``list[...]``, ``dict``, ``Literal``,
        ``X | None``, defaults) and its docstring (summary; Google ``Args:`` or Sphinx
        ``:param:`` descriptions). Returns ``fn``, so it works as a decorator.

        A parameter named path, file, filename, target, directory, dir or url is the
        call's target (checked against blocked targets). The return value is shown as
        text: ``str`` as is, anything else as pretty-printed JSON.
        """
        tool_name = name or getattr(fn, "__name__", "")
        if not _TOOL_NAME.match(tool_name):
            raise ValueError(f"invalid tool name {tool_name!r}")
        if tool_name in self._tools:
            raise ValueError(f"a tool named {tool_name!r} is already registered")
        spec, params = _describe(fn, tool_name, skip=0)
        targets = [p.name for p in params if p.name in _TARGET_PARAMS]

        def run(args: dict[str, Any], call: _Call) -> _Result:
            value = next((args[t] for t in targets if isinstance(args.get(t), str)), None)
            if value is not None:
                self._check_blocked_name(value, call)
            try:
                return _Result(_render(fn(**args)), value)
            except Exception as exc:
                raise _ToolError(f"{type(exc).__name__}: {exc}", value) from exc

        self._tools[tool_name] = _Tool(spec, params, run)
        return fn

    def call(
        self,
        name: str,
        args: dict[str, Any],
        *,
        subtask_id: str = "",
        attempt: int = 1,
        blocked_targets: Iterable[str] = (),
        blocked_tools: Iterable[str] = (),
    ) -> ToolOutcome:
        """Run one tool call; never raises. ``blocked_targets``/``blocked_tools`` add
        to the registry's own for this call (a SubTask's MUST NOT sets)."""
        started = self._clock()
        call = _Call(
            args if isinstance(args, dict) else {},
            subtask_id,
            attempt,
            (*self.blocked_targets, *blocked_targets),
        )
        tool = self._tools.get(name)
        target: str | None = None
        try:
            if tool is None:
                known = ", ".join(sorted(self._tools))
                raise _ToolError(f"unknown tool {name!r} (known tools: {known})")
            if name in set(blocked_tools):
                raise _ToolError(f"blocked tool {name!r}")
            try:
                bound = _bind(tool, args)
            except _BadArgs as exc:
                raise _ToolError(f"bad arguments for {name}: {exc}") from None
            result = tool.run(bound, call)
        except _ToolError as exc:
            return self._failure(
                name, args, exc.target or target, exc.message, started, call, exc.refusal
            )
        except Exception as exc:  # a host function or the file system failed
            return self._failure(name, args, target, f"{type(exc).__name__}: {exc}", started, call)
        return self._outcome(name, args, result, started, call, spill=tool.spill)

    # ----------------------------------------------------------------- outcomes
    def _failure(
        self,
        name: str,
        args: Any,
        target: str | None,
        error: str,
        started: float,
        call: _Call,
        refusal: Refusal | None = None,
    ) -> ToolOutcome:
        record = ToolCall(
            refusal=refusal,
            tool=name,
            args=_record_args(args),
            target=target,
            ok=False,
            error=error,
            elapsed_ms=(self._clock() - started) * 1000.0,
            subtask_id=call.subtask_id,
            attempt=call.attempt,
        )
        return ToolOutcome(call=record, content=f"error: {error}")

    def _outcome(
        self, name: str, args: Any, result: _Result, started: float, call: _Call, *, spill: bool
    ) -> ToolOutcome:
        text = result.text
        preview = head_tail(text)
        spill_ref: str | None = None
        if not spill:
            content = text
        else:
            filename = self._spill(name, text)
            if len(text) <= CONTEXT_LIMIT:
                content = text
            elif len(text) <= SPILL_LIMIT:
                content = f"{preview}\n[Full result ({len(text):,} chars) saved to '{filename}'.]"
            else:
                spill_ref = filename
                content = (
                    f"{preview}\n[Result from {name}: {len(text):,} chars — too large for "
                    f"context, saved to '{filename}'. Use load_data(filename='{filename}') "
                    "to read the full result.]"
                )
        record = ToolCall(
            tool=name,
            args=_record_args(args),
            target=result.target,
            ok=result.ok,
            output_preview=preview,
            spill_ref=spill_ref,
            error=result.error,
            elapsed_ms=(self._clock() - started) * 1000.0,
            subtask_id=call.subtask_id,
            attempt=call.attempt,
            exit_code=result.exit_code,
        )
        return ToolOutcome(call=record, content=content, output=text)

    def _spill(self, tool: str, text: str) -> str:
        safe = re.sub(r"[^A-Za-z0-9_]", "_", tool)
        with self._lock:
            while True:
                self._counter += 1
                filename = f"{safe}_{self._counter}.txt"
                try:
                    with open(self.spill_dir / filename, "x", encoding="utf-8", newline="") as f:
                        f.write(text)
                except FileExistsError:  # another registry shares the directory
                    continue
                return filename

    # ----------------------------------------------------------------- guards
    def _confine(self, raw: str) -> str:
        """The workspace-relative resolved path of ``raw``; refuses any escape."""
        if not raw or "\x00" in raw:
            raise _ToolError(f"invalid path {raw!r}", raw or None)
        path = Path(raw)
        if path.is_absolute():
            lexical = Path(os.path.normpath(path))
            for root in (self.workspace, self._given_root):
                if lexical == root or root in lexical.parents:
                    relative = lexical.relative_to(root)
                    break
            else:
                raise _ToolError(f"path '{raw}' is outside the workspace", raw)
        else:
            norm = os.path.normpath(raw)
            if norm == ".." or norm.startswith("../"):
                raise _ToolError(f"path '{raw}' escapes the workspace (..)", raw)
            relative = Path(norm)
        resolved = (self.workspace / relative).resolve()
        if resolved != self.workspace and self.workspace not in resolved.parents:
            raise _ToolError(
                f"path '{raw}' leads outside the workspace through a symlink",
                relative.as_posix(),
            )
        return resolved.relative_to(self.workspace).as_posix()

    def _blocked_roots(self, call: _Call) -> list[tuple[str, Path]]:
        roots = []
        for entry in call.blocked:
            if entry.strip():
                base = Path(entry) if os.path.isabs(entry) else self.workspace / entry
                roots.append((entry, base.resolve()))
        return roots

    def _check_blocked(self, path: Path, call: _Call, shown: str) -> None:
        for entry, root in self._blocked_roots(call):
            if path == root or root in path.parents:
                raise _ToolError(f"blocked target '{entry}' (path '{shown}')", shown)

    def _check_blocked_name(self, value: str, call: _Call) -> None:
        norm = os.path.normpath(value) if value else value
        for entry in call.blocked:
            blocked = os.path.normpath(entry) if entry.strip() else ""
            if blocked and (norm == blocked or norm.startswith(blocked.rstrip("/") + "/")):
                raise _ToolError(f"blocked target '{entry}' ({value!r})", value)

    def _gate(self, call: _Call, tool: str, target: str | None, reason: str, action: str) -> None:
        """Law 1: ask ``confirm``; a denial (or a failing confirm) refuses the call."""
        request = ConfirmationNeeded(
            tool=tool,
            args=_record_args(call.args),
            target=target,
            reason=reason,
            action=action,
            subtask_id=call.subtask_id,
            attempt=call.attempt,
        )
        try:
            approved = self._confirm(request) is True
        except Exception as exc:
            approved = False
            reason = f"{reason} (confirmation failed: {type(exc).__name__}: {exc})"
        if not approved:
            raise _ToolError(f"[LAW1] denied: {reason}", target, "law1_denied")

    def _file(self, raw: str, call: _Call) -> tuple[str, Path]:
        relative = self._confine(raw)
        full = self.workspace / relative
        self._check_blocked(full, call, relative)
        return relative, full

    # ----------------------------------------------------------------- built-in tools
    def _glob(self, call: _Call, pattern: str) -> _Result:
        """List the workspace paths that match a glob pattern (directories end in "/").

        Args:
            pattern: a glob relative to the workspace root, such as "src/**/*.py".
        """
        parts = Path(pattern).parts
        if not parts:
            raise _ToolError("empty pattern")
        first = next((i for i, p in enumerate(parts) if _globby(p)), len(parts) - 1)
        base = str(Path(*parts[:first])) if first else "."
        relative_base, _ = self._file(base, call)
        relative_pattern = os.path.relpath(
            os.path.normpath(self.workspace / self._lexical(pattern)), self.workspace
        )
        if relative_pattern == ".." or relative_pattern.startswith("../"):
            raise _ToolError(f"pattern '{pattern}' escapes the workspace (..)", relative_base)
        try:
            matches = sorted(self.workspace.glob(relative_pattern))
        except (ValueError, NotImplementedError) as exc:
            raise _ToolError(f"bad pattern '{pattern}': {exc}", relative_base) from None
        lines: list[str] = []
        hidden = outside = 0
        roots = self._blocked_roots(call)
        for match in matches:
            resolved = match.resolve()
            if resolved != self.workspace and self.workspace not in resolved.parents:
                outside += 1
                continue
            if any(resolved == r or r in resolved.parents for _, r in roots):
                hidden += 1
                continue
            shown = match.relative_to(self.workspace).as_posix()
            lines.append(shown + "/" if match.is_dir() else shown)
        if not lines:
            lines.append("(no matches)")
        if hidden:
            lines.append(f"[{hidden} match(es) under blocked targets not shown]")
        if outside:
            lines.append(f"[{outside} match(es) leading outside the workspace not shown]")
        return _Result("\n".join(lines), relative_base)

    def _lexical(self, raw: str) -> str:
        path = Path(raw)
        if path.is_absolute():
            for root in (self.workspace, self._given_root):
                if path == root or root in path.parents:
                    return path.relative_to(root).as_posix()
            raise _ToolError(f"path '{raw}' is outside the workspace", raw)
        return raw

    def _read_file(
        self, call: _Call, path: str, offset: int = 0, limit: int = SPILL_LIMIT
    ) -> _Result:
        """Read a text file of the workspace, a page of characters at a time.

        Args:
            path: the file, relative to the workspace root.
            offset: the first character to read (0 = start of the file).
            limit: how many characters to read at most.
        """
        relative, full = self._file(path, call)
        if offset < 0 or limit <= 0:
            raise _ToolError("offset must be >= 0 and limit > 0", relative)
        if full.is_dir():
            raise _ToolError(f"'{relative}' is a directory; use glob to list it", relative)
        if not full.exists():
            raise _ToolError(f"no such file '{relative}'", relative)
        limit = min(limit, self.output_cap)
        with open(full, encoding="utf-8", errors="replace", newline="") as f:
            text = f.read(offset + limit)
            more = bool(f.read(1))
        page = text[offset:]
        if more:
            end = offset + len(page)
            page += (
                f"\n[characters {offset}–{end} shown; the file continues. "
                f"Use read_file(path='{relative}', offset={end}) to read more.]"
            )
        return _Result(page, relative)

    def _write_file(self, call: _Call, path: str, content: str) -> _Result:
        """Create a text file in the workspace, or replace one (asks for confirmation).

        Args:
            path: the file, relative to the workspace root; missing folders are created.
            content: the whole new text of the file.
        """
        relative, full = self._file(path, call)
        if full.is_dir():
            raise _ToolError(f"'{relative}' is a directory", relative)
        verdict = classify_write(relative, self.workspace)
        if verdict.irreversible:
            self._gate(call, "write_file", relative, verdict.reason, f"write_file {relative}")
        full.parent.mkdir(parents=True, exist_ok=True)
        with open(full, "w", encoding="utf-8", newline="") as f:
            f.write(content)
        return _Result(f"wrote {len(content):,} characters to {relative}", relative)

    def _shell(self, call: _Call, command: str, timeout_s: float | None = None) -> _Result:
        """Run a shell command (bash) in the workspace root; gives the exit code, stdout
        and stderr. Irreversible commands need the user's confirmation.

        Args:
            command: the command line.
            timeout_s: seconds before the command is killed (at most the default).
        """
        if not command.strip():
            raise _ToolError("empty command")
        target = self._shell_target(command)
        self._check_shell_blocked(command, call, target)
        if timeout_s is not None and timeout_s <= 0:
            raise _ToolError("timeout_s must be positive", target)
        timeout = (
            self.shell_timeout_s if timeout_s is None else min(timeout_s, self.shell_timeout_s)
        )
        verdict = classify_shell(command, self.workspace)
        if verdict.irreversible:
            self._gate(call, "shell", target, verdict.reason, command)
        run = _run_shell(command, self.workspace, timeout, self.output_cap)
        text = _format_run(run, timeout, self.output_cap)
        if run.timed_out:
            error: str | None = f"timed out after {timeout:g} s"
        elif run.exit_code != 0:
            error = f"exit code {run.exit_code}"
        else:
            error = None
        return _Result(text, target, error is None, error, run.exit_code)

    def _load_data(
        self, call: _Call, filename: str, offset: int = 0, limit: int = SPILL_LIMIT
    ) -> _Result:
        """Read back a saved tool result (a file named in an earlier result), a page of
        characters at a time.

        Args:
            filename: the saved result's file name, such as "shell_3.txt".
            offset: the first character to read.
            limit: how many characters to read at most.
        """
        if not filename or "/" in filename or "\\" in filename or filename in (".", ".."):
            raise _ToolError(f"invalid file name {filename!r}: give a name such as 'shell_3.txt'")
        full = self.spill_dir / filename
        if not full.is_file():
            raise _ToolError(f"no saved result named '{filename}'", filename)
        if offset < 0 or limit <= 0:
            raise _ToolError("offset must be >= 0 and limit > 0", filename)
        with open(full, encoding="utf-8", errors="replace", newline="") as f:
            text = f.read()
        capped = limit > SPILL_LIMIT
        page = text[offset : offset + min(limit, SPILL_LIMIT)]
        end = offset + len(page)
        notes: list[str] = []
        if end < len(text):
            notes.append(
                f"[characters {offset}–{end} of {len(text)} shown. Use load_data("
                f"filename='{filename}', offset={end}) to read more.]"
            )
        elif offset >= len(text) and text:
            notes.append(f"[offset {offset} is past the end ({len(text)} characters)]")
        if capped:
            notes.append(
                f"[limit cut to {SPILL_LIMIT} characters; use offset/limit to read smaller chunks]"
            )
        return _Result("\n".join([page, *notes]) if notes else page, filename)

    # ----------------------------------------------------------------- shell helpers
    def _shell_target(self, command: str) -> str:
        """The first path-like argument of the command line, else its program."""
        try:
            commands = parse_commands(command)
        except ShellSyntaxError:
            return command.split()[0]
        for cmd in commands:
            for arg in (*cmd.args, *cmd.redirects):
                if arg not in cmd.inline and self._pathish(arg):
                    return self._shown(arg)
        return next((c.program for c in commands if c.program), command.split()[0])

    def _pathish(self, arg: str) -> bool:
        if not arg or arg.startswith("-") or "://" in arg or "=" in arg.split("/")[0]:
            return False
        return "/" in arg or bool(_PATHISH.search(arg)) or os.path.lexists(self.workspace / arg)

    def _shown(self, arg: str) -> str:
        full = Path(os.path.normpath(self.workspace / os.path.expanduser(arg)))
        if full == self.workspace or self.workspace in full.parents:
            return full.relative_to(self.workspace).as_posix()
        return arg

    def _check_shell_blocked(self, command: str, call: _Call, target: str) -> None:
        roots = self._blocked_roots(call)
        if not roots:
            return
        try:
            commands = parse_commands(command)
            words = [w for c in commands for w in (*c.args, *c.redirects) if w not in c.inline]
            programs = {c.program for c in commands}
            # a path may be relative to a directory the command line changes into: try
            # each (a cd inside a branch that does not run only makes this stricter)
            bases = {self.workspace} | {
                Path(os.path.normpath(self.workspace / os.path.expanduser(d)))
                for c in commands
                if c.program in ("cd", "pushd")
                for d in _path_candidates(c.args[:1])
            }
        except ShellSyntaxError:
            words = command.split()
            programs = set(words[:1])
            bases = {self.workspace}
        for entry, _ in roots:
            if "/" not in entry and entry in programs:
                raise _ToolError(f"blocked target '{entry}' (program)", target)
        for word in _path_candidates(words):
            for base in bases:
                lexical = Path(os.path.normpath(base / os.path.expanduser(word)))
                for path in {lexical, lexical.resolve()}:
                    for entry, root in roots:
                        if path == root or root in path.parents:
                            raise _ToolError(
                                f"blocked target '{entry}' (argument '{word}')", target
                            )


def _path_candidates(words: Iterable[str]) -> Iterator[str]:
    """The words that may name a path: plain words, and the value of ``--opt=value`` or
    ``NAME=value`` (URLs and bare options are not paths)."""
    for word in words:
        if "=" in word and (word.startswith("-") or "/" not in word.split("=", 1)[0]):
            word = word.split("=", 1)[1]
        if word and not word.startswith("-") and "://" not in word:
            yield word


def _globby(part: str) -> bool:
    return any(c in part for c in "*?[")
