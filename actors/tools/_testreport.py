"""What a test run reports, and how it is read (pure): the reporters that run beside the
tests (a pytest plugin, a unittest driver), the report they write, the record and the
summary ``run_tests`` gives.

Both reporters write one JSON object a line to ``report.jsonl`` beside themselves, as
each test ends (a run killed by its timeout keeps what it reported): ``{"id", "outcome",
"line"}`` for a test (``line``: its first error line, or why it was skipped) or a module
that could not be collected (its id the module's path, outcome ``error``);
``{"collected": n}``; ``{"started": id}`` and ``{"finished": id}`` around each test (what
ran when a run was killed). Test ids are pytest's node ids, relative to the directory the
tests run from: ``path::Class::name``, parameters kept; the unittest driver makes the same.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field

__all__ = [
    "PLUGIN",
    "REPORT",
    "UNITTEST_DRIVER",
    "Report",
    "parse_report",
    "record",
    "summary_text",
]

REPORT = "report.jsonl"
"""The reporters' file, beside the reporter."""
OUTCOMES = ("passed", "failed", "error", "skipped", "xfailed", "xpassed")
_RANK = {"error": 2, "failed": 1}
"""A later report of a test replaces an earlier one only when worse (a teardown error
after a pass: error)."""
MAX_LINE = 300
"""Characters of a test's first error line kept."""
MAX_LISTED = 20
"""Failing tests the summary names, at most."""

PLUGIN = r"""
import json, os

_out = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "report.jsonl"),
            "a", encoding="utf-8", buffering=1)


def _emit(**record):
    _out.write(json.dumps(record) + "\n")


def _line(report):
    try:
        if report.skipped and isinstance(report.longrepr, tuple):
            return str(report.longrepr[2])[:300]
        text = report.longreprtext
    except Exception:
        return ""
    lines = [l for l in text.splitlines() if l.strip()]
    errors = [l[1:].strip() for l in lines if l.startswith("E ")]
    return (errors or lines[-1:] or [""])[0][:300]


def pytest_collectreport(report):
    if report.failed or (report.skipped and report.nodeid.endswith(".py")):
        _emit(id=report.nodeid or ".", outcome="error" if report.failed else "skipped",
              line=_line(report))


def pytest_runtest_logstart(nodeid, location):
    _emit(started=nodeid)


def pytest_runtest_logfinish(nodeid, location):
    _emit(finished=nodeid)


def pytest_collection_finish(session):
    _emit(collected=len(session.items))


def pytest_runtest_logreport(report):
    xfail = hasattr(report, "wasxfail")
    if report.when == "call":
        outcome = {"passed": "xpassed" if xfail else "passed", "failed": "failed",
                   "skipped": "xfailed" if xfail else "skipped"}[report.outcome]
    elif report.failed:
        outcome = "error"
    elif report.skipped:
        outcome = "xfailed" if xfail else "skipped"
    else:
        return
    _emit(id=report.nodeid, outcome=outcome, line="" if outcome == "passed" else _line(report))
"""
"""The pytest plugin (``-p _artoo_outcomes``): each test's outcome as it ends."""

UNITTEST_DRIVER = r"""
import fnmatch, importlib, json, os, sys, traceback, unittest

report, spec = sys.argv[1], json.loads(sys.argv[2])
out = open(report, "a", encoding="utf-8", buffering=1)
ids = {}


def emit(**record):
    out.write(json.dumps(record) + "\n")


def first(err):
    text = "".join(traceback.format_exception_only(err[0], err[1])).strip().splitlines()
    return (text or [""])[0][:300]


class Result(unittest.TextTestResult):
    def _put(self, test, outcome, line=""):
        emit(id=ids.get(id(test), test.id()), outcome=outcome, line=line)

    def startTest(self, test):
        emit(started=ids.get(id(test), test.id())); super().startTest(test)

    def stopTest(self, test):
        super().stopTest(test); emit(finished=ids.get(id(test), test.id()))

    def addSuccess(self, test):
        super().addSuccess(test); self._put(test, "passed")

    def addFailure(self, test, err):
        super().addFailure(test, err); self._put(test, "failed", first(err))

    def addError(self, test, err):
        super().addError(test, err); self._put(test, "error", first(err))

    def addSkip(self, test, reason):
        super().addSkip(test, reason); self._put(test, "skipped", str(reason)[:300])

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err); self._put(test, "xfailed", first(err))

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test); self._put(test, "xpassed")

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:
            failed = issubclass(err[0], test.failureException)
            self._put(test, "failed" if failed else "error", first(err))


def chosen(test_id):
    return not spec["select"] or any(
        test_id == s or test_id.startswith((s + "::", s.rstrip("/") + "/"))
        or test_id.split("[")[0] == s for s in spec["select"])


def skipped_dir(parent, name):
    return (name.startswith(".") or name in SKIP or name.endswith((".egg", ".egg-info"))
            or os.path.exists(os.path.join(parent, name, "pyvenv.cfg")))


def test_files():
    for start in spec["starts"]:
        if os.path.isfile(start):
            yield os.path.normpath(start)
            continue
        for parent, dirs, names in os.walk(start):
            dirs[:] = sorted(d for d in dirs if not skipped_dir(parent, d))
            for name in sorted(names):
                if name.endswith(".py") and any(fnmatch.fnmatch(name, p) for p in spec["patterns"]):
                    yield os.path.normpath(os.path.join(parent, name))


def module_of(path):
    base, parts = os.path.dirname(os.path.abspath(path)), [os.path.basename(path)[:-3]]
    while os.path.isfile(os.path.join(base, "__init__.py")):
        parts.insert(0, os.path.basename(base))
        base = os.path.dirname(base)
    return base, ".".join(parts)


def flat(suite):
    for test in suite:
        if isinstance(test, unittest.TestSuite):
            yield from flat(test)
        else:
            yield test


SKIP = {"__pycache__", "node_modules", "build", "dist", "site-packages", "CVS", "_darcs"}
tests = unittest.TestSuite()
for path in dict.fromkeys(test_files()):
    base, name = module_of(path)
    if base not in sys.path:
        sys.path.insert(0, base)
    old = getattr(sys.modules.get(name), "__file__", None)
    if old and os.path.realpath(old) != os.path.realpath(path):
        del sys.modules[name]
    try:
        loaded = unittest.defaultTestLoader.loadTestsFromModule(importlib.import_module(name))
    except (Exception, SystemExit) as exc:
        emit(id=path, outcome="error", line=first((type(exc), exc)))
        continue
    for test in flat(loaded):
        method = getattr(test, "_testMethodName", None)
        if method is None or type(test).__name__ in ("_FailedTest", "ModuleImportFailure"):
            test_id = path + "::" + test.id().rpartition(".")[2]
        else:
            test_id = "::".join([path, *type(test).__qualname__.split("."), method])
        if chosen(test_id):
            ids[id(test)] = test_id
            tests.addTest(test)
emit(collected=tests.countTestCases())
result = unittest.TextTestRunner(stream=sys.stderr, verbosity=2, resultclass=Result).run(tests)
sys.exit(0 if result.wasSuccessful() else 1)
"""
"""The unittest driver (``python -c``, run from the tests' directory; argv: the report's
path, then ``{"starts": [file or directory, …], "patterns": [python_files, …], "select":
[test id or path, …]}``). It finds the test files as pytest does and imports each as
pytest's ``prepend`` import mode does (its first directory upward without an
``__init__.py`` put on ``sys.path``), so the ids are the ones pytest gives."""


