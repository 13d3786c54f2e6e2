"""Discovering a workspace's tests (``actors.tools._testsuite.discover``): which runner
they are written for, where they run from, which files hold them — read from small
workspaces the tests write."""

from __future__ import annotations

from pathlib import Path

import pytest

from artoo.actors.tools import _testsuite
from artoo.actors.tools._testsuite import DEFAULT_FILES, Suite, discover

PLAIN = "def test_one():\n    assert 1 + 1 == 2\n"
CASES = (
    "import unittest\n\n\nclass TestOne(unittest.TestCase):\n"
    "    def test_one(self):\n        self.assertEqual(1 + 1, 2)\n"
)


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_a_workspace_without_tests_has_no_suite(tmp_path: Path) -> None:
    _write(tmp_path, {"app.py": "print('hi')\n", "notes/test_plan.txt": "not python\n"})
    assert discover(tmp_path) is None


def test_a_configuration_alone_is_no_suite(tmp_path: Path) -> None:
    _write(tmp_path, {"pytest.ini": "[pytest]\n", "conftest.py": "", "app.py": ""})
    assert discover(tmp_path) is None


def test_a_test_named_file_without_a_test_is_no_suite(tmp_path: Path) -> None:
    _write(tmp_path, {"test_helpers.py": "def make():\n    return 1\n"})
    assert discover(tmp_path) is None


def test_plain_test_functions_are_pytest_with_their_files(tmp_path: Path) -> None:
    _write(tmp_path, {"tests/test_a.py": PLAIN, "b_test.py": PLAIN, "tests/helper.py": PLAIN})
    assert discover(tmp_path) == Suite(runner="pytest", paths=("b_test.py", "tests/test_a.py"))


def test_testcase_classes_alone_are_unittest(tmp_path: Path) -> None:
    _write(tmp_path, {"tests/test_a.py": CASES, "tests/__init__.py": ""})
    suite = discover(tmp_path)
    assert suite == Suite(runner="unittest", paths=("tests/test_a.py",))


def test_a_testcase_of_the_projects_own_counts_as_unittest(tmp_path: Path) -> None:
    text = "from base import BaseTestCase\n\n\nclass TestX(BaseTestCase):\n    pass\n"
    _write(tmp_path, {"test_x.py": text})
    suite = discover(tmp_path)
    assert suite is not None and suite.runner == "unittest"


def test_testcase_classes_beside_plain_tests_are_pytest(tmp_path: Path) -> None:
    _write(tmp_path, {"tests/test_a.py": CASES, "tests/test_b.py": PLAIN})
    suite = discover(tmp_path)
    assert suite is not None and suite.runner == "pytest"
    assert suite.paths == ("tests/test_a.py", "tests/test_b.py")


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("pytest.ini", "[pytest]\naddopts = -q\n"),
        (".pytest.ini", "[pytest]\n"),
        ("pyproject.toml", "[tool.pytest.ini_options]\nminversion = '7'\n"),
        ("setup.cfg", "[metadata]\nname = x\n\n[tool:pytest]\naddopts = -q\n"),
        ("tox.ini", "[tox]\nenvlist = py\n\n[pytest]\naddopts = -q\n"),
    ],
)
def test_a_pytest_configuration_makes_testcase_classes_pytest(
    tmp_path: Path, name: str, text: str
) -> None:
    _write(tmp_path, {name: text, "tests/test_a.py": CASES})
    assert discover(tmp_path) == Suite(runner="pytest", paths=("tests/test_a.py",), config=name)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("pyproject.toml", "[project]\nname = 'x'\n"),
        ("setup.cfg", "[metadata]\nname = x\n"),
        ("tox.ini", "[tox]\nenvlist = py\n"),
        ("pyproject.toml", "this is not TOML ==="),
    ],
)
def test_a_file_without_a_pytest_section_configures_nothing(
    tmp_path: Path, name: str, text: str
) -> None:
    _write(tmp_path, {name: text, "tests/test_a.py": CASES})
    assert discover(tmp_path) == Suite(runner="unittest", paths=("tests/test_a.py",))


