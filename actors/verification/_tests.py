"""A change proven by the workspace's tests (pure): the outcomes a ``run_tests`` call
recorded, the tests a change broke, the tests a request names that do not pass.

Test ids are ``path::Class::name`` (``path::name`` for a function, parameters kept:
``path::name[1-2]``); a module that could not be collected is its ``path`` alone, with
the outcome ``error``. Outcomes: ``passed``, ``failed``, ``error``, ``skipped``,
``xfailed``, ``xpassed`` (``actors.tools._testrun`` writes them).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping

from artoo.schemas import ToolCall

__all__ = ["OUTCOMES", "matching", "not_passing", "outcomes_of", "regressions", "summary"]

OUTCOMES = ("passed", "failed", "error", "skipped", "xfailed", "xpassed")
"""Every outcome a test may have, in the order :func:`summary` counts them."""
_FAILING = frozenset({"failed", "error"})
_SHOWN = 3
"""Tests :func:`summary` names in a list, at most."""


def outcomes_of(call: ToolCall) -> dict[str, str] | None:
    """The outcome of each test, by id, that the ``run_tests`` call recorded; None when
    the call is no ``run_tests`` call, was refused or failed (``ok`` false: no result, a
    timeout), or its ``content`` is not the record (``{"runner", "outcomes", "collected",
    "exit_code", "error"}`` with ``error`` null and every outcome one of
    :data:`OUTCOMES`). ``{}``: the run collected no test."""
    if call.tool != "run_tests" or not call.ok or call.refusal is not None or not call.content:
        return None
    try:
        record = json.loads(call.content)
    except ValueError:
        return None
    if not isinstance(record, dict) or record.get("error") is not None:
        return None
    outcomes = record.get("outcomes")
    if not isinstance(outcomes, dict):
        return None
    if not all(isinstance(k, str) and v in OUTCOMES for k, v in outcomes.items()):
        return None
    return dict(outcomes)


def regressions(before: Mapping[str, str], after: Mapping[str, str]) -> list[str]:
    """Every test that passed ``before`` and does not pass ``after`` — failed, error,
    skipped, xfailed, or vanished (absent after: its module no longer collects, it was
    removed or renamed) — sorted. Both runs must be of the whole suite."""
    return sorted(t for t, o in before.items() if o == "passed" and after.get(t) != "passed")


def matching(outcomes: Mapping[str, str], name: str) -> list[str]:
    """The test ids of ``outcomes`` that ``name`` names, sorted: the id itself when there
    is one; else, for a path (ends ``.py`` or holds ``/``, no ``::``) every test of that
    file or directory, matched on whole path components (``test_x.py`` names
    ``tests/test_x.py``); else every id that ends with ``name`` after a ``/`` or ``::``
    (``test_x.py::test_y``, ``TestA::test_y``, a bare ``test_y``; ``TestA.test_y`` is read
    as ``TestA::test_y``), a name without parameters naming every parametrized case."""
    name = name.strip().removeprefix("./")
    if not name:
        return []
    if name in outcomes:
        return [name]
    if "::" not in name and (name.endswith(".py") or "/" in name):
        directory = f"/{name.strip('/')}/"
        return sorted(t for t in outcomes if directory in f"/{t.split('::', 1)[0]}/")
    if "::" not in name and "." in name and "[" not in name:
        name = name.replace(".", "::")
    found = []
    for test in outcomes:
        forms = (test,) if "[" in name else (test, test.split("[", 1)[0])
        if any(f == name or f.endswith(("/" + name, "::" + name)) for f in forms):
            found.append(test)
    return sorted(found)


def not_passing(after: Mapping[str, str], names: Iterable[str]) -> list[str]:
    """Each of ``names`` (a test id, a ``file::name`` suffix, a bare test function name, a
    test file or directory path: :func:`matching`) that does not pass ``after``, in the
    order given, once: one that names no passed test, or names a test that failed or
    errored (a file passes when one of its tests passed and none failed; a skipped or
    xfailed test neither passes nor fails it)."""
    out: list[str] = []
    for name in names:
        if name in out:
            continue
        tests = matching(after, name)
        got = {after[t] for t in tests}
        if "passed" not in got or got & _FAILING:
            out.append(name)
    return out


def summary(before: Mapping[str, str], after: Mapping[str, str]) -> str:
    """One line: the counts before and after, the regressions (:func:`regressions`, each
    with what became of it) and the tests newly passing, a few named."""
    broken = regressions(before, after)
    fixed = sorted(t for t, o in after.items() if o == "passed" and before.get(t) != "passed")
    line = f"tests before: {_counts(before)}; after: {_counts(after)}; "
    if broken:
        shown = [f"{t} ({after.get(t, 'vanished')})" for t in broken]
        line += f"{len(broken)} regression{'s' if len(broken) > 1 else ''}: {_some(shown)}"
    else:
        line += "no regression"
    if fixed:
        line += f"; {len(fixed)} newly passing: {_some(fixed)}"
    return line


def _counts(outcomes: Mapping[str, str]) -> str:
    if not outcomes:
        return "no tests"
    counts = Counter(outcomes.values())
    return ", ".join(f"{counts[o]} {o}" for o in OUTCOMES if counts[o])


def _some(items: list[str]) -> str:
    more = len(items) - _SHOWN
    return ", ".join(items[:_SHOWN]) + (f" (+{more} more)" if more > 0 else "")
