"""A command that prints a number it was given does not derive it (``proof._backers``).

The failure class: asked to compute with a tool a value no tool result showed (a
``Corroboration`` with no call), the model could run ``echo 17`` — or ``printf``, or
``python3 -c "print(17)"``, with ``# yard/crates.csv`` added so the call names the path
the request names — and the call counted as a derivation of 17: it printed 17. Two such
calls even made an answer nothing derived ``code``. Now a call whose arguments state the
number (the same value, standing alone) backs it in no way; a command that computes it
still does. Requests and files are the tests' own."""

from __future__ import annotations

from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

from artoo.actors.verification.proof import (
    Corroboration,
    derivations,
    needs_second_derivation,
)
from artoo.schemas import ToolCall, Verdict

from .proof_helpers import read_call as _read
from .proof_helpers import settle as _settle
from .proof_helpers import shell_call as _shell

CRATES = "crate,kg,levels\nc1,14,2\nc2,9,1\nc3,31,3\nc4,6,1\nc5,25,2\n"  # kg: 85, mean 17
READ = _read("yard/crates.csv", CRATES)
MEAN = "What is the average crate weight in yard/crates.csv?"
MEAN_NO_PLACE = "What is the average crate weight?"  # any call may back its value
TOTAL = "What is the total weight of the crates in yard/crates.csv?"


def _ask(output: str, calls: list[ToolCall], request: str) -> Corroboration | None:
    return needs_second_derivation(
        request=request,
        kind="question",
        criteria={},
        verdicts=[Verdict(criterion_id="done", passed=True)],
        calls=calls,
        output=output,
    )


ECHOES = (
    "echo 17",
    "printf '%s\\n' 17",
    'python3 -c "print(17)"',
    "python -c 'print(17.0)'",
    "cat <<'EOF'\n17\nEOF",  # a line of its own: "\\n17" in the call's JSON
)


def test_a_command_printing_the_number_it_was_given_does_not_back_it() -> None:
    """Each of these printed 17, and each once backed it: with a read of the file (which
    backs no mean) the answer was asked for a second derivation naming the echo, and two
    of them made it ``code``. Now none backs 17: the answer is ``model`` and still asked
    to be computed with a tool."""
    answer = "The average crate weight is 17 kg."
    for command in ECHOES:
        call = _shell(command, "17\n")
        assert derivations("17", [READ, call], MEAN_NO_PLACE) == 0, command
        assert _settle(MEAN_NO_PLACE, "question", answer, [READ, call]) == "model"
        assert _ask(answer, [READ, call], MEAN_NO_PLACE) == Corroboration(value="17"), command
    every = [READ, *(_shell(c, "17\n") for c in ECHOES)]
    assert _settle(MEAN_NO_PLACE, "question", answer, every) == "model"
    assert _ask(answer, every, MEAN_NO_PLACE) == Corroboration(value="17")


def test_naming_the_path_in_a_comment_does_not_make_an_echo_a_derivation() -> None:
    """Where the request names a path a call must name it too — a comment does, so the
    echo passed that rule; it prints what it was given all the same (17.0 is 17)."""
    answer = "The average crate weight is 17 kg."
    for command, printed in (
        ("echo 17  # yard/crates.csv", "17\n"),
        ("printf '17.0\\n'  # yard/crates.csv", "17.0\n"),
    ):
        call = _shell(command, printed)
        assert derivations("17", [READ, call], MEAN) == 0, command
        assert _ask(answer, [READ, call], MEAN) == Corroboration(value="17"), command
        assert _settle(MEAN, "question", answer, [READ, call]) == "model"


def test_an_echo_is_no_second_derivation_of_a_value_a_read_backs() -> None:
    """The file's kg column sums to 85, which its read backs: one derivation. An echo of
    85 once made it two, and ``code``; now a second derivation is asked of the read."""
    answer = "The crates weigh 85 kg in total."
    echo = _shell("echo 85  # yard/crates.csv", "85\n")
    assert derivations("85", [READ, echo], TOTAL) == 1
    assert _settle(TOTAL, "question", answer, [READ, echo]) == "model"
    assert _ask(answer, [READ, echo], TOTAL) == Corroboration(value="85", call=READ)


