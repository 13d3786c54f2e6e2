"""A count backs a number only for a request that asks to count (how many, number of,
count; ``artoo.actors.verification.proof``): what code counts in a listing (its lines,
words, the lines holding a word of the request) and what a counting command prints
(``wc -l``, ``grep -c``). Requests and files are the tests' own.

Real-model runs (Qwen2.5-Coder-1.5B): "what is the total of the amount column in
data/sales.csv?" answered 5 had it backed by ``wc -l``'s 5 and by the five lines of the
file read; "what is the sum of the qty column in data/inventory.csv?" answered 1 ended
``accept`` on ``grep -c 'qty'`` printing 1 (the header's line) and the file read, which
prints a price of 1 in one row — two derivations "agreed" on a sum no one computed (327).
A total is no count.
"""

from __future__ import annotations

from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

from artoo.actors.verification.grounding import derivable
from artoo.actors.verification.proof import (
    Corroboration,
    derivations,
)
from artoo.schemas import ToolCall

from .proof_helpers import ask as _ask
from .proof_helpers import read_call as _read
from .proof_helpers import settle as _settle
from .proof_helpers import shell_call as _shell

ITEMS = "item,aisle,price\nkettle,home,24\nlamp,home,38\nrope,garden,9\nshovel,garden,27\n"
"""A listing whose header holds "price" once, and no cell that reads 1."""
TOTAL = "what is the total of the price column in shop/items.csv?"
WRONG = "The total of the price column in shop/items.csv is 1."


def test_a_total_is_not_backed_by_the_lines_holding_its_column_name() -> None:
    """``grep -c price`` prints 1, the header is the one line of the listing holding
    "price". The listing's count of it is no derivation of a total: grep's word alone
    backs 1 — so the answer is not established by code, and a second derivation of 1 is
    asked for, by another call than the grep."""
    listing = _read("shop/items.csv", ITEMS)
    grep = _shell("grep -c price shop/items.csv", "1\n")
    assert derivations("1", [listing], TOTAL) == 0
    assert derivations("1", [listing, grep], TOTAL) == 1
    assert _settle(TOTAL, "question", WRONG, [listing, grep]) == "model"
    assert _ask(TOTAL, WRONG, [listing, grep]) == Corroboration(value="1", call=grep)


def test_a_total_a_listing_prints_as_a_cell_is_one_derivation_not_two() -> None:
    """The real case's shape: the listing prints a 1 in one row (a price), which backs a
    stated 1 as a number it prints; ``grep -c qty`` printing 1 is a count, no second
    derivation of a sum. One call backs 1: not established by code, and a second
    derivation is asked for, by another call than the file read."""
    stock = "item,kind,qty,price\nmug,home,14,6\npen,office,30,1\nink,office,5,9\n"
    listing = _read("shop/stock.csv", stock)
    grep = _shell("grep -c 'qty' shop/stock.csv", "1\n")
    request = "what is the sum of the qty column in shop/stock.csv?"
    wrong = "The sum of the qty column in shop/stock.csv is 1."
    assert derivations("1", [listing, grep], request) == 1
    assert _settle(request, "question", wrong, [listing, grep]) == "model"
    assert _ask(request, wrong, [listing, grep]) == Corroboration(value="1", call=listing)
    # the count answers a request that counts: two derivations, established by code
    rows = "how many lines of shop/stock.csv hold the word qty?"
    assert derivations("1", [listing, grep], rows) == 2
    assert _settle(rows, "question", "1 line holds qty.", [listing, grep]) == "code"


def test_counting_commands_are_no_second_derivation_but_of_a_count() -> None:
    """``wc -l``, ``wc -w``, ``grep -c`` (as a pipeline's last stage) print counts. For a
    how-many answer two of them are two derivations; for a total, one is its own word
    (it backs the value, and a second derivation is asked for) but never a second one —
    beside another counter or another call. ``wc -c`` prints a size, and a command whose
    last stage is no counter (an awk's sum) is a derivation of any number it prints."""
    lines = "how many lines does shop/items.csv have?"
    awk = _shell("awk -F, 'NR>1 {s+=$3} END {print s}' shop/items.csv", "5\n")
    counters = [
        _shell(command, "5\n")
        for command in (
            "wc -l shop/items.csv",
            "cat shop/items.csv | wc -l",
            "wc -w < shop/items.csv",
            "grep -ic garden shop/items.csv",
            "grep --count garden shop/items.csv",
            "test -f shop/items.csv && grep -c garden shop/items.csv",
        )
    ]
    for counted in counters:
        assert derivations("5", [counted], TOTAL) == 1
        assert derivations("5", [counted, awk], TOTAL) == 1  # the awk's alone
        assert derivations("5", [counted, counters[0]], lines) == 2 - (counted is counters[0])
    assert derivations("5", counters, TOTAL) == 1
    assert _ask(TOTAL, "The total is 5.", [awk, *counters]) == Corroboration(value="5", call=awk)
    for command in (
        "wc -c shop/items.csv",
        "wc -l shop/items.csv; awk -F, 'NR>1 {s+=$3} END {print s}' shop/items.csv",
        "grep --color garden shop/items.csv",
    ):
        assert derivations("5", [_shell(command, "5\n"), awk], TOTAL) == 2, command


