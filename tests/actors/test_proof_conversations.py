"""What counts as two derivations (``artoo.actors.verification.proof``), after commit
1f9f09d: a value read off listings (results over three lines) counts once per
conversation (``ToolCall.conversation``) — two reads of one file in one conversation are
one reading, a fresh conversation's read a second; the same shell command counts once
whatever its ``timeout_s``; a stated 0 is backed only by a result that prints 0; and an
unsure request naming a file no working call touched is not proven. Requests and files
are the tests' own."""

from __future__ import annotations

import msgspec
from hypothesis import given
from hypothesis import strategies as st

from artoo.actors.verification.proof import derivations, established, needs_second_derivation
from artoo.schemas import Criterion, SubTaskOutcome, ToolCall, Verdict

from .proof_helpers import criterion as _criterion
from .proof_helpers import read_call as _read
from .proof_helpers import settle as _settle
from .proof_helpers import shell_call as _shell

CRATES = "item,kg\nbolts,12\nnuts,30\nwashers,8\nhinges,17\n"
TOTAL = "What is the total kg in yard/crates.csv?"  # 12 + 30 + 8 + 17 = 67


# --------------------------------------------------------------------------- (a) listings
def test_two_reads_of_one_file_in_one_conversation_are_one_derivation() -> None:
    """The model summed the column off what it read: reading it again, by ``read_file``
    or by ``cat``, in the conversation that already read it, is the same reading."""
    read = _read("yard/crates.csv", CRATES)
    cat = _shell("cat yard/crates.csv", CRATES)
    assert derivations("67", [read], TOTAL) == 1
    assert derivations("67", [read, cat], TOTAL) == 1
    assert derivations("67", [read, _read("./yard/crates.csv", CRATES)], TOTAL) == 1
    assert _settle(TOTAL, "question", "The total is 67 kg.", [read, cat]) == "model"


def test_the_same_file_read_in_a_fresh_conversation_is_a_second_derivation() -> None:
    """The conversation a second-derivation ask starts saw nothing of the first answer:
    its reading of the same file, arriving at the value the first stated and was asked
    about, is independent. A value the first conversation did not state is read once,
    however many conversations listed the file (a count of 6 asked about, then a file
    name off the same listing, once ended ``accept``)."""
    first = _read("yard/crates.csv", CRATES)
    again = _read("yard/crates.csv", CRATES, conversation=1)
    cat = _shell("cat yard/crates.csv", CRATES, conversation=1)
    assert derivations("67", [first, again], TOTAL, asked=["67"]) == 2
    assert derivations("67", [first, cat], TOTAL, asked=["67"]) == 2
    ended = _settle(TOTAL, "question", "The total is 67 kg.", [first, again], asked="67")
    assert ended == "code"
    # the first conversation stated another value: the fresh one's reading stands alone
    assert derivations("67", [first, again], TOTAL, asked=["5"]) == 1
    assert derivations("67", [first, again], TOTAL) == 1
    assert _settle(TOTAL, "question", "The total is 67 kg.", [first, again], asked="5") == "model"
    # a value the fresh reading does not give is still backed once
    assert derivations("68", [first, again], TOTAL, asked=["68"]) == 0


def test_a_short_result_is_a_computed_value_not_a_listing() -> None:
    """``awk`` printing 67 and the same ``awk`` run in the fresh conversation are one
    command: its error would repeat; a listing plus that command are two."""
    awk = "awk -F, 'NR > 1 { s += $2 } END { print s }' yard/crates.csv"
    once, twice = _shell(awk, "67\n"), _shell(awk, "67\n", conversation=1)
    assert derivations("67", [once, twice], TOTAL) == 1
    assert derivations("67", [once, _read("yard/crates.csv", CRATES)], TOTAL) == 2


# --------------------------------------------------------------------------- (b) timeout_s
def test_the_same_command_with_another_timeout_is_one_derivation() -> None:
    lines = "how many lines does yard/crates.csv have?"
    wc = _shell("wc -l yard/crates.csv", "5 yard/crates.csv\n")
    longer = _shell("wc -l  yard/crates.csv", "5 yard/crates.csv\n", timeout_s=60)
    assert derivations("5", [wc, longer], lines) == 1
    assert _settle(lines, "question", "5 lines.", [wc, longer]) == "model"
    other = _shell("grep -c '' yard/crates.csv", "5\n", timeout_s=60)
    assert derivations("5", [wc, other], lines) == 2
    assert _settle(lines, "question", "5 lines.", [wc, other]) == "code"


# --------------------------------------------------------------------------- (c) a stated zero
PETS = "name,species,age\nrex,dog,4\ntom,cat,7\nkiwi,budgie,2\nmax,dog,11\n"
PARROTS = "How many rows of zoo/pets.csv mention parrots?"


