"""_values: the values an answer states by the shape asked for, read from its form (code,
quotes, emphasis, digits, dots, list punctuation) and never from its words — so the same
answer in German, French or Spanish states the same value — and how values of a shape
compare (numbers as numbers, versions as written releases, booleans by the formats'
vocabulary, names with paths as modules, lists as sets)."""

from __future__ import annotations

import string
from decimal import Decimal

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from artoo.actors.verification._values import (
    SHAPES,
    items,
    normal,
    same,
    same_set,
    shows,
    stated,
    states,
)

FRAMES = [
    "{}",
    "{}.",
    "The value is {}.",
    "It is **{}**.",
    "Answer: `{}`",
    "Der Wert ist {}.",
    "Die Antwort lautet „{}“.",
    "La valeur est {}.",
    "La réponse est « {} ».",
    "El valor es {}.",
    "¿El valor? Es {}.",
    "- {}",
]

# -- numbers ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "first"),
    [
        ("Die Zeilenlänge ist 88.", "88"),
        ("La longueur de ligne est de 88 caractères.", "88"),
        ("The limit is **100 characters**.", "100"),
        ("88 chars", "88"),
        ("5 MB", "5"),
        ("5MB in todo2.txt", "5MB"),
        ("It has 1,300 lines.", "1,300"),
        ("There were 12 on 2024-01-15 at 12:30.", "12"),
        ("1. first step\n2. the count is 7", "7"),
        ("v2 of notes/2.txt holds 40", "40"),
        ("the 88-character limit", "88-character"),
        ("Es sind 1.300,5 Euro.", "1.300,5"),
        ("Es ist `42`, nicht 41.", "42"),
    ],
)
def test_the_number_an_answer_states_first(answer: str, first: str) -> None:
    assert stated(answer, "number")[0] == first


@pytest.mark.parametrize(
    "answer",
    ["see todo2.txt", "v2", "on 2024-01-15", "at 12:30", "1. step one", "py38", "0x1F", "#12"],
)
def test_a_number_inside_a_name_a_date_a_time_or_a_list_marker_is_not_stated(answer: str) -> None:
    assert stated(answer, "number") == []


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("1,300", "1300"),
        ("1300", "1300.00"),
        ("1,300", 1300),
        ("1\u00a0300", "1300"),  # no-break space
        ("1'300", "1300"),
        ("1.300.000", 1_300_000),
        ("1.300,5", Decimal("1300.5")),
        ("1,5", 1.5),
        ("100 characters", 100),
        ("5 MB", "5"),
        ("−5", -5),
        ("50%", 50),
        ("1e3", 1000),
        ("`88`", "**88**"),
    ],
)
def test_number_forms_are_the_same_number(a: object, b: object) -> None:
    assert same(a, b, "number") and same(b, a, "number")


@pytest.mark.parametrize(
    ("a", "b"), [("10", "1"), ("1.300", "1300"), ("88", "89"), ("2 of 5", "2")]
)
def test_different_numbers_are_not_the_same(a: str, b: str) -> None:
    assert not same(a, b, "number")


def test_a_number_is_stated_only_as_a_whole_token() -> None:
    assert states("There are 10 files.", 10, "number")
    assert not states("There are 10 files.", 1, "number")
    assert not states("See todo2.txt.", 2, "number")
    assert not states("Version 2.1.3.", Decimal("2.1"), "number")
    assert not states("True", 1, "number")


# -- versions ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "first"),
    [
        ("La version est `2.1.3`.", "2.1.3"),
        ("Die Version ist v2.1.", "v2.1"),
        ("requires-python = >=3.8", "3.8"),
        ("Python >=3.8,<4 is required", "3.8"),
        ("Es la 2.1rc1.", "2.1rc1"),
    ],
)
def test_the_version_an_answer_states_first(answer: str, first: str) -> None:
    assert stated(answer, "version")[0] == first


def test_versions_compare_as_written_releases() -> None:
    assert same("v2.1", "2.1", "version")
    assert same(">=3.8", "3.8", "version")
    assert same("2.1.0rc1", "2.1.0-rc.1", "version")
    assert not same("2.1", "2.1.3", "version")
    assert not same("2.1", "2.1.0", "version")  # as written: 2.1.0 is not 2.1
    assert not same("3.10", 3.1, "version")  # YAML's float 3.1 is not 3.10
    assert not states("We use 2.1.3.", "2.1", "version")
    assert states("We use 2.1.3.", "2.1.3", "version")
    assert not states("Python 3", "3", "version") or stated("Python 3", "version") == []
    assert states("Python `3`", "3", "version")


# -- booleans ---------------------------------------------------------------------------


def test_booleans_by_the_formats_vocabulary() -> None:
    for true in (True, "true", "True", "`yes`", "on", "1", "TRUE"):
        assert normal(true, "boolean") is True, true
    for false in (False, "false", "no", "off", "0", "`False`"):
        assert normal(false, "boolean") is False, false
    assert normal("ja", "boolean") is None and normal(2, "boolean") is None
    assert states("`True`", True, "boolean")
    assert states("Yes.", True, "boolean")  # the whole answer
    assert states("Es ist `false`.", False, "boolean")
    assert stated("The flag on line 3 is false.", "boolean") == ["false"]  # bare "on": prose


