"""A value computed by running the request's own code: evaluation as proof (pure).

"What does ``shout("hi")`` from src/textutil.py return?" is answered by running it, not
by reading the source and working it out: the workspace's code computes the value, and
a command that only asks it to is no model's say-so. A ``shell`` call **evaluates the
request** (:func:`evaluates`) when its command, parsed (``shlex``, then Python's
``ast``), is one of

- ``[cd DIR &&] python3 -c CODE`` where CODE imports only from Python files the request
  names (``from util import greet`` after ``cd src``, ``import src.shapes``,
  ``from src.config import *``) and then prints one expression: calls, attribute access,
  names and constants only — every name a word of the request (the module's own path
  aside), every string a text the request quotes and every number one it states; where
  the request writes a call itself (``Square(3).area()``), the expression is that call
  (module prefixes aside). ``print(greet("src"))`` for a question about ``greet`` called
  with "Ana" is no evaluation of it: "src" is not a text the request quotes;
- ``[cd DIR &&] python3 FILE`` with FILE a Python file the request names, no argument,
  for a request that asks what something prints or outputs (not returns), quotes no
  text and writes no call: what the script prints when it runs ("what does src/app.py
  print when it runs?"); running the module for a question about one of its functions
  evaluates nothing asked.

``python`` counts as ``python3``. The call must have worked (exit 0, nothing on
stderr); what it printed (its ``stdout``, at most :data:`MAX_LINES` non-empty lines) is
the value, and an answer states it when it holds every printed line (``True`` /
``False`` / ``None`` in any case; a number as a number standing alone).

:func:`evaluation_command` gives the exact command for a request that writes one call
and names one Python file, or asks what a named Python file prints — what the model is
told to run when it stated a value no tool result showed; :func:`evaluation_pattern`,
for a request about what code in one named Python file returns that writes no call,
the command with ``…`` where the call goes.
"""

from __future__ import annotations

import ast
import posixpath
import re
import shlex
from collections.abc import Iterable, Sequence

from artoo.schemas import ToolCall

from .grounding import stated_numbers
from .request import request_paths

__all__ = [
    "MAX_LINES",
    "evaluated",
    "evaluates",
    "evaluation_command",
    "evaluation_pattern",
    "literal_calls",
]

MAX_LINES = 5
"""An evaluation printing more non-empty lines than this proves nothing (a dump, not a
value)."""

_PYTHONS = frozenset({"python3", "python"})
_CALL_START = re.compile(r"(?<![\w.])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*\(")
_QUOTED = re.compile(r"\"([^\"\n]*)\"|'([^'\n]*)'|`([^`\n]*)`|“([^”\n]*)”")
_WORDS = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.]|\.\d)")
_KEYWORDS = frozenset({"true", "false", "none"})
_PRINTS = re.compile(r"\b(?:print|prints|printed|output|outputs)\b", re.I)
_RETURNS = re.compile(r"\b(?:return|returns|returned)\b", re.I)


def _asks_run_output(request: str) -> bool:
    """Whether a request asks what running a script prints (pure): it asks what
    something prints or outputs, not returns, and quotes no text and writes no call."""
    return (
        _PRINTS.search(request) is not None
        and _RETURNS.search(request) is None
        and not _quoted(request)
        and not literal_calls(request)
    )


def _closing(text: str, start: int) -> int | None:
    """The index after the parenthesis closing the one at ``start`` (quotes respected)."""
    depth, quote, i = 0, "", start
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return None


def literal_calls(request: str) -> list[ast.expr]:
    """The call expressions the request writes (pure): ``shout("hi")``,
    ``Square(3).area()``, ``default_port()`` — each the longest chain of calls and
    attribute calls from where a name meets ``(`` that parses as a Python expression."""
    found: list[ast.expr] = []
    end_of_last = 0
    for m in _CALL_START.finditer(request):
        if m.start() < end_of_last:
            continue
        end = _closing(request, m.end() - 1)
        if end is None:
            continue
        while (more := re.match(r"\.[A-Za-z_]\w*\(", request[end:])) is not None:
            after = _closing(request, end + more.end() - 1)
            if after is None:
                break
            end = after
        try:
            tree = ast.parse(request[m.start() : end], mode="eval").body
        except SyntaxError:
            continue
        if isinstance(tree, ast.Call):
            found.append(tree)
            end_of_last = end
    return found