def test_a_stated_zero_is_backed_only_by_a_result_that_prints_zero() -> None:
    """No line of the CSV holds "parrots", nor "How", nor "many": a read of it "counts"
    0 of any absent word. Only an ``awk`` printed 0: one derivation, the model's word."""
    awk = _shell("awk -F, '$2 == \"parrot\"' zoo/pets.csv | wc -l", "0\n")
    read = _read("zoo/pets.csv", PETS)
    assert derivations("0", [read], PARROTS) == 0
    assert derivations("0", [awk, read], PARROTS) == 1
    assert _settle(PARROTS, "question", "0 rows mention parrots.", [awk, read]) == "model"
    grep = _shell("grep -ci parrot zoo/pets.csv", "0\n")
    assert derivations("0", [awk, grep], PARROTS) == 2  # two printed zeros
    # but a zero is never what derivations prove (test_proof_zero): two commands over
    # nothing print 0 alike, so only a code check tied to it would prove it
    assert _settle(PARROTS, "question", "0 rows mention parrots.", [awk, grep]) == "model"


def test_a_zero_stands_alone_to_be_printed() -> None:
    """10, 0.5 or v0 print no 0; 0.0 and 000 do. (The command states no number: one that
    prints a number it was given backs none, :func:`test_proof_given`.)"""
    cases = (("10\n", False), ("0.5\n", False), ("v0\n", False), ("0.0\n", True), ("000\n", True))
    for printed, backs in cases:
        call = _shell("awk -f parrots.awk zoo/pets.csv", printed)
        assert (derivations("0", [call], PARROTS) == 1) is backs, printed


def test_a_nonzero_count_of_lines_holding_a_word_is_still_backed_by_a_read() -> None:
    dogs = "How many rows of zoo/pets.csv mention dog?"
    read = _read("zoo/pets.csv", PETS)
    assert derivations("2", [read], dogs) == 1  # two lines hold "dog"


# --------------------------------------------------------------------------- (d) unwritten
BOTH = "count the WARN lines in logs/build.log and write the count to logs/warn_count.txt"


def _counted(path: str = "logs/build.log") -> dict[str, Criterion]:
    return _criterion("count_matches", path, "lines containing WARN")


def test_an_unsure_request_that_never_touched_the_file_it_names_is_not_proven() -> None:
    """Read as a question (code sees an imperative: unsure), answered with a count that
    ``count_matches`` ties — but logs/warn_count.txt was never written, nor read."""
    grep = _shell("grep -c WARN logs/build.log", "3\n")
    assert _settle(BOTH, "question", "3 lines.", [grep], _counted()) == "model"
    # the same request without the file to write is proven by the tied count
    alone = "count the WARN lines in logs/build.log"
    assert _settle(alone, "question", "3 lines.", [grep], _counted()) == "code"


def test_an_unsure_request_asks_no_second_derivation_it_cannot_use() -> None:
    """Nothing a second call derives makes it proven, so nothing is asked."""
    grep = _shell("grep -c WARN logs/build.log", "3\n")
    ask = needs_second_derivation(
        request=BOTH,
        kind="question",
        criteria={},
        verdicts=[Verdict(criterion_id="done", passed=True)],
        calls=[grep],
        output="3 lines.",
    )
    assert ask is None


def test_a_failed_call_on_the_named_file_does_not_touch_it() -> None:
    grep = _shell("grep -c WARN logs/build.log", "3\n")
    failed = ToolCall(
        tool="shell",
        args={"command": "cat logs/warn_count.txt"},
        ok=False,
        exit_code=1,
        stdout="",
        stderr="cat: logs/warn_count.txt: No such file or directory",
    )
    assert _settle(BOTH, "question", "3 lines.", [grep, failed], _counted()) == "model"


# --------------------------------------------------------------------------- properties
@given(
    reads=st.lists(
        st.tuples(st.sampled_from(["read_file", "cat", "head -n 50"]), st.integers(0, 2)),
        min_size=1,
        max_size=6,
    )
)
def test_listings_back_a_value_once_per_conversation(reads: list[tuple[str, int]]) -> None:
    calls = [
        _read("yard/crates.csv", CRATES, conversation=c)
        if how == "read_file"
        else _shell(f"{how} yard/crates.csv", CRATES, conversation=c)
        for how, c in reads
    ]
    assert derivations("67", calls, TOTAL, asked=["67"]) == len({c for _, c in reads})
    assert derivations("67", calls, TOTAL) == 1  # not asked about: one reading


@given(
    timeouts=st.lists(st.one_of(st.none(), st.integers(1, 600)), min_size=1, max_size=5),
    spaces=st.lists(st.integers(1, 3), min_size=1, max_size=5),
)
def test_a_command_counts_once_whatever_its_timeout_or_spacing(
    timeouts: list[int | None], spaces: list[int]
) -> None:
    calls = []
    for i, timeout in enumerate(timeouts):
        command = "wc" + " " * spaces[i % len(spaces)] + "-l yard/crates.csv"
        more = {} if timeout is None else {"timeout_s": timeout}
        calls.append(_shell(command, "5 yard/crates.csv\n", **more))
    assert derivations("5", calls, "how many lines does yard/crates.csv have?") == 1