def test_a_conftest_makes_testcase_classes_pytest(tmp_path: Path) -> None:
    _write(tmp_path, {"tests/conftest.py": "", "tests/test_a.py": CASES})
    suite = discover(tmp_path)
    assert suite is not None and suite.runner == "pytest" and suite.config is None


def test_testpaths_and_python_files_of_the_configuration_are_followed(tmp_path: Path) -> None:
    config = "[pytest]\ntestpaths = checks\npython_files = check_*.py\n"
    _write(
        tmp_path,
        {
            "pytest.ini": config,
            "checks/check_a.py": PLAIN,
            "checks/test_b.py": PLAIN,  # not a test file of this project
            "other/check_c.py": PLAIN,  # not under testpaths
        },
    )
    assert discover(tmp_path) == Suite(
        runner="pytest",
        paths=("checks/check_a.py",),
        config="pytest.ini",
        testpaths=("checks",),
        patterns=("check_*.py",),
    )


def test_a_configuration_in_a_subfolder_is_the_root(tmp_path: Path) -> None:
    _write(tmp_path, {"python/pytest.ini": "[pytest]\n", "python/tests/test_a.py": PLAIN})
    assert discover(tmp_path) == Suite(
        runner="pytest",
        root="python",
        paths=("python/tests/test_a.py",),
        config="python/pytest.ini",
    )


def test_a_src_layout_is_put_on_the_path_unless_the_project_does(tmp_path: Path) -> None:
    files = {"src/pkg/__init__.py": "X = 1\n", "tests/test_a.py": PLAIN}
    suite = discover(_write(tmp_path / "plain", files))
    assert suite is not None and suite.pythonpath == ("src",)
    configured = {**files, "pyproject.toml": "[tool.pytest.ini_options]\npythonpath = ['src']\n"}
    suite = discover(_write(tmp_path / "configured", configured))
    assert suite is not None and suite.pythonpath == ()
    conftest = {**files, "conftest.py": "import sys\nsys.path.insert(0, 'src')\n"}
    suite = discover(_write(tmp_path / "conftest", conftest))
    assert suite is not None and suite.pythonpath == ()
    empty = {"src/README": "no code\n", "tests/test_a.py": PLAIN}
    suite = discover(_write(tmp_path / "empty", empty))
    assert suite is not None and suite.pythonpath == ()


def test_hidden_folders_virtual_environments_and_hidden_paths_are_not_searched(
    tmp_path: Path,
) -> None:
    _write(
        tmp_path,
        {
            ".git/test_x.py": PLAIN,
            "venv/bin/python": "",
            "venv/test_v.py": PLAIN,
            "env2/pyvenv.cfg": "",
            "env2/lib/test_e.py": PLAIN,
            "node_modules/test_n.py": PLAIN,
            "store/test_s.py": PLAIN,
            "tests/test_a.py": PLAIN,
        },
    )
    suite = discover(tmp_path, hidden=(tmp_path / "store",))
    assert suite is not None and suite.paths == ("tests/test_a.py",)


def test_a_file_that_does_not_parse_is_a_test_file_pytest_reports(tmp_path: Path) -> None:
    _write(tmp_path, {"test_broken.py": "def test_x(:\n"})
    assert discover(tmp_path) == Suite(runner="pytest", paths=("test_broken.py",))


def test_discovery_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = {f"pkg{i:02d}/test_{i:02d}.py": PLAIN for i in range(30)}
    _write(tmp_path, files)
    monkeypatch.setattr(_testsuite, "MAX_ENTRIES", 40)
    suite = discover(tmp_path)
    assert suite is not None and 0 < len(suite.paths) < 30
    assert DEFAULT_FILES == ("test_*.py", "*_test.py")
