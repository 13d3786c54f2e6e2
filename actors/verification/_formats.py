"""A parser per file format, and the values a parsed file holds by key (pure).

The proof of a question confirms "the stated value is the value at the key or definition
the reading names"; the proof of a change checks that every changed structured file still
parses and reads requested values back by that file's parser. Both pick the parser by the
**file's format** (its name), never by the request's wording.

- :func:`format_of` — a path's format: toml, yaml, ini, json, csv, python or text.
- :func:`parse` — bytes into a :class:`Parsed` (errors as data, never raised; bounded).
- :func:`parse_error` — why bytes do not parse in a path's format, or None.
- :func:`entries` — every value a parsed file holds, as an :class:`Entry` (key path, value).
- :func:`lookup` — the entries a key names (``tool.black.line-length``, ``[metadata]
  version``, ``section:key``, ``a/b``), full matches before suffix matches.
- :func:`imports`, :func:`defines`, :func:`module_name` — a Python file's structure.
"""

from __future__ import annotations

import ast
import configparser
import csv
import io
import json
import posixpath
import re
import tomllib
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import yaml

__all__ = [
    "FORMATS",
    "MAX_BYTES",
    "MAX_ENTRIES",
    "Entry",
    "Parsed",
    "Table",
    "defines",
    "entries",
    "format_of",
    "imports",
    "lookup",
    "module_name",
    "parse",
    "parse_error",
]

FORMATS = ("toml", "yaml", "ini", "json", "csv", "python", "text")
"""Every format :func:`format_of` names."""
MAX_BYTES = 8 * 1024 * 1024
"""The largest file :func:`parse` reads; a larger one is "too large to parse"."""
MAX_ENTRIES = 200_000
"""The most entries :func:`entries` lists (YAML aliases can make a small file vast)."""
MAX_DEPTH = 64
"""Nesting deeper than this is not listed by :func:`entries`."""

_SUFFIXES = {
    ".toml": "toml",
    ".yml": "yaml",
    ".yaml": "yaml",
    ".ini": "ini",
    ".cfg": "ini",
    ".json": "json",
    ".csv": "csv",
    ".tsv": "csv",
    ".py": "python",
    ".pyi": "python",
}
_NAMES = {
    "pipfile": "toml",
    "poetry.lock": "toml",
    "uv.lock": "toml",
    "cargo.lock": "toml",
    "pdm.lock": "toml",
    ".flake8": "ini",
    ".pylintrc": "ini",
    "pylintrc": "ini",
    ".coveragerc": "ini",
    ".editorconfig": "ini",
    ".pypirc": "ini",
    ".yamllint": "yaml",
    ".clang-format": "yaml",
}


@dataclass(frozen=True)
class Parsed:
    """A file read by its format's parser: ``data`` as that parser returns it (None when
    ``error`` says why the file does not parse). TOML/JSON: the document; YAML: the list of
    its documents; INI: ``{section: {key: value}}`` as written, values strings; CSV: a
    :class:`Table`; Python: the ``ast.Module``; text: the decoded text."""

    format: str
    data: Any
    error: str | None = None


@dataclass(frozen=True)
class Table:
    """A CSV file: its header (the first row) and its data rows, each a list of cells."""

    header: list[str]
    rows: list[list[str]]


@dataclass(frozen=True)
class Entry:
    """A value a file holds: its key path (each component a string; list items and rows by
    their 0-based index) and the value as the parser gave it."""

    key: tuple[str, ...]
    value: Any


def format_of(path: str) -> str:
    """The format of the file at ``path``, by its well-known name (``setup.cfg``,
    ``tox.ini``, ``.flake8``, ``Pipfile``…) or extension; ``text`` for any other file."""
    name = posixpath.basename(path.replace("\\", "/")).lower()
    if name in _NAMES:
        return _NAMES[name]
    return _SUFFIXES.get(posixpath.splitext(name)[1], "text")


