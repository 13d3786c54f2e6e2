"""Derivations: what a tool call showed, by which method, and code's own runs (pure).

A question's value is proven when two derivations agree (docs/proof.md). This module
says what a derivation *is* in the log: a tool call that worked and showed a value
(:func:`tool_outputs`, :func:`shows`), by a method (:func:`method`: two calls by the same
method are one derivation), and the runs code makes itself — the request's own call
evaluated in the sandbox (:func:`evaluation_command`, :func:`evaluation_of`), marked
``ToolCall.by == "code"``. Nothing here reads the request's wording.
"""

from __future__ import annotations

import ast
import json
import shlex
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from artoo.schemas import ToolCall

from ._values import same
from ._values import shows as value_shows

__all__ = [
    "EVALUATED",
    "applied_effects",
    "call_root",
    "evaluation_command",
    "evaluation_of",
    "import_root",
    "method",
    "module_of_name",
    "showing",
    "tool_outputs",
    "traced",
]

EVALUATED = "artoo-evaluated "
"""The marker of the one line an evaluation prints (then its JSON)."""

_PROGRAM = """import contextlib, importlib, io, json, sys
sys.path.insert(0, ".")
out = io.StringIO()
try:
    with contextlib.redirect_stdout(out):
        m = importlib.import_module({module!r})
        ns = dict(vars(m))
        top = {module!r}.split(".")[0]
        ns[top] = importlib.import_module(top)
        v = eval({call!r}, ns)
    r = {{"repr": repr(v), "str": str(v), "printed": out.getvalue()}}
except BaseException as e:
    r = {{"raised": type(e).__name__ + ": " + str(e), "printed": out.getvalue()}}
print({marker!r} + json.dumps(r))
"""


def tool_outputs(calls: Iterable[ToolCall]) -> list[str]:
    """What the workspace gave each call that worked (pure): a command's stdout when it
    exited 0 with nothing on stderr, another tool's ``content`` (never a note the tool
    adds around it); a failed or refused call shows nothing."""
    out = []
    for call in calls:
        if not call.ok or call.refusal is not None or call.exit_code not in (None, 0):
            continue
        if call.tool == "shell":
            if call.stdout and not (call.stderr or "").strip():
                out.append(call.stdout)
        elif call.content is not None:
            out.append(call.content)
        elif call.output_preview and call.tool not in ("write_file",):
            out.append(call.output_preview)
    return out


def method(tool: str, args: dict[str, Any]) -> tuple[str, ...]:
    """A call's method (pure): a command's words normalized (``cat a`` and ``cat  ./a``
    are one method; ``grep x a`` and ``cat a`` two); a file tool and the path or pattern
    it reads (another page of the same file is the same reading); another tool and its
    arguments."""
    if tool == "shell":
        command = str(args.get("command", ""))
        try:
            words = [w.removeprefix("./") for w in shlex.split(command)]
        except ValueError:
            words = command.split()
        return ("shell", *words)
    for name in ("path", "pattern", "filename"):
        if name in args and tool in ("read_file", "glob", "load_data"):
            return (tool, str(args[name]).removeprefix("./"))
    return (tool, *(f"{k}={args[k]}" for k in sorted(args)))


def showing(value: Any, calls: Sequence[ToolCall], shape: str) -> list[ToolCall]:
    """The calls among ``calls`` whose result shows ``value`` (pure: :func:`tool_outputs`
    of each, the shape's normalizer)."""
    return [c for c in calls if any(value_shows(o, value, shape) for o in tool_outputs([c]))]


def traced(value: Any, calls: Sequence[ToolCall], shape: str) -> bool:
    """Whether a tool result of ``calls`` backs ``value`` (pure): it shows it, or — a
    number — it is a listing of that many entries (the non-empty lines of one result: a
    model may count what a ``glob`` or an ``ls`` listed)."""
    if showing(value, calls, shape):
        return True
    if shape != "number":
        return False
    for output in tool_outputs(calls):
        lines = [line for line in output.splitlines() if line.strip()]
        if lines and same(len(lines), value, "number"):
            return True
    return False


