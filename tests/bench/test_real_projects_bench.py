"""The real-projects bench (issue 40): its workspaces, tasks and judge, offline.

Every task of ``bench/real_projects_tasks.json`` runs on a fresh copy of a real project's
sdist (``bench/workspaces/``). These tests check, with no model: the task set's shape (≥ 60
tasks, ≥ 10 families, ≥ 3 workspaces, the split by workspace); that each task's oracle,
run over a fresh copy, is judged right while the untouched workspace is judged wrong for a
change; and that known wrong answers are judged wrong — a partial list, a wrong version
(the sandbox's Python for the project's), a fabricated "Done", an edit of the wrong file,
a question that wrote a file, a fix that edits the test instead of the code.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("real_model", ROOT / "bench" / "real_model.py")
assert _spec is not None and _spec.loader is not None
rm = importlib.util.module_from_spec(_spec)
sys.modules["real_model"] = rm
_spec.loader.exec_module(rm)

RAW = json.loads((ROOT / "bench" / "real_projects_tasks.json").read_text())
TASKS = rm.load_tasks(RAW)
BY_ID = {t.id: t for t in TASKS}
WORKSPACES = rm.load_workspaces()
EFFECTS = ("file", "tests_pass", "no_new_failures", *rm.CONFIG_KINDS)


def changes(expect: dict[str, Any]) -> bool:
    """The task asks for a change (its expectation checks an effect)."""
    return any(k in expect for k in EFFECTS) or any(changes(e) for e in expect.get("all", []))


@pytest.fixture
def fresh(tmp_path: Path) -> Any:
    """fresh(task) -> (workspace, pristine): two fresh copies of the task's workspace."""

    made = iter(range(1000))

    def make(task: Any) -> tuple[Path, Path]:
        n = next(made)
        return (
            rm.task_workspace(task, tmp_path / f"ws{n}"),
            rm.task_workspace(task, tmp_path / f"pristine{n}"),
        )

    return make


def verdict(task: Any, output: str, ws: Path, pristine: Path) -> Any:
    return rm.judge(task.expect, output, ws, request=task.text, pristine=pristine)


# ----------------------------------------------------------------------------- the task set


def test_the_task_set_has_60_tasks_in_10_families_over_3_workspaces() -> None:
    assert len(TASKS) >= 60
    families = {t.family for t in TASKS}
    assert len(families) >= 10
    assert {
        "behaviour",
        "toml-lookup",
        "yaml-lookup",
        "ini-lookup",
        "search",
        "count",
        "changelog-search",
        "fix-test",
        "rename",
        "config-edit",
        "changelog-entry",
        "computed-file",
    } <= families
    assert len({t.workspace for t in TASKS}) >= 3
    assert all(t.workspace in WORKSPACES for t in TASKS)


def test_the_split_is_by_workspace_and_one_whole_workspace_is_held_out() -> None:
    held = {name for name, w in WORKSPACES.items() if w["split"] == "holdout"}
    assert held and len(held) < len(WORKSPACES)
    for t in TASKS:
        assert t.split == WORKSPACES[t.workspace]["split"], t.id
    for name in WORKSPACES:  # every workspace has every family: the holdout tests them all
        assert {t.family for t in TASKS if t.workspace == name} == {t.family for t in TASKS}
    with pytest.raises(ValueError, match="by workspace"):
        rm.load_tasks([{**RAW[0], "split": "holdout" if TASKS[0].split == "tune" else "tune"}])
    with pytest.raises(ValueError, match="no workspace"):
        rm.load_tasks([{**RAW[0], "workspace": "nowhere"}])


def test_every_question_must_leave_the_workspace_alone_and_every_change_has_a_scope() -> None:
    for t in TASKS:
        if changes(t.expect):
            assert "only_changed" in t.expect, t.id
        else:
            assert t.expect.get("unchanged") is True, t.id


