"""The ``run_tests`` tool: real pytest and unittest runs over small workspaces the tests
write, through the ToolRegistry as the Executor calls it — in the sandbox, and without
one (a temporary copy) — the workspace unchanged after every run."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import stat
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

import pytest

from artoo.actors.tools import (
    ConfirmationNeeded,
    Sandbox,
    ToolOutcome,
    ToolRegistry,
    _testrun,
    probe,
)
from artoo.actors.verification._tests import not_passing, outcomes_of, regressions, summary

MODES = ("sandbox", "copy")
"""Where the tests run: the sandbox, or (``tools.sandbox = "off"``) a temporary copy."""

CALC = "def add(a, b):\n    return a + b\n"
TEST_CALC = """\
import pytest

from calc import add


def test_add():
    assert add(1, 2) == 3


@pytest.mark.parametrize("n", [1, 2])
def test_add_zero(n):
    assert add(n, 0) == n
"""
CASES = """\
import unittest

from calc import add


class TestAdd(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(2, 2), 4)

    def test_wrong(self):
        self.assertEqual(add(2, 2), 5)

    @unittest.skip("not yet")
    def test_later(self):
        pass
"""


class _Operator:
    """A confirm callback that records every request (and denies it)."""

    def __init__(self) -> None:
        self.requests: list[ConfirmationNeeded] = []

    def __call__(self, request: ConfirmationNeeded) -> bool:
        self.requests.append(request)
        return False


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    if sys.platform != "linux":
        pytest.skip("the sandbox needs Linux")
    why = probe()
    assert why is None, f"no sandbox on this machine: {why}"
    return Sandbox()


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> str:
    if request.param == "sandbox":
        request.getfixturevalue("sandbox")
    return str(request.param)


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def _snapshot(root: Path) -> dict[str, tuple[str, int, bytes]]:
    """Every path beneath ``root``: its kind, mode and content (a link's target)."""
    out: dict[str, tuple[str, int, bytes]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames]:
            full = Path(dirpath) / name
            st = os.lstat(full)
            if stat.S_ISLNK(st.st_mode):
                kind, data = "link", os.readlink(full).encode()
            elif stat.S_ISDIR(st.st_mode):
                kind, data = "dir", b""
            else:
                kind, data = "file", full.read_bytes()
            out[str(full.relative_to(root))] = (kind, stat.S_IMODE(st.st_mode), data)
    return out


def _registry(ws: Path, mode: str, spill: Path, **kwargs: Any) -> ToolRegistry:
    sandbox = Sandbox() if mode == "sandbox" else None
    return ToolRegistry(ws, spill, sandbox=sandbox, **kwargs)


def _run(ws: Path, mode: str, spill: Path, args: dict[str, Any] | None = None, **kw: Any) -> Any:
    """``run_tests`` called as the Executor calls it: ``(outcome, record)``, the workspace
    asserted unchanged by the run and no confirmation asked."""
    before = _snapshot(ws)
    operator = _Operator()
    outcome = _registry(ws, mode, spill, confirm=operator, **kw).call("run_tests", args or {})
    assert _snapshot(ws) == before
    assert operator.requests == []
    content = outcome.call.content
    if content is None:  # refused before it ran
        return outcome, None
    assert outcome.call.sandboxed is (mode == "sandbox")
    return outcome, json.loads(content)


def _note(mode: str) -> str:
    if mode == "sandbox":
        return "[ran in the sandbox; whatever the tests wrote was discarded]"
    return "[no sandbox: ran in a temporary copy of the workspace, which is untouched]"


# --------------------------------------------------------------------------- results
def test_a_passing_suite_reports_every_test_passed(tmp_path: Path, mode: str) -> None:
    ws = _write(
        tmp_path / "ws",
        {"pytest.ini": "[pytest]\n", "calc.py": CALC, "tests/test_calc.py": TEST_CALC},
    )
    outcome, record = _run(ws, mode, tmp_path / "spill")
    assert record == {
        "runner": "pytest",
        "outcomes": {
            "tests/test_calc.py::test_add": "passed",
            "tests/test_calc.py::test_add_zero[1]": "passed",
            "tests/test_calc.py::test_add_zero[2]": "passed",
        },
        "collected": 3,
        "exit_code": 0,
        "error": None,
    }
    assert outcome.call.ok and outcome.call.error is None and outcome.call.exit_code == 0
    assert outcome.call.output_preview == f"pytest: 3 passed; exit code 0\n{_note(mode)}"
    assert outcome.call.tool == "run_tests" and outcome.call.effects == ()
    assert outcomes_of(outcome.call) == record["outcomes"]


def test_a_failing_test_is_a_result_named_with_its_first_error_line(
    tmp_path: Path, mode: str
) -> None:
    broken = TEST_CALC + "\n\ndef test_wrong():\n    assert add(2, 2) == 5, 'two and two'\n"
    ws = _write(tmp_path / "ws", {"calc.py": CALC, "tests/test_calc.py": broken})
    outcome, record = _run(ws, mode, tmp_path / "spill")
    assert record["outcomes"]["tests/test_calc.py::test_wrong"] == "failed"
    assert record["exit_code"] == 1 and record["error"] is None and outcome.call.ok
    assert outcome.call.output_preview.splitlines()[:2] == [
        "pytest: 3 passed, 1 failed; exit code 1",
        "FAILED tests/test_calc.py::test_wrong — AssertionError: two and two",
    ]


def test_a_change_that_breaks_a_test_is_a_regression_and_a_fix_passes_the_named_test(
    tmp_path: Path, mode: str
) -> None:
    ws = _write(tmp_path / "ws", {"calc.py": CALC, "tests/test_calc.py": TEST_CALC})
    first, _ = _run(ws, mode, tmp_path / "spill")
    before = outcomes_of(first.call)
    (ws / "calc.py").write_text("def add(a, b):\n    return a + b + 1\n")
    second, _ = _run(ws, mode, tmp_path / "spill")
    after = outcomes_of(second.call)
    assert before is not None and after is not None
    assert regressions(before, after) == [
        "tests/test_calc.py::test_add",
        "tests/test_calc.py::test_add_zero[1]",
        "tests/test_calc.py::test_add_zero[2]",
    ]
    assert not_passing(after, ["test_add"]) == ["test_add"]
    assert summary(before, after).startswith("tests before: 3 passed; after: 3 failed; 3 ")
    (ws / "calc.py").write_text(CALC)
    third, _ = _run(ws, mode, tmp_path / "spill")
    fixed = outcomes_of(third.call)
    assert fixed is not None and regressions(before, fixed) == []
    assert not_passing(fixed, ["test_add", "tests/test_calc.py"]) == []


def test_a_src_layout_package_imports_as_its_tests_expect(tmp_path: Path, mode: str) -> None:
    test = "from shapes import area\n\n\ndef test_area():\n    assert area(2, 3) == 6\n"
    ws = _write(
        tmp_path / "ws",
        {
            "pyproject.toml": "[project]\nname = 'shapes'\n",
            "src/shapes/__init__.py": "def area(w, h):\n    return w * h\n",
            "tests/test_shapes.py": test,
        },
    )
    _, record = _run(ws, mode, tmp_path / "spill")
    assert record["outcomes"] == {"tests/test_shapes.py::test_area": "passed"}


def test_a_configured_pythonpath_is_the_projects_own(tmp_path: Path, mode: str) -> None:
    test = "import shapes\n\n\ndef test_where():\n    assert shapes.WHERE == 'lib'\n"
    ws = _write(
        tmp_path / "ws",
        {
            "pyproject.toml": "[tool.pytest.ini_options]\npythonpath = ['lib']\n",
            "lib/shapes.py": "WHERE = 'lib'\n",
            "src/shapes.py": "WHERE = 'src'\n",  # not on the path: the project says lib
            "tests/test_shapes.py": test,
        },
    )
    _, record = _run(ws, mode, tmp_path / "spill")
    assert record["outcomes"] == {"tests/test_shapes.py::test_where": "passed"}


def test_a_unittest_suite_gives_the_same_ids_under_pytest_and_unittest(
    tmp_path: Path, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = _write(
        tmp_path / "ws",
        {"calc.py": CALC, "tests/test_cases.py": CASES, "tests/test_x.py": "import nope\n"},
    )
    expected = {
        "tests/test_cases.py::TestAdd::test_add": "passed",
        "tests/test_cases.py::TestAdd::test_wrong": "failed",
        "tests/test_cases.py::TestAdd::test_later": "skipped",
        "tests/test_x.py": "error",
    }
    outcome, record = _run(ws, mode, tmp_path / "spill")
    assert record["runner"] == "pytest" and record["outcomes"] == expected
    real = _testrun.interpreter
    monkeypatch.setattr(_testrun, "interpreter", lambda: dataclasses.replace(real(), pytest=False))
    outcome, record = _run(ws, mode, tmp_path / "spill")
    assert record["runner"] == "unittest" and record["outcomes"] == expected
    assert record["collected"] == 3 and record["exit_code"] == 1 and outcome.call.ok
    assert outcome.call.output_preview.splitlines()[:3] == [
        "unittest: 1 passed, 1 failed, 1 error, 1 skipped; exit code 1",
        "FAILED tests/test_cases.py::TestAdd::test_wrong — AssertionError: 4 != 5",
        "ERROR tests/test_x.py — ModuleNotFoundError: No module named 'nope'",
    ]
    _, record = _run(
        ws, mode, tmp_path / "spill", {"select": ["tests/test_cases.py::TestAdd::test_add"]}
    )
    assert record["outcomes"] == {"tests/test_cases.py::TestAdd::test_add": "passed"}


def test_plain_tests_without_pytest_are_refused_not_run(
    tmp_path: Path, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = _write(tmp_path / "ws", {"calc.py": CALC, "tests/test_calc.py": TEST_CALC})
    real = _testrun.interpreter
    monkeypatch.setattr(_testrun, "interpreter", lambda: dataclasses.replace(real(), pytest=False))
    outcome, record = _run(ws, mode, tmp_path / "spill")
    assert not outcome.call.ok and record is None
    assert outcome.call.error == f"the tests need pytest, which {sys.executable} cannot import"


def test_a_module_that_does_not_import_is_an_error_and_the_others_still_run(
    tmp_path: Path, mode: str
) -> None:
    ws = _write(
        tmp_path / "ws",
        {
            "calc.py": CALC,
            "tests/test_calc.py": TEST_CALC,
            "tests/test_broken.py": "import no_such_module\n\n\ndef test_x():\n    pass\n",
            "tests/test_syntax.py": "def test_y(:\n",
        },
    )
    outcome, record = _run(ws, mode, tmp_path / "spill")
    assert record["outcomes"]["tests/test_broken.py"] == "error"
    assert record["outcomes"]["tests/test_syntax.py"] == "error"
    assert record["outcomes"]["tests/test_calc.py::test_add"] == "passed"
    assert record["collected"] == 3 and record["error"] is None
    assert (
        "ERROR tests/test_broken.py — ModuleNotFoundError: No module named 'no_such_module'"
        in outcome.call.output_preview.splitlines()
    )


# --------------------------------------------------------------------------- nothing kept
def test_whatever_the_tests_write_never_reaches_the_workspace(tmp_path: Path, mode: str) -> None:
    writer = """\
import os
import pathlib


def test_writes_everywhere(tmp_path):
    pathlib.Path("out.txt").write_text("made by a test")
    os.makedirs("made/deep", exist_ok=True)
    pathlib.Path("made/deep/x.bin").write_bytes(b"x" * 1000)
    pathlib.Path("calc.py").write_text("broken = True")
    os.remove("data.txt")
    os.chmod("tests", 0o700)
    (tmp_path / "scratch").write_text("tmp")
    pathlib.Path(__file__).with_name("sibling.py").write_text("x = 1")
"""
    ws = _write(
        tmp_path / "ws",
        {
            "calc.py": CALC,
            "data.txt": "keep me\n",
            "tests/test_calc.py": TEST_CALC,
            "tests/test_writer.py": writer,
        },
    )
    _, record = _run(ws, mode, tmp_path / "spill")  # asserts the workspace unchanged
    assert record["outcomes"]["tests/test_writer.py::test_writes_everywhere"] == "passed"
    assert not any(p.name in ("__pycache__", ".pytest_cache") for p in ws.rglob("*"))


@pytest.mark.slow
def test_a_test_that_runs_forever_is_stopped_by_the_timeout(tmp_path: Path, mode: str) -> None:
    forever = "import time\n\n\ndef test_forever():\n    while True:\n        time.sleep(0.05)\n"
    ws = _write(
        tmp_path / "ws",
        {"test_a_fast.py": "def test_fast():\n    pass\n", "test_forever.py": forever},
    )
    # ample for pytest to start and reach the endless test on a busy machine
    outcome, record = _run(ws, mode, tmp_path / "spill", tests_timeout_s=10)
    assert not outcome.call.ok and outcome.call.exit_code is None
    assert outcome.call.error == "timed out after 10 s while running test_forever.py::test_forever"
    assert record["error"] == outcome.call.error and record["exit_code"] is None
    assert record["outcomes"] == {"test_a_fast.py::test_fast": "passed"}
    assert outcomes_of(outcome.call) is None  # no result to compare


def test_a_workspace_without_tests_is_told_so(tmp_path: Path, mode: str) -> None:
    ws = _write(tmp_path / "ws", {"calc.py": CALC, "README.md": "no tests\n"})
    outcome, record = _run(ws, mode, tmp_path / "spill")
    assert not outcome.call.ok and record is None
    assert outcome.call.error == (
        "no tests found in the workspace (no test_*.py or *_test.py file with a test)"
    )


# --------------------------------------------------------------------------- arguments
def test_select_runs_only_the_tests_named(tmp_path: Path, mode: str) -> None:
    other = "def test_other():\n    assert False\n"
    ws = _write(
        tmp_path / "ws",
        {"calc.py": CALC, "tests/test_calc.py": TEST_CALC, "tests/test_other.py": other},
    )
    _, record = _run(ws, mode, tmp_path / "spill", {"select": "tests/test_calc.py::test_add"})
    assert record["outcomes"] == {"tests/test_calc.py::test_add": "passed"}
    _, record = _run(ws, mode, tmp_path / "spill", {"select": ["tests/test_other.py"]})
    assert record["outcomes"] == {"tests/test_other.py::test_other": "failed"}


@pytest.mark.parametrize(
    ("select", "error"),
    [
        ("../outside.py", "path '../outside.py' escapes the workspace (..)"),
        ("-x", "invalid test selection '-x': give a test id such as"),
        ("test_add", "no test file or directory 'test_add': give a test id such as"),
        ("secret/test_s.py", "blocked target 'secret' (path 'secret/test_s.py')"),
    ],
)
def test_a_selection_outside_the_workspace_blocked_or_unknown_is_refused(
    tmp_path: Path, select: str, error: str
) -> None:
    ws = _write(
        tmp_path / "ws",
        {"calc.py": CALC, "tests/test_calc.py": TEST_CALC, "secret/test_s.py": "x = 1\n"},
    )
    tools = ToolRegistry(ws, tmp_path / "spill", blocked_targets=("secret",))
    outcome: ToolOutcome = tools.call("run_tests", {"select": select})
    assert not outcome.call.ok and outcome.call.error is not None
    assert outcome.call.error.startswith(error)


def test_blocked_targets_are_hidden_from_the_tests(tmp_path: Path, mode: str) -> None:
    reader = "def test_reads():\n    assert open('secret/key.txt').read() == 's3cret'\n"
    ws = _write(tmp_path / "ws", {"secret/key.txt": "s3cret", "tests/test_read.py": reader})
    _, record = _run(ws, mode, tmp_path / "spill", blocked_targets=("secret",))
    assert record["outcomes"] == {"tests/test_read.py::test_reads": "failed"}


def test_addopts_this_interpreter_cannot_honour_are_left_out(tmp_path: Path, mode: str) -> None:
    config = "[pytest]\naddopts = --no-such-plugin-option=1\n"
    ws = _write(
        tmp_path / "ws",
        {"pytest.ini": config, "calc.py": CALC, "tests/test_calc.py": TEST_CALC},
    )
    outcome, record = _run(ws, mode, tmp_path / "spill")
    assert record["error"] is None and len(record["outcomes"]) == 3
    assert "[the project's pytest addopts were left out: " in outcome.call.output_preview


def test_the_record_of_a_large_suite_is_kept_whole(tmp_path: Path) -> None:
    many = (
        "import pytest\n\n\n@pytest.mark.parametrize('n', range(400))\ndef test_n(n):\n    pass\n"
    )
    ws = _write(tmp_path / "ws", {"test_many.py": many})
    outcome, record = _run(ws, "copy", tmp_path / "spill", context_limit=1024)
    assert len(outcome.call.content or "") > 1024 and len(outcome.call.output_preview) < 1024
    assert record["collected"] == 400 and len(record["outcomes"]) == 400


# --------------------------------------------------------------------------- unprivileged
NOBODY = 65534
NOBODY_ARGV = ("setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups")
REPO = Path(__file__).resolve().parents[2]


def _as_nobody(ws: Path) -> subprocess.CompletedProcess[str]:
    """``run_tests`` on ``ws`` in the sandbox, called by a process of uid/gid 65534 with an
    interpreter that user may run (this one, else the system's of the same version) and
    this environment's packages; exit code 3 when no interpreter is runnable."""
    purelib = sysconfig.get_paths()["purelib"]
    code = (
        "import json, os, site, sys\n"
        f"site.addsitedir({purelib!r}); sys.path.insert(0, {str(REPO)!r})\n"
        "if not os.access(sys.executable, os.X_OK): sys.exit(3)\n"
        "from pathlib import Path\n"
        "from artoo.actors.tools import Sandbox, ToolRegistry\n"
        f"ws = Path({str(ws)!r})\n"
        "out = ToolRegistry(ws, ws.parent / 'spill', sandbox=Sandbox()).call('run_tests', {})\n"
        "print(json.dumps([out.call.content, out.call.sandboxed, out.call.output_preview]))\n"
    )
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    result = subprocess.CompletedProcess[str]([], 3, "", "no interpreter")
    for python in (sys.executable, f"/usr/bin/{version}", f"/usr/local/bin/{version}"):
        if not os.path.exists(python):
            continue
        result = subprocess.run(
            [*NOBODY_ARGV, python, "-c", code],
            capture_output=True,
            text=True,
            cwd="/",
            env={"PATH": os.defpath, "HOME": str(ws.parent), "LANG": "C.UTF-8"},
            timeout=300,
        )
        if result.returncode not in (3, 126, 127) and "Permission denied" not in result.stderr:
            break
    return result


@pytest.mark.slow
def test_the_tests_run_in_the_sandbox_for_an_unprivileged_user(
    sandbox: Sandbox, tmp_path_factory: pytest.TempPathFactory
) -> None:
    if os.getuid() != 0:  # the tests themselves run unprivileged: the tests above are it
        pytest.skip("the test process is unprivileged already (see the tests above)")
    if shutil.which("setpriv") is None:
        pytest.skip("no setpriv to run as an unprivileged user")
    base = Path(tempfile.mkdtemp(prefix="artoo-nobody-tests-"))
    try:
        writer = (
            "import pathlib\n\n\ndef test_writes():\n    pathlib.Path('out.txt').write_text('x')\n"
        )
        ws = _write(
            base / "ws",
            {"calc.py": CALC, "tests/test_calc.py": TEST_CALC, "tests/test_w.py": writer},
        )
        for path in [base, *base.rglob("*")]:
            os.chown(path, NOBODY, NOBODY)
        os.chmod(base, 0o755)
        before = _snapshot(ws)
        result = _as_nobody(ws)
        if result.returncode == 3 or "ModuleNotFoundError" in result.stderr:
            pytest.skip(
                "this environment's interpreter or packages are not readable by an "
                f"unprivileged user: {result.stderr.strip()[-200:]}"
            )
        assert result.returncode == 0, result.stderr[-2000:]
        content, sandboxed, preview = json.loads(result.stdout.strip().splitlines()[-1])
        assert sandboxed and json.loads(content)["outcomes"] == {
            "tests/test_calc.py::test_add": "passed",
            "tests/test_calc.py::test_add_zero[1]": "passed",
            "tests/test_calc.py::test_add_zero[2]": "passed",
            "tests/test_w.py::test_writes": "passed",
        }, preview
        assert _snapshot(ws) == before
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_every_outcome_pytest_knows_is_read(tmp_path: Path) -> None:
    kinds = """\
import pytest


@pytest.fixture
def broken_setup():
    raise RuntimeError("setup boom")


@pytest.fixture
def broken_teardown():
    yield
    raise RuntimeError("teardown boom")


def test_setup(broken_setup):
    pass


def test_teardown(broken_teardown):
    pass


@pytest.mark.skip(reason="not today")
def test_skipped():
    pass


@pytest.mark.xfail
def test_xfailed():
    assert False


@pytest.mark.xfail
def test_xpassed():
    pass


@pytest.mark.xfail(strict=True)
def test_strict_xpass():
    pass
"""
    ws = _write(tmp_path / "ws", {"test_kinds.py": kinds})
    outcome, record = _run(ws, "copy", tmp_path / "spill")
    assert record["outcomes"] == {
        "test_kinds.py::test_setup": "error",
        "test_kinds.py::test_teardown": "error",  # passed, then its teardown failed
        "test_kinds.py::test_skipped": "skipped",
        "test_kinds.py::test_xfailed": "xfailed",
        "test_kinds.py::test_xpassed": "xpassed",
        "test_kinds.py::test_strict_xpass": "failed",
    }
    assert outcome.call.output_preview.splitlines()[:4] == [
        "pytest: 1 failed, 2 errors, 1 skipped, 1 xfailed, 1 xpassed; exit code 1",
        "ERROR test_kinds.py::test_setup — RuntimeError: setup boom",
        "FAILED test_kinds.py::test_strict_xpass — [XPASS(strict)]",
        "ERROR test_kinds.py::test_teardown — RuntimeError: teardown boom",
    ]


def test_a_write_through_a_link_into_the_workspace_never_reaches_it(
    tmp_path: Path, mode: str
) -> None:
    writer = """\
import pathlib


def test_writes_through_links():
    pathlib.Path("absolute.txt").write_text("through an absolute link")
    pathlib.Path("relative/new.txt").write_text("through a relative link")
"""
    ws = _write(tmp_path / "ws", {"data/kept.txt": "kept\n", "test_links.py": writer})
    (ws / "absolute.txt").symlink_to(ws / "data" / "kept.txt")
    (ws / "relative").symlink_to("data")
    (ws / "loop1").symlink_to("loop2")
    (ws / "loop2").symlink_to("loop1")
    _, record = _run(ws, mode, tmp_path / "spill")  # asserts the workspace unchanged
    assert record["outcomes"] == {"test_links.py::test_writes_through_links": "passed"}
