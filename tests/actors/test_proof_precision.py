"""Three wrong accepts of a real-model run (Qwen2.5-Coder-1.5B, issue 23), each a failure
class the proof (``artoo.actors.verification.proof``) now refuses, with a guard that the
right cases beside them still prove. Requests and files are the tests' own.

- a name question answered without a stated name is proven by a figure it states;
- a count over several files in a plain unit is tied to a how-many question about one of
  them;
- subtasks of one round asked about different values are taken as agreeing.
"""

from __future__ import annotations

from typing import Any

from artoo.actors.verification._counting import files_measured, measure
from artoo.actors.verification.proof import (
    Corroboration,
    derivations,
    established,
    needs_second_derivation,
)
from artoo.schemas import Criterion, SubTaskOutcome, ToolCall, Verdict

from .proof_helpers import criterion as _criterion
from .proof_helpers import read_call as _read
from .proof_helpers import settle as _settle
from .proof_helpers import shell_call as _shell


def _ask(
    request: str,
    output: str,
    calls: list[ToolCall],
    criteria: dict[str, Criterion] | None = None,
) -> Corroboration | None:
    criteria = criteria or {}
    return needs_second_derivation(
        request=request,
        kind="question",
        criteria=criteria,
        verdicts=[Verdict(criterion_id=c, passed=True) for c in (*criteria, "done")],
        calls=calls,
        output=output,
    )


# --------------------------------------------------------------------------- noname
SHED = "tool,kg\nspade,3\nmallet,9\nrake,2\nshears,1\n"
CAPS = "tool,kg\nSpade,3\nMallet,9\nRake,2\nShears,1\n"
HEAVIEST = "which tool in shed/tools.csv weighs the most?"
NONAME = "The heaviest tool in shed/tools.csv is the mallet, at 9 kg."


def test_a_name_question_answered_with_no_name_is_not_proven_by_its_figure() -> None:
    """The mallet is lowercase: the answer states no value the proof sees as a name,
    only 9 — read off the listing in two conversations, asked about. A figure is not the
    name asked for: not established by code, and no second derivation of 9 is asked."""
    first = _read("shed/tools.csv", SHED)
    again = _read("shed/tools.csv", SHED, conversation=1)
    assert derivations("9", [first, again], HEAVIEST, asked=["9"]) == 2
    assert _settle(HEAVIEST, "question", NONAME, [first, again], asked="9") == "model"
    printed = _shell("awk -F, 'NR>1 && $2>m {m=$2} END {print m}' shed/tools.csv", "9\n")
    assert _settle(HEAVIEST, "question", NONAME, [first, printed]) == "model"
    assert _ask(HEAVIEST, NONAME, [first]) is None  # nothing about the figure
    assert _ask(HEAVIEST, "The heaviest is the mallet, at 10 kg.", [first]) is None


def test_a_name_question_answered_with_a_name_read_twice_still_proves() -> None:
    """Guard: Mallet, capitalised, printed by the file and stated again by a fresh
    conversation asked about it — established by code; one reading asks about the name."""
    first = _read("shed/tools.csv", CAPS)
    again = _read("shed/tools.csv", CAPS, conversation=1)
    named = "The heaviest tool in shed/tools.csv is Mallet, at 9 kg."
    assert _settle(HEAVIEST, "question", named, [first, again], asked="Mallet") == "code"
    assert _ask(HEAVIEST, named, [first]) == Corroboration(value="Mallet", call=first)
    # a question that asks how much, not which, is proven by its figure as before
    howmuch = "how much does the heaviest tool in shed/tools.csv weigh?"
    assert _settle(howmuch, "question", NONAME, [first, again], asked="9") == "code"


# --------------------------------------------------------------------------- multiplain
GEAR = "find the file under lib that defines the class Gear and tell me how many lines it has"
SPREAD = "'lib' holds 4 file(s): 61 lines"  # what measure saw over the directory
ONE = "'lib/gear.py': 17 lines"


