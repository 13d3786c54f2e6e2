"""The ``run_tests`` tool: the workspace's tests (:mod:`._testsuite`) run where they can
change nothing, their outcomes read from a machine report (:mod:`._testreport`).

In the sandbox, exactly as ``shell`` runs a command there (the same
:class:`~._sandbox.Sandbox`, limits and hidden paths) but its effects always discarded,
never applied: whatever the tests write (caches, ``__pycache__``, files) never reaches
the workspace, so Law 1 has nothing to decide. The interpreter is the one artoo runs
under (``sys.executable``): its prefix, base prefix and site-packages, and the
``sys.path`` entries pytest was found in, are shown to the sandbox read-only (its ``read``
paths). Without a sandbox (``tools.sandbox = "off"`` or none on this machine) the tests
run in a temporary copy of the workspace, unconfined (the workspace is untouched, the
host is not protected), and the result says so.
"""

from __future__ import annotations

import contextlib
import copy
import importlib.util
import json
import os
import secrets
import shlex
import shutil
import site
import stat
import sys
import sysconfig
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from ._confine import _Guards
from ._sandbox import Sandbox, SandboxUnavailable
from ._shell import _Run, _run_shell
from ._testreport import (
    PLUGIN,
    REPORT,
    UNITTEST_DRIVER,
    Report,
    parse_report,
    record,
    summary_text,
)
from ._testsuite import Suite, discover
from ._types import _Call, _Result, _ToolError

__all__ = ["Interpreter", "interpreter", "tests_command"]

PLUGIN_MODULE = "_artoo_outcomes"
"""The reporter plugin's module name (``-p _artoo_outcomes``)."""
SANDBOX_REPORTS = "/tmp/artoo-tests"
"""Where the reporters write in the sandbox (its own fresh ``/tmp``)."""
TAIL_BYTES = 4000
"""Bytes of the tests' own output kept (its end), shown when the run gave no result."""
MAX_SELECT = 200
"""Test ids or paths one call may select."""
MAX_COPY_FILES = 100_000
MAX_COPY_BYTES = 1 << 30
"""A workspace copied for a run without the sandbox: at most this many files and bytes."""
_COPY_SKIP = frozenset(
    {"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".tox", ".nox", "node_modules"}
)
_PYTEST_NEEDS = ("pytest", "_pytest", "pluggy", "iniconfig", "packaging")
_TIMED_OUT = 124
"""The exit code of ``timeout`` when it ended the tests (137 when it had to KILL them)."""


@dataclass(frozen=True)
class Interpreter:
    """The Python the tests run with: ``executable``; ``reads``, host paths the sandbox
    must show for it to run (prefixes, site-packages, where pytest lies); ``pythonpath``,
    ``sys.path`` entries a fresh process of it would lack (where pytest was found, when
    that is not its own site-packages); ``pytest``: whether it can import pytest."""

    executable: str
    reads: tuple[Path, ...]
    pythonpath: tuple[str, ...]
    pytest: bool


def interpreter() -> Interpreter:
    """The interpreter artoo runs under, as :class:`Interpreter` describes it."""
    executable = sys.executable or shutil.which("python3") or "python3"
    paths = sysconfig.get_paths()
    default = {
        *(paths.get(k, "") for k in ("stdlib", "platstdlib", "purelib", "platlib")),
        *site.getsitepackages(),
    }
    user = site.getusersitepackages() if site.ENABLE_USER_SITE else ""
    if user:
        default.add(user)
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, *default}
    roots.add(os.path.realpath(executable))
    extra: list[str] = []
    found = False
    for module in _PYTEST_NEEDS:
        try:
            spec = importlib.util.find_spec(module)
        except (ImportError, ValueError):
            spec = None
        if spec is None or not spec.origin:
            continue
        found |= module == "pytest"
        entry = _path_entry(spec.origin, package=spec.submodule_search_locations is not None)
        if entry not in default and entry not in extra:
            extra.append(entry)
            roots.add(entry)
    reads = sorted({Path(os.path.realpath(r)) for r in roots if r and os.path.exists(r)})
    reads = [p for p in reads if not any(q != p and q in p.parents for q in reads)]
    return Interpreter(executable, tuple(reads), tuple(extra), found)