def test_a_total_is_still_backed_by_a_column_sum_and_a_printed_sum() -> None:
    """Guard: the column's sum code adds up from the listing, and an awk that prints it,
    are two derivations of the total as before."""
    listing = _read("shop/items.csv", ITEMS)
    awk = _shell("awk -F, 'NR>1 {s+=$3} END {print s}' shop/items.csv", "98\n")
    right = "The total of the price column in shop/items.csv is 98."
    assert derivations("98", [listing], TOTAL) == 1
    assert _settle(TOTAL, "question", right, [listing, awk]) == "code"


def test_a_how_many_question_is_still_backed_by_a_listing_count() -> None:
    """Guard: a request that counts — the listing's lines holding "garden" are 2, as
    ``grep -c`` prints — is established by code, the listing's count one derivation."""
    listing = _read("shop/items.csv", ITEMS)
    grep = _shell("grep -c garden shop/items.csv", "2\n")
    request = "how many rows of shop/items.csv are in the garden aisle?"
    answer = "There are 2 rows of shop/items.csv in the garden aisle."
    assert derivations("2", [listing], request) == 1
    assert _settle(request, "question", answer, [listing, grep]) == "code"
    # "number of" and "count" are how-many phrases too
    assert derivations("5", [listing], "what is the number of lines in shop/items.csv?") == 1
    assert derivations("5", [listing], "count the lines of shop/items.csv") == 1


def test_a_result_naming_one_file_counts_one_only_for_a_how_many_request() -> None:
    """``ls`` naming one file counts 1 for "how many files …?" — and backs no 1 of a
    request that does not count: it printed no number."""
    listed = _shell("ls shop/notes", "todo.md\n")
    assert derivations("1", [listed], "how many files are in shop/notes?") == 1
    assert derivations("1", [listed], "what is the version of the shop/notes layout?") == 0


def test_derivable_counts_off_keeps_printed_numbers_and_sums() -> None:
    """``derivable(…, counts=False)``: the numbers printed, the total and the column sums
    (and means), without the line, non-empty line, word and term counts."""
    text = "a x 3\nb x 4\n\nc y 5\n"
    every, means = derivable([text], ["x"])
    exact, same = derivable([text], ["x"], counts=False)
    assert {Decimal(n) for n in (3, 4, 5, 12)} <= exact
    assert same == means
    assert Decimal(2) in every and Decimal(2) not in exact  # lines holding x
    assert Decimal(9) in every and Decimal(9) not in exact  # words
    assert exact <= every


_CELL = st.text(alphabet="abcdefghij_", min_size=1, max_size=6)
_LISTING = st.lists(st.lists(_CELL, min_size=1, max_size=4), min_size=4, max_size=12).map(
    lambda rows: "".join(",".join(r) + "\n" for r in rows)
)


@given(listing=_LISTING, word=_CELL, n=st.integers(1, 40))
def test_a_listing_with_no_number_backs_no_number_of_a_request_that_does_not_count(
    listing: str, word: str, n: int
) -> None:
    """For any listing that prints no number, a request with no how-many phrase (a total,
    a sum, an amount): no number is backed — its counts are not what was asked. The same
    listing read for "how many lines …" backs its line count."""
    read = _read("shop/items.csv", listing)
    for request in (
        f"what is the total of the {word} column in shop/items.csv?",
        f"what is the sum of {word} in shop/items.csv?",
        f"what amount of {word} does shop/items.csv hold?",
    ):
        assert derivations(str(n), [read], request) == 0
    lines = str(len(listing.splitlines()))
    assert derivations(lines, [read], "how many lines does shop/items.csv have?") == 1


def test_a_glob_backs_only_a_count_of_files() -> None:
    """A list of paths read twice is two readings of how many files — not of how many
    lines a file has."""
    listing = "3 match(es):\napp/a.py\napp/b.py\napp/c.py"
    first = ToolCall(tool="glob", args={"pattern": "app/**/*.py"}, content=listing)
    again = ToolCall(tool="glob", args={"pattern": "app/**/*.py"}, content=listing, conversation=1)
    lines = "find the file under app that defines Parser and tell me how many lines it has"
    assert _settle(lines, "question", "It has 3 lines.", [first, again], asked="3") == "model"
    files = "how many python files are there under app?"
    assert _settle(files, "question", "There are 3.", [first, again], asked="3") == "code"


def test_pages_of_one_file_are_one_reading() -> None:
    """A number the file holds somewhere, printed by the whole file read and by a page
    of it, is one reading of the file, not two derivations."""
    text = 'LEVEL = "4.0.2"\nMODE = 1\n\n\ndef odd(n):\n    return n % 2 == 1\n'
    whole = _read("app/settings.py", text, offset=0, limit=30720)
    page = _read("app/settings.py", " 2 == 1\n", offset=len(text) - 8, limit=20)
    request = "what is the value of LEVEL in app/settings.py?"
    assert _settle(request, "question", "LEVEL is 2.", [whole, page]) == "model"
    assert derivations("2", [whole, page], request) == 1