def _counted(
    request: str,
    output: str,
    calls: list[ToolCall],
    path: str,
    unit: str,
    seen: str,
    counts: list[int],
) -> str | None:
    """``established`` for an answer whose one ``count_matches`` check of ``path`` passed
    on what it observed (``seen``, ``counts``), as a verdict in the log holds it."""
    criteria = _criterion("count_matches", path, unit)
    observed: dict[str, Any] = {"counts": counts, "seen": seen} if seen else {}
    verdicts = [
        Verdict(criterion_id="t1", passed=True, observed=observed),
        Verdict(criterion_id="request", passed=True),
    ]
    return established(
        request=request,
        kind="question",
        criteria=criteria,
        task_verdicts=verdicts,
        outcomes=[SubTaskOutcome(subtask_id="s", output=output, tool_calls=calls)],
        output=output,
    )


def test_a_count_of_lines_over_a_directory_ties_no_how_many_about_one_file() -> None:
    """The Perceiver's check counted the lines of every file under lib (61): it passed on
    the answer 61, but the question asks about the one file that defines Gear. The count
    does not tie the answer, which is held to backing like any question's — one call's
    word is not proof, and a second derivation is asked."""
    wc = _shell("cat lib/*.py | wc -l", "61\n")
    answer = "The file under lib that defines the class Gear has 61 lines."
    assert _counted(GEAR, answer, [wc], "lib", "lines", SPREAD, [61]) == "model"
    # a glob, measured or not yet, is several files too
    glob = "2 file(s) match 'lib/**/*.py': 61 lines"
    assert _counted(GEAR, answer, [wc], "lib/**/*.py", "lines", glob, [61]) == "model"
    assert _counted(GEAR, answer, [wc], "lib/**/*.py", "words", "", []) == "model"
    criteria = _criterion("count_matches", "lib", "lines")
    observed = {"counts": [61], "seen": SPREAD}
    ask = needs_second_derivation(
        request=GEAR,
        kind="question",
        criteria=criteria,
        verdicts=[Verdict(criterion_id="t1", passed=True, observed=observed)],
        calls=[wc],
        output=answer,
    )
    assert ask == Corroboration(value="61", call=wc)
    # a pending check of the same path, judged later, is read by that observation
    ask = needs_second_derivation(
        request=GEAR,
        kind="question",
        criteria=criteria,
        verdicts=[Verdict(criterion_id="t1", passed=True, observed=observed)],
        calls=[wc],
        output=answer,
        pending=list(_criterion("count_matches", "./lib/", "lines").values()),
    )
    assert ask == Corroboration(value="61", call=wc)


def test_a_count_of_files_over_a_directory_or_lines_of_one_file_still_ties() -> None:
    """Guard: how many files lib holds is what a ``files`` count over it measures; a
    ``lines`` count of the one file (or of a glob that matched one) ties its how-many."""
    files = "how many files are there under lib?"
    listed = "'lib' holds 4 file(s)"
    assert _counted(files, "There are 4 files.", [], "lib", "files", listed, [4]) == "code"
    single = "how many lines does lib/gear.py have?"
    wc = _shell("wc -l lib/gear.py", "17 lib/gear.py\n")
    assert _counted(single, "It has 17 lines.", [wc], "lib/gear.py", "lines", ONE, [17]) == "code"
    assert _counted(GEAR, "It has 17 lines.", [wc], "lib/gear.py", "lines", ONE, [17]) == "code"
    one = "1 file(s) match 'lib/g*.py': 17 lines"
    assert _counted(GEAR, "It has 17 lines.", [wc], "lib/g*.py", "lines", one, [17]) == "code"
    # an older log's verdict with no observation: a path that is no glob ties as before
    assert _counted(GEAR, "It has 17 lines.", [wc], "lib/gear.py", "lines", "", []) == "code"