@dataclass
class Report:
    """What a run's report file said: each test's outcome and first error line (``lines``,
    only where there is one), the number of tests collected (None: not reported), the
    test still running at its end."""

    outcomes: dict[str, str] = field(default_factory=dict)
    lines: dict[str, str] = field(default_factory=dict)
    collected: int | None = None
    running: str | None = None
    """The test that had started and not finished when the report ended (a run killed by
    its timeout: the test that hung)."""


def parse_report(text: str, prefix: str = "") -> Report:
    """The report file's lines read (a malformed line is skipped), each id given
    ``prefix`` (the tests' directory within the workspace, with its ``/``); a test
    reported twice keeps the worse outcome (error over failed over the rest)."""
    report = Report()
    for raw in text.splitlines():
        try:
            record = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(record, dict):
            continue
        if isinstance(record.get("collected"), int):
            report.collected = (report.collected or 0) + record["collected"]
            continue
        if isinstance(record.get("started"), str):
            report.running = prefix + record["started"]
            continue
        if record.get("finished") is not None:
            report.running = None
            continue
        test, outcome = record.get("id"), record.get("outcome")
        if not isinstance(test, str) or outcome not in OUTCOMES:
            continue
        test = prefix + test
        known = report.outcomes.get(test)
        if known is not None and _RANK.get(outcome, 0) <= _RANK.get(known, 0):
            continue
        report.outcomes[test] = outcome
        line = record.get("line")
        if isinstance(line, str) and line.strip():
            report.lines[test] = line.strip()[:MAX_LINE]
    return report


def summary_text(runner: str, report: Report, exit_code: int | None, error: str | None) -> str:
    """What the model is shown of a run: the counts, then each test that failed or
    errored with its first error line (:data:`MAX_LISTED` at most), then ``error``."""
    counts = Counter(report.outcomes.values())
    shown = ", ".join(_count(counts[o], o) for o in OUTCOMES if counts[o]) or "no test ran"
    code = "" if exit_code is None else f"; exit code {exit_code}"
    lines = [f"{runner}: {shown}{code}"]
    failing = [t for t, o in report.outcomes.items() if o in ("failed", "error")]
    for test in sorted(failing)[:MAX_LISTED]:
        why = report.lines.get(test, "")
        lines.append(f"{report.outcomes[test].upper()} {test}" + (f" — {why}" if why else ""))
    if len(failing) > MAX_LISTED:
        lines.append(f"… and {len(failing) - MAX_LISTED} more failing")
    if error:
        lines.append(f"no result: {error}")
    return "\n".join(lines)


def _count(n: int, outcome: str) -> str:
    return f"{n} errors" if outcome == "error" and n != 1 else f"{n} {outcome}"


def record(runner: str, report: Report, exit_code: int | None, error: str | None) -> str:
    """The ToolCall's ``content``: ``{"runner", "outcomes", "collected", "exit_code",
    "error"}`` as JSON (``collected``: the tests the runner collected, else those with an
    outcome but a module's collection error, whose id holds no ``::``)."""
    collected = report.collected
    if collected is None:
        collected = sum(1 for t in report.outcomes if "::" in t)
    return json.dumps(
        {
            "runner": runner,
            "outcomes": report.outcomes,
            "collected": collected,
            "exit_code": exit_code,
            "error": error,
        },
        ensure_ascii=False,
    )