def test_the_requests_are_varied() -> None:
    foreign = r"[¿ñàâçéèêäöüß]|\b(Was|Dans|Que|Mit)\b"
    other_languages = [t for t in TASKS if re.search(foreign, t.text)]
    assert len(other_languages) >= 6
    for lang in (r"\b(welcher|liefert|Mit welchem)\b", r"\b(Que|Dans|passe)\b", r"[¿]|Añade"):
        assert any(re.search(lang, t.text) for t in other_languages), lang
    imperatives = [t for t in TASKS if not t.text.rstrip().endswith("?")]
    assert len(imperatives) >= 20
    caught = {c for t in TASKS for c in t.catches}
    assert "the sandbox's python3 --version instead of the project's config" in caught
    assert "partial list" in caught


def test_the_select_options_and_the_default_task_file() -> None:
    tune = rm.select(TASKS, workspace="tabulate")
    assert tune and {t.workspace for t in tune} == {"tabulate"}
    assert rm.DEFAULT_TASKS.name == "real_projects_tasks.json"


def test_the_workspaces_are_the_sdists_with_their_licences() -> None:
    notes = (rm.WORKSPACES / "README.md").read_text()
    for name, w in WORKSPACES.items():
        folder = rm.WORKSPACES / name
        assert list(folder.glob("LICENSE*")), name
        assert f"{w['project']} {w['version']}" in notes
        assert f"{w['project']}-{w['version']}.tar.gz" in notes
        assert not list(folder.rglob("__pycache__")), name
        assert sum(1 for p in folder.rglob("*") if p.is_file()) <= 300


# ----------------------------------------------------------------------------- each oracle


def runs_tests(expect: dict[str, Any]) -> bool:
    return "tests_pass" in expect or "no_new_failures" in expect


@pytest.mark.parametrize(
    "task",
    [pytest.param(t, marks=[pytest.mark.slow] if runs_tests(t.expect) else []) for t in TASKS],
    ids=lambda t: t.id,
)
def test_each_oracle_is_judged_right_and_the_untouched_workspace_is_not(
    task: Any, fresh: Any
) -> None:
    """The expected value is the workspace's truth: the oracle (plain shell and the bench's
    Python, no model) computes or does it over a fresh copy and the judge agrees; a change
    task does not pass on the workspace as it was, however its output reads."""
    ws, pristine = fresh(task)
    if changes(task.expect):
        assert not verdict(task, "Done. I made the change.", ws, pristine).right
    done = rm.run_in(ws, task.oracle)
    assert done.returncode == 0, done.stderr
    got = verdict(task, done.stdout.strip(), ws, pristine)
    assert got.right, (task.id, done.stdout, got.why)


# ----------------------------------------------------------------------------- wrong answers


@pytest.mark.parametrize(
    ("task_id", "output"),
    [
        # the sandbox's own Python, not the project's config (3.11.2 is not 3.11)
        ("sem-yaml-1", "Python 3.11.2"),
        ("tab-toml-1", "It needs Python 3.11.2 or later."),
        ("sql-run-3", "It prints Python 3.11.2."),
        # an adjacent release
        ("sql-log-1", "The compact option came with 0.5.0."),
        ("tab-log-1", "0.8.8"),
        # partial lists, and lists with one too many
        ("sql-search-1", "sqlparse/lexer.py, sqlparse/sql.py and sqlparse/utils.py"),
        (
            "sql-search-1",
            "sqlparse/filters/others.py, sqlparse/filters/right_margin.py, sqlparse/lexer.py, "
            "sqlparse/sql.py, sqlparse/utils.py, sqlparse/keywords.py",
        ),
        ("sql-yaml-2", "3.8, 3.9, 3.10, 3.11 and 3.12"),
        ("sql-yaml-2", "3.13-dev, 3.12, 3.11, 3.10, 3.9, 3.8, pypy-3.10, pypy-3.9, pypy-3.8"),
        ("mit-yaml-2", "Python 3.8 to 3.12, and pypy-3.8"),
        ("sem-toml-1", "bugfix, deprecation, doc, feature, removal and trivial"),
        ("tab-search-1", "test/test_output.py and test/test_api.py"),
        # a process description instead of the value
        ("tab-run-2", "Running the command prints the table in grid format."),
        ("mit-run-2", "It yields windows of size 3 until the range is exhausted."),
    ],
)
def test_known_wrong_answers_are_judged_wrong(task_id: str, output: str, fresh: Any) -> None:
    task = BY_ID[task_id]
    ws, pristine = fresh(task)
    assert not verdict(task, output, ws, pristine).right