def _path_entry(origin: str, *, package: bool) -> str:
    """The ``sys.path`` entry a module was found in (its file's directory; a package's
    parent directory)."""
    folder = os.path.dirname(origin)
    return os.path.dirname(folder) if package else folder


def tests_command(
    suite: Suite,
    runner: str,
    python: str,
    reports: str,
    marker: str,
    *,
    timeout_s: float,
    select: tuple[str, ...] = (),
    addopts: bool = True,
) -> str:
    """The shell command that runs ``suite`` with ``runner`` (``pytest``: ``python -m
    pytest`` with the reporter plugin; ``unittest``: the driver) from its root, its
    reporters in the directory ``reports``, stopped by ``timeout`` a little before
    ``timeout_s``; then prints, after lines starting with ``marker``, the exit code, the
    report and the end of the tests' output. ``select``: ids or paths relative to the root.
    Without ``addopts`` the project's pytest ``addopts`` are left out."""
    q = shlex.quote
    if runner == "pytest":
        words = [python, "-m", "pytest", "-p", "no:cacheprovider", "-p", PLUGIN_MODULE]
        words += ["--continue-on-collection-errors", "--rootdir=.", "--confcutdir=."]
        words += ["--color=no", "--tb=short", "-q", "-rfE"]
        if suite.config is None:  # no configuration of an ancestor is read either
            words += ["-c", os.devnull]
        if not addopts:
            words += ["-o", "addopts="]
        words += list(select)
        reporter = f"printf '%s' {q(PLUGIN)} > {q(reports)}/{PLUGIN_MODULE}.py && "
    else:
        starts = [s.split("::", 1)[0] for s in select] or list(suite.testpaths) or ["."]
        spec = {"starts": starts, "patterns": list(suite.patterns), "select": list(select)}
        words = [python, "-c", UNITTEST_DRIVER, f"{reports}/{REPORT}", json.dumps(spec)]
        reporter = ""
    limit = f"timeout -k 2 {_inner(timeout_s):g} " if shutil.which("timeout") else ""
    run = " ".join(q(w) for w in words)
    return (
        f"code=255; mkdir -p {q(reports)} && {reporter}cd -- {q(suite.root)} && "
        f"{{ {limit}{run} > {q(reports)}/out 2>&1; code=$?; }}; "
        f"printf '\\n%s code %s\\n' {marker} \"$code\"; "
        f"cat {q(reports)}/{REPORT} 2>/dev/null; "
        f"printf '\\n%s output\\n' {marker}; tail -c {TAIL_BYTES} {q(reports)}/out 2>/dev/null; "
        f"printf '\\n%s end\\n' {marker}"
    )


def _inner(timeout_s: float) -> float:
    """When ``timeout`` stops the tests: a little before the run's own timeout, so that
    what they reported is still printed."""
    return max(1.0, timeout_s - max(1.0, timeout_s * 0.05))


def split_output(stdout: str, marker: str) -> tuple[int | None, str, str, bool]:
    """``(exit code, report, end of the tests' output, whole)`` from what
    :func:`tests_command` printed; ``whole`` false when its end is missing (the run was
    killed, or the output cap cut it)."""
    code: int | None = None
    parts: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in stdout.split("\n"):
        if line.startswith(marker + " "):
            word = line[len(marker) + 1 :].split()
            if word and word[0] == "code":
                with contextlib.suppress(IndexError, ValueError):
                    code = int(word[1])
                current = parts.setdefault("report", [])
            elif word:
                current = parts.setdefault(word[0], [])
            continue
        if current is not None:
            current.append(line)
    report, tail = ("\n".join(parts.get(k, [])) for k in ("report", "output"))
    return code, report, tail, "end" in parts


