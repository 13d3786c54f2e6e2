"""_formats: a parser per file format picked by the file's name, the entries a parsed file
holds by key, lookups by a key as a reading names it, parse errors as data, and a Python
file's structure (imports, definitions, module name). Worked examples per format, then
properties: every entry is found by its own key, and TOML/JSON/YAML round trips give the
generated data back as entries."""

from __future__ import annotations

import json
import string
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from artoo.actors.verification._formats import (
    MAX_BYTES,
    Entry,
    Table,
    defines,
    entries,
    format_of,
    imports,
    lookup,
    module_name,
    parse,
    parse_error,
)

PYPROJECT = b"""\
[project]
name = "relay"
version = "2.1.3"
requires-python = ">=3.8"
dependencies = ["click>=8", "attrs"]

[tool.black]
line-length = 88
target-version = ["py38", "py39"]

[tool.pytest.ini_options]
addopts = "-ra"
"""

PRECOMMIT = b"""\
repos:
  - repo: https://github.com/psf/black
    rev: 24.1.0
    hooks:
      - id: black
  - repo: https://github.com/astral-sh/ruff-pre-commit
    rev: v0.3.0
    hooks:
      - id: ruff
        args: [--fix]
      - id: ruff-format
"""

SETUP_CFG = b"""\
[metadata]
name = relay
version = 2.1.3

[options]
install_requires =
    click>=8
    attrs

[tool:pytest]
addopts = -ra --strict-markers
"""

TOX_INI = b"""\
[tox]
envlist = py38, py39, lint

[testenv]
deps = pytest
commands = pytest {posargs}
"""

PACKAGE_JSON = b'{"name": "relay", "scripts": {"test": "jest"}, "engines": {"node": ">=18"}}'

SALES_CSV = b"region,amount\nwest,800\neast,1300\nnorth,50\n"

SHAPES_PY = b'''\
"""Shapes."""
from __future__ import annotations

import abc
from . import units
from ..core.base import Shape as BaseShape

__all__ = ["Square", "area"]
__version__ = "2.1.3"
MAX_SIDE: int = 100
COLOURS = ("red", "green")
DERIVED = MAX_SIDE * 2
RETRIES = 1
RETRIES = 3
if abc:
    FLAG = True


class Square(BaseShape, abc.ABC, metaclass=abc.ABCMeta):
    SIDES = 4

    def area(self, scale=1.0, *, unit="cm"):
        return scale

    class Meta:
        ordering = "side"


def slugify(text, sep="-", limit=None, *args, lower=True, **kw):
    return text
'''


# -- formats ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "fmt"),
    [
        ("pyproject.toml", "toml"),
        ("Pipfile", "toml"),
        (".pre-commit-config.yaml", "yaml"),
        ("ci/build.YML", "yaml"),
        ("setup.cfg", "ini"),
        ("tox.ini", "ini"),
        (".flake8", "ini"),
        (".coveragerc", "ini"),
        (".editorconfig", "ini"),
        ("pkg/package.json", "json"),
        ("data/sales.csv", "csv"),
        ("data/sales.tsv", "csv"),
        ("src/pkg/mod.py", "python"),
        ("src/pkg/mod.pyi", "python"),
        ("README.md", "text"),
        ("CHANGES", "text"),
        ("nginx.conf", "text"),
    ],
)
def test_the_format_is_the_files_by_its_name(path: str, fmt: str) -> None:
    assert format_of(path) == fmt


# -- worked examples --------------------------------------------------------------------


def test_a_pyproject_key_is_found_by_its_dotted_path_and_by_its_tail() -> None:
    parsed = parse("pyproject.toml", PYPROJECT)
    assert parsed.error is None and parsed.format == "toml"
    expected = [Entry(("tool", "black", "line-length"), 88)]
    assert lookup(parsed, "tool.black.line-length") == expected
    assert lookup(parsed, "line-length") == expected
    assert lookup(parsed, "line_length") == expected  # - and _ alike
    assert lookup(parsed, "[tool.black] line-length") == expected
    assert lookup(parsed, "Tool/Black/Line Length") == expected
    assert lookup(parsed, "black.line-length") == expected
    assert lookup(parsed, "ack.line-length") == []  # only at a component boundary
    assert lookup(parsed, "project.version") == [Entry(("project", "version"), "2.1.3")]