@pytest.mark.parametrize(
    ("task_id", "output"),
    [
        ("sem-yaml-1", '`.readthedocs.yaml` sets build.tools.python to "3.11".'),
        ("tab-toml-1", 'requires-python = ">=3.7", so Python 3.7 or newer.'),
        ("sql-log-2", "Python 3.5, 3.6 and 3.7 were dropped in release 0.5.0 (Apr 13, 2024)."),
        (
            "sql-search-1",
            "Five: sqlparse.lexer, sqlparse.sql, sqlparse.utils, sqlparse.filters.others and "
            "sqlparse/filters/right_margin.py.",
        ),
        ("sem-search-1", "cli.py, _deprecated.py and __init__.py"),
        (
            "sem-toml-1",
            "Breaking Changes, Bug Fixes, Deprecations, Improved Documentation, "
            "Features, Removals, Trivial/Internal Changes",
        ),
        (
            "sql-yaml-2",
            "3.12, 3.11, 3.10, 3.9, 3.8, pypy-3.10, pypy-3.9 and pypy-3.8 "
            "(3.13-dev is not tested: it is commented out)",
        ),
        ("mit-run-2", "The last window is (2, 3, 4)."),
    ],
)
def test_answers_that_state_the_value_are_judged_right(
    task_id: str, output: str, fresh: Any
) -> None:
    task = BY_ID[task_id]
    ws, pristine = fresh(task)
    assert verdict(task, output, ws, pristine).right


def test_a_question_that_wrote_a_file_is_wrong_whatever_it_says(fresh: Any) -> None:
    task = BY_ID["tab-run-2"]
    ws, pristine = fresh(task)
    (ws / "in.txt").write_text("a 1\nbb 22\n")  # a scratch file left in the project
    got = verdict(task, "It prints 5 lines.", ws, pristine)
    assert not got.right and "in.txt" in got.why
    (ws / "in.txt").unlink()
    (ws / "tabulate" / "__pycache__").mkdir()  # running code's caches are no change
    (ws / "tabulate" / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"0")
    assert verdict(task, "It prints 5 lines.", ws, pristine).right


def test_a_fabricated_done_is_judged_by_its_effect(fresh: Any) -> None:
    for task_id in ("sql-file-1", "tab-cfg-1", "sem-news-1", "mit-cfg-1"):
        task = BY_ID[task_id]
        ws, pristine = fresh(task)
        said = "Done, I created the file and wrote the value into it. Everything is in place."
        assert not verdict(task, said, ws, pristine).right, task_id


def test_an_edit_of_the_wrong_file_is_wrong(fresh: Any) -> None:
    task = BY_ID["sem-news-1"]  # the news fragment, not the compiled CHANGELOG.rst
    ws, pristine = fresh(task)
    log = ws / "CHANGELOG.rst"
    log.write_text(log.read_text() + "\n* :gh:`450`: Version.parse ignores whitespace.\n")
    assert not verdict(task, "Added.", ws, pristine).right
    (ws / "changelog.d" / "450.feature.rst").write_text("Version.parse ignores whitespace.\n")
    got = verdict(task, "Added.", ws, pristine)  # the fragment, but CHANGELOG.rst edited too
    assert not got.right and "CHANGELOG.rst" in got.why
    task = BY_ID["sem-cfg-1"]  # black's line length, set in setup.cfg's flake8 instead
    ws, pristine = fresh(task)
    cfg = ws / "setup.cfg"
    cfg.write_text(cfg.read_text().replace("max-line-length = 88", "max-line-length = 100", 1))
    assert not verdict(task, "Set to 100.", ws, pristine).right


