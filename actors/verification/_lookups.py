"""What a question asks of Python code, looked up by code (pure; ``code_value`` checks).

"What is the value of VERSION in src/config.py?", "what is the parent class of Square in
src/shapes.py?", "which file under src defines the function slugify?" ask for something
the code states: Python's own parser (``ast``) finds it, and a small model's reading (the
``2`` of ``return n % 2 == 0`` read as VERSION) never has to be taken on its word.
:func:`resolve` reads the question against the parsed files, or says why it cannot — and
then the check proves nothing either way (fail closed: the answer is held to its
derivations as before).

The reading, by code from the request's words and the files' syntax trees:

- **a constant's value** — a name the request says that one module-level assignment of
  the one file binds to a literal (a string, a number, a boolean), the request asking its
  value ("value of X", "X set to", "what is X", "what does X equal"): the literal;
- **a class's parents** — "parent class" / "base class" / "superclass" / "inherit" of a
  class the one file defines: the names of its bases;
- **where something is defined** — "which file" / "what file" / "where" and "define(s)"
  with a name the request says: the Python files under the one directory (or the one
  file) named — a directory said by its bare name after "under/in/inside/within"
  ("which file under src defines …"), else the whole workspace — whose code defines a
  function or class of that name, at any depth (at most 200 files read).

The answer must say the value (a number: the first it states that the question does not;
else the text as a word), and, for names, no other candidate (another class of the file,
another file under the directory) the request does not say itself.
"""

from __future__ import annotations

import ast
import json
import posixpath
import re
import shlex
from collections.abc import Mapping, Sequence

from artoo.schemas import Check

from ._tables import Resolved
from .request import duties, request_paths

__all__ = ["code_lookup_check", "lookup_targets", "resolve_lookup"]

_IDENT = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")
_VALUE = re.compile(
    r"\bvalue\s+of\b|\bset\s+to\b|\bequal|\bassigned\b|\bwhat\s+is\s+[A-Za-z_]\w*\b(?!\s+\w+\s+\w)",
    re.IGNORECASE,
)
_PARENT = re.compile(r"\b(?:parent|base|super)\s*class|\binherit|\bsubclass\s+of\b", re.I)
_WHERE = re.compile(r"\b(?:which|what)\s+(?:python\s+)?file\b|\bwhere\b", re.IGNORECASE)
_DEFINES = re.compile(r"\bdefine[sd]?\b|\bdeclare[sd]?\b|\bdefinition\b", re.IGNORECASE)
_UNDER = re.compile(
    r"\b(?:under|inside|within|in)\s+(?:the\s+)?([A-Za-z0-9_][\w-]*)"
    r"(?=\s+(?:directory|folder|dir)\b|\s+(?:define|declare)|\?|$)",
    re.IGNORECASE,
)


def code_lookup_check(request: str, kind: str = "") -> Check | None:
    """The ``code_value`` check code writes for a question about Python code, or None
    (pure: whether code can look it up is found when the check reads the files): a
    request that must answer (``request.duties``) naming exactly one path — a ``.py``
    file, or, for a question of where something is defined, a directory — and asking a
    constant's value, a class's parents, or where a name is defined."""
    if not duties(request, kind).answers:
        return None
    paths = request_paths(request)
    where = _asks_where(request)
    if where and not paths:  # "which file under src defines …": a directory by its name
        under = _UNDER.search(request)
        paths = [under.group(1) if under else "."]
    if len(paths) != 1:
        return None
    path = paths[0]
    python = path.endswith(".py")
    if where and (python or path == "." or "." not in posixpath.basename(path)):
        return Check(kind="code_value", path=path, value=request.strip())
    if python and (_VALUE.search(request) or _PARENT.search(request)):
        return Check(kind="code_value", path=path, value=request.strip())
    return None


def _asks_where(request: str) -> bool:
    return bool(_WHERE.search(request) and _DEFINES.search(request))


def lookup_targets(request: str) -> str:
    """What a ``code_value`` check of ``request`` reads (pure): ``file`` (the one Python
    file) or ``tree`` (the Python files under a directory, for where a name is defined)."""
    return "tree" if _asks_where(request) else "file"