def applied_effects(calls: Iterable[ToolCall]) -> list[tuple[ToolCall, Any]]:
    """Each effect a call applied to the workspace, with its call (pure): a call that
    worked and was not refused; a ``write_file``'s and a command's effects alike."""
    out: list[tuple[ToolCall, Any]] = []
    for call in calls:
        if call.ok and call.refusal is None:
            out.extend((call, e) for e in call.effects)
    return out


def import_root(path: str, is_package: Callable[[str], bool]) -> tuple[str, str] | None:
    """``(root, module)`` to import the Python file ``path`` as its package would: the
    directory above its topmost package (a directory ``is_package`` says holds an
    ``__init__.py``) and the dotted module (pure but for ``is_package``): ``src/pkg/m.py``
    → ``("src", "pkg.m")``; a top-level ``tool.py`` → ``(".", "tool")``. None for a path
    that is no Python module."""
    if not path.endswith(".py"):
        return None
    parts = path[:-3].split("/")
    if not all(p.isidentifier() for p in parts[-1:]):
        return None
    i = len(parts) - 1
    while i > 0 and is_package("/".join(parts[:i])) and parts[i - 1].isidentifier():
        i -= 1
    root = "/".join(parts[:i]) or "."
    module = ".".join(parts[i:])
    if parts[-1] == "__init__":
        module = ".".join(parts[i:-1])
    return (root, module) if module else None


def call_root(call: str) -> str | None:
    """The name a call starts from (pure): ``pkg`` of ``pkg.mod.f(1)``, ``f`` of ``f(1)``;
    None for no call."""
    try:
        node: ast.expr = ast.parse(call.strip(), mode="eval").body
    except (SyntaxError, ValueError):
        return None
    if not isinstance(node, ast.Call):
        return None
    node = node.func
    while isinstance(node, ast.Attribute | ast.Call | ast.Subscript):
        node = node.value if not isinstance(node, ast.Call) else node.func
    return node.id if isinstance(node, ast.Name) else None


def module_of_name(name: str, exists: Callable[[str], bool]) -> str | None:
    """The workspace file Python imports a top-level ``name`` from (pure but for
    ``exists``): ``name.py`` or ``name/__init__.py`` at the root or under ``src/`` — the
    two roots a project's code imports from; None when none is there."""
    for base in ("", "src/"):
        for path in (f"{base}{name}/__init__.py", f"{base}{name}.py"):
            if exists(path):
                return path
    return None


def evaluation_command(root: str, module: str, call: str) -> str:
    """The shell command code runs to evaluate ``call`` in ``module`` (imported from
    ``root``): it prints one line, :data:`EVALUATED` and a JSON object with the value's
    ``repr`` and ``str`` and what it printed, or what it raised (pure)."""
    program = _PROGRAM.format(module=module, call=call, marker=EVALUATED)
    cd = "" if root == "." else f"cd {shlex.quote(root)} && "
    return f"{cd}python3 -c {shlex.quote(program)}"


def evaluation_of(calls: Iterable[ToolCall], call: str) -> dict[str, Any] | None:
    """What code's evaluation of ``call`` gave, from the log (pure): the JSON line of the
    last call code made (``by == "code"``) whose command evaluates ``call``; None when
    code ran none or it printed nothing readable (a timeout, a crash before printing)."""
    found: dict[str, Any] | None = None
    for c in calls:
        if c.by != "code" or c.tool != "shell" or not _evaluates(c, call):
            continue
        for line in (c.stdout or "").splitlines():
            if line.startswith(EVALUATED):
                try:
                    value = json.loads(line[len(EVALUATED) :])
                except ValueError:
                    continue
                if isinstance(value, dict):
                    found = value
    return found


def _evaluates(c: ToolCall, call: str) -> bool:
    """Whether the shell call ``c`` is code's evaluation of ``call``."""
    try:
        words = shlex.split(str(c.args.get("command", "")))
    except ValueError:
        return False
    programs = [words[i + 1] for i, w in enumerate(words[:-1]) if w == "-c"]
    return any(repr(call) in p and EVALUATED.strip() in p for p in programs)