def _quoted(request: str) -> set[str]:
    return {next(g for g in m.groups() if g is not None) for m in _QUOTED.finditer(request)}


def _python_files(request: str) -> set[str]:
    return {posixpath.normpath(p) for p in request_paths(request) if p.endswith(".py")}


def _command(call: ToolCall) -> tuple[str, list[str]] | None:
    """A worked shell call's ``(directory, python argv)``: ``cd DIR && python3 …`` or
    ``python3 …`` alone, else None."""
    if call.tool != "shell" or not call.ok or call.refusal is not None:
        return None
    if call.exit_code not in (0, None) or (call.stderr or "").strip() or not call.stdout:
        return None
    command = call.args.get("command")
    if not isinstance(command, str):
        return None
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|<>()")
        lexer.whitespace_split = True
        words = list(lexer)
    except ValueError:
        return None
    directory = "."
    if len(words) >= 3 and words[0] == "cd" and words[2] in ("&&", ";"):
        directory, words = words[1], words[3:]
    if not words or words[0] not in _PYTHONS or any(w in (";", "&&", "||", "|") for w in words):
        return None
    if any(set(w) <= set("<>&|();") for w in words):
        return None  # a redirection or another operator: not the plain run
    return posixpath.normpath(directory), words[1:]


def _module_file(directory: str, module: str) -> str:
    return posixpath.normpath(posixpath.join(directory, *module.split("."))) + ".py"


def _script_ok(directory: str, argv: Sequence[str], files: set[str]) -> bool:
    return len(argv) == 1 and posixpath.normpath(posixpath.join(directory, argv[0])) in files


def _expression_ok(
    expr: ast.expr, modules: set[str], words: set[str], request: str, calls: Sequence[ast.expr]
) -> bool:
    """Whether ``expr`` is made of the request's names and constants only, and is the
    call the request writes when it writes one."""
    quoted = _quoted(request)
    numbers = {n.lstrip("-") for n in _NUMBER.findall(request)}
    bare = _strip_modules(expr, modules)
    for node in ast.walk(bare):
        if isinstance(node, ast.Name):
            if node.id not in words:
                return False
        elif isinstance(node, ast.Attribute):
            if node.attr not in words:
                return False
        elif isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, bool) or value is None:
                if str(value).lower() not in {w.lower() for w in words}:
                    return False
            elif isinstance(value, str):
                if value not in quoted:
                    return False
            elif isinstance(value, int | float):
                if str(value) not in numbers:
                    return False
            else:
                return False
        elif isinstance(node, ast.UnaryOp):
            if not isinstance(node.op, ast.USub):
                return False
        elif not isinstance(node, ast.Call | ast.keyword | ast.Load | ast.USub):
            return False
    if calls:
        shown = ast.dump(bare)
        return any(ast.dump(c) == shown for c in calls)
    return True


def _strip_modules(expr: ast.expr, modules: set[str]) -> ast.expr:
    """``expr`` with an imported module's dotted prefix taken off each attribute chain
    (``src.shapes.Square(3)`` → ``Square(3)``); names bound by ``from … import`` stay."""

    class _Strip(ast.NodeTransformer):
        def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
            dotted = _dotted(node.value)
            if dotted is not None and dotted in modules:
                return ast.copy_location(ast.Name(id=node.attr, ctx=ast.Load()), node)
            self.generic_visit(node)
            return node

    return _Strip().visit(ast.parse(ast.unparse(expr), mode="eval").body)


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and (base := _dotted(node.value)) is not None:
        return f"{base}.{node.attr}"
    return None


def _code_ok(directory: str, code: str, request: str, files: set[str]) -> bool:
    try:
        body = ast.parse(code).body
    except SyntaxError:
        return False
    if not body:
        return False
    *imports, last = body
    words = set(_WORDS.findall(request))
    modules: set[str] = set()
    for stmt in imports:
        if isinstance(stmt, ast.ImportFrom):
            if stmt.level or stmt.module is None:
                return False
            if _module_file(directory, stmt.module) not in files:
                return False
            if any(a.asname or (a.name != "*" and a.name not in words) for a in stmt.names):
                return False
        elif isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if _module_file(directory, alias.name) not in files:
                    return False
                bound = alias.asname or alias.name
                parts = bound.split(".")
                modules.update(".".join(parts[: i + 1]) for i in range(len(parts)))
        else:
            return False
    if not imports:
        return False
    if not (
        isinstance(last, ast.Expr)
        and isinstance(last.value, ast.Call)
        and isinstance(last.value.func, ast.Name)
        and last.value.func.id == "print"
        and len(last.value.args) == 1
        and not last.value.keywords
    ):
        return False
    return _expression_ok(last.value.args[0], modules, words, request, literal_calls(request))


