"""A plan serves the request's own quantity (issue 23, bench class A: "the plan replaces
the request"): ``checks.measures_other`` rejects a subtask that measures a file's lines
(``wc -l FILE``) when the request asks for something else, and ``asks_count`` reads the
TaskSpec's shape before its keywords. None of these requests or files is the bench's."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from artoo.actors.verification.checks import asks_count, guess_problem, measures_other
from artoo.schemas import Check, Criterion, TaskSpec

# --------------------------------------------------------------------------- worked examples
WRONG = [
    # (instruction, request, kind, shape, what the request asks, as the reason says it)
    (
        "Run wc -l ledger/q3.tsv and answer with the number of lines",
        "Which supplier appears most often in ledger/q3.tsv?",
        "question",
        "name",
        "a name",
    ),
    (
        "Run wc -l pkg/models.py and report it",
        "How many dataclasses does pkg/models.py declare?",
        "question",
        "number",
        "a count of dataclasses",
    ),
    (
        "Run wc -l ledger/q3.tsv",
        "What is the average of the fee column of ledger/q3.tsv?",
        "question",
        "number",
        "a number that is no count",
    ),
    (
        "Use wc -w pkg/models.py to answer",
        "What does pkg/models.py's describe() return?",
        "question",
        "value",
        "a value",
    ),
    (
        "Run wc -l journal/june.txt",
        "How many lines of journal/june.txt mention 'rain'?",
        "question",
        "number",
        "the lines with rain",
    ),
]

WRONG.append(  # no reading of the shape (an old log): a question that counts nothing
    (
        "Run wc -l journal/june.txt",
        "What is the earliest date written in journal/june.txt?",
        "",
        "",
        "an answer that is no count of the file's lines",
    )
)

RIGHT = [
    ("Run wc -l journal/june.txt", "Is journal/june.txt longer than 20 lines?", "question"),
    ("Run wc -l journal/june.txt", "How many lines does journal/june.txt have?", "question"),
    ("Run wc -w journal/june.txt", "count the words in journal/june.txt", "question"),
    (
        "Run grep -c 'class ' pkg/models.py",
        "How many dataclasses does pkg/models.py declare?",
        "question",
    ),
    (
        "Run grep -n 'class ' pkg/models.py | wc -l",  # a pipeline counts what it selected
        "How many dataclasses does pkg/models.py declare?",
        "question",
    ),
    (
        "Run python3 -c to find the largest fee in ledger/q3.tsv",
        "What is the largest fee in ledger/q3.tsv?",
        "question",
    ),
    (  # a change is not judged: counting lines may be its work
        "Run wc -l journal/june.txt and write the figure to journal/size.txt",
        "Write the line count of journal/june.txt into journal/size.txt",
        "change",
    ),
    (  # the request names the command itself
        "Run wc -l journal/june.txt",
        "What does wc -l journal/june.txt print?",
        "question",
    ),
]


@pytest.mark.parametrize(("instruction", "request_", "kind", "shape", "wanted"), WRONG)
def test_a_plan_measuring_another_quantity_is_named(
    instruction: str, request_: str, kind: str, shape: str, wanted: str
) -> None:
    problem = measures_other(instruction, request_, kind, shape)
    assert problem is not None and wanted in problem
    assert "serve the request's own quantity" in problem


@pytest.mark.parametrize(("instruction", "request_", "kind"), RIGHT)
def test_a_plan_that_serves_the_request_passes(instruction: str, request_: str, kind: str) -> None:
    assert measures_other(instruction, request_, kind, "") is None


# --------------------------------------------------------------------------- properties
_NAME = st.from_regex(r"[a-z]{3,8}", fullmatch=True)
_PATH = st.builds(lambda d, f, e: f"{d}/{f}.{e}", _NAME, _NAME, st.sampled_from(["py", "csv"]))


@given(path=_PATH, noun=_NAME, flag=st.sampled_from(["-l", "-w", "-c", ""]))
def test_a_plain_count_never_answers_a_which_question(path: str, noun: str, flag: str) -> None:
    """Whatever the file and the unit, a plain ``wc`` of a file never answers "which …"
    (a name): the plan is rejected."""
    instruction = f"Run wc {flag} {path} and answer".replace("  ", " ")
    assert measures_other(instruction, f"Which {noun} in {path} is the oldest?", "question", "")


@given(path=_PATH, noun=_NAME, flag=st.sampled_from(["-l", "-w", ""]))
def test_a_pipeline_or_a_change_is_never_judged(path: str, noun: str, flag: str) -> None:
    """A count fed by a pipe (it counts what the pipeline chose) and a change (no answer
    asked) are never rejected by this rule."""
    piped = f"grep {noun} {path} | wc {flag}".replace("  ", " ")
    assert measures_other(piped, f"Which {noun} in {path} is the oldest?", "question", "") is None
    plain = f"Run wc {flag} {path}".replace("  ", " ")
    assert measures_other(plain, f"Write the {noun} of {path} to out.txt", "change", "") is None


# --------------------------------------------------------------------------- one reading
def test_asks_count_reads_the_shape_before_the_keywords() -> None:
    """A request whose shape is a name asks no count, even when it says "number of"
    (the structured reading wins); with no reading (an old log) the keywords decide."""
    request = "Which player has the highest number of goals in stats/league.csv?"
    assert asks_count(request)  # keyword fallback: "number of"
    assert not asks_count(request, "question", "name")
    assert asks_count("How many players are in stats/league.csv?", "question", "number")
    # so a count check of it is refused as the Perceiver would refuse it
    check = Check(kind="count_matches", path="stats/league.csv", value="lines containing goal")
    assert guess_problem(check, request) is None  # the keyword reading let it through
    problem = guess_problem(check, request, "question", "name")
    assert problem is not None and "asks for none" in problem


def test_the_perceiver_reads_the_count_duty_from_the_shape(tmp_path: Path) -> None:
    """One reading for both roles: the Perceiver asks for a count check only when the
    request asks a count by the TaskSpec's shape — a "which …" request that says "number
    of" asks a name; with no reading (an old log) the keywords still ask for one."""
    from artoo.actors.roles.perceiver import spec_problems

    text = "Which player has the highest number of goals in stats/league.csv?"
    read = TaskSpec(text=text, intent="find the top scorer", slug="x", kind="question")
    unread = TaskSpec(text=text, intent="find the top scorer", slug="x")
    assert not any("asks for a count" in p for p in spec_problems(read, tmp_path))
    assert any("asks for a count" in p for p in spec_problems(unread, tmp_path))
    # and a count check of it is unusable, as the Planner's guard finds it
    goals = Check(kind="count_matches", path="stats/league.csv", value="lines containing goal")
    checked = [Criterion(id="t1", text="the goals", mode="verifiable", check=goals)]
    problems = spec_problems(msgspec.structs.replace(read, criteria=checked), tmp_path)
    assert any("asks for none" in p for p in problems)
    assert not any(
        "asks for none" in p
        for p in spec_problems(msgspec.structs.replace(unread, criteria=checked), tmp_path)
    )


