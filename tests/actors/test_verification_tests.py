"""Comparing two runs of the workspace's tests (``actors.verification._tests``, pure):
worked examples and properties."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from artoo.actors.verification._tests import (
    OUTCOMES,
    matching,
    not_passing,
    outcomes_of,
    regressions,
    summary,
)
from artoo.schemas import ToolCall

BEFORE = {
    "tests/test_calc.py::test_add": "passed",
    "tests/test_calc.py::test_div": "failed",
    "tests/test_calc.py::test_neg[1]": "passed",
    "tests/test_calc.py::test_neg[2]": "passed",
    "tests/test_calc.py::TestParse::test_empty": "passed",
    "tests/test_io.py::test_read": "passed",
    "tests/test_io.py::test_slow": "skipped",
}


def _call(record: object, **kwargs: Any) -> ToolCall:
    content = record if isinstance(record, str) else json.dumps(record)
    return ToolCall(tool="run_tests", content=content, **kwargs)


def _record(outcomes: dict[str, str], error: str | None = None) -> dict[str, object]:
    return {
        "runner": "pytest",
        "outcomes": outcomes,
        "collected": len(outcomes),
        "exit_code": 1,
        "error": error,
    }


# --------------------------------------------------------------------------- outcomes_of
def test_outcomes_are_read_from_a_run_tests_record() -> None:
    assert outcomes_of(_call(_record(BEFORE))) == BEFORE
    assert outcomes_of(_call(_record({}))) == {}


def test_a_call_that_gave_no_result_has_no_outcomes() -> None:
    assert outcomes_of(_call(_record({}, error="timed out after 120 s"), ok=False)) is None
    assert outcomes_of(_call(_record(BEFORE, error="exit code 4: usage"))) is None
    assert outcomes_of(_call(_record(BEFORE), refusal="blocked_target")) is None
    assert outcomes_of(ToolCall(tool="shell", content=json.dumps(_record(BEFORE)))) is None
    assert outcomes_of(ToolCall(tool="run_tests")) is None
    assert outcomes_of(_call("not json")) is None
    assert outcomes_of(_call([1, 2])) is None
    assert outcomes_of(_call({**_record({}), "outcomes": ["a"]})) is None
    assert outcomes_of(_call(_record({"t.py::x": "wobbly"}))) is None


# --------------------------------------------------------------------------- regressions
def test_a_test_that_passed_and_now_fails_errors_skips_or_vanished_is_a_regression() -> None:
    after = {
        **BEFORE,
        "tests/test_calc.py::test_add": "failed",
        "tests/test_calc.py::test_neg[2]": "error",
        "tests/test_calc.py::TestParse::test_empty": "skipped",
        "tests/test_calc.py::test_div": "passed",  # fixed: no regression
    }
    del after["tests/test_io.py::test_read"]
    assert regressions(BEFORE, after) == [
        "tests/test_calc.py::TestParse::test_empty",
        "tests/test_calc.py::test_add",
        "tests/test_calc.py::test_neg[2]",
        "tests/test_io.py::test_read",
    ]


def test_a_module_that_no_longer_imports_regresses_each_of_its_tests() -> None:
    after = {t: o for t, o in BEFORE.items() if not t.startswith("tests/test_io.py")}
    after["tests/test_io.py"] = "error"
    assert regressions(BEFORE, after) == ["tests/test_io.py::test_read"]


def test_a_test_that_did_not_pass_before_is_no_regression() -> None:
    after = {**BEFORE, "tests/test_io.py::test_slow": "failed"}
    del after["tests/test_calc.py::test_div"]
    assert regressions(BEFORE, after) == []


# --------------------------------------------------------------------------- not_passing
AFTER = {
    **BEFORE,
    "tests/test_calc.py::test_div": "passed",
    "tests/test_calc.py::test_neg[2]": "failed",
    "tests/unit/test_calc.py::test_add": "failed",
    "tests/test_broken.py": "error",
}


def test_a_named_test_passes_by_its_id_its_file_suffix_or_its_bare_name() -> None:
    names = [
        "tests/test_calc.py::test_div",
        "test_calc.py::TestParse::test_empty",
        "TestParse::test_empty",
        "TestParse.test_empty",
        "test_div",
        "tests/test_calc.py::test_neg[1]",
        "test_io.py",
        "./tests/test_io.py::test_read",
    ]
    assert not_passing(AFTER, names) == []


def test_a_named_test_that_fails_is_missing_or_is_ambiguous_with_a_failure_does_not_pass() -> None:
    names = [
        "tests/test_calc.py::test_neg",  # every case named: [2] failed
        "test_neg",
        "tests/test_calc.py",  # a file with a failing test
        "test_calc.py::test_add",  # also tests/unit/test_calc.py::test_add, which failed
        "tests/test_broken.py",  # does not import
        "test_missing",  # no such test
        "tests/test_io.py::test_slow",  # skipped: not passed
        "",
    ]
    assert not_passing(AFTER, names) == names
    assert not_passing(AFTER, ["tests/test_calc.py::test_add"]) == []  # the exact id


def test_a_folder_names_its_tests_and_names_are_reported_once() -> None:
    assert matching(AFTER, "tests/unit") == ["tests/unit/test_calc.py::test_add"]
    assert matching(AFTER, "unit/") == ["tests/unit/test_calc.py::test_add"]
    assert not_passing(AFTER, ["tests/unit", "tests/unit", "tests/test_io.py"]) == ["tests/unit"]
    assert matching(AFTER, "test_neg[2]") == ["tests/test_calc.py::test_neg[2]"]


# --------------------------------------------------------------------------- summary
def test_the_summary_counts_both_runs_and_names_what_changed() -> None:
    after = {**BEFORE, "tests/test_calc.py::test_add": "failed"}
    del after["tests/test_io.py::test_read"]
    after["tests/test_calc.py::test_div"] = "passed"
    assert summary(BEFORE, after) == (
        "tests before: 5 passed, 1 failed, 1 skipped; after: 4 passed, 1 failed, 1 skipped; "
        "2 regressions: tests/test_calc.py::test_add (failed), tests/test_io.py::test_read "
        "(vanished); 1 newly passing: tests/test_calc.py::test_div"
    )
    assert summary(BEFORE, BEFORE) == (
        "tests before: 5 passed, 1 failed, 1 skipped; after: 5 passed, 1 failed, 1 skipped; "
        "no regression"
    )
    many = {f"t.py::test_{i}": "passed" for i in range(5)}
    assert summary(many, {}) == (
        "tests before: 5 passed; after: no tests; 5 regressions: t.py::test_0 (vanished), "
        "t.py::test_1 (vanished), t.py::test_2 (vanished) (+2 more)"
    )


# --------------------------------------------------------------------------- properties
ids = st.builds(
    lambda f, n, p: f"tests/test_{f}.py::test_{n}" + (f"[{p}]" if p is not None else ""),
    st.sampled_from("abc"),
    st.sampled_from("xyz"),
    st.none() | st.integers(0, 2),
)
runs = st.dictionaries(ids, st.sampled_from(OUTCOMES), max_size=12)


@given(runs)
def test_a_run_compared_with_itself_has_no_regression(run: dict[str, str]) -> None:
    assert regressions(run, run) == []
    assert summary(run, run).endswith("no regression")


@given(runs, runs, st.sets(ids))
def test_more_failures_after_never_remove_a_regression(
    before: dict[str, str], after: dict[str, str], failing: set[str]
) -> None:
    worse = {**after, **dict.fromkeys(failing, "failed")}
    assert set(regressions(before, after)) <= set(regressions(before, worse))


@given(runs, runs)
def test_regressions_are_the_tests_that_passed_and_no_longer_pass(
    before: dict[str, str], after: dict[str, str]
) -> None:
    found = regressions(before, after)
    assert found == sorted(found)
    assert all(before[t] == "passed" and after.get(t) != "passed" for t in found)
    assert not (set(regressions(before, after)) & {t for t, o in after.items() if o == "passed"})


@given(runs)
def test_every_passing_test_named_by_its_id_passes_and_every_failing_one_does_not(
    after: dict[str, str],
) -> None:
    passed = [t for t, o in after.items() if o == "passed"]
    failing = [t for t, o in after.items() if o in ("failed", "error")]
    assert not_passing(after, passed) == []
    assert not_passing(after, failing) == failing


@given(runs, st.lists(st.sampled_from(["test_x", "test_a.py", "tests", "test_b.py::test_y"])))
def test_a_name_passes_only_when_a_test_it_names_passed_and_none_failed(
    after: dict[str, str], names: list[str]
) -> None:
    failing = set(not_passing(after, names))
    for name in names:
        got = {after[t] for t in matching(after, name)}
        assert (name in failing) == ("passed" not in got or bool(got & {"failed", "error"}))