def evaluates(call: ToolCall, request: str) -> bool:
    """Whether ``call`` ran the request's own code and printed what it computed (pure;
    the rule is the module's)."""
    parsed = _command(call)
    if parsed is None:
        return False
    directory, argv = parsed
    files = _python_files(request)
    if not files:
        return False
    if len(argv) == 2 and argv[0] == "-c":
        return _code_ok(directory, argv[1], request, files)
    return _asks_run_output(request) and _script_ok(directory, argv, files)


def _printed_lines(call: ToolCall) -> list[str]:
    return [line.strip() for line in (call.stdout or "").splitlines() if line.strip()]


def _states(answer: str, line: str) -> bool:
    if line.lower() in _KEYWORDS:
        return re.search(rf"(?<!\w){re.escape(line)}(?!\w)", answer, re.I) is not None
    if _NUMBER.fullmatch(line):
        return any(_same_number(n, line) for n in stated_numbers(answer))
    return line in answer


def _same_number(a: str, b: str) -> bool:
    try:
        return float(a.replace(",", "")) == float(b)
    except ValueError:
        return False


def evaluated(answer: str, calls: Iterable[ToolCall], request: str) -> bool:
    """Whether ``answer`` states what a call that evaluates the request printed (pure):
    every non-empty line of it, at most :data:`MAX_LINES`."""
    for call in calls:
        if not evaluates(call, request):
            continue
        lines = _printed_lines(call)
        if 0 < len(lines) <= MAX_LINES and all(_states(answer, line) for line in lines):
            return True
    return False


def _quote(code: str) -> str:
    """``code`` as one shell word, as a person writes it: in single quotes, else in double
    quotes when nothing in it is special there, else as :func:`shlex.quote` writes it."""
    if "'" not in code:
        return f"'{code}'"
    if not any(ch in code for ch in '"$`\\!'):
        return f'"{code}"'
    return shlex.quote(code)


def evaluation_command(request: str) -> str | None:
    """The command that evaluates the request, when code can write it (pure): the one
    call the request writes, imported from the one Python file it names
    (``cd src && python3 -c 'from textutil import *; print(shout("hi"))'``), or, a request
    that asks what running a file prints, running it (``python3 src/app.py``); None
    otherwise."""
    files = sorted(_python_files(request))
    if len(files) != 1:
        return None
    file = files[0]
    calls = literal_calls(request)
    if len(calls) > 1:
        return None
    if not calls:
        return f"python3 {shlex.quote(file)}" if _asks_run_output(request) else None
    directory, name = posixpath.split(file)
    module = name.removesuffix(".py")
    if not module.isidentifier():
        return None
    code = f"from {module} import *; print({ast.unparse(calls[0])})"
    run = f"python3 -c {_quote(code)}"
    return f"cd {shlex.quote(directory)} && {run}" if directory else run


def evaluation_pattern(request: str) -> str | None:
    """For a request that asks what code in the one Python file it names returns, and
    writes no call (``greet`` "called with" a quoted text), the command that evaluates
    it with ``…`` in place of the call (pure): ``cd src && python3 -c 'from util import
    *; print(…)'`` — ``…`` is no Python, so run as it stands it fails and proves
    nothing. None when :func:`evaluation_command` writes the command, or it cannot."""
    files = sorted(_python_files(request))
    if len(files) != 1 or literal_calls(request) or _RETURNS.search(request) is None:
        return None
    directory, name = posixpath.split(files[0])
    module = name.removesuffix(".py")
    if not module.isidentifier():
        return None
    run = f"python3 -c {_quote(f'from {module} import *; print(…)')}"
    return f"cd {shlex.quote(directory)} && {run}" if directory else run