# -- names ------------------------------------------------------------------------------


def test_names_exact_with_markup_aside_and_paths_as_modules() -> None:
    assert same("`pkg/mod.py`", "pkg.mod", "name")
    assert same("src/pkg/mod.py", "pkg.mod", "name")
    assert same("pkg/__init__.py", "pkg", "name")
    assert same("**slugify()**", "slugify", "name")
    assert same(".\\pkg\\mod.py", "pkg/mod.py", "name")
    assert not same("Square", "square", "name")
    assert not same("pkg.mod", "pkg.mod2", "name")
    assert same("data/sales.csv", "data/sales.csv", "name")


def test_the_name_an_answer_states() -> None:
    assert stated("Defined in `src/text.py`.", "name")[0] == "src/text.py"
    assert stated("Die Basisklasse ist Shape.", "name")[0] == "Shape"
    assert stated("La clase base es shapes.Shape, no otra.", "name")[0] == "shapes.Shape"
    assert states("It is defined in pkg/mod.py.", "pkg.mod", "name")
    assert not states("It is defined in pkg/mod.py.", "pkg", "name")
    assert not states("see pkg.mod.sub", "pkg.mod", "name")
    assert states("The bin is screws.", "screws", "name")


# -- values -----------------------------------------------------------------------------


def test_values_compare_as_numbers_booleans_or_text() -> None:
    assert same("88", 88, "value") and same("88.0", 88, "value")
    assert same("1", True, "value") and same("yes", True, "value")
    assert not same("1", False, "value")
    assert same("INFO", "info", "value")
    assert same(None, "`null`", "value") and same(None, "None", "value")
    assert not same("-ra", "-q", "value")
    assert not same([1], [1], "value")
    assert states("Die Option ist `-ra --strict-markers`.", "-ra --strict-markers", "value")
    assert states("The level is INFO.", "info", "value")
    assert not states("The level is INFORMATION.", "info", "value")


# -- tool output ------------------------------------------------------------------------


def test_a_tool_output_shows_a_value_token_bounded() -> None:
    assert shows("[tool.black]\nline-length = 88\n", 88, "number")
    assert shows("line-length=88", "88", "number")
    assert shows('  "version": "2.1.3",', "2.1.3", "version")
    assert not shows('  "version": "2.1.3",', "2.1", "version")
    assert shows("region,amount\nwest,800\n", 800, "number")
    assert not shows("region,amount\nwest,1800\n", 800, "number")
    assert shows("src/pkg/mod.py:3:import x", "pkg.mod", "name")
    assert shows("debug = true", True, "boolean") and shows("enabled: on", True, "boolean")
    assert not shows("exit 1", True, "boolean")
    assert shows("- black\n- ruff\n", ["ruff", "black"], "list")
    assert not shows("- black\n", ["ruff", "black"], "list")
    assert not shows("anything", "anything", "text")


# -- lists ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        "- `pkg/a.py` — imports it\n- pkg/b.py (also)\n- **pkg/c.py**",
        "1. pkg/a.py\n2. pkg/b.py\n3. pkg/c.py",
        "`pkg/a.py`, `pkg/b.py` and `pkg/c.py`",
        "The modules are pkg.a, pkg.b and pkg.c.",
        "Die Module pkg.a, pkg.b und pkg.c importieren es.",
        "Les modules sont pkg/a.py, pkg/b.py et pkg/c.py.",
        "Los módulos: pkg.a, pkg.b, y pkg.c.",
        "```text\npkg/a.py\npkg/b.py\npkg/c.py\n```",
        "pkg/a.py\npkg/b.py\npkg/c.py\n",
    ],
)
def test_the_items_of_a_list_answer(answer: str) -> None:
    assert same_set(items(answer), ["pkg.a", "pkg.b", "pkg.c"])


def test_plain_word_items_by_position_and_completeness() -> None:
    assert items("The hooks are black, ruff and mypy.") == ["black", "ruff", "mypy"]
    assert items("Die Hooks sind black, ruff und mypy.") == ["black", "ruff", "mypy"]
    assert items("Hooks: black, ruff, mypy") == ["black", "ruff", "mypy"]
    assert items("py38, py39, lint") == ["py38", "py39", "lint"]
    assert items("Es sind pkg.a und pkg/b.py.") == ["pkg.a", "pkg/b.py"]
    assert items("black and ruff") == []  # no comma, no code: no list by form (fail closed)
    assert not same_set(items("pkg.a and pkg.b"), ["pkg.a", "pkg.b", "pkg.c"])  # 2 of 3
    assert not same_set(["pkg.a", "pkg.b", "pkg.c", "pkg.d"], ["pkg.a", "pkg.b", "pkg.c"])
    assert states("`black`, `ruff`", "black, ruff", "list")
    assert same(["py38", "py39"], "py38, py39", "list")
    assert items("\nclick>=8\nattrs") == ["click>=8", "attrs"]  # an INI multi-line value