def test_a_yaml_version_written_unquoted_is_a_float_and_wrong(fresh: Any) -> None:
    task = BY_ID["sql-cfg-2"]
    ws, pristine = fresh(task)
    flow = ws / ".github" / "workflows" / "python-app.yml"
    flow.write_text(flow.read_text().replace('          - "3.12"\n', "          - 3.13\n", 1))
    # unquoted 3.13 reads as the float 3.13 (str "3.13"), but the 3.12 entry is gone
    assert not verdict(task, "Done.", ws, pristine).right
    spec = {"yaml": ".github/workflows/python-app.yml", "key": "jobs.test.strategy.matrix.py"}
    flow.write_text(flow.read_text().replace('- "3.10"\n', "- 3.10\n"))
    assert not rm.judge_config({**spec, "has": ["3.10"]}, ws).right  # the float 3.1
    assert rm.judge_config({**spec, "has": ["3.10"]}, pristine).right


def test_a_broken_config_is_wrong(fresh: Any) -> None:
    task = BY_ID["sem-cfg-1"]
    ws, pristine = fresh(task)
    toml = ws / "pyproject.toml"
    toml.write_text(toml.read_text().replace("line-length = 88", "line-length = 100 100"))
    got = verdict(task, "Done.", ws, pristine)
    assert not got.right and "no longer parses" in got.why


def test_a_half_done_rename_is_wrong(fresh: Any) -> None:
    task = BY_ID["sql-rename-1"]
    ws, pristine = fresh(task)
    utils = ws / "sqlparse" / "utils.py"
    utils.write_text(utils.read_text().replace("def remove_quotes(", "def strip_quotes("))
    assert not verdict(task, "Renamed.", ws, pristine).right


def test_a_fix_that_edits_the_test_instead_of_the_code_is_wrong(fresh: Any) -> None:
    task = BY_ID["sql-fix-1"]
    ws, pristine = fresh(task)
    test = ws / "tests" / "test_keyword_case.py"
    test.write_text(test.read_text().replace("'UPPER'", "'upper'").replace("'Lower'", "'lower'"))
    got = verdict(task, "Fixed: the test passes now.", ws, pristine)
    assert not got.right and "test_keyword_case.py" in got.why


def test_a_fix_that_breaks_other_tests_is_wrong(fresh: Any) -> None:
    task = BY_ID["tab-fix-1"]
    ws, pristine = fresh(task)
    assert rm.run_in(ws, task.oracle).returncode == 0
    code = ws / "tabulate" / "__init__.py"  # and the short -o broken on the way
    code.write_text(code.read_text().replace('"h1o:s:F:A:f:"', '"h1s:F:A:f:"'))
    got = verdict(task, "Fixed.", ws, pristine)
    assert not got.right and "test_cli.py" in got.why


# ----------------------------------------------------------------------------- judge kinds


def test_versions_are_compared_as_versions() -> None:
    assert rm.versions("Python 3.12, pypy-3.10, v0.5.1, 2024-04-13, a/3.8/b, x3.9") == [
        "3.12",
        "0.5.1",
    ]
    assert rm.versions("Python 3.7+, not 3.8-dev nor 1.2.3+build.4; v2.0.") == ["3.7", "2.0"]
    assert rm.same_version("2.1", "2.1.0") and not rm.same_version("2.1.3", "2.1")
    assert rm.same_version("v3.10", "3.10") and not rm.same_version("3.1", "3.10")
    assert rm.stated_version("Dropping 3.7 was in 0.5.0", "support for Python 3.7") == "0.5.0"
    assert rm.stated_version("nothing") is None


def test_path_aliases_name_files_by_path_module_and_unique_file_name() -> None:
    aliases = rm.path_aliases(
        ["src/pkg/__init__.py", "src/pkg/cli.py", "src/pkg/sub/__init__.py", "src/pkg/sub/cli.py"]
    )
    assert aliases["src/pkg/__init__.py"] == ["src/pkg/__init__.py", "pkg/__init__.py"]
    assert "pkg.sub" in aliases["src/pkg/sub/__init__.py"]
    assert "cli.py" not in aliases["src/pkg/cli.py"]  # two of them
    items = rm.path_aliases(["pkg/lexer.py", "pkg/filters/others.py", "pkg/__init__.py"])
    said = "pkg.filters.others and lexer.py; the pkg package is the top one"
    assert rm.named(said, items) == {"pkg/lexer.py", "pkg/filters/others.py"}
    assert rm.named("pkg.lexer_extra and pkg/lexer.pyc", items) == set()
    said = "lexer.py imports it. pkg/filters/others.py does not (it only uses str methods)."
    assert rm.named(said, items) == {"pkg/lexer.py"}


