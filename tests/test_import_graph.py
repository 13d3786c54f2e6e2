"""The package's import graph: no circle, no upward import, no production import of the test
helpers.

The graph is built from the source files through the folder mapping in ``pyproject.toml``
(``artoo.actors`` is ``actors/``, …), with every import counted: top-level, inside functions
and under ``TYPE_CHECKING`` alike — a circle kept from failing by a late import is still a
circle.
"""

from __future__ import annotations

import ast
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

LAYERS: tuple[tuple[str, ...], ...] = (
    ("artoo.schemas",),
    ("artoo.eventstore",),
    ("artoo.actors.runtime", "artoo.actors.llm", "artoo.actors.law1", "artoo.actors.tools"),
    ("artoo.actors.verification",),
    ("artoo.actors.roles",),
    ("artoo.actors",),
    ("artoo",),
)
"""Packages from the bottom up: a module may import its own layer and the layers below it.
``artoo.actors`` itself is only the flat public surface; ``artoo`` is the faces (System, CLI,
replay, report)."""

TEST_HELPERS = "artoo.testing"

PRIVATE_HELPERS = {("ggs", "gradient"), ("auditor", "audit_mark"), ("judge", "judge_rung")}
"""(role, its private helper module): the one kind of import between modules of roles/."""


def _folders() -> dict[str, Path]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    mapping: dict[str, str] = config["package-dir"]
    folders: dict[str, Path] = {}
    for package in config["packages"]:
        top = max((p for p in mapping if package == p or package.startswith(p + ".")), key=len)
        rest = package[len(top) :].lstrip(".")
        folders[package] = (
            ROOT / mapping[top] / Path(*rest.split(".")) if rest else ROOT / mapping[top]
        )
    return folders


def _modules() -> dict[str, Path]:
    modules: dict[str, Path] = {}
    for package, folder in _folders().items():
        for path in folder.glob("*.py"):
            name = package if path.stem == "__init__" else f"{package}.{path.stem}"
            modules[name] = path
    return modules


def _imports(name: str, path: Path, known: set[str]) -> Iterator[str]:
    """The project modules ``name`` imports (a package's ``__init__`` counts as the package)."""
    is_package = path.stem == "__init__"
    package = name if is_package else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                stem = ".".join([*base, node.module] if node.module else base)
            else:
                stem = node.module or ""
            # ``from pkg import mod`` imports the module when there is one
            targets = [
                f"{stem}.{a.name}" if f"{stem}.{a.name}" in known else stem for a in node.names
            ]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                yield target


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    known = set(modules)
    return {name: set(_imports(name, path, known)) for name, path in modules.items()}


def _layer(module: str) -> int:
    best, rank = "", -1
    for i, layer in enumerate(LAYERS):
        for package in layer:
            if (module == package or module.startswith(package + ".")) and len(package) > len(best):
                best, rank = package, i
    return rank


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_the_graph_sees_every_package() -> None:
    graph = _graph()
    for package in ("artoo.actors.roles.queen", "artoo.actors.runtime.bus", "artoo.schemas"):
        assert package in graph
    assert "artoo.actors.runtime.role" in graph["artoo.actors.roles.queen"]


def test_no_import_circle() -> None:
    assert _cycles(_graph()) == []


def test_no_upward_import() -> None:
    upward = [
        f"{module} -> {target}"
        for module, targets in _graph().items()
        for target in targets
        if _layer(target) > _layer(module)
    ]
    assert upward == []


def test_no_role_imports_another_role() -> None:
    roles = "artoo.actors.roles."
    crossing = []
    for module, targets in _graph().items():
        if not module.startswith(roles) or module.endswith(".roster"):
            continue
        own = module[len(roles) :].lstrip("_")
        for target in targets:
            other = target[len(roles) :].lstrip("_") if target.startswith(roles) else None
            if other is not None and other != own and not _private_of(own, other):
                crossing.append(f"{module} -> {target}")
    assert crossing == []


def _private_of(role: str, helper: str) -> bool:
    """A role's own private helper module (``_gradient`` of the GGS, …)."""
    return (role, helper) in {
        ("ggs", "gradient"),
        ("auditor", "audit_mark"),
        ("judge", "judge_rung"),
    }


def test_production_code_never_imports_the_test_helpers() -> None:
    users = [m for m, targets in _graph().items() if TEST_HELPERS in targets and m != TEST_HELPERS]
    assert users == []


@pytest.mark.parametrize(
    ("graph", "expected"),
    [
        ({"a": {"b"}, "b": {"a"}, "c": set()}, [["a", "b"]]),
        ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
    ],
)
def test_the_circle_finder_finds_circles(
    graph: dict[str, set[str]], expected: list[list[str]]
) -> None:
    assert _cycles(graph) == expected