# -- properties -------------------------------------------------------------------------

_IDENT = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,10}", fullmatch=True)
_NAME = st.one_of(
    _IDENT,
    st.builds(lambda a, b: f"{a}.{b}", _IDENT, _IDENT),
    st.builds(lambda a, b: f"{a}/{b}.py", _IDENT, _IDENT),
)
_NUMBER = st.one_of(
    st.integers(-(10**9), 10**9),
    st.decimals(min_value=-(10**6), max_value=10**6, places=2, allow_nan=False),
)
_VERSION = st.lists(st.integers(0, 30), min_size=1, max_size=4).map(
    lambda parts: ".".join(map(str, parts))
)
_ANY = st.one_of(_NUMBER, _NAME, _VERSION, st.booleans(), st.text(max_size=12))


@given(_ANY, st.sampled_from(SHAPES))
def test_same_is_reflexive_on_what_the_shape_reads(value: object, shape: str) -> None:
    assume(shape != "text" and normal(value, shape) is not None)
    assert same(value, value, shape)


@given(_ANY, _ANY, st.sampled_from(SHAPES))
def test_same_is_symmetric(a: object, b: object, shape: str) -> None:
    assert same(a, b, shape) == same(b, a, shape)


def _variants(n: Decimal | int) -> list[str]:
    d = Decimal(n)
    out = [str(n), f"{d:,}", f"`{d}`", f"**{d}**", f"{d} characters", f"{d:.2f}", f"{d}MB"]
    grouped = f"{d:,.2f}"
    out.append(grouped.replace(",", "\u00a0"))  # 1 300.00
    out.append(
        grouped.replace(",", "_").replace(".", "\x00").replace("_", ".").replace("\x00", ",")
    )
    return out


@given(_NUMBER)
def test_a_numbers_formatting_variants_are_the_same(n: Decimal | int) -> None:
    for variant in _variants(n):
        assert same(variant, n, "number"), variant
        assert states(f"Der Wert ist {variant}.", n, "number"), variant


@given(st.sampled_from(FRAMES), _NUMBER)
def test_a_number_in_any_frame_is_stated(frame: str, n: Decimal | int) -> None:
    answer = frame.format(n)
    assert states(answer, n, "number"), answer
    assert not states(answer, Decimal(n) + 1, "number"), answer


@given(st.sampled_from(FRAMES), _VERSION)
def test_a_version_in_any_frame_is_stated(frame: str, version: str) -> None:
    assume("." in version)
    for written in (version, f"v{version}", f"`{version}`"):
        answer = frame.format(written)
        assert states(answer, version, "version"), answer
        assert stated(answer, "version")[0].lstrip("v`") == version


@given(st.sampled_from(FRAMES), _NAME)
def test_a_name_in_any_frame_is_stated(frame: str, name: str) -> None:
    answer = frame.format(f"`{name}`")
    assert states(answer, name, "name"), answer
    assert stated(answer, "name")[0] == name
    assert states(frame.format(name), name, "name"), frame.format(name)


@given(st.sampled_from(FRAMES), st.booleans())
def test_a_boolean_in_any_frame_is_stated(frame: str, value: bool) -> None:
    answer = frame.format(f"`{str(value).lower()}`")
    assert states(answer, value, "boolean") and not states(answer, not value, "boolean")


@given(st.lists(st.integers(0, 99), min_size=2, max_size=5), st.integers(1, 4))
def test_a_version_is_never_the_same_as_a_proper_prefix(parts: list[int], cut: int) -> None:
    assume(cut < len(parts))
    full, prefix = ".".join(map(str, parts)), ".".join(map(str, parts[:cut]))
    assert not same(full, prefix, "version")
    assert not states(f"Version {full}.", prefix, "version")
    assert not shows(f"version = {full!r}", prefix, "version")


@given(
    st.lists(_NAME, min_size=2, max_size=6, unique=True),
    st.sampled_from(["and", "und", "et", "y", "e"]),
    st.sampled_from(["bullets", "numbered", "spans", "prose"]),
)
def test_a_list_in_any_form_gives_its_items(names: list[str], conj: str, form: str) -> None:
    assume(len({normal(n, "name") for n in names}) == len(names))
    if form == "bullets":
        answer = "\n".join(f"- {n}" for n in names)
    elif form == "numbered":
        answer = "\n".join(f"{i}. {n}" for i, n in enumerate(names, 1))
    elif form == "spans":
        answer = ", ".join(f"`{n}`" for n in names)
    else:  # two plain words with no comma are no list by form: see the worked examples
        assume(len(names) >= 3)
        answer = "Es sind " + ", ".join(names[:-1]) + f" {conj} {names[-1]}."
    assert same_set(items(answer), names), (answer, items(answer))
    assert not same_set(items(answer), names[:-1])


@given(st.text(string.printable, max_size=80), st.sampled_from(SHAPES))
def test_reading_any_text_never_raises(text: str, shape: str) -> None:
    for value in stated(text, shape):
        assert states(text, value, shape) or shape == "list"
    shows(text, text, shape)
    items(text)