def test_a_list_is_an_entry_of_its_own_and_by_its_items() -> None:
    parsed = parse("pyproject.toml", PYPROJECT)
    assert lookup(parsed, "target-version") == [
        Entry(("tool", "black", "target-version"), ["py38", "py39"])
    ]
    assert lookup(parsed, "target-version.1") == [
        Entry(("tool", "black", "target-version", "1"), "py39")
    ]


def test_a_full_match_is_preferred_to_a_suffix_match() -> None:
    parsed = parse("c.json", b'{"name": "top", "pkg": {"name": "inner"}}')
    assert [e.value for e in lookup(parsed, "name")] == ["top"]
    assert [e.value for e in lookup(parsed, "pkg.name")] == ["inner"]


def test_the_pre_commit_hooks_are_found_across_the_list_of_repos() -> None:
    parsed = parse(".pre-commit-config.yaml", PRECOMMIT)
    assert parsed.error is None
    assert [e.value for e in lookup(parsed, "hooks.id")] == ["black", "ruff", "ruff-format"]
    assert [e.value for e in lookup(parsed, "rev")] == ["24.1.0", "v0.3.0"]
    assert lookup(parsed, "repos.1.hooks.0.args") == [
        Entry(("repos", "1", "hooks", "0", "args"), ["--fix"])
    ]
    whole = lookup(parsed, "repos")
    assert len(whole) == 1 and len(whole[0].value) == 2


def test_yaml_reads_booleans_as_yaml_1_2_and_keeps_several_documents() -> None:
    parsed = parse(
        "workflow.yml", b"on:\n  push: [main]\nenabled: yes\ndebug: true\nat: 1:30\nv: 3.10\n"
    )
    assert lookup(parsed, "on.push") == [Entry(("on", "push"), ["main"])]
    assert lookup(parsed, "enabled")[0].value == "yes"  # a string: _values reads it boolean
    assert lookup(parsed, "debug")[0].value is True
    assert lookup(parsed, "at")[0].value == "1:30"  # no base-60 numbers
    assert lookup(parsed, "v")[0].value == 3.1  # a float, as every YAML parser reads it
    docs = parse("k8s.yaml", b"kind: A\n---\nkind: B\n")
    assert [(e.key, e.value) for e in lookup(docs, "kind")] == [
        (("0", "kind"), "A"),
        (("1", "kind"), "B"),
    ]


def test_setup_cfg_sections_and_keys_as_written() -> None:
    parsed = parse("setup.cfg", SETUP_CFG)
    assert parsed.error is None and parsed.format == "ini"
    assert lookup(parsed, "[metadata] version") == [Entry(("metadata", "version"), "2.1.3")]
    assert lookup(parsed, "metadata.version") == lookup(parsed, "metadata:version")
    assert lookup(parsed, "[tool:pytest] addopts")[0].value == "-ra --strict-markers"
    assert lookup(parsed, "tool:pytest.addopts")[0].value == "-ra --strict-markers"
    assert lookup(parsed, "install_requires")[0].value.split() == ["click>=8", "attrs"]


def test_a_tox_env_list_and_ini_values_are_strings_with_no_interpolation() -> None:
    parsed = parse("tox.ini", TOX_INI)
    assert lookup(parsed, "tox.envlist") == [Entry(("tox", "envlist"), "py38, py39, lint")]
    assert lookup(parsed, "commands")[0].value == "pytest {posargs}"
    percent = parse("app.ini", b"[log]\nformat = %(asctime)s %(message)s\n")
    assert lookup(percent, "format")[0].value == "%(asctime)s %(message)s"