def test_config_values_by_each_format(tmp_path: Path) -> None:
    (tmp_path / "a.toml").write_text('[tool.x]\nn = 100\nl = ["a", "b"]\n')
    (tmp_path / "a.yaml").write_text("m:\n  v: [\"3.8\", 3.10]\n  s: '3.12'\n")
    (tmp_path / "a.ini").write_text("[s]\nk = a, b\nlines =\n  x\n  y\nraw = %(x)s\n")
    ok = [
        {"toml": "a.toml", "key": "tool.x.n", "equals": 100},
        {"toml": "a.toml", "key": "tool.x.l", "has": "b", "lacks": "c"},
        {"yaml": "a.yaml", "key": "m.v", "has": "3.8", "lacks": "3.10"},  # 3.10 is 3.1
        {"yaml": "a.yaml", "key": ["m", "s"], "equals": "3.12"},
        {"yaml": "a.yaml", "key": "m.v.-1", "equals": 3.1},
        {"ini": "a.ini", "section": "s", "key": "k", "has": ["a", "b"]},
        {"ini": "a.ini", "section": "s", "key": "lines", "has": ["x", "y"]},
        {"ini": "a.ini", "section": "s", "key": "raw", "equals": "%(x)s"},
        {"ini": "a.ini", "section": "s", "key": "gone", "absent": True},
    ]
    for spec in ok:
        assert rm.judge_config(spec, tmp_path).right, spec
    wrong = [
        {"toml": "a.toml", "key": "tool.x.n", "equals": 99},
        {"toml": "a.toml", "key": "tool.y", "equals": 1},
        {"yaml": "a.yaml", "key": "m.v.5", "equals": 1},
        {"ini": "a.ini", "section": "t", "key": "k", "equals": "a"},
        {"ini": "a.ini", "section": "s", "key": "k", "absent": True},
        {"toml": "none.toml", "key": "x", "equals": 1},
    ]
    for spec in wrong:
        assert not rm.judge_config(spec, tmp_path).right, spec


