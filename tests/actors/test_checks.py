"""Deterministic criterion checks: every kind passing and failing, with evidence."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from artoo.actors.verification.checks import (
    VOCABULARY,
    CheckResult,
    evaluate,
    judge_observed,
    reads_workspace,
)
from artoo.schemas import Check


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "report.json").write_text(
        json.dumps({"summary": {"files": 12, "ok": True}, "items": ["a", "b", "c"]})
    )
    (tmp_path / "broken.json").write_text("{not json")
    (tmp_path / "hello.txt").write_text("hello\n")
    return tmp_path


def run(
    ws: Path,
    kind: str,
    *,
    path: str = "",
    value: Any = None,
    output: str = "",
    exit_code: int | None = 0,
) -> CheckResult:
    """The check's result, with what it read of the workspace set aside — after checking
    that the decision recomputed from that alone (as ``artoo replay --verify`` does from
    the log) is the same one."""
    check = Check(kind=kind, path=path, value=value)
    result = evaluate(check, output=output, exit_code=exit_code, workspace=ws)
    if reads_workspace(check):
        assert result.observed, "a check that reads the workspace says what it read"
        assert judge_observed(check, output=output, observed=result.observed) == result
        # the log holds it as JSON: what comes back decides the same
        logged = msgspec.json.decode(msgspec.json.encode(result.observed))
        assert judge_observed(check, output=output, observed=logged) == result
    else:
        assert result.observed == {}
    return msgspec.structs.replace(result, observed={})


# --------------------------------------------------------------------------- exit_code
def test_exit_code(ws: Path) -> None:
    assert run(ws, "exit_code", exit_code=0) == CheckResult(
        passed=True, evidence="exit code 0, as expected"
    )
    assert run(ws, "exit_code", value=2, exit_code=2).passed
    assert run(ws, "exit_code", value="1", exit_code=1).passed
    assert run(ws, "exit_code", exit_code=1) == CheckResult(
        passed=False, evidence="exit code 1, expected 0", failure_class="logical"
    )
    missing = run(ws, "exit_code", exit_code=None)
    assert not missing.passed and "no exit code" in missing.evidence


# --------------------------------------------------------------------------- file_exists
def test_file_exists(ws: Path) -> None:
    assert run(ws, "file_exists", path="hello.txt") == CheckResult(
        passed=True, evidence="'hello.txt' exists (6 bytes)"
    )
    assert run(ws, "file_exists", path="out") == CheckResult(
        passed=True, evidence="'out' exists (a directory)"
    )
    assert run(ws, "file_exists", path=str(ws / "hello.txt")).passed
    assert run(ws, "file_exists", path="nope.txt") == CheckResult(
        passed=False, evidence="'nope.txt' does not exist", failure_class="environmental"
    )


def test_file_must_not_exist(ws: Path) -> None:
    assert run(ws, "file_exists", path="gone.txt", value=False).passed
    assert run(ws, "file_exists", path="hello.txt", value=False) == CheckResult(
        passed=False, evidence="'hello.txt' exists (6 bytes)", failure_class="logical"
    )


# --------------------------------------------------------------------------- output_contains
def test_output_contains(ws: Path) -> None:
    hit = run(ws, "output_contains", value="42 files", output="found 42 files in src")
    assert hit.passed
    assert hit.evidence == "found '42 files' at character 6: 'found 42 files in src'"
    miss = run(ws, "output_contains", value="43 files", output="found 42 files in src")
    assert miss == CheckResult(
        passed=False,
        evidence="'43 files' not in the output (21 chars, ending 'found 42 files in src')",
        failure_class="logical",
    )
    assert run(ws, "output_contains", value=42, output="answer: 42").passed
    assert "the output is empty" in run(ws, "output_contains", value="x", output="").evidence


# --------------------------------------------------------------------------- output_matches
def test_output_matches(ws: Path) -> None:
    hit = run(ws, "output_matches", value=r"^\d+ passed", output="collected\n12 passed in 1s")
    assert hit == CheckResult(
        passed=True, evidence=r"/^\d+ passed/ matched '12 passed' at character 10"
    )
    miss = run(ws, "output_matches", value=r"^\d+ passed$", output="3 failed")
    assert not miss.passed and miss.failure_class == "logical"
    assert miss.evidence.startswith(r"no match for /^\d+ passed$/ in the output")


# --------------------------------------------------------------------------- json_path_equals
def test_json_path_into_the_output(ws: Path) -> None:
    output = '{"a": {"b": [10, 20, {"c": "deep"}]}, "flag": true, "none": null}'
    assert run(ws, "json_path_equals", path="$.a.b[1]", value=20, output=output) == CheckResult(
        passed=True, evidence="$.a.b[1] in the output is 20"
    )
    assert run(ws, "json_path_equals", path="$.a.b[-1].c", value="deep", output=output).passed
    assert run(ws, "json_path_equals", path="$['a'][\"b\"][0]", value=10, output=output).passed
    assert run(ws, "json_path_equals", path="$.flag", value=True, output=output).passed
    assert run(ws, "json_path_equals", path="$.none", output=output).passed
    assert run(
        ws, "json_path_equals", path="$.a.b", value='[10, 20, {"c": "deep"}]', output=output
    ).passed
    wrong = run(ws, "json_path_equals", path="$.a.b[0]", value=11, output=output)
    assert wrong == CheckResult(
        passed=False, evidence="$.a.b[0] in the output is 10, expected 11", failure_class="logical"
    )


def test_json_values_compare_with_their_types(ws: Path) -> None:
    output = '{"one": 1, "yes": true, "text": "1"}'
    assert not run(ws, "json_path_equals", path="$.one", value=True, output=output).passed
    assert not run(ws, "json_path_equals", path="$.yes", value=1, output=output).passed
    assert not run(ws, "json_path_equals", path="$.text", value=1, output=output).passed
    assert run(ws, "json_path_equals", path="$.one", value=1.0, output=output).passed


def test_json_path_finds_json_inside_prose_or_a_fence(ws: Path) -> None:
    prose = 'Here is the result: {"count": 3} — done.'
    fenced = 'Result:\n```json\n{"count": 3}\n```\n'
    for output in (prose, fenced):
        assert run(ws, "json_path_equals", path="$.count", value=3, output=output).passed


def test_json_path_into_a_workspace_file(ws: Path) -> None:
    check = run(ws, "json_path_equals", path="out/report.json:$.summary.files", value=12)
    assert check == CheckResult(passed=True, evidence="$.summary.files in 'out/report.json' is 12")
    assert run(ws, "json_path_equals", path="out/report.json:$.items[2]", value="c").passed


def test_json_path_failures_are_classified(ws: Path) -> None:
    not_json = run(ws, "json_path_equals", path="$.a", value=1, output="plain words")
    assert not_json.failure_class == "environmental"
    assert not_json.evidence.startswith("the output is not JSON")
    missing = run(ws, "json_path_equals", path="missing.json:$.a", value=1)
    assert missing == CheckResult(
        passed=False, evidence="'missing.json' does not exist", failure_class="environmental"
    )
    broken = run(ws, "json_path_equals", path="broken.json:$.a", value=1)
    assert broken.failure_class == "environmental"
    assert broken.evidence.startswith("'broken.json' is not valid JSON")
    no_key = run(ws, "json_path_equals", path="$.a.x", value=1, output='{"a": {"b": 1}}')
    assert no_key == CheckResult(
        passed=False, evidence="no key 'x' at $.a in the output", failure_class="logical"
    )
    out_of_range = run(ws, "json_path_equals", path="$[5]", value=1, output="[1, 2]")
    assert out_of_range.evidence == "no index 5 at $ (length 2) in the output"


# --------------------------------------------------------------------------- count_equals
@pytest.mark.parametrize(
    ("output", "mode", "expected", "passed", "evidence"),
    [
        ("a.py\nb.py\n\nc.py\n", "", 3, True, "non-empty lines counted: 3, as expected"),
        ("a.py\nb.py\n", "", 3, False, "non-empty lines counted: 2, expected 3"),
        ("42\n", "", 42, True, "the output states 42, as expected"),
        ("  17 total\n", "", 17, True, "the output states 17, as expected"),
        ("7 files\n", "lines", 1, True, "non-empty lines counted: 1, as expected"),
        ("There are\n12 python files", "number", 12, True, "the output states 12, as expected"),
        ("found 5", "number", 6, False, "the output states 5, expected 6"),
    ],
)
def test_count_equals(
    ws: Path, output: str, mode: str, expected: int, passed: bool, evidence: str
) -> None:
    result = run(ws, "count_equals", path=mode, value=expected, output=output)
    assert (result.passed, result.evidence) == (passed, evidence)
    assert result.failure_class == (None if passed else "logical")


def test_count_equals_without_a_number(ws: Path) -> None:
    result = run(ws, "count_equals", path="number", value=1, output="none here")
    assert not result.passed and result.evidence.startswith("the output states no number")


# --------------------------------------------------------------------------- malformed checks
@pytest.mark.parametrize(
    ("kind", "path", "value", "message"),
    [
        ("exit_status", "", 0, "unknown check kind 'exit_status'"),
        ("output_matches", "", "([unclosed", "bad regular expression"),
        ("output_matches", "", None, "non-empty regular expression"),
        ("output_contains", "", None, "non-empty text"),
        ("json_path_equals", "a.b", 1, "must be '$…' or 'file.json:$…'"),
        ("json_path_equals", "$.a..b", 1, "cannot read"),
        ("count_equals", "", "many", "value must be an integer"),
        ("count_equals", "words", 1, "path must be"),
        ("exit_code", "", True, "value must be an integer"),
        ("file_exists", "", None, "path is empty"),
        ("file_exists", "../elsewhere", None, "outside the workspace"),
        ("file_exists", "x", "yes", "value must be true or false"),
    ],
)
def test_malformed_checks_raise(ws: Path, kind: str, path: str, value: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("$", r"\$").replace("(", r"\(")):
        run(ws, kind, path=path, value=value, output="{}")


def test_unknown_kind_lists_the_vocabulary(ws: Path) -> None:
    with pytest.raises(ValueError) as info:
        run(ws, "vibes")
    for kind in VOCABULARY:
        assert kind in str(info.value)
    assert set(VOCABULARY) == {
        "exit_code",
        "file_exists",
        "file_contains",
        "file_matches",
        "output_contains",
        "output_matches",
        "json_path_equals",
        "count_equals",
        "count_matches",
    }


# --------------------------------------------------------------------------- properties
_PROPS = settings(max_examples=80, suppress_health_check=[HealthCheck.function_scoped_fixture])


@_PROPS
@given(output=st.text(max_size=200), needle=st.text(min_size=1, max_size=10))
def test_output_contains_passes_exactly_when_the_text_occurs(
    ws: Path, output: str, needle: str
) -> None:
    result = run(ws, "output_contains", value=needle, output=output)
    assert result.passed == (needle in output)
    assert result.failure_class == (None if result.passed else "logical")


@_PROPS
@given(
    lines=st.lists(st.from_regex(r"[a-z_]{1,12}\.py", fullmatch=True), min_size=2, max_size=30),
    blanks=st.integers(0, 5),
)
def test_count_equals_counts_non_empty_lines(ws: Path, lines: list[str], blanks: int) -> None:
    output = "\n".join(lines) + "\n" * blanks
    assert run(ws, "count_equals", value=len(lines), output=output).passed
    assert not run(ws, "count_equals", value=len(lines) + 1, output=output).passed


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.text(st.characters(whitelist_categories=["Ll", "Lu", "Nd"]), min_size=1, max_size=6),
            inner,
            max_size=4,
        )
    ),
    max_leaves=12,
)


@_PROPS
@given(document=_JSON, data=st.data())
def test_json_path_reads_back_any_value_it_points_at(
    ws: Path, document: Any, data: st.DataObject
) -> None:
    path, node = "$", document
    while isinstance(node, dict | list) and node and data.draw(st.booleans()):
        if isinstance(node, dict):
            key = data.draw(st.sampled_from(sorted(node)))
            path, node = f"{path}['{key}']", node[key]
        else:
            index = data.draw(st.integers(0, len(node) - 1))
            path, node = f"{path}[{index}]", node[index]
    if isinstance(node, dict | list):
        return  # Check.value holds scalars; containers are compared as JSON text elsewhere
    result = run(ws, "json_path_equals", path=path, value=node, output=json.dumps(document))
    assert result.passed, (path, result.evidence)


def test_a_catastrophic_pattern_runs_in_linear_time(tmp_path: Path) -> None:
    # (a+)+$ on 64 a's and a '!' would take Python's backtracking engine ~2^64 steps
    check = Check(kind="output_matches", value="(a+)+$")
    result = evaluate(check, output="a" * 64 + "!", exit_code=None, workspace=tmp_path)
    assert not result.passed
    assert evaluate(check, output="a" * 100_000, exit_code=None, workspace=tmp_path).passed


def test_a_pattern_outside_re2_is_an_invalid_check(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="bad regular expression"):
        evaluate(
            Check(kind="output_matches", value=r"(a)\1"),
            output="aa",
            exit_code=None,
            workspace=tmp_path,
        )


def test_a_check_never_reads_through_a_symlink_out(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    secret = tmp_path / "secret.json"
    secret.write_text('{"token": "the outside secret"}')
    (ws / "link.json").symlink_to(secret)
    (ws / "dir").symlink_to(tmp_path)
    for path in ("link.json:$.token", "dir/secret.json:$.token"):
        check = Check(kind="json_path_equals", path=path, value="the outside secret")
        result = evaluate(check, output="", exit_code=None, workspace=ws)
        assert not result.passed and "the outside secret" not in result.evidence
    exists = evaluate(
        Check(kind="file_exists", path="link.json"), output="", exit_code=None, workspace=ws
    )
    assert "not followed" in exists.evidence and "bytes" not in exists.evidence