def parse(path: str, data: bytes) -> Parsed:
    """``data`` read by the parser of ``path``'s format (:func:`format_of`). Never raises on
    bad input: a file over :data:`MAX_BYTES`, not UTF-8 (but Python, which declares its
    own encoding) or rejected by its parser gets ``data=None`` and a one-line ``error``.
    A text file always parses (undecodable bytes replaced)."""
    fmt = format_of(path)
    if len(data) > MAX_BYTES:
        return Parsed(fmt, None, f"too large to parse ({len(data)} bytes; at most {MAX_BYTES})")
    if fmt == "text":
        return Parsed(fmt, data.decode("utf-8", errors="replace"))
    try:
        if fmt == "python":
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return Parsed(fmt, ast.parse(data, filename=path))
        text = data.decode("utf-8-sig")
        return Parsed(fmt, _PARSERS[fmt](path, text))
    except UnicodeDecodeError as err:
        return Parsed(fmt, None, f"not UTF-8 text: {err.reason} at byte {err.start}")
    except RecursionError:
        return Parsed(fmt, None, f"{fmt}: nested too deeply to parse")
    except Exception as err:  # every parser's own error, as data (yaml, csv, ast, …)
        return Parsed(fmt, None, _one_line(f"{fmt}: {err}"))


def parse_error(path: str, data: bytes) -> str | None:
    """Why ``data`` does not parse in ``path``'s format; None when it does, and for text."""
    return parse(path, data).error


def _one_line(message: str, limit: int = 300) -> str:
    flat = " ".join(message.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


class _YamlLoader(yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader):  # type: ignore[misc]
    """PyYAML's safe loader, but booleans as YAML 1.2 reads them (only true/false: a key
    ``on:`` stays "on", ``yes`` stays a string) and no base-60 numbers (``1:30``)."""


_BOOL, _INT, _FLOAT = (f"tag:yaml.org,2002:{t}" for t in ("bool", "int", "float"))
_YamlLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag not in (_BOOL, _INT, _FLOAT)]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_YamlLoader.add_implicit_resolver(
    _BOOL, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)
_YamlLoader.add_implicit_resolver(
    _INT,
    re.compile(r"^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+)$"),
    list("-+0123456789"),
)
_YamlLoader.add_implicit_resolver(
    _FLOAT,
    re.compile(
        r"^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
    ),
    list("-+0123456789."),
)


class _Ini(configparser.ConfigParser):
    """Keys as written (no lowercasing); ``[DEFAULT]`` an ordinary section."""

    def optionxform(self, optionstr: str) -> str:
        return optionstr


def _ini(path: str, text: str) -> dict[str, dict[str, str]]:
    # No interpolation (``%`` is data), DEFAULT not merged into the other sections; keys
    # before any section are allowed only where the format has them (.editorconfig).
    parser = _Ini(interpolation=None, default_section="\x00")
    top = posixpath.basename(path) == ".editorconfig"
    parser.read_string(("[\x00top]\n" if top else "") + text, source=path)
    return {
        ("" if s == "\x00top" else s): dict(parser.items(s, raw=True)) for s in parser.sections()
    }


def _csv(path: str, text: str) -> Table:
    default = "\t" if path.lower().endswith(".tsv") else ","
    delimiter = _delimiter(text[:65536], default)
    reader = csv.reader(io.StringIO(text), delimiter=delimiter, strict=True)
    rows = [row for row in reader if row]
    if not rows:
        return Table([], [])
    header, body = rows[0], rows[1:]
    for number, row in enumerate(body, start=2):
        if len(row) != len(header):
            raise ValueError(f"row {number} has {len(row)} fields, the header {len(header)}")
    return Table(header, body)