# =========================================================================== the tool
class _TestTool(_Guards):
    """The ``run_tests`` tool, as a method of ToolRegistry (a mixin: the registry sets
    the attributes below)."""

    env: dict[str, str]
    sandbox: Sandbox | None
    output_cap: int
    tests_timeout_s: float

    def _run_tests(self, call: _Call, select: list[str] | str | None = None) -> _Result:
        """Run the workspace's tests (pytest or unittest) and report which pass and which
        fail, each failure with its first error line. Changes nothing: whatever the tests
        write is thrown away. Run it before and after a change to see what it fixed or
        broke.

        Args:
            select: the tests to run, as test ids or paths, such as
                "tests/test_x.py::test_y" or "tests/test_x.py"; none: every test.
        """
        hidden = tuple(root for _, root in self._blocked_roots(call))
        suite = discover(self.workspace, hidden=hidden)
        if suite is None:
            raise _ToolError(
                "no tests found in the workspace (no test_*.py or *_test.py file with a test)"
            )
        chosen = self._selection(call, select, suite)
        python = interpreter()
        if python.pytest:
            runner = "pytest"
        elif suite.runner == "unittest":
            runner = "unittest"
        else:
            raise _ToolError(f"the tests need pytest, which {python.executable} cannot import")
        started = time.monotonic()
        ran = self._run_suite(suite, runner, python, chosen, hidden, True)
        if runner == "pytest" and ran.code == 4 and not ran.report.outcomes:  # bad addopts
            left = self.tests_timeout_s - (time.monotonic() - started)
            if left > 1:
                first = _last_line(ran.tail)
                ran = self._run_suite(suite, runner, python, chosen, hidden, False, timeout_s=left)
                ran.note += f"\n[the project's pytest addopts were left out: {first}]"
        error = _error(ran, self.tests_timeout_s)
        exit_code = None if ran.timed_out else ran.code
        text = summary_text(runner, ran.report, exit_code, error)
        if error is not None and ran.tail.strip():
            text += "\n--- end of the output ---\n" + ran.tail.strip()
        return _Result(
            text + ran.note,
            None,
            error is None,
            error,
            exit_code,
            sandboxed=self.sandbox is not None,
            content=record(runner, ran.report, exit_code, error),
            whole=True,
        )

    def _selection(
        self, call: _Call, select: list[str] | str | None, suite: Suite
    ) -> tuple[str, ...]:
        """The selected ids and paths, checked (inside the workspace, not blocked, the
        path there) and made relative to the suite's root."""
        items = [select] if isinstance(select, str) else list(select or [])
        items = [i.strip() for i in items if i.strip()]
        if len(items) > MAX_SELECT:
            raise _ToolError(f"select names {len(items)} tests; at most {MAX_SELECT}")
        root = "" if suite.root == "." else suite.root + "/"
        out: list[str] = []
        for item in items:
            path, sep, rest = item.partition("::")
            if item.startswith("-") or any(c in item for c in "\x00\r\n"):
                raise _ToolError(f"invalid test selection {item!r}: {_SELECT_FORM}")
            relative = self._confine(path)
            self._check_blocked(self.workspace / relative, call, relative)
            if not (self.workspace / relative).exists():
                raise _ToolError(f"no test file or directory '{path}': {_SELECT_FORM}", path)
            if root and not (relative + "/").startswith(root):
                raise _ToolError(f"'{path}' is not under the tests' root '{suite.root}'", path)
            out.append((relative + "/")[len(root) :].rstrip("/") + sep + rest or ".")
        return tuple(out)

    def _run_suite(
        self,
        suite: Suite,
        runner: str,
        python: Interpreter,
        select: tuple[str, ...],
        hidden: tuple[Path, ...],
        addopts: bool,
        *,
        timeout_s: float | None = None,
    ) -> _Ran:
        """One run of the tests, as :class:`_Ran` describes it."""
        timeout = timeout_s or self.tests_timeout_s
        marker = f"==artoo-tests-{secrets.token_hex(8)}=="
        prefix = "" if suite.root == "." else suite.root + "/"
        env = {
            **self.env,
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONUNBUFFERED": "1",
            "PY_COLORS": "0",
            "NO_COLOR": "1",
        }
        if self.sandbox is not None:
            box = copy.copy(self.sandbox)  # the same sandbox, the interpreter shown too
            box.read = tuple(
                dict.fromkeys(
                    [*self.sandbox.read]
                    + [p for p in python.reads if not self.sandbox.shows(p, self.workspace)]
                )
            )
            env["PYTHONPATH"] = _pythonpath(suite, self.workspace, SANDBOX_REPORTS, python, env)
            command = tests_command(
                suite, runner, python.executable, SANDBOX_REPORTS, marker,
                timeout_s=timeout, select=select, addopts=addopts,
            )  # fmt: skip
            started = time.monotonic()
            try:
                ran = box.run(command, self.workspace, timeout, self.output_cap, env, hide=hidden)
            except SandboxUnavailable as exc:  # fail closed: the tests did not run
                raise _ToolError(str(exc)) from None
            try:
                run = ran.run
            finally:
                ran.discard()  # never applied: whatever the tests wrote is thrown away
            note = "\n[ran in the sandbox; whatever the tests wrote was discarded]"
        else:
            started = time.monotonic()
            run = self._run_in_copy(suite, runner, python, select, hidden, addopts, timeout, marker)
            note = "\n[no sandbox: ran in a temporary copy of the workspace, which is untouched]"
        code, text, tail, whole = split_output(run.stdout, marker)
        late = time.monotonic() - started >= _inner(timeout)
        timed_out = run.timed_out or code == _TIMED_OUT or (code == 137 and late)
        if not whole:
            tail = tail or (run.stdout + run.stderr)[-TAIL_BYTES:]
        return _Ran(None if timed_out else code, parse_report(text, prefix), tail, note, timed_out)

    def _run_in_copy(
        self,
        suite: Suite,
        runner: str,
        python: Interpreter,
        select: tuple[str, ...],
        hidden: tuple[Path, ...],
        addopts: bool,
        timeout: float,
        marker: str,
    ) -> _Run:
        """The tests run in a temporary copy of the workspace, with a home and a temporary
        directory of their own; all of it removed after."""
        scratch = Path(tempfile.mkdtemp(prefix="artoo-tests-"))
        try:
            copied = scratch / "ws"
            _copy_tree(self.workspace, copied, hidden)
            for sub in ("reports", "home", "tmp"):
                (scratch / sub).mkdir()
            reports = str(scratch / "reports")
            env = {**self.env, "HOME": str(scratch / "home"), "TMPDIR": str(scratch / "tmp")}
            env.update(PYTHONDONTWRITEBYTECODE="1", PYTHONUNBUFFERED="1", PY_COLORS="0")
            env["PYTHONPATH"] = _pythonpath(suite, copied, reports, python, env)
            command = tests_command(
                suite, runner, python.executable, reports, marker,
                timeout_s=timeout, select=select, addopts=addopts,
            )  # fmt: skip
            return _run_shell(command, copied, timeout, self.output_cap, env)
        finally:
            _remove_tree(scratch)


