"""table_value: the value a question asks of a CSV file, computed by code from the file's
header and rows (``_tables.resolve``), and judged against the answer; a question code
cannot read computes nothing (no proof either way). The tables and questions are the
tests' own."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from artoo.actors.verification._tables import (
    Resolved,
    code_table_check,
    parse_table,
    resolve,
)
from artoo.actors.verification.checks import check_problem, computed, evaluate, guess_problem
from artoo.schemas import Check

PLANTS = "plant,bed,height,age\nfern,north,30,2\nrose,south,55,4\nmoss,north,5,1\nyew,south,120,9\n"


def _resolve(question: str, text: str = PLANTS) -> Resolved | str:
    header, rows = parse_table(text, "garden/plants.csv")
    return resolve(question, header, rows)


def test_worked_examples() -> None:
    cases = {
        "what is the total of the height column in garden/plants.csv?": ["210"],
        "what is the average age in garden/plants.csv?": ["4"],
        "what is the largest height in garden/plants.csv?": ["120"],
        "what is the minimum age in garden/plants.csv?": ["1"],
        "how many plants in garden/plants.csv have a height above 40?": ["2"],
        "how many rows of garden/plants.csv have the bed north?": ["2"],
        "what is the total height in the south bed of garden/plants.csv?": ["175"],
        "which plant has the smallest height in garden/plants.csv?": ["moss"],
        "which bed has the largest total height in garden/plants.csv?": ["south"],
        "how many plants have an age of at least 4 in garden/plants.csv?": ["2"],
    }
    for question, values in cases.items():
        got = _resolve(question)
        assert isinstance(got, Resolved), (question, got)
        assert got.values == values, question


def test_what_code_cannot_read_computes_nothing() -> None:
    for question in (
        "which plant in garden/plants.csv is the oldest?",  # "oldest" names no column
        "what is the total height of the evergreen plants in garden/plants.csv?",
        "who is the tallest in garden/plants.csv?",  # who: no column names what
        "how many rows does garden/plants.csv have?",  # a plain row count: count_matches's
        "what is the total of height and age in garden/plants.csv?",  # two columns
        "which bed has the largest height in garden/plants.csv?",  # beds repeat, no total
        "what is the highest and lowest age in garden/plants.csv?",  # two aggregates
    ):
        assert isinstance(_resolve(question), str), question


def test_the_judge_reads_the_first_number_the_question_does_not_state(tmp_path: Path) -> None:
    (tmp_path / "p.csv").write_text(PLANTS)
    ask = "how many plants have a height above 40 in p.csv?"
    check = Check(kind="table_value", path="p.csv", value=ask)

    def judged(output: str) -> bool:
        return evaluate(check, output=output, exit_code=None, workspace=tmp_path).passed

    assert judged("2 plants are taller than 40.")
    assert judged("The number of plants with a height above 40 is 2.")
    assert not judged("There are 3.")
    assert not judged("Plants above 40: rose and yew.")  # states no count
    mean = Check(kind="table_value", path="p.csv", value="what is the mean height in p.csv?")
    for output, right in (("52.5", True), ("52.50", True), ("53", True), ("54", False)):
        assert evaluate(mean, output=output, exit_code=None, workspace=tmp_path).passed is right


def test_a_mean_that_is_no_whole_number_matches_when_rounded(tmp_path: Path) -> None:
    (tmp_path / "t.csv").write_text("k,v\na,1\nb,2\nc,2\n")
    check = Check(kind="table_value", path="t.csv", value="what is the average v in t.csv?")
    for output, right in (("1.67", True), ("1.7", True), ("2", True), ("1.6", False)):
        assert evaluate(check, output=output, exit_code=None, workspace=tmp_path).passed is right
    total = Check(kind="table_value", path="t.csv", value="what is the total v in t.csv?")
    assert not evaluate(total, output="5.0001", exit_code=None, workspace=tmp_path).passed


def test_a_name_must_be_said_and_no_other_of_its_column(tmp_path: Path) -> None:
    (tmp_path / "p.csv").write_text(PLANTS)
    ask = "which plant has the largest height in p.csv?"
    check = Check(kind="table_value", path="p.csv", value=ask)
    for output, right in (
        ("The yew is the tallest (120).", True),
        ("Yew.", True),
        ("rose", False),
        ("yew or rose", False),
        ("The tallest is yews", False),  # no whole word
    ):
        assert evaluate(check, output=output, exit_code=None, workspace=tmp_path).passed is right


def test_an_unresolved_check_passes_and_is_not_computed(tmp_path: Path) -> None:
    (tmp_path / "p.csv").write_text(PLANTS)
    check = Check(kind="table_value", path="p.csv", value="which plant in p.csv is the oldest?")
    res = evaluate(check, output="yew", exit_code=None, workspace=tmp_path)
    assert res.passed and "unresolved" in res.observed and not computed(check, res.observed)
    missing = Check(kind="table_value", path="none.csv", value="what is the total v?")
    res = evaluate(missing, output="3", exit_code=None, workspace=tmp_path)
    assert not res.passed and res.failure_class == "environmental"


def test_code_writes_it_for_questions_about_one_table_only() -> None:
    assert code_table_check("what is the total cost in a/b.csv?", "question") == Check(
        kind="table_value", path="a/b.csv", value="what is the total cost in a/b.csv?"
    )
    assert code_table_check("copy a/b.csv to a/c.csv", "change") is None
    assert code_table_check("write the total cost of a/b.csv", "change") is None
    assert code_table_check("write the total cost of a/b.csv to t.txt", "change") == Check(
        kind="table_value",
        path="a/b.csv",
        value="write the total cost of a/b.csv to t.txt",
        into="t.txt",
    )
    assert code_table_check("what is the total cost in a/b.csv and c.csv?", "question") is None
    assert code_table_check("how many lines does notes/x.txt have?", "question") is None


def test_a_model_cannot_write_one_of_its_own(tmp_path: Path) -> None:
    ask = "what is the total of height in p.csv?"
    own = Check(kind="table_value", path="p.csv", value="total height")
    assert guess_problem(own, ask, "question") is not None
    assert guess_problem(Check(kind="table_value", path="p.csv", value=ask), ask) is None
    assert check_problem(Check(kind="table_value", path="p.txt", value=ask), tmp_path)


_CELLS = st.lists(st.integers(min_value=-10_000, max_value=10_000), min_size=1, max_size=30)


def _table(values: list[int]) -> str:
    return "name,size\n" + "".join(f"n{i},{v}\n" for i, v in enumerate(values))


@given(_CELLS)
def test_aggregates_equal_their_definition(values: list[int]) -> None:
    text = _table(values)
    for word, expected in (
        ("total", sum(values)),
        ("highest", max(values)),
        ("lowest", min(values)),
    ):
        got = _resolve(f"what is the {word} size in t.csv?", text)
        assert isinstance(got, Resolved) and Decimal(got.values[0]) == expected
    mean = _resolve("what is the mean size in t.csv?", text)
    assert isinstance(mean, Resolved)
    assert abs(Decimal(mean.values[0]) - Decimal(sum(values)) / len(values)) < Decimal("1e-9")


@given(_CELLS, st.integers(min_value=-10_000, max_value=10_000))
def test_a_comparison_counts_the_rows_that_meet_it(values: list[int], bound: int) -> None:
    text = _table(values)
    for phrase, holds in (
        ("above", lambda v: v > bound),
        ("below", lambda v: v < bound),
        ("at least", lambda v: v >= bound),
        ("at most", lambda v: v <= bound),
    ):
        got = _resolve(f"how many rows have a size {phrase} {bound} in t.csv?", text)
        assert isinstance(got, Resolved), got
        assert got.values == [str(sum(1 for v in values if holds(v)))]


@given(_CELLS)
def test_which_names_every_row_at_the_extreme(values: list[int]) -> None:
    got = _resolve("which name has the largest size in t.csv?", _table(values))
    assert isinstance(got, Resolved)
    assert set(got.values) == {f"n{i}" for i, v in enumerate(values) if v == max(values)}
    assert not set(got.values) & set(got.others)


def test_a_value_written_to_a_file_is_judged_in_the_file(tmp_path: Path) -> None:
    (tmp_path / "p.csv").write_text(PLANTS)
    ask = "find the plant with the largest height in p.csv and write its name to top.txt"
    check = code_table_check(ask, "change")
    assert check is not None and check.into == "top.txt"

    def judged(output: str) -> tuple[bool, str]:
        res = evaluate(check, output=output, exit_code=None, workspace=tmp_path)
        return res.passed, res.evidence

    passed, evidence = judged("I wrote yew to top.txt.")  # the answer is not the file
    assert not passed and "top.txt" in evidence
    (tmp_path / "top.txt").write_text("rose\n")
    passed, evidence = judged("yew")
    assert not passed and "'top.txt' does not state it" in evidence
    (tmp_path / "top.txt").write_text("yew\n")
    assert judged("Done.") == (True, judged("")[1])
    assert check_problem(Check(kind="output_contains", value="x", into="t.txt"), tmp_path)
    outside = Check(kind="table_value", path="p.csv", value=ask, into="../t.txt")
    assert check_problem(outside, tmp_path)


def test_the_command_prints_what_code_computed(tmp_path: Path) -> None:
    """The ``python3 -c`` a retry runs prints the value resolve computed, each kind."""
    import shlex
    import subprocess
    import sys

    (tmp_path / "garden").mkdir()
    (tmp_path / "garden/plants.csv").write_text(PLANTS)
    header, rows = parse_table(PLANTS, "garden/plants.csv")
    for question in (
        "what is the total of the height column in garden/plants.csv?",
        "what is the average age in garden/plants.csv?",
        "what is the total height in the south bed of garden/plants.csv?",
        "how many plants have an age of at least 4 in garden/plants.csv?",
        "how many rows of garden/plants.csv have the bed north?",
        "which plant has the smallest height in garden/plants.csv?",
        "which bed has the largest total height in garden/plants.csv?",
    ):
        got = resolve(question, header, rows, "garden/plants.csv")
        assert isinstance(got, Resolved) and got.command.startswith("python3 -c ")
        argv = shlex.split(got.command)
        printed = subprocess.run(
            [sys.executable, *argv[1:]], cwd=tmp_path, capture_output=True, text=True, check=True
        ).stdout.split()
        if got.numbers:
            assert [Decimal(p) for p in printed] == [Decimal(v) for v in got.values], question
        else:
            assert printed == got.values, question