def _delimiter(sample: str, default: str) -> str:
    """The first of the extension's delimiter, then ``,\\t;|``, that splits every complete
    line of ``sample`` into the same number (at least 2) of fields; else the default."""
    lines = sample.splitlines()[:-1] if len(sample) == 65536 else sample.splitlines()
    for candidate in dict.fromkeys((default, ",", "\t", ";", "|")):
        try:
            widths = {len(r) for r in csv.reader(lines, delimiter=candidate) if r}
        except csv.Error:
            continue
        if len(widths) == 1 and widths.pop() >= 2:
            return candidate
    return default


_PARSERS = {
    "toml": lambda path, text: tomllib.loads(text),
    "json": lambda path, text: json.loads(text),
    "yaml": lambda path, text: list(yaml.load_all(text, Loader=_YamlLoader)),
    "ini": _ini,
    "csv": _csv,
}


def entries(parsed: Parsed) -> list[Entry]:
    """Every value ``parsed`` holds (none when it did not parse), at most
    :data:`MAX_ENTRIES`. Mappings by key; lists by index *and* the whole list at its own
    key; YAML documents by index when there are several; INI ``(section, key)`` (keys
    before any section ``(key,)``); CSV ``(column,)`` → the column's values, cells
    ``(row, column)`` by 0-based data row, and by first cell when the first column's
    values are distinct and none all digits; Python: literal constants (``NAME``,
    ``(Class, NAME)``), ``(Class,)`` → its bases as written, parameter defaults
    ``(func, param)`` / ``(Class, method, param)`` — see :func:`_python`."""
    found: list[Entry] = []
    if parsed.error is not None or parsed.data is None:
        return found
    data = parsed.data
    if parsed.format == "yaml":
        several = len(data) > 1
        for i, doc in enumerate(data):
            _walk((str(i),) if several else (), doc, found, 0)
    elif parsed.format == "ini":
        for section, values in data.items():
            _walk((section,) if section else (), values, found, 0)
    elif parsed.format in ("toml", "json"):
        _walk((), data, found, 0)
    elif parsed.format == "csv":
        _table(data, found)
    elif parsed.format == "python":
        for key, value in _python(data):
            _walk(key, value, found, 0)
    return found[:MAX_ENTRIES]


def _walk(key: tuple[str, ...], value: Any, found: list[Entry], depth: int) -> None:
    if len(found) >= MAX_ENTRIES or depth > MAX_DEPTH:
        return
    if isinstance(value, dict):
        for k, v in value.items():
            _walk((*key, str(k)), v, found, depth + 1)
        return
    if isinstance(value, set | frozenset):
        value = sorted(value, key=repr)
    found.append(Entry(key, value))
    if isinstance(value, list | tuple):
        for i, item in enumerate(value):
            _walk((*key, str(i)), item, found, depth + 1)


def _table(table: Table, found: list[Entry]) -> None:
    for c, column in enumerate(table.header):
        found.append(Entry((column,), [row[c] for row in table.rows]))
    firsts = [row[0] for row in table.rows if row]
    labelled = len(set(firsts)) == len(firsts) and not any(f.isdigit() for f in firsts)
    for i, row in enumerate(table.rows):
        if len(found) >= MAX_ENTRIES:
            return
        for column, cell in zip(table.header, row, strict=False):
            found.append(Entry((str(i), column), cell))
            if labelled and column != table.header[0]:
                found.append(Entry((row[0], column), cell))


_UNKNOWN = object()