def test_the_observation_read_is_the_one_measure_writes(tmp_path: Any) -> None:
    """:func:`files_measured` reads what :func:`measure` logs: a directory's and a glob's
    number of files, nothing for one file."""
    (tmp_path / "lib").mkdir()
    for name in ("gear.py", "axle.py"):
        (tmp_path / "lib" / name).write_text("a\nb\n")
    for path, unit, files in (
        ("lib", "lines", 2),
        ("lib", "files", 2),
        ("lib/*.py", "words", 2),
        ("lib/g*.py", "lines", 1),
        ("lib/gear.py", "lines", None),
    ):
        measured = measure(path, unit, tmp_path)
        assert not isinstance(measured, str)
        assert files_measured(measured[1]) == files, (path, unit, measured)


# --------------------------------------------------------------------------- askdis
LEDGER = "day,amount\nmon,40\ntue,95\nwed,60\nthu,25\nfri,80\n"
SUM = "what is the sum of the amount column in till/ledger.csv?"  # 300


def _round(outputs_asked: list[tuple[str, str, list[ToolCall]]], merged: str) -> str | None:
    """``established`` for a round of subtasks that all passed, each with its answer, the
    value it was asked about again and its calls; ``merged`` the round's answer."""
    outcomes = [
        SubTaskOutcome(
            subtask_id=f"s{n}",
            output=output,
            tool_calls=calls,
            asked=asked,
            verdicts=[Verdict(criterion_id=f"done{n}", passed=True)],
        )
        for n, (output, asked, calls) in enumerate(outputs_asked)
    ]
    return established(
        request=SUM,
        kind="question",
        criteria={},
        task_verdicts=[Verdict(criterion_id="request", passed=True)],
        outcomes=outcomes,
        output=merged,
    )


def test_subtasks_asked_about_different_values_prove_nothing() -> None:
    """Three subtasks each answered the whole question: two were asked about 6 (the
    ledger's lines, counted two ways), one about 0 (an awk over a column that is not
    there). Merged, "6. 6. 0." states values each backed, 6 by three calls — but the
    round's derivations disagree on what the answer is: not established by code."""
    wc = _shell("wc -l till/ledger.csv", "6 till/ledger.csv\n")
    cut = _shell("cut -d, -f1 till/ledger.csv | wc -l", "6\n", conversation=1)
    awk = _shell("awk -F, '{s+=$5} END {print s}' till/ledger.csv", "0\n")
    again = _shell("awk -F, '{t+=$4} END {print t}' till/ledger.csv", "0\n", conversation=1)
    rows = _shell("grep -c . till/ledger.csv", "6\n")
    six, zero = "The sum is 6.", "The sum is 0."
    subtasks = [(six, "6", [wc, cut]), (six, "6", [rows]), (zero, "0", [awk, again])]
    assert _round(subtasks, "6. 6. 0.") == "model"
    assert _round([(six, "`6`", [wc, cut]), (zero, "0", [awk, again])], "6. 0.") == "model"


def test_subtasks_asked_about_the_same_value_still_prove() -> None:
    """Guard: two subtasks asked about the same value (300, once in backticks), each
    backed by two different calls, agree: established by code, as is a round where one
    subtask was asked nothing."""
    awk = _shell("awk -F, 'NR>1 {s+=$2} END {print s}' till/ledger.csv", "300\n")
    read = _read("till/ledger.csv", LEDGER, conversation=1)
    py = _shell(
        "python3 -c \"import csv; print(sum(int(r['amount']) for r in "
        "csv.DictReader(open('till/ledger.csv'))))\"",
        "300\n",
        conversation=1,
    )
    answer = "The sum is 300."
    assert _round([(answer, "300", [awk, read]), (answer, "`300`", [awk, py])], answer) == "code"
    assert _round([(answer, "300", [awk, read]), (answer, "", [py])], answer) == "code"
