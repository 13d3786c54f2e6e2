"""Which item holds an extreme (``artoo.actors.verification.proof``): a listing backs a
name only from a line holding a column's largest or smallest value. A real small model
answered "which region has the smallest amount in data/sales.csv?" with "east" — the
region column listed, and the names sorted, the first taken — and it ended ``accept``.
Requests and files are the tests' own."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from artoo.actors.verification.proof import derivations

from .proof_helpers import read_call as _read
from .proof_helpers import settle as _settle
from .proof_helpers import shell_call as _shell

PUMPS = "pump,pressure,age\nalpha,40,3\nbeta,12,9\ngamma,33,1\ndelta,50,4\n"
LOWEST = "which pump has the lowest pressure in plant/pumps.csv?"


def test_a_list_of_the_candidates_backs_none_of_them() -> None:
    names = _shell("awk -F, '{print $1}' plant/pumps.csv", "pump\nalpha\nbeta\ngamma\ndelta\n")
    first = _shell("awk -F, '{print $1}' plant/pumps.csv | sort | head -n 1", "alpha\n")
    assert derivations("alpha", [names], LOWEST) == 0
    assert derivations("beta", [names], LOWEST) == 0
    # the one-line result still says its word: one derivation, never two
    assert derivations("alpha", [names, first], LOWEST) == 1
    ended = _settle(LOWEST, "question", "The lowest is `alpha`.", [names, first], shape="name")
    assert ended != "code"


def test_the_table_backs_the_name_on_an_extreme_line() -> None:
    table = _read("plant/pumps.csv", PUMPS)
    assert derivations("beta", [table], LOWEST) == 1  # pressure 12, the smallest
    assert derivations("delta", [table], LOWEST) == 0  # pressure 50: the largest
    assert derivations("gamma", [table], LOWEST) == 1  # age 1, the smallest of its column
    assert derivations("alpha", [table], LOWEST) == 0  # no extreme on its line
    sorted_ = _shell(
        "sort -t, -k2 -n plant/pumps.csv | head -n 2", "pump,pressure,age\nbeta,12,9\n"
    )
    assert derivations("beta", [table, sorted_], LOWEST) == 2


def test_the_largest_is_read_off_the_largest_line() -> None:
    table = _read("plant/pumps.csv", PUMPS)
    highest = "which pump has the highest pressure in plant/pumps.csv?"
    assert derivations("delta", [table], highest) == 1
    assert derivations("gamma", [table], highest) == 0  # 33 and 1: the largest of neither
    assert derivations("beta", [table], highest) == 1  # age 9: the largest of another column
    either = "which pump is the newest in plant/pumps.csv?"  # a date or an age: both ends
    assert derivations("beta", [table], either) == derivations("delta", [table], either) == 1


def test_a_request_for_no_extreme_reads_the_whole_listing() -> None:
    names = _shell("awk -F, '{print $1}' plant/pumps.csv", "pump\nalpha\nbeta\ngamma\ndelta\n")
    assert derivations("gamma", [names], "which pumps are listed in plant/pumps.csv?") == 1


@given(st.lists(st.integers(-50, 50), min_size=4, max_size=8, unique=True))
def test_only_the_extreme_rows_of_a_one_column_table_are_backed(values: list[int]) -> None:
    rows = "".join(f"n{i},{v}\n" for i, v in enumerate(values))
    table = _read("t/x.csv", "name,v\n" + rows)
    top = values.index(max(values))
    for i in range(len(values)):
        expected = 1 if i == top else 0
        assert derivations(f"n{i}", [table], "which name has the largest v in t/x.csv?") == expected