def _python(tree: ast.Module) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Module and class constants — a name whose last binding in the body's straight-line
    statements is an assignment of an ``ast.literal_eval``-able value, and that no
    compound statement, import, def or augmented assignment rebinds after — class bases
    and parameter defaults (literal ones), nested classes by their dotted path."""
    yield from _scope((), tree.body)


def _scope(prefix: tuple[str, ...], body: list[ast.stmt]) -> Iterator[tuple[tuple[str, ...], Any]]:
    for name, value in _constants(body).items():
        yield (*prefix, name), value
    for stmt in body:
        if isinstance(stmt, ast.ClassDef):
            yield (*prefix, stmt.name), [ast.unparse(base) for base in stmt.bases]
            yield from _scope((*prefix, stmt.name), stmt.body)
        elif isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            yield from _defaults((*prefix, stmt.name), stmt.args)


def _constants(body: list[ast.stmt]) -> dict[str, Any]:
    bound: dict[str, Any] = {}
    for stmt in body:
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                _bind(bound, target, stmt.value)
        elif isinstance(stmt, ast.AnnAssign):
            if stmt.value is not None:
                _bind(bound, stmt.target, stmt.value)
        else:
            for name in _bound_names(stmt):
                bound[name] = _UNKNOWN
    return {name: value for name, value in bound.items() if value is not _UNKNOWN}


def _bind(bound: dict[str, Any], target: ast.expr, value: ast.expr) -> None:
    if isinstance(target, ast.Name):
        bound[target.id] = _literal(value)
    elif (
        isinstance(target, ast.Tuple | ast.List)
        and isinstance(value, ast.Tuple | ast.List)
        and len(target.elts) == len(value.elts)
    ):
        for t, v in zip(target.elts, value.elts, strict=True):
            _bind(bound, t, v)
    else:
        for node in ast.walk(target):
            if isinstance(node, ast.Name):
                bound[node.id] = _UNKNOWN


def _literal(node: ast.expr) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _UNKNOWN


def _bound_names(node: ast.AST) -> Iterator[str]:
    """The names a statement binds in its own scope (not inside defs, lambdas or
    comprehensions)."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        yield node.name
        return
    if isinstance(node, ast.Import | ast.ImportFrom):
        for alias in node.names:
            yield (alias.asname or alias.name).split(".")[0]
        return
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
        yield node.id
    skip = ast.Lambda | ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp
    for child in ast.iter_child_nodes(node):
        if not isinstance(child, skip):
            yield from _bound_names(child)


def _defaults(key: tuple[str, ...], args: ast.arguments) -> Iterator[tuple[tuple[str, ...], Any]]:
    positional = args.posonlyargs + args.args
    tail = positional[len(positional) - len(args.defaults) :]
    pairs = list(zip(tail, args.defaults, strict=True))
    pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d]
    for arg, default in pairs:
        value = _literal(default)
        if value is not _UNKNOWN:
            yield (*key, arg.arg), value


# -- lookup ---------------------------------------------------------------------------

_SEPARATORS = re.compile(r"[\[\].:/]")
_JOINERS = re.compile(r"[\s_\-]+")
_SECTION_KEY = re.compile(r"^\s*\[([^\]]+)\]\s*(\S.*)$")


def _atoms(component: str) -> list[str]:
    """A key component's parts, normalized: casefolded, split at ``[ ] . : /``, runs of
    ``-``, ``_`` and spaces alike."""
    parts = _SEPARATORS.split(component.casefold())
    return [a for a in (_JOINERS.sub("_", p.strip()) for p in parts) if a]


def _path_atoms(key: tuple[str, ...]) -> tuple[list[str], set[int]]:
    atoms: list[str] = []
    starts: set[int] = set()
    for component in key:
        starts.add(len(atoms))
        atoms.extend(_atoms(component))
    return atoms, starts


