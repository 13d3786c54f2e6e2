"""Issue 40, end to end on scripted Systems over workspaces of the tests' own: ``accept``
by a method — one checked reading, a question proven by two independent derivations (code
the second wherever the file's format allows), a change proven by its effect — never by a
rule fitted to a wording. Every run must pass ``replay --verify``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from artoo.schemas import (
    ConfirmationRequest,
    CorrectionSignal,
    FinalResult,
    LLMCall,
    SubTaskOutcome,
    TaskSpec,
    ToolCall,
    ToolCallEnded,
)

from .helpers import CONFIG, all_events, run_verified

PYPROJECT = """[project]
name = "demo"
version = "2.1"

[tool.black]
line-length = 88
target-version = ["py311"]
"""
CI_YAML = """name: ci
on: [push]
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/setup-python@v5
        with:
          python-version: "3.11"
"""
SETUP_CFG = """[metadata]
name = demo
version = 2.1

[flake8]
max-line-length = 79
"""
CHANGES = "Changes\n=======\n\n2.1.3\n-----\n- a fix\n\n2.1\n---\n- first\n"


def _files() -> dict[str, str]:
    return {
        "pyproject.toml": PYPROJECT,
        ".github/workflows/ci.yml": CI_YAML,
        "setup.cfg": SETUP_CFG,
        "CHANGES.rst": CHANGES,
        "notes/todo.txt": "buy milk\ncall Ana\nfix the door\n",
    }


def _reading(kind: str, **fields: Any) -> dict[str, Any]:
    return {"role": "perceiver", "content": {"intent": "the request", "kind": kind, **fields}}


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"role": "executor", "tool_calls": [{"name": name, "arguments": arguments}]}


def _answer(text: str, times: int = 1) -> dict[str, Any]:
    return {"role": "executor", "content": text, "times": times}


def _run(tmp: Path, entries: list[dict[str, Any]], text: str) -> tuple[FinalResult, list[Any]]:
    result, store = run_verified(tmp, entries, text, CONFIG, files=_files())
    return result, [e.body for e in all_events(store)]


def _calls(bodies: list[Any]) -> list[ToolCall]:
    return [b.call for b in bodies if isinstance(b, ToolCallEnded)]


def _asks(bodies: list[Any]) -> list[str]:
    return [b.corroborate for b in bodies if isinstance(b, CorrectionSignal) and b.corroborate]


def test_a_toml_value_is_proven_by_the_parser_with_no_second_conversation(tmp_path: Path) -> None:
    entries = [
        _reading(
            "question",
            answer="number",
            key="tool.black.line-length",
            targets=[{"path": "pyproject.toml", "role": "read"}],
        ),
        _call("read_file", path="pyproject.toml"),
        _answer("black uses a line length of 88."),
    ]
    result, bodies = _run(tmp_path, entries, "What line length does black use in pyproject.toml?")
    assert (result.status, result.established) == ("accept", "code")
    assert "88" in result.established_by and "pyproject.toml" in result.established_by
    assert _asks(bodies) == []  # no second model conversation
    assert all(c.conversation == 0 for c in _calls(bodies))


def test_yaml_and_ini_values_are_proven_by_their_parsers(tmp_path: Path) -> None:
    yaml_run = tmp_path / "yaml"
    entries = [
        _reading(
            "question",
            answer="version",
            key="python-version",
            targets=[{"path": ".github/workflows/ci.yml", "role": "read"}],
        ),
        _call("read_file", path=".github/workflows/ci.yml"),
        _answer("The workflow sets up Python 3.11."),
    ]
    text = "Which python-version does .github/workflows/ci.yml set up?"
    result, bodies = _run(yaml_run, entries, text)
    assert (result.status, result.established) == ("accept", "code")
    assert _asks(bodies) == []
    ini_run = tmp_path / "ini"
    entries = [
        _reading(
            "question",
            answer="number",
            key="flake8.max-line-length",
            targets=[{"path": "setup.cfg", "role": "read"}],
        ),
        _call("shell", command="grep max-line-length setup.cfg"),
        _answer("flake8's max-line-length is 79."),
    ]
    result, bodies = _run(ini_run, entries, "What is flake8's max-line-length in setup.cfg?")
    assert (result.status, result.established) == ("accept", "code")
    assert _asks(bodies) == []


def test_the_sandboxs_own_python_version_is_not_the_configs(tmp_path: Path) -> None:
    """A wrong answer that ended ``success``: the Python version a YAML config names,
    answered with ``python3 --version`` run in the sandbox."""
    entries = [
        _reading(
            "question",
            answer="version",
            key="python-version",
            targets=[{"path": ".github/workflows/ci.yml", "role": "read"}],
        ),
        {
            "role": "executor",
            "times": 0,
            "tool_calls": [{"name": "shell", "arguments": {"command": "echo Python 3.12.1"}}],
        },
        _answer("The Python version is 3.12.1.", times=0),
        {"role": "planner", "times": 0, "content": {"subtasks": [{"instruction": "answer it"}]}},
    ]
    result, _ = _run(
        tmp_path, entries, "Which Python version does the CI config .github/workflows/ci.yml use?"
    )
    assert result.status not in ("accept", "success")


def test_a_stated_version_2_1_3_does_not_prove_2_1(tmp_path: Path) -> None:
    entries = [
        _reading(
            "question",
            answer="version",
            key="metadata.version",
            targets=[{"path": "setup.cfg", "role": "read"}],
        ),
        _call("read_file", path="CHANGES.rst"),
        _answer("The version in setup.cfg is 2.1.3.", times=0),
        {"role": "planner", "times": 0, "content": {"subtasks": [{"instruction": "answer it"}]}},
    ]
    result, bodies = _run(tmp_path, entries, "What version does setup.cfg declare?")
    assert result.status != "accept"
    failed = [
        v.evidence
        for b in bodies
        if isinstance(b, SubTaskOutcome | CorrectionSignal)
        for v in b.verdicts
        if not v.passed
    ]
    assert any("2.1" in e and "does not state" in e for e in failed), failed


def test_a_search_that_names_2_of_5_modules_is_not_accept(tmp_path: Path) -> None:
    files = {f"pkg/m{i}.py": "import pkg.util\n" for i in range(5)}
    files["pkg/util.py"] = "X = 1\n"
    files["pkg/__init__.py"] = ""
    entries = [
        _reading(
            "question",
            answer="list",
            targets=[{"path": "pkg/", "role": "read"}],
            values=["pkg.util"],
        ),
        _call("shell", command="grep -l pkg.util pkg/m0.py pkg/m1.py"),
        _answer("pkg/m0.py, pkg/m1.py"),
        # the fresh conversation (a second derivation) finds all five
        _call("shell", command="grep -rl 'import pkg.util' pkg"),
        _answer("pkg/m0.py, pkg/m1.py, pkg/m2.py, pkg/m3.py, pkg/m4.py", times=0),
        {"role": "planner", "times": 0, "content": {"subtasks": [{"instruction": "find them"}]}},
        _call("shell", command="grep -l pkg.util pkg/m0.py pkg/m1.py"),
    ]
    text = "Which modules of pkg import pkg.util?"
    result, store = run_verified(tmp_path, entries, text, CONFIG, files=files)
    assert result.status != "accept"
    bodies = [e.body for e in all_events(store)]
    assert _asks(bodies)  # a second derivation was asked, and it disagreed
    assert any(
        isinstance(b, SubTaskOutcome) and b.status == "failed" and "disagree" in b.reason
        for b in bodies
    )


def test_the_german_twin_of_a_count_question_is_read_and_proven_like_the_english_one(
    tmp_path: Path,
) -> None:
    ends = {}
    for label, text in (
        ("en", "How many lines does notes/todo.txt have?"),
        ("de", "Wie viele Zeilen hat notes/todo.txt?"),
    ):
        entries = [
            _reading(
                "question",
                answer="number",
                count="lines",
                targets=[{"path": "notes/todo.txt", "role": "read"}],
            ),
            _call("shell", command="wc -l notes/todo.txt"),
            _answer("3" if label == "en" else "Die Datei hat 3 Zeilen."),
        ]
        result, bodies = _run(tmp_path / label, entries, text)
        spec = next(b for b in bodies if isinstance(b, TaskSpec))
        kinds = [c.check.kind for c in spec.criteria if c.check is not None]
        ends[label] = (result.status, result.established, kinds)
    assert ends["en"] == ends["de"] == ("accept", "code", ["answered", "count_matches"])


def test_a_fabricated_done_ends_neither_success_nor_accept(tmp_path: Path) -> None:
    entries = [
        _reading("creation", targets=[{"path": "report.txt", "role": "create"}], values=["ok"]),
        _answer("Done. I created report.txt containing ok.", times=0),
        {"role": "planner", "times": 0, "content": {"subtasks": [{"instruction": "make it"}]}},
    ]
    result, _ = _run(tmp_path, entries, "Create report.txt containing the word ok.")
    assert result.status not in ("accept", "success")
    assert not (tmp_path / "workspace" / "report.txt").exists()


def test_a_deletion_the_request_does_not_ask_for_still_asks(tmp_path: Path) -> None:
    entries = [
        _reading(
            "change", targets=[{"path": "notes/todo.txt", "role": "write"}], values=["buy eggs"]
        ),
        _call("shell", command="rm CHANGES.rst && echo 'buy eggs' >> notes/todo.txt"),
        _answer("Added.", times=0),
        {"role": "planner", "times": 0, "content": {"subtasks": [{"instruction": "add it"}]}},
    ]
    result, bodies = _run(tmp_path, entries, "Add the line 'buy eggs' to notes/todo.txt.")
    asked = [b for b in bodies if isinstance(b, ConfirmationRequest)]
    assert asked and any(e.path == "CHANGES.rst" for a in asked for e in a.effects)
    assert (tmp_path / "workspace" / "CHANGES.rst").exists()
    assert result.status != "accept"


def test_no_model_reading_is_no_criterion_of_the_models(tmp_path: Path) -> None:
    """A reading that carries a model's own criteria (the old shape) has them ignored:
    code writes every criterion from the reading."""
    entries = [
        {
            "role": "perceiver",
            "content": {
                "intent": "count",
                "kind": "question",
                "answer": "number",
                "count": "lines",
                "targets": [{"path": "notes/todo.txt", "role": "read"}],
                "criteria": [
                    {
                        "text": "the answer is 7",
                        "mode": "verifiable",
                        "check": {"kind": "output_contains", "value": "7"},
                    }
                ],
            },
        },
        _call("shell", command="wc -l notes/todo.txt"),
        _answer("3"),
    ]
    result, bodies = _run(tmp_path, entries, "how many lines are in notes/todo.txt?")
    spec = next(b for b in bodies if isinstance(b, TaskSpec))
    assert [c.check.kind for c in spec.criteria if c.check] == ["answered", "count_matches"]
    assert result.status == "accept"
    assert not [b for b in bodies if isinstance(b, LLMCall) and b.role == "planner"]
