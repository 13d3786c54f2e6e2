"""The checks code writes from a reading (``verification.checks``): worked examples over
workspaces of the tests' own, each decided from what it read, and the same decision
recomputed from what it logged (``judge_observed``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from artoo.actors.verification.checks import computed, evaluate, judge_observed
from artoo.actors.verification.derive import EVALUATED
from artoo.schemas import Check, FileEffect, Target, ToolCall


def _ws(tmp_path: Path, files: dict[str, str]) -> Path:
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    return tmp_path


def _decide(check: Check, output: str, ws: Path, calls=(), targets=()):  # type: ignore[no-untyped-def]
    first = evaluate(check, output=output, calls=calls, workspace=ws, targets=targets)
    again = judge_observed(
        check, output=output, calls=calls, observed=first.observed, targets=targets
    )
    assert (again.passed, again.evidence) == (first.passed, first.evidence)  # replayable
    return first


SETUP = "[metadata]\nname = demo\nversion = 10.5.0\n\n[flake8]\nmax-line-length = 99\n"


def test_value_at_reads_the_key_by_the_files_parser(tmp_path: Path) -> None:
    ws = _ws(tmp_path, {"setup.cfg": SETUP})
    check = Check(kind="value_at", path="setup.cfg", key="flake8.max-line-length", shape="number")
    ok = _decide(check, "flake8 allows 99 characters.", ws)
    assert ok.passed and computed(check, ok.observed)
    bad = _decide(check, "It is 88.", ws)
    assert not bad.passed and "99" not in bad.evidence  # code's value is never told


def test_a_version_read_as_a_name_is_still_compared_as_the_value_the_file_holds(
    tmp_path: Path,
) -> None:
    ws = _ws(tmp_path, {"setup.cfg": SETUP})
    check = Check(kind="value_at", path="setup.cfg", key="metadata.version", shape="name")
    assert _decide(check, "The current version is 10.5.0.", ws).passed
    assert not _decide(check, "The current version is 10.5.", ws).passed


def test_a_key_that_is_not_there_or_names_several_values_derives_nothing(tmp_path: Path) -> None:
    ws = _ws(tmp_path, {"a.toml": '[x]\nname = "p"\n[y]\nname = "q"\n'})
    missing = _decide(Check(kind="value_at", path="a.toml", key="nope"), "p", ws)
    several = _decide(Check(kind="value_at", path="a.toml", key="name"), "p", ws)
    for result in (missing, several):
        assert result.passed and "derives nothing" in result.evidence
    assert not computed(Check(kind="value_at", path="a.toml", key="name"), several.observed)


def test_answered_traces_a_value_to_a_tool_result(tmp_path: Path) -> None:
    shown = ToolCall(tool="read_file", args={"path": "setup.cfg"}, content=SETUP)
    failed = ToolCall(tool="shell", args={"command": "x"}, ok=False, stdout="42\n", exit_code=1)
    check = Check(kind="answered", shape="number")
    assert _decide(check, "It is 99.", tmp_path, [shown]).passed
    assert not _decide(check, "It is 42.", tmp_path, [failed]).passed  # a failed call shows nothing
    assert not _decide(check, "No idea.", tmp_path, [shown]).passed
    listing = ToolCall(tool="glob", args={"pattern": "*.py"}, content="a.py\nb.py\nc.py")
    assert _decide(check, "There are 3 files.", tmp_path, [listing]).passed  # its length
    text = _decide(Check(kind="answered", shape="text"), "anything", tmp_path)
    assert text.passed and "free-text" in text.evidence


def test_a_list_answer_is_traced_by_the_items_a_tool_result_shows(tmp_path: Path) -> None:
    grep = ToolCall(tool="shell", args={"command": "grep -l x"}, stdout="pkg/a.py\npkg/b.py\n")
    check = Check(kind="answered", shape="list")
    assert _decide(check, "- pkg/a.py\n- pkg/b.py", tmp_path, [grep]).passed
    assert not _decide(check, "- pkg/z.py", tmp_path, [grep]).passed


def test_count_matches_is_code_counting(tmp_path: Path) -> None:
    ws = _ws(tmp_path, {"notes.txt": "TODO a\nb\nTODO c\n"})
    lines = Check(kind="count_matches", path="notes.txt", value="lines")
    todo = Check(kind="count_matches", path="notes.txt", value="lines containing TODO")
    assert _decide(lines, "3 lines", ws).passed
    assert _decide(todo, "Es gibt 2.", ws).passed
    wrong = _decide(todo, "There are 3.", ws)
    assert not wrong.passed and "3" in wrong.evidence and "2 " not in wrong.evidence


def _evaluation(call: str, printed: dict[str, str]) -> ToolCall:
    from artoo.actors.verification.derive import evaluation_command

    return ToolCall(
        tool="shell",
        args={"command": evaluation_command(".", "m", call)},
        stdout=EVALUATED + json.dumps(printed) + "\n",
        by="code",
    )


def test_evaluates_reads_codes_own_run_of_the_call(tmp_path: Path) -> None:
    check = Check(kind="evaluates", path="m.py", value="f(2)", shape="number")
    ran = _evaluation("f(2)", {"repr": "4", "str": "4", "printed": ""})
    assert _decide(check, "f(2) returns 4.", tmp_path, [ran]).passed
    assert not _decide(check, "f(2) returns 5.", tmp_path, [ran]).passed
    model_made = ToolCall(tool="shell", args=ran.args, stdout=ran.stdout)  # not code's: no run
    nothing = _decide(check, "f(2) returns 5.", tmp_path, [model_made])
    assert nothing.passed and not computed(check, nothing.observed)
    raised = _evaluation("f(2)", {"raised": "ZeroDivisionError: division by zero", "printed": ""})
    assert _decide(check, "It raises ZeroDivisionError.", tmp_path, [raised]).passed


def _write(path: str, change: str = "modified", diff: str | None = None) -> ToolCall:
    effect = FileEffect(path=path, change=change, diff=diff)  # type: ignore[arg-type]
    return ToolCall(tool="write_file", args={"path": path}, effects=(effect,))


def test_changed_needs_an_applied_effect_on_a_target(tmp_path: Path) -> None:
    targets = [Target(path="a.txt", role="write"), Target(path="out/", role="create")]
    check = Check(kind="changed")
    assert _decide(check, "", tmp_path, [_write("a.txt")], targets).passed
    assert _decide(check, "", tmp_path, [_write("out/x.txt", "created")], targets).passed
    assert not _decide(check, "Done.", tmp_path, [], targets).passed  # a claimed change
    refused = ToolCall(
        tool="write_file", ok=False, refusal="law1_denied", effects=_write("a.txt").effects
    )
    assert not _decide(check, "Done.", tmp_path, [refused], targets).passed
    assert not _decide(check, "", tmp_path, [_write("b.txt")], targets).passed


def test_parses_and_reads_back_by_the_files_format(tmp_path: Path) -> None:
    ws = _ws(tmp_path, {"p.toml": "[tool.black]\nline-length = 100\n", "bad.toml": "x = ["})
    assert _decide(Check(kind="parses", path="p.toml"), "", ws).passed
    broken = _decide(Check(kind="parses", path="bad.toml"), "", ws)
    assert not broken.passed and "no longer parses" in broken.evidence
    at_key = Check(kind="reads_back", path="p.toml", key="line-length", value="100")
    assert _decide(at_key, "", ws).passed
    assert not _decide(
        Check(kind="reads_back", path="p.toml", key="line-length", value="101"), "", ws
    ).passed
    # the request's old value: it was in a removed line and is gone
    old = Check(kind="reads_back", path="p.toml", value="88")
    calls = [_write("p.toml", diff="-line-length = 88\n+line-length = 100")]
    assert _decide(old, "", ws, calls).passed


def _tests_run(outcomes: dict[str, str]) -> ToolCall:
    content = json.dumps(
        {
            "runner": "pytest",
            "outcomes": outcomes,
            "collected": len(outcomes),
            "exit_code": 0,
            "error": None,
        }
    )
    return ToolCall(tool="run_tests", content=content, by="code")


@pytest.mark.parametrize(
    ("before", "after", "named", "passes"),
    [
        ({"t::a": "failed", "t::b": "passed"}, {"t::a": "passed", "t::b": "passed"}, "t::a", True),
        ({"t::a": "failed", "t::b": "passed"}, {"t::a": "passed", "t::b": "failed"}, "t::a", False),
        ({"t::a": "failed"}, {"t::a": "failed"}, "t::a", False),
        ({"t::b": "passed"}, {"t::b": "passed"}, "", True),
    ],
)
def test_tests_compares_the_runs_code_made_around_the_change(
    tmp_path: Path, before: dict[str, str], after: dict[str, str], named: str, passes: bool
) -> None:
    calls = [_tests_run(before), _write("m.py"), _tests_run(after)]
    assert _decide(Check(kind="tests", value=named), "", tmp_path, calls).passed is passes
    unrun = _decide(Check(kind="tests", value=named), "", tmp_path, calls[:2])
    assert not unrun.passed and "not run after" in unrun.evidence


def test_a_call_is_traced_to_the_module_python_imports_its_first_name_from(
    tmp_path: Path,
) -> None:
    from artoo.actors.roles.planner import with_evaluation
    from artoo.actors.verification.derive import call_root, module_of_name
    from artoo.schemas import Criterion, SubTask

    assert call_root("pkg.mod.f(1)") == "pkg"
    assert call_root("f(g(2))[0]") is None  # a subscript of a call is not a call
    assert call_root("f(1).strip()") == "f"
    assert call_root("not a call") is None and call_root("1 +") is None
    ws = _ws(tmp_path, {"src/pkg/__init__.py": "def f(x):\n    return x * 2\n"})
    assert module_of_name("pkg", lambda p: (ws / p).is_file()) == "src/pkg/__init__.py"
    assert module_of_name("nowhere", lambda p: (ws / p).is_file()) is None
    check = Check(kind="evaluates", path="", value="pkg.f(2)", shape="number")
    sub = SubTask(subtask_id="s", criteria=[Criterion(id="c", text="", check=check)])
    (planned,) = with_evaluation([sub], ws)
    assert len(planned.commands) == 1 and "pkg.f(2)" in planned.commands[0]
    unknown = Check(kind="evaluates", path="", value="elsewhere.f(2)", shape="number")
    sub = SubTask(subtask_id="s", criteria=[Criterion(id="c", text="", check=unknown)])
    assert with_evaluation([sub], ws)[0].commands == []  # nothing found: nothing run
    import subprocess

    from artoo.actors.verification.derive import evaluation_of

    ran = subprocess.run(
        planned.commands[0], shell=True, cwd=ws, capture_output=True, text=True, timeout=60
    )
    call = ToolCall(
        tool="shell", args={"command": planned.commands[0]}, stdout=ran.stdout, by="code"
    )
    assert evaluation_of([call], "pkg.f(2)") == {"repr": "4", "str": "4", "printed": ""}


def test_a_list_echoed_for_a_count_is_not_proven_by_codes_run_of_the_call() -> None:
    # the policy-2 holdout run: "How many items does split(…) return?" —
    # code ran the call (a list of 4), the answer echoed the run's output with its list
    # repr and stated 1, and the task ended accept. A count asked needs a number from code.
    from artoo.actors.verification.proof import established
    from artoo.schemas import Criterion, SubTaskOutcome, TaskSpec, Verdict

    call = "split('a; b;; c')"
    evaluates = Check(kind="evaluates", value=call, shape="number")
    criteria = {
        "t1": Criterion(id="t1", text="states", mode="verifiable", check=Check(kind="answered")),
        "t2": Criterion(id="t2", text="runs", mode="verifiable", check=evaluates),
    }
    text = f"How many items does {call} return?"
    spec = TaskSpec(text=text, intent=text, slug="count", kind="question", shape="number")

    def proof(result: dict[str, str], output: str, policy: int) -> str | None:
        ran = _evaluation(call, result)
        passed = [
            Verdict(criterion_id="t1", passed=True),
            Verdict(criterion_id="t2", passed=True, observed={"evaluated": True}),
        ]
        outcome = SubTaskOutcome(
            subtask_id="s", status="matched", verdicts=passed, tool_calls=[ran]
        )
        how, _ = established(
            spec=spec, criteria=criteria, task_verdicts=[], outcomes=[outcome],
            output=output, policy=policy,
        )  # fmt: skip
        return how

    listed = {"repr": "['a;', 'b;', ';', 'c']", "str": "['a;', 'b;', ';', 'c']", "printed": ""}
    echo = "It ran and gave ['a;', 'b;', ';', 'c']: 1 item."
    assert proof(listed, echo, policy=2) == "code"  # policies 1 and 2 took the echo as proof
    assert proof(listed, echo, policy=3) == "model"
    counted = {"repr": "4", "str": "4", "printed": ""}
    assert proof(counted, "It returns 4.", policy=3) == "code"
    raised = {"raised": "ValueError: empty", "printed": ""}
    assert proof(raised, "It raises ValueError.", policy=3) == "code"