def _said(request: str) -> list[str]:
    text = request
    for p in request_paths(request):
        text = text.replace(p, " ")
    return list(dict.fromkeys(_IDENT.findall(text)))


def resolve_lookup(request: str, sources: Mapping[str, str], root: str) -> Resolved | str:
    """What ``request`` asks of the Python ``sources`` (workspace path → text; ``root``:
    the path the request names), or why code cannot look it up (pure)."""
    said = _said(request)
    trees: dict[str, ast.Module] = {}
    for path, text in sources.items():
        try:
            trees[path] = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
    if not trees:
        return f"no Python file under {root} parses"
    if lookup_targets(request) == "tree":
        return _where(said, trees, root)
    if len(trees) != 1:
        return "not one Python file"
    ((path, tree),) = trees.items()
    if _PARENT.search(request):
        return _parents(said, tree, path)
    return _constant(said, tree, path)


def _where(said: Sequence[str], trees: Mapping[str, ast.Module], root: str) -> Resolved | str:
    defined: dict[str, set[str]] = {}
    for path, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                defined.setdefault(node.name, set()).add(path)
    names = [n for n in said if n in defined and n not in ("file", "define", "defines")]
    if len(names) != 1:
        return "not exactly one name the request says is defined under " + root
    files = sorted(defined[names[0]])
    seen = f"code found {names[0]} defined in {', '.join(files)}"
    others = sorted(set(trees) - set(files))
    base = [posixpath.basename(p) for p in trees]
    if len(set(base)) == len(base):  # "textutil.py" says it too, when no other is so named
        files += [posixpath.basename(p) for p in files]
        others += [posixpath.basename(p) for p in others]
    pattern = rf"^\s*(async\s+)?(def|class)\s+{names[0]}\b"
    return Resolved(
        values=files,
        numbers=False,
        others=others,
        seen=seen,
        command=f"grep -rlE --include='*.py' {shlex.quote(pattern)} {shlex.quote(root)}",
    )


def _parents(said: Sequence[str], tree: ast.Module, path: str) -> Resolved | str:
    classes = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
    named = [n for n in said if n in classes]
    if len(named) != 1:
        return f"not exactly one class of {path} named"
    bases = [ast.unparse(b) for b in classes[named[0]].bases]
    if not bases:
        return f"class {named[0]} has no base class"
    others = sorted(set(classes) - set(bases) - {named[0]})
    return Resolved(
        values=bases,
        numbers=False,
        others=others,
        seen=f"code read class {named[0]}({', '.join(bases)}) in {path}",
        command=f"grep -n {shlex.quote(f'class {named[0]}')} {shlex.quote(path)}",
    )


def _constant(said: Sequence[str], tree: ast.Module, path: str) -> Resolved | str:
    bound: dict[str, list[ast.expr]] = {}
    for node in tree.body:
        targets: list[ast.expr] = []
        value: ast.expr | None = None
        if isinstance(node, ast.Assign):
            targets, value = list(node.targets), node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        for target in targets:
            if isinstance(target, ast.Name) and value is not None:
                bound.setdefault(target.id, []).append(value)
    named = [n for n in said if n in bound]
    if len(named) != 1:
        return f"not exactly one module-level name of {path} said"
    name = named[0]
    if len(bound[name]) != 1:
        return f"{name} is assigned more than once in {path}"
    try:
        value = ast.literal_eval(bound[name][0])
    except (ValueError, SyntaxError, TypeError):
        return f"{name} is not bound to a literal"
    if isinstance(value, bool) or value is None:
        text, numbers = str(value), False
    elif isinstance(value, int | float):
        text, numbers = json.dumps(value), True
    elif isinstance(value, str) and value.strip() and "\n" not in value:
        text, numbers = value, False
    else:
        return f"{name} is not a one-line literal"
    return Resolved(
        values=[text],
        numbers=numbers,
        seen=f"code read {name} = {ast.unparse(bound[name][0])} in {path}",
        command=f"grep -nE {shlex.quote(f'^{name}[ :=]')} {shlex.quote(path)}",
    )
