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
        "deploy/app.yaml": CI_YAML,
        "setup.cfg": SETUP_CFG,
        "CHANGES.rst": CHANGES,
        "notes/todo.txt": "buy milk\ncall Ana\nfix the door\n",
    }


def _reading(kind: str, **fields: Any) -> dict[str, Any]:
    fields.setdefault("answer", "text")
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
    assert any("metadata.version in setup.cfg" in e and "does not state" in e for e in failed), (
        failed
    )
    # code's value is not told: a model told it would copy it, and derive nothing itself
    assert not any("2.1" in e for e in failed if "metadata.version" in e), failed


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


OPS = """def add(a, b):
    return a - b


def double(x):
    return x + x


def triple(x):
    return x + x + x
"""
OPS_TESTS = """from calc.ops import add, double, triple


def test_add():
    assert add(2, 3) == 5


def test_double():
    assert double(4) == 8


def test_triple():
    assert triple(2) == 6
"""


def _package() -> dict[str, str]:
    return {"calc/__init__.py": "", "calc/ops.py": OPS, "tests/test_ops.py": OPS_TESTS}


def test_a_bug_fix_and_a_refactor_go_through_headless_and_undo_restores_both(
    tmp_path: Path,
) -> None:
    """A fix that makes the named failing test pass, and a refactor that keeps every test
    passing: each an in-workspace change of its reading's target (reversible, no
    operator), proven by the workspace's own tests run by code before and after; ``artoo
    undo`` then restores both byte-exactly."""
    import artoo
    from artoo.schemas import WorkspaceRestored
    from artoo.testing import write_script

    from .helpers import DATA

    ws = tmp_path / "workspace"
    import shutil

    shutil.copytree(DATA / "workspace", ws)
    for path, text in _package().items():
        (ws / path).parent.mkdir(parents=True, exist_ok=True)
        (ws / path).write_text(text)
    original = {p: (ws / p).read_bytes() for p in _package()}
    fixed = OPS.replace("return a - b", "return a + b")
    refactored = fixed.replace("return x + x + x", "return double(x) + x")
    fix = "Fix add in calc/ops.py so that tests/test_ops.py::test_add passes."
    refactor = "Refactor calc/ops.py: make triple call double."
    entries = [
        {
            "role": "perceiver",
            "match": "Fix add",
            "content": {
                "intent": "fix add",
                "kind": "change",
                "answer": "text",
                "targets": [
                    {"path": "calc/ops.py", "role": "write"},
                    {"path": "tests/test_ops.py", "role": "read"},
                ],
                "values": ["tests/test_ops.py::test_add"],
            },
        },
        {
            "role": "perceiver",
            "match": "Refactor",
            "content": {
                "intent": "refactor triple",
                "kind": "change",
                "answer": "text",
                "targets": [{"path": "calc/ops.py", "role": "write"}],
            },
        },
        {
            "role": "executor",
            "match": "Fix add",
            "tool_calls": [
                {"name": "write_file", "arguments": {"path": "calc/ops.py", "content": fixed}}
            ],
        },
        {"role": "executor", "match": "Fix add", "content": "add now adds."},
        {
            "role": "executor",
            "match": "Refactor",
            "tool_calls": [
                {"name": "write_file", "arguments": {"path": "calc/ops.py", "content": refactored}}
            ],
        },
        {"role": "executor", "match": "Refactor", "content": "triple now calls double."},
    ]
    model = write_script(tmp_path / "s.toml", entries)
    with artoo.System.open(tmp_path / "store", model=model, workspace=ws, config=CONFIG) as s:
        first = s.submit(fix).result(120)
        second = s.submit(refactor).result(120)
        s.flush(5)
    for result in (first, second):
        assert (result.status, result.established) == ("accept", "code"), result.summary
        assert "tests" in result.established_by
    assert (ws / "calc/ops.py").read_text() == refactored
    bodies = [e.body for e in all_events(tmp_path / "store")]
    assert not [b for b in bodies if isinstance(b, ConfirmationRequest)]  # no operator asked
    runs = [c for c in _calls(bodies) if c.tool == "run_tests"]
    assert runs and all(c.by == "code" for c in runs)
    from artoo.replay import verify

    assert verify(tmp_path / "store").ok
    with artoo.System.open_offline(tmp_path / "store", workspace=ws) as s:
        undone = [s.undo(second.task_id), s.undo(first.task_id)]
    assert all(isinstance(u, WorkspaceRestored) for u in undone)
    assert {p: (ws / p).read_bytes() for p in _package()} == original


def test_toml_and_yaml_edits_are_proven_by_their_parsers(tmp_path: Path) -> None:
    """A setting changed in a TOML and in a YAML file: read back at the reading's key by
    the file's own parser (not by the request's words), each file still parsing."""
    toml_run = tmp_path / "toml"
    entries = [
        _reading(
            "change",
            targets=[{"path": "pyproject.toml", "role": "write"}],
            key="tool.black.line-length",
            values=["100"],
        ),
        _call("shell", command="sed -i 's/^line-length = 88$/line-length = 100/' pyproject.toml"),
        _answer("Set to 100."),
    ]
    text = "Set black's line-length to 100 in pyproject.toml."
    result, bodies = _run(toml_run, entries, text)
    assert (result.status, result.established) == ("accept", "code"), result.summary
    assert "pyproject.toml at tool.black.line-length" in result.established_by
    assert not [b for b in bodies if isinstance(b, ConfirmationRequest)]
    yaml_run = tmp_path / "yaml"
    entries = [
        _reading(
            "change",
            targets=[{"path": "deploy/app.yaml", "role": "write"}],
            key="python-version",
            values=["3.12"],
        ),
        _call(
            "shell",
            command='sed -i \'s/python-version: "3.11"/python-version: "3.12"/\' deploy/app.yaml',
        ),
        _answer("Now 3.12."),
    ]
    text = "Change python-version to 3.12 in deploy/app.yaml."
    result, _ = _run(yaml_run, entries, text)
    assert (result.status, result.established) == ("accept", "code"), result.summary
    assert "at python-version" in result.established_by
    # an edit that breaks the file's format is no proof, whatever it holds
    broken = tmp_path / "broken"
    entries = [
        _reading(
            "change",
            targets=[{"path": "pyproject.toml", "role": "write"}],
            key="tool.black.line-length",
            values=["100"],
        ),
        {
            "role": "executor",
            "times": 0,
            "tool_calls": [
                {
                    "name": "shell",
                    "arguments": {"command": "echo 'line-length = 100 [' >> pyproject.toml"},
                }
            ],
        },
        {"role": "planner", "times": 0, "content": {"subtasks": [{"instruction": "set it"}]}},
    ]
    result, _ = _run(broken, entries, "Set black's line-length to 100 in pyproject.toml.")
    assert result.status != "accept"


def test_a_question_never_writes(tmp_path: Path) -> None:
    entries = [
        _reading(
            "question",
            answer="number",
            key="tool.black.line-length",
            targets=[{"path": "pyproject.toml", "role": "read"}],
        ),
        _call("write_file", path="pyproject.toml", content="[tool.black]\nline-length = 1\n"),
        _call("read_file", path="pyproject.toml"),
        _answer("88"),
    ]
    result, bodies = _run(tmp_path, entries, "What line length does black use in pyproject.toml?")
    (refused,) = [c for c in _calls(bodies) if c.tool == "write_file"]
    assert refused.refusal == "out_of_scope" and not refused.ok
    assert (tmp_path / "workspace" / "pyproject.toml").read_text() == PYPROJECT
    assert (result.status, result.established) == ("accept", "code")
