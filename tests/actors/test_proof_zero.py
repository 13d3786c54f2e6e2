"""A zero is never the value derivations prove (``artoo.actors.verification.proof``): 0
is what a command prints over nothing — a column that holds no numbers, a pattern that
matches no line — so two different wrong commands agree on it. Requests and files are
the tests' own.

Real-model run (Qwen2.5-Coder-1.5B): "what is the sum of the qty column in
data/inventory.csv?" answered 0 ended ``accept`` on two awks that summed the item names
(``$1``) and the categories (``$2``), each printing 0; the sum was 327.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from artoo.actors.verification.proof import _zero

from .proof_helpers import ask as _ask
from .proof_helpers import criterion
from .proof_helpers import settle as _settle
from .proof_helpers import shell_call as _shell

REQUEST = "what is the total of the weight column in cargo/crates.csv?"


def test_two_commands_that_print_zero_do_not_prove_a_zero() -> None:
    """Two different awks over text columns both print 0: no code proof, and no second
    derivation is asked of a zero (another command would agree on it just as well)."""
    calls = [
        _shell("awk -F, '{s += $1} END {print s}' cargo/crates.csv", "0\n"),
        _shell("awk -F, 'NR>1 {s += $2} END {print s}' cargo/crates.csv", "0\n"),
    ]
    answer = "The total of the weight column in cargo/crates.csv is 0."
    assert _settle(REQUEST, "question", answer, calls) == "model"
    assert _ask(REQUEST, answer, calls) is None


def test_the_same_shape_with_a_non_zero_total_is_still_proven() -> None:
    """The guard: two different commands that print 412 prove 412."""
    calls = [
        _shell("awk -F, 'NR>1 {s += $3} END {print s}' cargo/crates.csv", "412\n"),
        _shell("cut -d, -f3 cargo/crates.csv | tail -n +2 | paste -sd+ | bc", "412\n"),
    ]
    answer = "The total of the weight column in cargo/crates.csv is 412."
    assert _settle(REQUEST, "question", answer, calls) == "code"


def test_a_zero_a_tied_count_check_measured_is_proven() -> None:
    """A code check tied to the value still proves a zero: ``count_matches`` counted the
    lines holding FATAL and found none."""
    request = "how many lines in logs/boot.log contain FATAL?"
    calls = [_shell("grep -c FATAL logs/boot.log", "0\n")]
    checks = criterion("count_matches", "logs/boot.log", "lines containing FATAL")
    assert _settle(request, "question", "0 lines contain FATAL.", calls, checks) == "code"


def test_a_zero_beside_another_value_lets_the_other_be_proven() -> None:
    """An answer stating 0 and 18: the 18, backed twice, is what is proven."""
    request = "how many errors and how many warnings are in logs/boot.log?"
    calls = [
        _shell("grep -c WARN logs/boot.log", "18\n"),
        _shell("awk '/WARN/ {n++} END {print n}' logs/boot.log", "18\n"),
        _shell("grep -c ERROR logs/boot.log", "0\n"),
    ]
    answer = "There are 0 errors and 18 warnings."
    assert _settle(request, "question", answer, calls) == "code"


@given(st.sampled_from(["0", "0.0", "0.00", "00"]))
def test_every_spelling_of_zero_is_a_zero(value: str) -> None:
    assert _zero(value)


@given(st.integers(min_value=1, max_value=10**9))
def test_no_other_whole_number_is_a_zero(n: int) -> None:
    assert not _zero(str(n))
    assert not _zero(f"{n:,}")
    assert not _zero(f"v{n}0")