def test_a_short_result_that_prints_a_number_backs_only_that_number() -> None:
    """``wc -l`` printing "9 yard/crates.csv" is one line, but its one line is no count of
    anything asked: only the 9 it prints is backed (a count of 1 was once "backed" by such
    a line and by a glob's "1 match(es)", and ended ``accept``). A result that prints no
    number — ``ls`` naming files — still counts as the list it is."""
    request = "how many crates in yard/crates.csv weigh over 20 kg?"
    wc = _shell("wc -l yard/crates.csv", "9 yard/crates.csv\n")
    assert derivations("1", [wc], request) == 0
    assert derivations("9", [wc], request) == 1
    names = _shell("ls yard", "crates.csv\n")
    assert derivations("1", [names], "how many files are in yard?") == 1


def test_a_plain_count_ties_only_a_request_that_counts_its_unit() -> None:
    """A ``count_matches`` of a file's lines proves "how many lines …" (or rows, entries),
    not "how many guests … are vegetarian?": the file's lines are not the guests asked
    about. Such a count is no proof; the stated value must then be derived twice. A count
    of the lines holding a text the check names still ties (the check says what it
    counts)."""
    guests = "how many guests in party/list.csv are vegetarian?"
    lines = _criterion("count_matches", "party/list.csv", "lines")
    wc = _shell("wc -l party/list.csv", "7 party/list.csv\n")
    assert _settle(guests, "question", "7", [wc], lines) == "model"
    holding = _criterion("count_matches", "party/list.csv", "lines containing veg")
    assert _settle(guests, "question", "3", [wc], holding) == "code"
    rows = "how many rows does party/list.csv have?"
    assert _settle(rows, "question", "7", [wc], lines) == "code"


_SALES = "region,amount\nnorth,1200\nsouth,950\neast,1300\nwest,800\n"
_SUM_ASKED = "what is the total of the amount column in data/sales.csv?"


def test_derivations_that_disagree_prove_nothing() -> None:
    """5 from ``wc -l``, then 4250 read off the file in a fresh conversation and asked
    about, then 5 again from ``wc -l``: the command's 5 and the file's five lines once
    backed the wrong 5 twice — a count backs no total now (test_proof_counts). Two
    different commands that print a wrong total (the last three rows' 3050) back it
    twice, but the subtask was asked about 4250 and ended on an answer that does not
    state it — the derivations disagreed. The same calls ending on 4250, as asked, are
    proof."""
    count = _shell("wc -l < data/sales.csv", "5\n")
    read = _read("data/sales.csv", _SALES, conversation=1)
    again = _shell("wc -l < data/sales.csv", "5\n", conversation=2)
    five = "The total of the amount column in data/sales.csv is 5."
    assert _settle(_SUM_ASKED, "question", five, [count, read, again]) == "model"  # wc alone
    rows = _shell("awk -F, 'NR > 2 { s += $2 } END { print s }' data/sales.csv", "3050\n")
    tail = _shell("tail -n 3 data/sales.csv | awk -F, '{ s += $2 } END { print s }'", "3050\n")
    wrong = "The total of the amount column in data/sales.csv is 3050."
    assert _settle(_SUM_ASKED, "question", wrong, [rows, read, tail]) == "code"  # no ask: backed
    assert _settle(_SUM_ASKED, "question", wrong, [rows, read, tail], asked="4250") == "model"
    right = five.replace("is 5", "is 4250")
    read2 = _read("data/sales.csv", _SALES, conversation=2)
    assert _settle(_SUM_ASKED, "question", right, [count, read, read2], asked="4250") == "code"


# --------------------------------------------------------------------------- (e) a fallback
def _outcome(calls: list[ToolCall], fell_back: bool) -> list[SubTaskOutcome]:
    """One subtask asked about 6 on attempt 1: it ended on attempt 2's answer, stating 6
    again; or — ``fell_back`` — attempt 2 failed and it ended on attempt 1's answer."""
    done = Verdict(criterion_id="done", passed=True, attempt=1 if fell_back else 2)
    return [
        SubTaskOutcome(
            subtask_id="s",
            output="It has 6 lines.",
            verdicts=[done],
            attempts=2,
            tool_calls=calls,
            asked="6",
        )
    ]


def test_a_fresh_conversation_that_did_not_state_the_value_again_is_no_second_reading() -> None:
    """The first conversation read 6 off a glob of six files; asked again, the fresh one
    listed the same glob and answered 5, which failed: the subtask ended on the 6 asked
    about. The fresh listing agreed with nothing. (The real case asked how many lines a
    file has, which a glob's paths no longer back at all: ``_backers``.)"""
    text = "how many python files are there under lab?"
    files = "\n".join(f"lab/m{i}.py" for i in range(6)) + "\n"
    glob = ToolCall(tool="glob", args={"pattern": "lab/**/*.py"}, ok=True, content=files)
    again = msgspec.structs.replace(glob, conversation=1)
    verdicts = [Verdict(criterion_id="request", passed=True)]

    def ended(fell_back: bool) -> str | None:
        return established(
            request=text,
            kind="question",
            criteria={},
            task_verdicts=verdicts,
            outcomes=_outcome([glob, again], fell_back),
            output="There are 6.",
        )

    assert ended(fell_back=False) == "code"  # it stated 6 again: a second reading
    assert ended(fell_back=True) == "model"
