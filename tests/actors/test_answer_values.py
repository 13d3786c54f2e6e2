"""Whether an answer answers (``request.answer_problem``) and the values it states
(``request.code_values``), after commit 1f9f09d: a "which …" question answered with
figures alone does not answer (a number is not the name asked for); a dotted numeral of
three or more parts (a version, ``2.3.1``) is a code-like value, a decimal (``12.5``) is
not."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from artoo.actors.verification.request import answer_problem, code_values, duties

WHICH = "which bin in inventory/stock.txt holds the most items?"
STOCK = ["bolts 12\nscrews 40\nrivets 7\n"]  # what the tools printed
NAME = duties(WHICH, "question")


def test_the_which_question_reads_as_asking_a_name() -> None:
    assert (NAME.answers, NAME.writes, NAME.shape) == (True, False, "name")


@pytest.mark.parametrize("answer", ["40.", "It holds 40 items.", "40 (of 59)."])
def test_a_which_question_answered_only_with_a_number_does_not_answer(answer: str) -> None:
    for outputs in (STOCK, []):
        problem = answer_problem(WHICH, answer, NAME, outputs)
        assert problem is not None and "a number is not the name asked for" in problem, answer


@pytest.mark.parametrize(
    "answer", ["The screws bin, with 40.", "screws (40).", "The bin is `screws`.", "screws"]
)
def test_a_which_question_answered_with_a_name_answers(answer: str) -> None:
    assert answer_problem(WHICH, answer, NAME, STOCK) is None


def test_a_number_still_answers_a_how_many_question() -> None:
    how_many = "how many items are in inventory/stock.txt?"
    assert answer_problem(how_many, "59 items.", duties(how_many, "question"), STOCK) is None


def test_a_which_version_question_answered_with_the_version_answers() -> None:
    # a version is a value (code_values), not a figure: 1f9f09d read 2.3.1 as one
    which = "which version of libfoo does deps/lock.txt pin?"
    answer = "It pins 2.3.1."
    assert answer_problem(which, answer, duties(which, "question"), ["libfoo==2.3.1\n"]) is None


def test_a_version_is_a_code_value_and_a_decimal_is_not() -> None:
    assert code_values("The pinned release of libfoo is 2.3.1.", "which release is pinned?") == [
        "2.3.1"
    ]
    assert code_values("The mean weight is 12.5.", "what is the mean weight?") == []
    assert code_values("Build 10.4.2.7 shipped.", "") == ["10.4.2.7"]
    # a version the request already states is not a value the answer gives
    assert code_values("Yes, it is 2.3.1.", "is libfoo pinned at 2.3.1?") == []


@given(
    st.lists(st.integers(0, 99), min_size=3, max_size=5),
    st.sampled_from(["It is {}.", "Release {} is pinned.", "{}"]),
)
def test_every_dotted_numeral_of_three_parts_or_more_is_a_value(
    parts: list[int], template: str
) -> None:
    version = ".".join(map(str, parts))
    assert version in code_values(template.format(version), "which release is pinned?")


@given(st.integers(0, 999), st.integers(0, 999))
def test_a_decimal_is_never_a_code_value(whole: int, fraction: int) -> None:
    assert code_values(f"The mean is {whole}.{fraction}.", "what is the mean?") == []
