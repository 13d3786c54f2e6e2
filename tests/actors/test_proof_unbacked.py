"""A value no tool result shows is asked to be shown (``needs_second_derivation``): an
answer that passed every rule, to a question whose values must be backed, stating a value
the model worked out in its head — grounding passes a column's mean, rounded, read off a
file; the proof backs only what a result prints or code derives exactly — is asked to
compute it with a tool that prints it (a ``Corroboration`` with no call), where before
nothing was asked and a right answer ended ``success``. Nothing else changes: every case
where no derivation makes the answer proof still asks nothing, and the ask proves
nothing. Requests and files are the tests' own."""

from __future__ import annotations

from collections.abc import Sequence

from artoo.actors.verification.grounding import grounding, tool_outputs
from artoo.actors.verification.proof import (
    Corroboration,
    derivations,
    needs_second_derivation,
)
from artoo.schemas import Check, Criterion, FileEffect, ToolCall, Verdict

from .proof_helpers import read_call as _read
from .proof_helpers import settle as _settle
from .proof_helpers import shell_call as _shell

PARCELS = "parcel,kg\np1,12\np2,30\np3,8\np4,17\np5,23\n"
MEAN = "What is the average parcel weight in depot/parcels.csv?"  # 90 / 5 = 18
READ = _read("depot/parcels.csv", PARCELS)
AWK = _shell("awk -F, 'NR > 1 { s += $2; n++ } END { print s / n }' depot/parcels.csv", "18\n")
PY = _shell(
    "python3 -c \"import csv; r = list(csv.DictReader(open('depot/parcels.csv'))); "
    "print(sum(int(x['kg']) for x in r) // len(r))\"",
    "18\n",
)

VISITS = "Oslo\nLima\nOslo\nPerth\nLima\nOslo\n"
CITIES = "How many different cities does trips/visits.txt list?"  # Oslo, Lima, Perth: 3


def _ask(
    output: str,
    calls: list[ToolCall],
    *,
    request: str = MEAN,
    kind: str = "question",
    criteria: Sequence[Criterion] = (),
    verdicts: list[Verdict] | None = None,
    pending: Sequence[Criterion] = (),
    unbacked: bool = True,
) -> Corroboration | None:
    by_id = {c.id: c for c in criteria}
    if verdicts is None:
        verdicts = [Verdict(criterion_id=c, passed=True) for c in (*by_id, "done")]
    return needs_second_derivation(
        request=request,
        kind=kind,
        criteria=by_id,
        verdicts=verdicts,
        calls=calls,
        output=output,
        pending=pending,
        unbacked=unbacked,
    )


def test_a_mean_worked_out_from_a_file_read_is_asked_to_be_shown() -> None:
    """The failure: grounding passes 18 (the kg column's mean), so every verdict passes;
    the proof finds no call that backs it (the file prints 12, 30 … and code derives its
    sum, not its mean): ``model``, and nothing was asked."""
    assert grounding("The average is 18 kg.", tool_outputs([READ]), request=MEAN).grounded
    assert derivations("18", [READ], MEAN) == 0
    assert _settle(MEAN, "question", "The average is 18 kg.", [READ]) == "model"
    ask = _ask("The average is 18 kg.", [READ])
    assert ask == Corroboration(value="18") and ask.call is None and ask.unbacked
    assert ask.feedback().startswith("Your answer states 18, which no tool result shows.")
    assert "Compute it with a command or tool whose output prints it" in ask.feedback()


def test_a_count_the_file_read_does_not_print_is_asked_to_be_shown() -> None:
    """A count over a text ``read_file`` returned, which code does not derive from it (its
    lines are 6, the cities 3): no call backs it."""
    read = _read("trips/visits.txt", VISITS)
    assert derivations("3", [read], CITIES) == 0
    assert _ask("It lists 3 cities.", [read], request=CITIES) == Corroboration(value="3")
    # a count code derives from the listing is backed by it: one call, a second derivation
    lines = "How many lines does trips/visits.txt have?"
    assert _ask("6 lines.", [read], request=lines) == Corroboration(value="6", call=read)