def lookup(parsed: Parsed, key: str | tuple[str, ...]) -> list[Entry]:
    """The entries of ``parsed`` that ``key`` names, in file order: those whose whole key
    path it is; else those whose key path ends with it (at a component boundary); else the
    same ignoring list indices the key does not name (``hooks.id`` finds
    ``repos.0.hooks.1.id``). Components compare normalized (:func:`_atoms`), so
    ``tool.black.line-length``, ``[tool.black] line_length``, ``section:key`` and ``a/b``
    all work. Empty when ``key`` names nothing; several matches are the caller's to judge."""
    if isinstance(key, str):
        m = _SECTION_KEY.match(key)
        query = _atoms(m.group(1)) + _atoms(m.group(2)) if m else _atoms(key)
    else:
        query = [a for c in key for a in _atoms(c)]
    if not query:
        return []
    found = entries(parsed)
    full: list[Entry] = []
    suffix: list[Entry] = []
    loose: list[Entry] = []
    n = len(query)
    for entry in found:
        atoms, starts = _path_atoms(entry.key)
        if atoms == query:
            full.append(entry)
        elif atoms[-n:] == query and len(atoms) - n in starts:
            suffix.append(entry)
        else:
            named = tuple(c for c in entry.key if not c.isdigit())
            atoms, starts = _path_atoms(named)
            if named != entry.key and atoms[-n:] == query and len(atoms) - n in starts:
                loose.append(entry)
    return full or suffix or loose


# -- Python structure -----------------------------------------------------------------


def module_name(path: str, files: Iterable[str] = ()) -> str:
    """The dotted module of the Python file at ``path`` (workspace-relative). In a package
    (its folder holds ``__init__.py`` among ``files``): from the topmost folder of the
    unbroken chain of packages, so ``src/pkg/sub/mod.py`` is ``pkg.sub.mod``; else the
    dotted path from the workspace, a leading ``src`` dropped. ``__init__`` names the
    package itself."""
    path = posixpath.normpath(path.replace("\\", "/")).lstrip("/")
    folder, name = posixpath.split(path)
    stem = name.rsplit(".", 1)[0] if name.endswith((".py", ".pyi")) else name
    have = {posixpath.normpath(f.replace("\\", "/")) for f in files}
    parts = [p for p in folder.split("/") if p and p != "."]
    top = len(parts)
    while top > 0 and posixpath.join(*parts[:top], "__init__.py") in have:
        top -= 1
    if top == len(parts) and parts and parts[0] == "src":
        top = 1
    elif top == len(parts):
        top = 0
    dotted = [*parts[top:], stem] if stem != "__init__" else parts[top:]
    return ".".join(dotted)


def imports(tree: ast.Module, path: str, files: Iterable[str] = ()) -> set[str]:
    """The absolute dotted modules the file at ``path`` imports, anywhere in it: ``import
    a.b`` gives ``a.b``; ``from m import n`` gives ``m`` and ``m.n`` (``n`` may be a
    submodule: intersect with the workspace's modules); relative imports resolved from the
    file's package (:func:`module_name` with ``files``); one reaching above the top, none."""
    module = module_name(path, files).split(".")
    package = module if posixpath.basename(path).startswith("__init__.") else module[:-1]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                if node.level - 1 > len(package):
                    continue
                base = package[: len(package) - (node.level - 1)]
                parts = [*base, *(node.module.split(".") if node.module else [])]
            else:
                parts = node.module.split(".") if node.module else []
            if not parts:
                continue
            found.add(".".join(parts))
            found.update(".".join([*parts, a.name]) for a in node.names if a.name != "*")
    return found


def defines(tree: ast.Module) -> set[str]:
    """The functions and classes a module defines at its top level (also inside top-level
    ``if``/``try``/``with`` blocks), and by dotted path the methods and nested classes of
    its classes: ``slugify``, ``Shape``, ``Shape.area``, ``Outer.Inner.method``."""
    found: set[str] = set()

    def visit(prefix: str, body: list[ast.stmt]) -> None:
        for stmt in body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                found.add(prefix + stmt.name)
                if isinstance(stmt, ast.ClassDef):
                    visit(f"{prefix}{stmt.name}.", stmt.body)
            elif not prefix:
                for field in ("body", "orelse", "finalbody"):
                    visit(prefix, getattr(stmt, field, None) or [])
                for handler in getattr(stmt, "handlers", None) or []:
                    visit(prefix, handler.body)

    visit("", tree.body)
    return found
