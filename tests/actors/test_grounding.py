"""Grounding of stated facts: every number an answer to a question states is backed by a
tool result, the request, or code — worked examples from the real-model bench, and
properties of the pure function."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from artoo.actors.verification.grounding import (
    asks_question,
    derivable,
    grounding,
    singular,
    stated_numbers,
    tool_outputs,
)
from artoo.actors.verification.ladder import grounding_verdicts, ungrounded
from artoo.schemas import Check, Criterion, ToolCall, Verdict

WS = Path(__file__).resolve().parents[2] / "artoo" / "demo_data" / "workspace"
SALES = (WS / "data" / "sales.csv").read_text()
TODO = (WS / "notes" / "todo.txt").read_text()
README = (WS / "README.md").read_text()


def shell(stdout: str, code: int = 0) -> list[str]:
    """What grounding reads of a shell call: its result as the registry formats it and its
    structured stdout."""
    shown = f"exit code: {code}\n--- stdout ---\n{stdout}" if stdout else f"exit code: {code}"
    call = ToolCall(tool="shell", output_preview=shown, stdout=stdout, stderr="", exit_code=code)
    return tool_outputs([call])


# ---------------------------------------------------------------- the recorded false accept
def test_task_7s_false_accept_is_caught() -> None:
    """bench run of 2026-11-22, task 7: awk for "East" printed nothing, the Executor said
    1500 and both validators passed it. 1500 is nowhere, and derivable from nothing."""
    request = "what is the amount for the east region in data/sales.csv?"
    answer = "The amount for the east region is 1500."
    found = grounding(answer, shell("", 0), request=request)
    assert found.ungrounded == ("1500",)
    assert "1500" in found.evidence()
    # even had it read the whole file, 1500 is not in it (east is 1300)
    assert not grounding(answer, [SALES], request=request).grounded
    assert grounding("It is 1300.", [SALES], request=request).grounded


# ---------------------------------------------------------------- correct answers stand
def test_the_correct_answers_of_the_bench_tasks_are_grounded() -> None:
    cases = [  # (request, tool results, a correct answer) as a small model gives them
        ("how many lines are in notes/todo.txt?", shell("7 notes/todo.txt"), "7"),
        ("how many lines are in notes/todo.txt?", [TODO], "The file has 7 lines."),
        ("count the python files under src", ["3 match(es):\na.py\nb.py\nc.py"], "3 files"),
        ("count the python files under src", shell("src/a.py\nsrc/b.py\nsrc/c.py"), "3"),
        ("how many lines of notes/todo.txt contain TODO?", shell("4"), "4 lines"),
        ("how many lines of notes/todo.txt contain TODO?", [TODO], "4 lines contain TODO."),
        ("how many lines are in data/sales.csv?", [SALES], "data/sales.csv has 5 lines"),
        ("how many files are in the archive directory?", shell("old.log"), "1 file"),
        ("how many words are in README.md?", [README], "README.md has 11 words."),
        ("what is the amount for the east region?", shell("1300"), "The amount is 1,300."),
        ("what is the total amount in data/sales.csv?", [SALES], "The total is 4250."),
        ("what is the average amount in data/sales.csv?", [SALES], "The average is 1062.5"),
        ("what is the average amount in data/sales.csv?", [SALES], "about 1063 on average"),
        ("what is the name of the class in src/models/user.py?", ["class User:"], "User"),
    ]
    for request, outputs, answer in cases:
        found = grounding(answer, outputs, request=request)
        assert found.grounded, (request, answer, found)


def test_numbers_that_are_not_stated_results_are_not_held_to_it() -> None:
    assert stated_numbers("see notes/todo2.txt and v2 of app-3.py") == []
    assert stated_numbers("1. read it\n2) count it\n- 3. done") == []
    assert stated_numbers("ran `head -n 30 x` and got `12`") == ["12"]
    assert stated_numbers("on 2024-05-01 at 10:30, 1,234 rows and 12.5%") == ["1,234", "12.5"]


def test_a_commands_exit_code_is_how_it_ran_not_what_it_found() -> None:
    """The bench's answer (Qwen2.5-Coder-1.5B): the exit code came first and was read as
    the count; only an answer to a question about an exit code states one."""
    answer = (
        "The shell command `wc -l notes/todo.txt` returned the exit code 0 with the "
        "standard output `7 notes/todo.txt`. The number of lines is 7."
    )
    assert stated_numbers(answer) == ["7"]
    assert stated_numbers("It exited with status 1 and printed 12 lines.") == ["12"]
    assert stated_numbers("exit code: `2`; return code=3; 5 files") == ["5"]
    assert stated_numbers("The exit code is 3.", "what exit code does run.sh give?") == ["3"]
    assert stated_numbers("The function returns 8080.") == ["8080"]  # a value, not a code
    assert grounding(
        "Line 3 of the first 10", [], request="what is on line 3 of the first 10?"
    ).grounded
    assert grounding("no numbers here", []).grounded


def test_a_code_measured_count_is_given() -> None:
    assert not grounding("8 lines", [TODO], request="how many lines?").grounded
    assert grounding("8 lines", [TODO], request="how many lines?", measured=[8]).grounded


def test_only_answers_to_questions_are_held_to_it() -> None:
    assert asks_question("how many lines are in notes/todo.txt?")
    assert asks_question("count the python files under src")
    assert asks_question("What does app.py import")
    assert asks_question("the amount for east?")
    assert not asks_question("create the file out/hello.txt containing the word hello")
    assert not asks_question("fix the failing test in tests/test_app.py")


def test_the_validators_rule_fails_passed_verdicts_but_a_count_code_measured() -> None:
    plausible = Criterion(id="p", text="states the amount")
    weak_check = Criterion(
        id="w", text="a number", mode="verifiable", check=Check(kind="output_matches", value=r"\d+")
    )
    counted = Criterion(
        id="c",
        text="the count",
        mode="verifiable",
        check=Check(kind="count_matches", path="a.txt", value="lines"),
    )
    passed = [
        Verdict(criterion_id="p", passed=True, signal="llm", confidence=0.9),
        Verdict(criterion_id="w", passed=True, signal="rule"),
        Verdict(criterion_id="c", passed=True, signal="rule"),
    ]
    calls = [ToolCall(tool="shell", output_preview="exit code: 0", stdout="", stderr="")]
    weak = ungrounded("It is 1500.", calls, request="what is the amount for east?")
    assert weak is not None
    out = grounding_verdicts([plausible, weak_check, counted], passed, weak)
    assert [v.passed for v in out] == [False, False, True]
    assert all(v.failure_class == "logical" and "1500" in v.evidence for v in out[:2])
    # a criterion no model was asked (None) fails the same way
    (skipped,) = grounding_verdicts([plausible], [None], weak)
    assert not skipped.passed and skipped.signal == "rule"
    # grounded: the verdicts stand as they are
    assert grounding_verdicts([plausible], passed[:1], None) == passed[:1]
    # not a question: nothing to ground
    assert ungrounded("wrote 1500 rows", calls, request="create out/x.csv") is None
    # unknown request: the instruction stands for it
    assert ungrounded("It is 1500.", calls, request=None, instruction="what is it?") is not None


def test_tool_outputs_are_the_logged_results_not_error_texts() -> None:
    calls = [
        ToolCall(tool="shell", output_preview="exit code: 1", ok=False, error="exit code 1"),
        ToolCall(tool="read_file", ok=False, error="no such file 'x99.txt'"),
    ]
    assert tool_outputs(calls) == ["exit code: 1"]
    assert not grounding("99", tool_outputs(calls), request="how many?").grounded


# ---------------------------------------------------------------- properties
_NUM = st.integers(min_value=0, max_value=10**9)


@given(numbers=st.lists(_NUM, min_size=1, max_size=6), noise=st.text(max_size=40))
def test_every_number_a_tool_printed_is_grounded(numbers: list[int], noise: str) -> None:
    output = noise + " " + " ".join(str(n) for n in numbers)
    answer = " and ".join(f"{n:,}" for n in numbers)
    assert grounding(answer, [output], request="how many?").grounded


@given(column=st.lists(_NUM, min_size=1, max_size=8))
def test_a_columns_sum_and_mean_are_grounded(column: list[int]) -> None:
    output = "name,value\n" + "\n".join(f"row{i},{n}" for i, n in enumerate(column))
    total = sum(column)
    assert grounding(f"the total is {total}", [output], request="what is the total?").grounded
    mean = Decimal(total) / len(column)
    shown = f"{mean:.2f}"
    assert grounding(f"the mean is {shown}", [output], request="the mean?").grounded


@given(
    outputs=st.lists(st.text(alphabet="abc xyz\n,.-", max_size=60), max_size=4),
    big=st.integers(min_value=10**6, max_value=10**12),
)
def test_a_large_number_in_no_output_is_ungrounded(outputs: list[str], big: int) -> None:
    """Outputs without digits back only small counts (lines, words): a large figure is
    never derivable from them."""
    limit = max((len(o) for o in outputs), default=0) + 1
    assert big > limit
    found = grounding(f"The answer is {big}.", outputs, request="what is it?")
    assert found.ungrounded == (str(big),)


@given(answer=st.text(max_size=80), outputs=st.lists(st.text(max_size=80), max_size=3))
def test_grounding_is_pure_and_ungrounded_are_stated(answer: str, outputs: list[str]) -> None:
    first = grounding(answer, outputs, request="how many?")
    assert first == grounding(answer, list(outputs), request="how many?")
    assert set(first.ungrounded) <= set(first.stated)
    assert first.grounded == (not first.ungrounded)


@given(numbers=st.lists(_NUM, max_size=5), request=st.text(max_size=40))
def test_numbers_the_request_states_are_given(numbers: list[int], request: str) -> None:
    text = request + " " + " ".join(map(str, numbers))
    answer = " ".join(map(str, numbers))
    assert grounding(answer, [], request=text).grounded


def test_derivable_counts_of_a_shell_section() -> None:
    exact, means = derivable(shell("a TODO\nb\nc TODO"), ["TODO"])
    assert {Decimal(3), Decimal(2), Decimal(0)} <= exact  # lines, lines with TODO, exit code
    assert means == [Decimal(0)]  # the one column: "exit code: 0"


# --------------------------------------------------------------------------- plurals
SHAPES = """class Shape:
    pass


class Circle(Shape):
    def __init__(self, radius):
        self.radius = radius


class Square(Shape):
    side = 2
"""


def test_a_plural_request_word_counts_the_lines_holding_its_singular() -> None:
    # "how many classes are defined in …?": the file never says "classes"
    terms = ["how", "many", "classes", "defined"]
    assert Decimal(3) in derivable([SHAPES], terms)[0]
    assert Decimal(3) not in derivable([SHAPES], ["how", "many", "defined"])[0]


def test_singular_by_ending() -> None:
    assert [singular(w) for w in ("classes", "boxes", "files", "Errors", "lines")] == [
        "class",
        "box",
        "file",
        "Error",
        "line",
    ]
    assert [singular(w) for w in ("class", "bus", "has", "todo", "glass")] == [None] * 5


@given(st.text(alphabet="abcdefxhs", min_size=1, max_size=12))
def test_a_singular_is_a_shorter_prefix_of_its_word(word: str) -> None:
    one = singular(word)
    if one is not None:
        assert word.startswith(one) and 0 < len(word) - len(one) <= 2 and len(one) >= 2