def test_a_command_that_computes_the_value_still_backs_it() -> None:
    """An awk summing (or averaging) the kg column states no 85 nor 17 — its ``NR > 1``
    states 1, its ``$2`` names a column — so it backs what it prints, and with the read
    it is two derivations: ``code``."""
    total = _shell("awk -F, 'NR > 1 { s += $2 } END { print s }' yard/crates.csv", "85\n")
    assert derivations("85", [total], TOTAL) == 1
    assert derivations("85", [READ, total], TOTAL) == 2
    assert _settle(TOTAL, "question", "The crates weigh 85 kg in total.", [READ, total]) == "code"
    mean = _shell("awk -F, 'NR > 1 { s += $2; n++ } END { print s / n }' yard/crates.csv", "17\n")
    assert derivations("17", [READ, mean], MEAN) == 1
    assert _ask("The average crate weight is 17 kg.", [READ, mean], MEAN) == Corroboration(
        value="17", call=mean
    )


def test_a_column_reference_states_no_number() -> None:
    """``$3`` is the levels column, not a 3 the command was given: three crates stand on
    more than one level, and the awk that counts them backs 3."""
    levels = "How many crates in yard/crates.csv stand on more than one level?"
    awk = _shell("awk -F, 'NR > 1 && $3 > 1 { n++ } END { print n }' yard/crates.csv", "3\n")
    assert derivations("3", [awk], levels) == 1


def test_a_number_the_command_was_given_is_an_accepted_exclusion() -> None:
    """``head -n 5`` shows five lines, a listing whose line count once backed 5; the 5 was
    chosen, not found, and it backs it no more. An awk that skips the header with
    ``NR > 1`` and counts one crate no longer backs 1: a number the command states is
    never its result, whatever it computed (another call may derive it). ``wc -l``
    counts the file's lines, and a shell's ``timeout_s`` is how the command ran, not a
    number it was given."""
    rows = "How many lines does yard/crates.csv have?"
    head = _shell("head -n 5 yard/crates.csv", "".join(CRATES.splitlines(True)[:5]))
    assert derivations("5", [head], rows) == 0
    heavy = "How many crates in yard/crates.csv stand on three levels?"
    one = _shell("awk -F, 'NR > 1 && $3 == 3' yard/crates.csv | wc -l", "1\n")
    assert derivations("1", [one], heavy) == 0
    counted = _shell("grep -c ',3$' yard/crates.csv", "1\n")  # states 3, not 1
    assert derivations("1", [counted], heavy) == 1
    wc = _shell("wc -l yard/crates.csv", "6 yard/crates.csv\n", timeout_s=6)
    assert derivations("6", [wc], rows) == 1


# --------------------------------------------------------------------------- property
_NUMBER = st.one_of(
    st.integers(0, 10**9).map(str),
    st.tuples(st.integers(0, 10**6), st.integers(0, 99)).map(lambda t: f"{t[0]}.{t[1]:02d}"),
)
_TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\x00"), max_size=30)
_BEFORE = st.sampled_from([" ", "(", "'", '"', "=", "\n", "\t", "[", "{"])
_AFTER = st.sampled_from([" ", ")", "'", '"', ";", "\n", "\t", "]", "}"])
TOTAL_NO_PLACE = "What is the total weight of the crates?"


@given(n=_NUMBER, head=_TEXT, before=_BEFORE, after=_AFTER, tail=_TEXT, last=st.booleans())
def test_any_command_stating_n_does_not_back_n(
    n: str, head: str, before: str, after: str, tail: str, last: bool
) -> None:
    """For any number n and any command whose text holds n as a token (anything before
    and after it, set apart by a space, a quote, a bracket …, or n ending the text), a
    call whose output is exactly n does not back n, and an answer stating n is asked to
    compute it with a tool."""
    command = f"{head}{before}{n}" + ("" if last else f"{after}{tail}")
    call = _shell(command, f"{n}\n")
    assert derivations(n, [call], TOTAL_NO_PLACE) == 0
    answer = f"The crates weigh {n} kg in total."
    # a zero is never what derivations prove (test_proof_zero): nothing is asked of it
    expected = None if Decimal(n.replace(",", "")) == 0 else Corroboration(value=n)
    assert _ask(answer, [call], TOTAL_NO_PLACE) == expected