_SELECT_FORM = 'give a test id such as "tests/test_x.py::test_y", or a test file or folder'


def _pythonpath(
    suite: Suite, root: Path, reports: str, python: Interpreter, env: dict[str, str]
) -> str:
    """``PYTHONPATH`` of a run: the suite's ``src`` (under ``root``), the reporters'
    directory, where the interpreter found pytest, and the host's own when allowed."""
    entries = [str(root / p) for p in suite.pythonpath]
    entries += [reports, *python.pythonpath]
    if env.get("PYTHONPATH"):
        entries.append(env["PYTHONPATH"])
    return os.pathsep.join(entries)


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


@dataclass
class _Ran:
    """One run of the tests: its exit code (None when killed, or when it printed none),
    its report, the end of its output, a note for the model, whether its timeout ended it."""

    code: int | None
    report: Report
    tail: str
    note: str
    timed_out: bool


def _error(ran: _Ran, timeout_s: float) -> str | None:
    """Why a run gave no result, or None: killed by its timeout, or ended otherwise than
    0, 1 with a report, or 5 (no test collected): pytest's usage error or internal error,
    a broken conftest.py, ``pytest.exit``, a crash of the runner."""
    report, code = ran.report, ran.code
    if ran.timed_out:
        running = f" while running {report.running}" if report.running else ""
        return f"timed out after {timeout_s:g} s{running}"
    if code in (0, 5) or (code == 1 and (report.outcomes or report.collected is not None)):
        return None
    if code is None:
        return f"the run ended before it reported: {_last_line(ran.tail) or 'no output'}"
    return f"exit code {code}: {_last_line(ran.tail) or 'no output'}"