def test_ini_default_is_a_section_of_its_own_and_editorconfig_keys_come_before_sections() -> None:
    parsed = parse("app.ini", b"[DEFAULT]\nlevel = info\n[server]\nport = 8080\n")
    assert [e.key for e in entries(parsed)] == [("DEFAULT", "level"), ("server", "port")]
    editor = parse(".editorconfig", b"root = true\n\n[*.py]\nindent_size = 4\n")
    assert entries(editor) == [Entry(("root",), "true"), Entry(("*.py", "indent_size"), "4")]


def test_a_json_nested_key() -> None:
    parsed = parse("package.json", PACKAGE_JSON)
    assert lookup(parsed, "scripts.test") == [Entry(("scripts", "test"), "jest")]
    assert lookup(parsed, "engines/node") == [Entry(("engines", "node"), ">=18")]


def test_a_csv_column_its_cells_and_rows_by_their_first_cell() -> None:
    parsed = parse("data/sales.csv", SALES_CSV)
    assert parsed.data == Table(
        ["region", "amount"], [["west", "800"], ["east", "1300"], ["north", "50"]]
    )
    assert lookup(parsed, "amount") == [Entry(("amount",), ["800", "1300", "50"])]
    assert lookup(parsed, "east.amount") == [Entry(("east", "amount"), "1300")]
    assert lookup(parsed, "1.amount") == [Entry(("1", "amount"), "1300")]


def test_the_csv_delimiter_is_sniffed() -> None:
    assert parse("a.csv", b"a;b\n1;2\n").data == Table(["a", "b"], [["1", "2"]])
    assert parse("a.tsv", b"a\tb\n1\t2\n").data == Table(["a", "b"], [["1", "2"]])
    assert parse("a.tsv", b"a,b\n1,2\n").data == Table(["a", "b"], [["1", "2"]])
    assert parse("a.csv", b'name,note\nx,"a, b"\n').data == Table(["name", "note"], [["x", "a, b"]])


def test_python_constants_class_bases_and_parameter_defaults() -> None:
    parsed = parse("src/pkg/shapes.py", SHAPES_PY)
    found = {e.key: e.value for e in entries(parsed)}
    assert found[("MAX_SIDE",)] == 100
    assert found[("__version__",)] == "2.1.3"
    assert found[("__all__",)] == ["Square", "area"]
    assert found[("COLOURS",)] == ("red", "green")
    assert found[("RETRIES",)] == 3  # the last binding
    assert ("DERIVED",) not in found  # no literal
    assert ("FLAG",) not in found  # bound under a condition
    assert found[("Square",)] == ["BaseShape", "abc.ABC"]  # keywords are not bases
    assert found[("Square", "SIDES")] == 4
    assert found[("Square", "area", "scale")] == 1.0
    assert found[("Square", "area", "unit")] == "cm"
    assert found[("Square", "Meta", "ordering")] == "side"
    assert found[("slugify", "sep")] == "-"
    assert found[("slugify", "limit")] is None
    assert found[("slugify", "lower")] is True
    assert ("slugify", "text") not in found
    assert lookup(parsed, "Square.area.unit") == [Entry(("Square", "area", "unit"), "cm")]


def test_a_python_files_imports_resolve_relative_ones_from_its_package() -> None:
    tree = parse("src/pkg/geo/shapes.py", SHAPES_PY).data
    files = ["src/pkg/__init__.py", "src/pkg/geo/__init__.py", "src/pkg/geo/shapes.py"]
    assert module_name("src/pkg/geo/shapes.py", files) == "pkg.geo.shapes"
    assert imports(tree, "src/pkg/geo/shapes.py", files) == {
        "__future__",
        "__future__.annotations",
        "abc",
        "pkg.geo",
        "pkg.geo.units",
        "pkg.core.base",
        "pkg.core.base.Shape",
    }
    init = parse("src/pkg/__init__.py", b"from .geo import shapes\nfrom ... import x\n").data
    assert imports(init, "src/pkg/__init__.py", files) == {"pkg.geo", "pkg.geo.shapes"}


