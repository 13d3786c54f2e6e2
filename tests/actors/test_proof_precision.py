"""Three wrong accepts of a real-model run (Qwen2.5-Coder-1.5B, issue 23), each a failure
class the proof (``artoo.actors.verification.proof``) now refuses, with a guard that the
right cases beside them still prove. Requests and files are the tests' own.

- a name question answered without a stated name is proven by a figure it states;
"""

from __future__ import annotations

from artoo.actors.verification.proof import (
    Corroboration,
    derivations,
    needs_second_derivation,
)
from artoo.schemas import Criterion, ToolCall, Verdict

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