def _copy_tree(source: Path, dest: Path, hidden: tuple[Path, ...]) -> None:
    """Copy the workspace ``source`` to ``dest``: regular files and directories with
    their modes, symlinks as links (one into the workspace made to point into the copy),
    without ``hidden`` paths, caches or virtual environments; unreadable files skipped.
    Raises _ToolError past :data:`MAX_COPY_FILES` or :data:`MAX_COPY_BYTES`."""
    budget = [MAX_COPY_FILES, MAX_COPY_BYTES]
    dest.mkdir(mode=0o755)
    queue = [(source, dest)]
    while queue:
        src_dir, dst_dir = queue.pop()
        try:
            entries = list(os.scandir(src_dir))
        except OSError:
            continue
        for entry in entries:
            src, dst = Path(entry.path), dst_dir / entry.name
            if any(src == h or h in src.parents for h in hidden):
                continue
            budget[0] -= 1
            if budget[0] < 0:
                raise _ToolError(_TOO_LARGE)
            try:
                if entry.is_symlink():
                    target = os.readlink(src)
                    resolved = src.resolve()
                    if resolved == source or source in resolved.parents:
                        in_copy = dest / resolved.relative_to(source)
                        target = os.path.relpath(in_copy, dst_dir)
                    os.symlink(target, dst)
                elif entry.is_dir(follow_symlinks=False):
                    if entry.name in _COPY_SKIP or (src / "pyvenv.cfg").exists():
                        continue
                    dst.mkdir(mode=0o755)
                    queue.append((src, dst))
                elif entry.is_file(follow_symlinks=False):
                    budget[1] -= entry.stat(follow_symlinks=False).st_size
                    if budget[1] < 0:
                        raise _ToolError(_TOO_LARGE)
                    shutil.copy2(src, dst, follow_symlinks=False)
            except (OSError, RuntimeError):  # unreadable, or a symlink loop
                continue


_TOO_LARGE = (
    f"the workspace is too large to copy for the tests without a sandbox (over "
    f"{MAX_COPY_FILES:,} files or {MAX_COPY_BYTES >> 20:,} MiB)"
)


def _remove_tree(path: Path) -> None:
    """Remove ``path`` whole, also directories the tests left without write permission."""

    def retry(function: object, name: str, _exc: object) -> None:
        with contextlib.suppress(OSError):
            os.chmod(os.path.dirname(name), stat.S_IRWXU)
            os.chmod(name, stat.S_IRWXU, follow_symlinks=False)
        with contextlib.suppress(OSError):
            if os.path.isdir(name) and not os.path.islink(name):
                shutil.rmtree(name, ignore_errors=True)
            else:
                os.unlink(name)

    shutil.rmtree(path, onerror=retry)