def test_a_plain_count_against_the_tasks_own_count_check_is_named() -> None:
    """The task's count check is the structured reading of what the request counts: a
    plan running ``wc -l`` of the file it counts "lines containing tool" of measures
    another quantity, though the request's words ("rows") name the unit; a check of the
    plain lines, or of another file, leaves the plan alone."""
    request = "how many rows of depot/stock.csv are tools?"
    plan = "Run wc -l depot/stock.csv and answer with the number"
    tools = Check(kind="count_matches", path="depot/stock.csv", value="lines containing tool")
    problem = measures_other(plan, request, "question", "number", [tools])
    assert problem is not None and "lines containing tool (its count check)" in problem
    assert measures_other(plan, request, "question", "number") is None  # words alone: rows
    lines = Check(kind="count_matches", path="depot/stock.csv", value="lines")
    assert measures_other(plan, request, "question", "number", [lines]) is None
    other = Check(kind="count_matches", path="depot/prices.csv", value="lines containing tool")
    assert measures_other(plan, request, "question", "number", [other]) is None


def test_a_command_in_backticks_is_read_without_them() -> None:
    """A model quotes commands in backticks: the plain count is still seen, and the reason
    names the command as it would run."""
    plan = "Use the shell to run `wc -l ledger/q3.tsv` and answer"
    problem = measures_other(plan, "Which supplier is first in ledger/q3.tsv?", "question", "")
    assert problem is not None and problem.startswith("'wc -l ledger/q3.tsv' measures")
