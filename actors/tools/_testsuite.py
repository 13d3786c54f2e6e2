"""A workspace's tests, discovered: which runner they are written for, where they run from,
which files hold them (pure but for reading the workspace, and bounded).

pytest when the workspace configures it (``pytest.ini``, ``.pytest.ini``,
``[tool.pytest.ini_options]`` in ``pyproject.toml``, ``[pytest]`` in ``tox.ini``,
``[tool:pytest]`` in ``setup.cfg``, a ``conftest.py``) or has test files
(``test_*.py``/``*_test.py``, or the configuration's ``python_files``) with plain test
functions or classes; unittest when every test file holds only ``unittest.TestCase``
classes and pytest is not configured. :mod:`._testrun` runs them.
"""

from __future__ import annotations

import ast
import configparser
import fnmatch
import os
import tomllib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

__all__ = ["MAX_ENTRIES", "Suite", "discover"]

Runner = Literal["pytest", "unittest"]

MAX_ENTRIES = 20_000
"""Directory entries discovery looks at, at most (a larger tree is read in part)."""
MAX_DEPTH = 10
"""Directories deeper than this below the workspace are not searched."""
MAX_SOURCE = 1 << 20
"""A test file larger than this (bytes) is not parsed (counted as a test file)."""
DEFAULT_FILES = ("test_*.py", "*_test.py")
"""pytest's default ``python_files``."""
_CONFIGS = ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
"""pytest's configuration files, in its order of precedence within one directory."""
_SKIP_DIRS = frozenset(
    {"__pycache__", "node_modules", "build", "dist", "site-packages", "CVS", "_darcs", "{arch}"}
)
_Style = Literal["pytest", "unittest", "broken", "none"]


@dataclass(frozen=True)
class Suite:
    """A workspace's tests as found: ``runner`` they are written for; ``root`` the
    workspace-relative directory they run from ("." the workspace itself: where the pytest
    configuration is); ``paths`` the test files found (workspace-relative, sorted);
    ``config`` the pytest configuration file (workspace-relative) or None; ``pythonpath``
    directories (workspace-relative) to put on ``PYTHONPATH``: a ``src/`` layout the project
    does not configure itself (``pythonpath`` in its pytest configuration, or a conftest.py
    that edits ``sys.path``)."""

    runner: Runner
    root: str = "."
    paths: tuple[str, ...] = ()
    config: str | None = None
    pythonpath: tuple[str, ...] = ()
    testpaths: tuple[str, ...] = ()
    """The configuration's ``testpaths`` (relative to ``root``); (): the whole root."""
    patterns: tuple[str, ...] = DEFAULT_FILES
    """The names of test files (the configuration's ``python_files``, else pytest's)."""


def discover(workspace: Path, *, hidden: Iterable[Path] = ()) -> Suite | None:
    """The tests of ``workspace``, or None when it has none (no test file with a test in
    it: a configuration alone is no suite). ``hidden`` paths (absolute) are not looked
    into. Reads at most :data:`MAX_ENTRIES` directory entries, :data:`MAX_DEPTH` levels
    deep; hidden directories, virtual environments, caches and build output are skipped,
    as pytest's ``norecursedirs`` does. Never raises for an unreadable or malformed file."""
    workspace = workspace.resolve()
    skip = tuple(Path(p).resolve() for p in hidden)
    root, config, options = _find_config(workspace, skip, [MAX_ENTRIES])
    budget = [MAX_ENTRIES]
    base = workspace / root
    patterns = tuple(_words(options.get("python_files"))) or DEFAULT_FILES
    testpaths = tuple(_words(options.get("testpaths")))
    starts = [base / p for p in testpaths] or [base]
    styles: dict[str, _Style] = {}
    conftest = (base / "conftest.py").is_file()
    for start in starts:
        if not _inside(start, workspace) or not start.exists():
            continue
        for path in _walk(start, skip, budget):
            if path.name == "conftest.py":
                conftest = True
            elif any(fnmatch.fnmatch(path.name, p) for p in patterns):
                styles.setdefault(path.relative_to(workspace).as_posix(), _style(path))
    found = {p: s for p, s in styles.items() if s != "none"}
    if not found:
        return None
    configured = config is not None or conftest
    if configured or "pytest" in found.values() or "unittest" not in found.values():
        runner: Runner = "pytest"
    else:
        runner = "unittest"
    return Suite(
        runner=runner,
        root=root,
        paths=tuple(sorted(found)),
        config=config,
        pythonpath=_src_layout(base, workspace, options, skip),
        testpaths=testpaths,
        patterns=patterns,
    )


# =========================================================================== internals
def _inside(path: Path, root: Path) -> bool:
    resolved = path.resolve()
    return resolved == root or root in resolved.parents


def _hidden(path: Path, skip: tuple[Path, ...]) -> bool:
    return any(path == s or s in path.parents for s in skip)


def _walk(start: Path, skip: tuple[Path, ...], budget: list[int]) -> Iterator[Path]:
    """The ``.py`` files beneath ``start`` (or ``start`` itself), breadth first, within the
    budget; symlinks are not followed, skipped directories not entered."""
    if start.is_file():
        if start.suffix == ".py" and not _hidden(start, skip):
            yield start
        return
    queue = [(start, 0)]
    while queue:
        directory, depth = queue.pop(0)
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            budget[0] -= 1
            if budget[0] < 0:
                return
            path = Path(entry.path)
            if _hidden(path, skip):
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    if depth < MAX_DEPTH and not _skipped_dir(path):
                        queue.append((path, depth + 1))
                elif entry.is_file(follow_symlinks=False) and entry.name.endswith(".py"):
                    yield path
            except OSError:
                continue