def test_what_a_module_defines() -> None:
    tree = parse(
        "shapes.py", SHAPES_PY + b"try:\n    def fast(): ...\nexcept ImportError:\n    pass\n"
    )
    assert defines(tree.data) == {"Square", "Square.area", "Square.Meta", "slugify", "fast"}


@pytest.mark.parametrize(
    ("path", "files", "module"),
    [
        ("src/pkg/mod.py", ["src/pkg/__init__.py"], "pkg.mod"),
        ("src/pkg/__init__.py", ["src/pkg/__init__.py"], "pkg"),
        ("pkg/sub/mod.py", ["pkg/__init__.py", "pkg/sub/__init__.py"], "pkg.sub.mod"),
        ("pkg/sub/mod.py", ["pkg/sub/__init__.py"], "sub.mod"),
        ("src/ns/mod.py", [], "ns.mod"),
        ("tests/test_mod.py", [], "tests.test_mod"),
        ("./setup.py", [], "setup"),
    ],
)
def test_a_files_module_name(path: str, files: list[str], module: str) -> None:
    assert module_name(path, files) == module


# -- errors as data ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "data", "says"),
    [
        ("pyproject.toml", b"[tool.black\nline-length = 88\n", "toml:"),
        ("pyproject.toml", b"a = 1\na = 2\n", "toml:"),
        ("config.yaml", b"key: [1, 2\nother: 3\n", "yaml:"),
        ("config.yaml", b"a: b: c\n", "yaml:"),
        ("config.yaml", b"!!python/object:os.system x\n", "yaml:"),  # the safe loader
        ("setup.cfg", b"version = 1\n", "ini:"),
        ("setup.cfg", b"[metadata]\nname\n", "ini:"),
        ("tox.ini", b"[tox]\n[tox]\n", "ini:"),
        ("package.json", b'{"a": 1,}', "json:"),
        ("data.csv", b"a,b\n1,2,3\n", "row 2 has 3 fields"),
        ("data.csv", b'a,b\n"x"y,2\n', "csv:"),
        ("data.csv", b'a,b\n"x,2\n', "csv:"),
        ("mod.py", b"def f(:\n", "python:"),
        ("mod.py", b"x = '\x00'\n", "python:"),
        ("pyproject.toml", b"\xff\xfe", "not UTF-8"),
        ("deep.json", b"[" * 100_000, "json"),
    ],
)
def test_a_file_that_does_not_parse_says_why(path: str, data: bytes, says: str) -> None:
    error = parse_error(path, data)
    assert error is not None and says in error and "\n" not in error
    parsed = parse(path, data)
    assert parsed.data is None and entries(parsed) == [] and lookup(parsed, "a") == []


def test_a_file_too_large_is_not_parsed_and_text_always_parses() -> None:
    assert parse_error("big.json", b" " * (MAX_BYTES + 1)) == (
        f"too large to parse ({MAX_BYTES + 1} bytes; at most {MAX_BYTES})"
    )
    assert parse_error("README.md", b"\xff# title") is None
    assert parse("README.md", b"# title\n").data == "# title\n"
    for path, data in [("a.toml", PYPROJECT), ("a.yaml", PRECOMMIT), ("setup.cfg", SETUP_CFG)]:
        assert parse_error(path, data) is None


def test_a_yaml_alias_bomb_gives_bounded_entries() -> None:
    bomb = b"a: &a [x, x, x, x, x, x, x, x, x, x]\n"
    for level in "bcdefgh":
        prev = chr(ord(level) - 1)
        bomb += (
            f"{level}: &{level} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n".encode()
        )
    assert len(entries(parse("bomb.yaml", bomb))) <= 200_000
    wide = b"a,b\n" + b"x,y\n" * 200_000
    assert len(entries(parse("wide.csv", wide))) <= 200_000 + 2
    loop = parse("loop.yaml", b"a: &a [1, *a]\n")
    assert loop.error is None and len(entries(loop)) < 1000


