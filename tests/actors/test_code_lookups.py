"""code_value: what a question asks of Python code — a constant's value, a class's parents,
which file defines a name — looked up by Python's parser (``_lookups.resolve_lookup``) and
judged against the answer; a question code cannot read looks up nothing (no proof either
way). The files and questions are the tests' own."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from artoo.actors.verification._lookups import code_lookup_check, resolve_lookup
from artoo.actors.verification._tables import Resolved
from artoo.actors.verification.checks import computed, evaluate, guess_problem
from artoo.schemas import Check

SETTINGS = 'NAME = "relay"\nPORT: int = 8080\nDEBUG = False\nLIMITS = [1, 2]\n'
ANIMALS = "class Animal:\n    pass\n\nclass Dog(Animal):\n    def bark(self):\n        pass\n"


def _write(root: Path, files: dict[str, str]) -> Path:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return root


def _judge(root: Path, question: str, output: str) -> tuple[bool, str, dict[str, object]]:
    check = code_lookup_check(question, "question")
    assert check is not None, question
    res = evaluate(check, output=output, exit_code=None, workspace=root)
    return res.passed, res.evidence, res.observed


def test_a_constant_is_read_from_its_assignment(tmp_path: Path) -> None:
    root = _write(tmp_path, {"app/settings.py": SETTINGS})
    ask = "what is the value of NAME in app/settings.py?"
    assert _judge(root, ask, "NAME is relay.")[0]
    assert _judge(root, ask, 'It is "relay".')[0]
    passed, evidence, _ = _judge(root, ask, "NAME is 2.")
    assert not passed and "code read NAME = 'relay'" in evidence
    port = "what is PORT set to in app/settings.py?"
    assert _judge(root, port, "PORT is set to 8080.")[0]
    assert not _judge(root, port, "PORT is set to 80.")[0]
    # not a one-line literal: nothing looked up, no proof either way
    passed, _, observed = _judge(root, "what is the value of LIMITS in app/settings.py?", "x")
    assert passed and "unresolved" in observed


def test_a_class_parents_are_its_bases(tmp_path: Path) -> None:
    root = _write(tmp_path, {"zoo/animals.py": ANIMALS})
    ask = "what is the parent class of Dog in zoo/animals.py?"
    assert _judge(root, ask, "The parent class of Dog is Animal.")[0]  # Dog: the request's
    assert not _judge(root, ask, "Dog has no parent class.")[0]
    passed, _, observed = _judge(root, "what is the parent class of Animal in zoo/animals.py?", "")
    assert passed and "unresolved" in observed  # no base class: nothing to look up


def test_where_a_name_is_defined_names_its_file_and_no_other(tmp_path: Path) -> None:
    root = _write(
        tmp_path,
        {"lib/zoo/animals.py": ANIMALS, "lib/util.py": "def helper():\n    pass\n"},
    )
    ask = "which file under lib defines the function bark?"
    check = code_lookup_check(ask, "question")
    assert check == Check(kind="code_value", path="lib", value=ask)
    assert _judge(root, ask, "bark is defined in lib/zoo/animals.py")[0]
    assert _judge(root, ask, "It is in animals.py.")[0]
    passed, evidence, _ = _judge(root, ask, "lib/zoo/animals.py and lib/util.py")
    assert not passed and "also states lib/util.py" in evidence
    assert code_lookup_check("which file defines the class Dog?", "question") == Check(
        kind="code_value", path=".", value="which file defines the class Dog?"
    )


def test_code_writes_it_only_for_questions_it_can_read(tmp_path: Path) -> None:
    for request in (
        "what does bark() in zoo/animals.py return?",  # evaluation's, not a lookup
        "how many lines does zoo/animals.py have?",
        "rename Dog to Hound in zoo/animals.py",
        "what is the value of NAME in app/a.py and app/b.py?",
    ):
        kind = "change" if request.startswith("rename") else "question"
        assert code_lookup_check(request, kind) is None, request
    ask = "what is the value of NAME in app/settings.py?"
    own = Check(kind="code_value", path="app/settings.py", value="NAME")
    assert guess_problem(own, ask, "question") is not None


def test_a_file_that_does_not_parse_looks_up_nothing(tmp_path: Path) -> None:
    root = _write(tmp_path, {"app/settings.py": "NAME = (\n"})
    passed, _, observed = _judge(root, "what is the value of NAME in app/settings.py?", "x")
    assert passed and "unresolved" in observed
    check = Check(kind="code_value", path="app/settings.py", value="x")
    assert not computed(check, observed)


_NAMES = st.from_regex(r"[A-Z][A-Z0-9_]{2,8}", fullmatch=True)


@given(_NAMES, st.integers(min_value=-(10**6), max_value=10**6))
def test_any_constant_is_looked_up_as_assigned(name: str, value: int) -> None:
    source = f"OTHER = 1\n{name} = {value}\n"
    got = resolve_lookup(f"what is the value of {name} in m.py?", {"m.py": source}, "m.py")
    if name == "OTHER":
        assert isinstance(got, Resolved) and got.values == ["1"]
    else:
        assert isinstance(got, Resolved) and got.values == [str(value)] and got.numbers