def _skipped_dir(path: Path) -> bool:
    """A directory pytest does not recurse into by default: hidden, a virtual environment,
    a cache, build output, an egg."""
    name = path.name
    if name.startswith(".") or name in _SKIP_DIRS or name.endswith((".egg", ".egg-info")):
        return True
    return (path / "pyvenv.cfg").exists() or (name in ("venv", "env") and (path / "bin").is_dir())


def _find_config(
    workspace: Path, skip: tuple[Path, ...], budget: list[int]
) -> tuple[str, str | None, dict[str, Any]]:
    """``(root, config file, its pytest options)``: the workspace's own configuration, else
    that of the shallowest directory (two levels down at most) that has one, else
    ``(".", None, {})``."""
    level = [workspace]
    for depth in range(3):
        for directory in level:
            found = _config_in(directory)
            if found is not None:
                name, options = found
                root = directory.relative_to(workspace).as_posix()
                return root, (directory / name).relative_to(workspace).as_posix(), options
        below: list[Path] = []
        for directory in level if depth < 2 else ():
            try:
                children = sorted(
                    Path(e.path) for e in os.scandir(directory) if e.is_dir(follow_symlinks=False)
                )
            except OSError:
                continue
            budget[0] -= len(children)
            if budget[0] < 0:
                break
            below += [c for c in children if not (_skipped_dir(c) or _hidden(c, skip))]
        level = below[:200]
    return ".", None, {}


def _config_in(directory: Path) -> tuple[str, dict[str, Any]] | None:
    """The pytest configuration file of ``directory`` and its options, as pytest picks it."""
    for name in _CONFIGS:
        path = directory / name
        if not path.is_file():
            continue
        try:
            if name == "pyproject.toml":
                table = tomllib.loads(path.read_text(encoding="utf-8")).get("tool", {})
                options = table.get("pytest", {}) if isinstance(table, dict) else {}
                if isinstance(options, dict) and "ini_options" in options:
                    ini = options["ini_options"]
                    return name, dict(ini) if isinstance(ini, dict) else {}
                continue
            parser = configparser.ConfigParser(interpolation=None, strict=False)
            parser.read_string(path.read_text(encoding="utf-8", errors="replace"))
        except (OSError, ValueError, configparser.Error, tomllib.TOMLDecodeError):
            if name in ("pytest.ini", ".pytest.ini"):
                return name, {}
            continue
        section = {"tox.ini": "pytest", "setup.cfg": "tool:pytest"}.get(name, "pytest")
        if parser.has_section(section):
            return name, dict(parser.items(section))
        if name in ("pytest.ini", ".pytest.ini"):  # pytest.ini is the configuration, even empty
            return name, {}
    return None


def _words(value: Any) -> list[str]:
    """An ini option's values: a TOML list, or words separated by white space."""
    if isinstance(value, list):
        return [str(v) for v in value if str(v).strip()]
    if isinstance(value, str):
        return value.split()
    return []


def _style(path: Path) -> _Style:
    """What a test file is written for: ``pytest`` (plain test functions or ``Test*``
    classes, or it imports pytest), ``unittest`` (``TestCase`` classes only), ``broken``
    (it does not parse: a collection error to come), ``none`` (no test in it)."""
    try:
        if path.stat().st_size > MAX_SOURCE:
            return "pytest"
        tree = ast.parse(path.read_bytes(), str(path))
    except (OSError, SyntaxError, ValueError):
        return "broken"
    plain = cases = False
    for node in tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names]
            module = node.module if isinstance(node, ast.ImportFrom) else None
            if module == "pytest" or "pytest" in names:
                plain = True
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            plain |= node.name.startswith("test")
        elif isinstance(node, ast.ClassDef):
            bases = [_base_name(b) for b in node.bases]
            if any(b.endswith("TestCase") for b in bases):
                cases = True
            elif any("Test" in b or "Case" in b for b in bases):  # a TestCase of the project's
                cases = True
            elif node.name.startswith("Test") and any(
                isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name.startswith("test")
                for n in node.body
            ):
                plain = True
    return "pytest" if plain else "unittest" if cases else "none"


def _base_name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def _src_layout(
    base: Path, workspace: Path, options: dict[str, Any], skip: tuple[Path, ...]
) -> tuple[str, ...]:
    """``("src",)`` (workspace-relative) when ``base/src`` holds the project's package or
    modules and the project does not put it on the path itself; else ()."""
    src = base / "src"
    if not src.is_dir() or _hidden(src.resolve(), skip) or _words(options.get("pythonpath")):
        return ()
    try:
        entries = list(os.scandir(src))
    except OSError:
        return ()
    holds_code = any(
        (e.is_dir() and (Path(e.path) / "__init__.py").is_file()) or e.name.endswith(".py")
        for e in entries
    )
    if not holds_code:
        return ()
    for conftest in (base / "conftest.py", base / "tests" / "conftest.py"):
        try:
            if conftest.is_file() and "sys.path" in conftest.read_text(errors="replace"):
                return ()
        except OSError:
            continue
    return (src.relative_to(workspace).as_posix(),)