@given(
    st.binary(max_size=300),
    st.sampled_from(["a.toml", "a.yaml", "a.ini", "a.json", "a.csv", "a.py", "a.txt"]),
)
@settings(max_examples=150)
def test_parsing_any_bytes_never_raises(data: bytes, path: str) -> None:
    parsed = parse(path, data)
    assert parsed.error is None or parsed.data is None
    assert entries(parsed) == [] or parsed.error is None


# -- properties -------------------------------------------------------------------------

_KEY = st.text(string.ascii_letters + string.digits + "-_ ", min_size=1, max_size=8).filter(
    lambda k: k.strip() != ""
)
_SCALAR = st.one_of(
    st.integers(-(10**9), 10**9),
    st.booleans(),
    st.text(string.ascii_letters + string.digits + " .-_/", max_size=12),
)


def _tree(depth: int = 3) -> st.SearchStrategy[dict[str, Any]]:
    leaf = st.one_of(_SCALAR, st.lists(_SCALAR, max_size=4))
    value = leaf if depth == 0 else st.one_of(leaf, st.deferred(lambda: _tree(depth - 1)))
    return st.dictionaries(_KEY, value, max_size=4)


def _flat(data: Any, key: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    """The entries a nested value gives, by the rule _formats documents."""
    if isinstance(data, dict):
        return [pair for k, v in data.items() for pair in _flat(v, (*key, str(k)))]
    out: list[tuple[tuple[str, ...], Any]] = [(key, data)]
    if isinstance(data, list):
        out += [pair for i, v in enumerate(data) for pair in _flat(v, (*key, str(i)))]
    return out


def _toml(data: dict[str, Any], table: tuple[str, ...] = ()) -> str:
    """``data`` as TOML text, by hand: scalars first, then one ``[table]`` per mapping."""

    def key(k: str) -> str:
        return json.dumps(k)

    def value(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        return json.dumps(v)

    lines = [f"[{'.'.join(map(key, table))}]"] if table else []
    lines += [f"{key(k)} = {value(v)}" for k, v in data.items() if not isinstance(v, dict)]
    for k, v in data.items():
        if isinstance(v, dict):
            lines.append(_toml(v, (*table, k)))
    return "\n".join(lines) + "\n"


@given(_tree())
def test_json_round_trip_gives_the_data_as_entries(data: dict[str, Any]) -> None:
    parsed = parse("data.json", json.dumps(data).encode())
    assert [(e.key, e.value) for e in entries(parsed)] == _flat(data)


@given(_tree())
def test_yaml_round_trip_gives_the_data_as_entries(data: dict[str, Any]) -> None:
    parsed = parse("data.yaml", yaml.safe_dump(data, allow_unicode=True).encode())
    assert parsed.error is None, parsed.error
    assert sorted(map(repr, ((e.key, e.value) for e in entries(parsed)))) == sorted(
        map(repr, _flat(data))
    )


@given(_tree())
def test_toml_round_trip_gives_the_data_as_entries(data: dict[str, Any]) -> None:
    parsed = parse("data.toml", _toml(data).encode())
    assert parsed.error is None, (parsed.error, _toml(data))
    assert sorted(map(repr, ((e.key, e.value) for e in entries(parsed)))) == sorted(
        map(repr, _flat(data))
    )


@given(_tree())
def test_every_entry_is_found_by_its_own_full_key(data: dict[str, Any]) -> None:
    parsed = parse("data.json", json.dumps(data).encode())
    for entry in entries(parsed):
        if entry.key:
            assert entry in lookup(parsed, entry.key)
            assert entry in lookup(parsed, ".".join(entry.key))