def test_the_value_asked_about_is_the_first_no_call_backs() -> None:
    """Beside a value one call backs (the 5 parcels ``wc`` counted), the mean no call
    shows is the one asked about; any value unbacked keeps the proof ``model``."""
    wc = _shell("grep -c '^p' depot/parcels.csv", "5\n")
    answer = "Over 5 parcels the average is 18 kg."
    assert _ask(answer, [READ, wc]) == Corroboration(value="18")
    assert _settle(MEAN, "question", answer, [READ, wc]) == "model"


def test_what_shows_it_then_is_held_to_the_proof_as_before() -> None:
    """Shown by one command, the same value is one call's word: a second derivation is
    asked about, naming that command; two different commands make it ``code``. The ask
    itself proves nothing."""
    answer = "The average is 18 kg."
    assert _ask(answer, [READ, AWK]) == Corroboration(value="18", call=AWK)
    assert _settle(MEAN, "question", answer, [READ, AWK]) == "model"
    assert _settle(MEAN, "question", answer, [READ, AWK, PY]) == "code"


def test_never_asked_where_no_derivation_makes_it_proof() -> None:
    """The cases asked nothing before still ask nothing for a value no call backs: a
    verdict failed, a verdict is a model's, a change, a criterion a model will judge, a
    check copied from the request, no kind, nothing stated — and a value two different
    calls already back, or ``Config.corroborate_unbacked`` off (a log from before it)."""
    answer = "The average is 18 kg."
    assert _ask(answer, [READ]) is not None  # the case each below differs from
    failed = [Verdict(criterion_id="done", passed=False, failure_class="logical")]
    assert _ask(answer, [READ], verdicts=failed) is None
    judged = [Verdict(criterion_id="done", passed=True, signal="llm", confidence=0.9)]
    assert _ask(answer, [READ], verdicts=judged) is None
    plausible = Criterion(id="t1", text="the average reads right", mode="plausible")
    assert _ask(answer, [READ], pending=[plausible]) is None
    copied = Criterion(
        id="t1", text="names the weight", mode="verifiable",
        check=Check(kind="output_contains", value="weight"),
    )  # fmt: skip
    assert _ask(answer, [READ], criteria=[copied]) is None
    assert _ask(answer, [READ], kind="") is None
    assert _ask("Done.", [READ]) is None
    wrote = ToolCall(
        tool="shell",
        args={"command": "awk -F, 'NR > 1 { s += $2; n++ } END { print s / n }' "
              "depot/parcels.csv > depot/mean.txt"},
        exit_code=0,
        stdout="",
        sandboxed=True,
        effects=(FileEffect(path="depot/mean.txt", change="created"),),
    )  # fmt: skip
    change = "write the average parcel weight in depot/parcels.csv to depot/mean.txt"
    assert _ask(answer, [READ, wrote], request=change, kind="change") is None
    assert _ask(answer, [READ, wrote], request=change, kind="question") is None  # unsure
    assert _ask(answer, [READ, AWK, PY]) is None  # two different calls: proof already
    assert _ask(answer, [READ], unbacked=False) is None  # the rule before


def test_a_request_that_asks_for_no_value_is_not_asked_to_show_one() -> None:
    """A request the model gave no kind, which code sees as no question ("sixteen parts"):
    held to a question's proof (nothing changed), its answer's "03" is ``model`` — but it
    answers no question, and no tool should compute its numbers: nothing is asked. Code
    seeing a question, the same unsure reading asks."""
    assert _ask("this is part 03", [], request="sixteen parts", kind="unknown") is None
    assert _settle("sixteen parts", "unknown", "this is part 03", []) == "model"
    ask = _ask("The average is 18 kg.", [READ], kind="unknown")
    assert ask == Corroboration(value="18")