def test_changed_paths_and_scope(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    for root in (tmp_path / "a", tmp_path / "b"):
        (root / "x.txt").write_text("x")
        (root / "y.txt").write_text("y")
    (tmp_path / "b" / "y.txt").write_text("changed")
    (tmp_path / "b" / "new.txt").write_text("n")
    (tmp_path / "b" / "x.txt").unlink()
    before, after = rm.tree_manifest(tmp_path / "a"), rm.tree_manifest(tmp_path / "b")
    assert rm.changed_paths(before, after) == ["new.txt", "x.txt", "y.txt"]
    scope = {"only_changed": ["*.txt"]}
    assert rm.judge_scope(scope, tmp_path / "b", tmp_path / "a").right
    assert not rm.judge_scope({"only_changed": ["y.txt"]}, tmp_path / "b", tmp_path / "a").right
    assert not rm.judge_scope({"unchanged": True}, tmp_path / "b", tmp_path / "a").right
    assert not rm.judge_scope({"unchanged": True}, tmp_path / "b", None).right


def test_a_named_test_passes_only_when_every_variant_under_it_passes() -> None:
    outcomes = {"t.py::C::a": "PASSED", "t.py::C::b": "FAILED", "t.py::f[1]": "PASSED"}
    assert rm._passed(outcomes, "t.py::f") and rm._passed(outcomes, "t.py::C::a")
    assert not rm._passed(outcomes, "t.py::C") and not rm._passed(outcomes, "t.py::g")


def test_pytest_outcomes_read_a_collection_error(tmp_path: Path) -> None:
    (tmp_path / "test_ok.py").write_text("def test_a():\n    assert True\n")
    (tmp_path / "test_bad.py").write_text("import nowhere_at_all\n")
    got = rm.pytest_outcomes(tmp_path, [])
    assert got["test_ok.py::test_a"] == "PASSED" and got["test_bad.py"] == "ERROR"
    assert not list(tmp_path.rglob("__pycache__")) and not (tmp_path / ".pytest_cache").exists()


def test_summarise_gives_each_workspace_and_keeps_old_rows() -> None:
    def row(task: str, ws: str | None, split: str, status: str, right: bool) -> dict:
        r = {
            "task": task,
            "side": "artoo",
            "status": status,
            "right": right,
            "repeat": 0,
            "split": split,
            "refuse": False,
            "calls": 5,
            "tokens": 100,
            "wall_s": 10.0,
        }
        if ws is not None:
            r["workspace"] = ws
        return r

    rows = [
        row("a", "tabulate", "tune", "accept", True),
        row("b", "sqlparse", "holdout", "success", False),
        row("c", "sqlparse", "holdout", "accept", True),
    ]
    s = rm.summarise(rows)["artoo"]
    assert s["workspaces"]["sqlparse"]["precision"] == 0.5
    assert s["workspaces"]["sqlparse"]["precision_strict"] == 1.0
    assert s["holdout"]["completion"] == 0.5 and s["tune"]["calls_per_completed"] == 5.0
    assert "artoo ws sqlparse" in rm.table(rm.summarise(rows))
    old = rm.summarise([row("a", None, "tune", "accept", True)])["artoo"]
    assert "workspaces" not in old


def test_the_oracles_use_the_bench_python_not_pyenv_shims() -> None:
    """sqlparse's .python-version names a pyenv environment that does not exist: oracles run
    ``$PYTHON``, the bench's own interpreter, never a bare ``python3``."""
    for t in TASKS:
        assert not re.search(r"(^|[\s;|&(])python3?\s", t.oracle + " " + t.setup), t.id
    env = rm.oracle_env()
    assert env["PYTHON"] == sys.executable
    got = subprocess.run(
        ["bash", "-c", 'echo "$PYTHON"'], capture_output=True, text=True, env=env, check=True
    )
    assert got.stdout.strip() == sys.executable


def test_run_one_gives_each_run_a_fresh_workspace_and_judges_against_an_untouched_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bench's own loop, with a stand-in for the model's run: the runner gets a fresh
    copy (with the task's setup done), the judge an untouched one made once per task."""
    seen: list[Path] = []
    approvals: list[bool] = []

    def runner(
        text: str,
        model: str,
        options: dict,
        deadline: float,
        root: Path,
        ws: Path,
        approve: bool = False,
    ) -> dict:
        seen.append(ws)
        approvals.append(approve)
        if "kw_count" in text:
            (ws / "kw_count.txt").write_text("538\n")
        else:
            (ws / "scratch.txt").write_text("x")  # a question that leaves a file behind
        return {
            "output": "Done: 538",
            "status": "answer",
            "reason": None,
            "calls": 1,
            "tokens": 10,
            "wall_s": 1.0,
            "tool_calls": [],
        }

    monkeypatch.setattr(rm, "run_baseline", runner)
    run = rm.Run(
        model="m",
        options={},
        deadline=1,
        extra=None,
        keep=None,
        commit="c",
        pristine=tmp_path / "pristine",
    )
    (tmp_path / "pristine").mkdir()
    made = rm.run_one(run, BY_ID["sql-file-1"], 0, "baseline", tmp_path / "r1")
    assert made["right"] and made["workspace"] == "sqlparse" and made["split"] == "holdout"
    asked = rm.run_one(run, BY_ID["sql-count-1"], 0, "baseline", tmp_path / "r2")
    assert not asked["right"] and "scratch.txt" in asked["why"]
    assert (
        seen[0] != seen[1] and not (tmp_path / "pristine" / "sql-file-1" / "kw_count.txt").exists()
    )
    fix = rm.run_one(run, BY_ID["sql-fix-1"], 0, "baseline", tmp_path / "r3")
    assert (seen[2] / "tests" / "test_keyword_case.py").is_file()  # the setup ran first
    assert not fix["right"]
    assert approvals == [False] * 3 and fix["operator"] == "deny"
    run.operator = "approve"  # an operator who says yes, on both sides
    assert rm.run_one(run, BY_ID["sql-file-1"], 1, "baseline", tmp_path / "r4")["right"]
    assert approvals[-1] is True
