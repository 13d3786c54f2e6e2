"""How an answer was established (``artoo.actors.verification.proof``) and the strict
grounding under it: what a failed command printed grounds nothing, one command's word
is not proof, a model's pass never is; and when a second derivation is asked for
(``needs_second_derivation``): only where the proof would end ``model`` for want of a
second, different call agreeing with the one that backs the answer."""

from __future__ import annotations

import re
from collections.abc import Sequence

from hypothesis import given
from hypothesis import strategies as st

from artoo.actors.verification.grounding import tool_outputs
from artoo.actors.verification.ladder import ungrounded
from artoo.actors.verification.proof import (
    Corroboration,
    copied_from_request,
    derivations,
    established,
    how_established,
    needs_second_derivation,
)
from artoo.actors.verification.request import request_paths
from artoo.schemas import Check, Criterion, FileEffect, SubTaskOutcome, ToolCall, Verdict

from .proof_helpers import criterion as _criterion
from .proof_helpers import read_call as _read
from .proof_helpers import settle as _settle
from .proof_helpers import shell_call as _shell

_Q = "What is the total of the amount column in data/sales.csv?"


def _wrote(command: str, path: str) -> ToolCall:
    """A command that worked and changed ``path`` (the sandbox's observed effect)."""
    return ToolCall(
        tool="shell",
        args={"command": command},
        exit_code=0,
        output_preview="exit code: 0",
        stdout="",
        sandboxed=True,
        effects=(FileEffect(path=path, change="created"),),
    )


def _proof(output: str, calls: list[ToolCall], verdicts: list[Verdict] | None = None) -> str | None:
    outcome = SubTaskOutcome(subtask_id="s", output=output, tool_calls=calls)
    return established(
        request=_Q,
        kind="question",
        criteria={},
        task_verdicts=verdicts or [Verdict(criterion_id="request", passed=True)],
        outcomes=[outcome],
        output=output,
    )


def test_what_a_failed_command_printed_grounds_nothing() -> None:
    missing = _shell("cat nope.csv | wc -l", "0", stderr="cat: nope.csv: No such file")
    failed = _shell("grep -c x nope.csv", "0", exit_code=2)
    assert tool_outputs([missing, failed], strict=True) == []
    assert "0" in " ".join(tool_outputs([missing, failed]))  # the lenient, older reading
    weak = ungrounded("There are 0 rows.", [missing, failed], request=_Q, kind="question")
    assert weak is not None and weak.ungrounded == ("0",)
    # the display header's "exit code: 0" backs nothing either
    ok = _shell("awk '{ s += $9 } END { print s + 0 }' data/sales.csv", "")
    assert ungrounded("The total is 0.", [ok], request=_Q, kind="question") is not None


def test_a_name_no_tool_showed_is_ungrounded() -> None:
    read = _read("src/util.py", 'def greet(name: str) -> str:\n    return f"hello {name}"')
    which = "Which function in src/util.py builds the greeting?"
    assert ungrounded("It is `greet`.", [read], request=which, kind="question") is None
    weak = ungrounded("It is `make_greeting`.", [read], request=which, kind="question")
    assert weak is not None and weak.ungrounded == ("`make_greeting`",)


def test_one_commands_word_is_not_proof_and_two_that_agree_are() -> None:
    awk = _shell("awk -F, 'NR > 1 { s += $9 } END { print s + 0 }' data/sales.csv", "0")
    assert _proof("The total is 0.", [awk]) == "model"
    right = _shell("awk -F, 'NR > 1 { s += $2 } END { print s }' data/sales.csv", "4250")
    read = _read("data/sales.csv", "region,amount\nnorth,1200\nsouth,950\neast,1300\nwest,800")
    assert derivations("4250", [right, read]) == 2  # a column sum of the file, and awk's
    assert derivations("4250", [right, right]) == 1  # the same call twice is one
    assert _proof("The total is 4250.", [right, read]) == "code"


def test_a_model_verdict_is_never_proof_and_a_code_measure_is() -> None:
    read = _read("data/sales.csv", "region,amount\nnorth,1200")
    judged = [Verdict(criterion_id="t1", passed=True, signal="llm", confidence=0.95)]
    assert _proof("The total is 1200.", [read, read], judged) == "model"
    count = Criterion(
        id="t1",
        text="the count",
        mode="verifiable",
        check=Check(kind="count_matches", path="data/sales.csv", value="lines"),
    )
    outcome = SubTaskOutcome(subtask_id="s", output="2 lines", tool_calls=[read])
    measured = established(
        request="How many lines does data/sales.csv have?",
        kind="question",
        criteria={"t1": count},
        task_verdicts=[Verdict(criterion_id="t1", passed=True)],
        outcomes=[outcome],
        output="2 lines",
    )
    assert measured == "code"
    failed = [Verdict(criterion_id="t1", passed=False, failure_class="logical")]
    assert _proof("The total is 1200.", [read], failed) == "none"
    assert (
        established(  # an older log (no kind): not computed
            request=_Q, kind="", criteria={}, task_verdicts=[], outcomes=[], output=""
        )
        is None
    )


def test_each_value_reads_to_a_person() -> None:
    assert how_established("code").startswith("established by code")
    assert how_established("model").startswith("judged by a model")
    assert how_established(None) == ""


def test_a_check_copied_from_the_request_is_not_proof_alone() -> None:
    copied = Criterion(
        id="t1", text="names artoo", mode="verifiable",
        check=Check(kind="output_contains", value="artoo"),
    )  # fmt: skip
    request = "Which greeting does greet('artoo') return?"
    outcome = SubTaskOutcome(subtask_id="s", output="hi artoo")

    def proof(request_kind: str) -> str | None:
        return established(
            request=request,
            kind=request_kind,
            criteria={"t1": copied},
            task_verdicts=[Verdict(criterion_id="t1", passed=True)],
            outcomes=[outcome],
            output="hi artoo",
        )

    assert proof("change") == "model"  # even where no value is asked for
    assert copied_from_request(Check(kind="output_contains", value="ARTOO"), request)
    assert not copied_from_request(Check(kind="output_contains", value="hello"), request)
    assert not copied_from_request(Check(kind="file_exists", path="artoo"), request)


def test_a_count_read_two_ways_is_two_derivations() -> None:
    """``grep -c`` printed 4, and the file read whole has 4 lines holding the asked-for
    word: two different calls agree."""
    text = "TODO: a\nnotes\nTODO: b\nTODO: c\nideas\nTODO: d\n"
    grep = _shell("grep -c TODO notes/todo.txt", "4")
    read = _read("notes/todo.txt", text)
    request = "How many lines of notes/todo.txt mention TODO?"
    assert derivations("4", [grep, read], request) == 2
    assert derivations("4", [grep, read]) == 1  # without the request's word: grep's alone


def test_a_change_no_check_read_back_is_only_the_models_word() -> None:
    """Real-model bench, final run (edit-4): the only command failed, the Executor answered
    anyway, the one criterion ("done") passed by rule and the task ended ``accept`` with
    the file untouched. A change needs a check that read the workspace; tested on a
    request of another shape (a creation, not the bench's rename)."""
    failed = _shell("cp notes/plan.md notes/plan.bak", "", exit_code=1, stderr="no such file")
    wrote = _wrote("cp notes/plan.md notes/plan.bak", "notes/plan.bak")
    unchecked = {"t1": Criterion(id="t1", text="it is done", mode="verifiable")}
    holds = _criterion("file_contains", "notes/plan.bak", "# Plan")
    for kind, request in (
        ("creation", "write a backup of notes/plan.md to notes/plan.bak"),
        ("change", "Do the weekly report in reports/week.md"),
    ):
        assert _settle(request, kind, "Done.", [failed], unchecked) == "model", kind
        # the file check passes (the file was there before), but the task changed nothing
        assert _settle(request, kind, "Done.", [failed], holds) == "model", kind
        assert _settle(request, kind, "Done.", [wrote], holds) == "code", kind


def test_a_check_of_the_file_read_is_not_a_read_back_of_the_file_written() -> None:
    """A creation whose only passed file check reads its *source* (which was there
    before) proves nothing about the file it was to write; a check of the written file
    does. Tested on a copy, not the bench's VERSION task."""
    request = "copy the header line of data/sales.csv into out/header.txt"
    wrote = _wrote("head -1 data/sales.csv > out/header.txt", "./out/header.txt")
    source = _criterion("file_exists", "data/*.csv")
    target = _criterion("file_matches", "out/*.txt", "^region,")
    assert _settle(request, "creation", "Done.", [wrote], source) == "model"
    assert _settle(request, "creation", "Done.", [wrote], target) == "code"


def test_an_unsure_request_is_held_to_both_a_write_and_an_answer() -> None:
    """Real-model bench (twostep-4): "read the VERSION from src/config.py and write it,
    alone, to VERSION.txt", read by the model as a question (code sees no question: the
    kinds disagree, unsure), ended ``accept`` on a reply that stated nothing and a
    ``read_file`` alone. Tested on another two-step request: an unsure request is not
    established by code unless a check read back what it changed, or it changed nothing
    and its answer's values are backed twice like a question's — and only when every
    workspace path the request names was touched by a call that worked: answered as a
    question, a request naming a file to write that no call wrote is not proven."""
    request = "take the port from conf/app.ini and put it in port.txt"
    read = _read("conf/app.ini", "[server]\nport = 8042\nhost = example\n")
    grep = _shell("grep port conf/app.ini", "port = 8042")
    wrote = _wrote("echo 8042 > port.txt", "port.txt")

    def proof(output: str, calls: list[ToolCall], criteria: dict[str, Criterion]) -> str | None:
        return _settle(request, "question", output, calls, criteria)  # code sees none: unsure

    rambling = "The result does not directly answer the subtask as it is a script."
    assert proof(rambling, [read], {}) == "model"
    assert proof("The port is 8042.", [read], {}) == "model"  # one derivation
    # two agree and nothing changed, but port.txt, which the request names, was never
    # written (nor read): answered as a question, the write it asked for was not done
    assert proof("The port is 8042.", [read, grep], {}) == "model"
    assert proof("The port is 8042.", [read, grep, wrote], {}) == "model"  # wrote, not read back
    back = _criterion("file_contains", "port.txt", "8042")
    assert proof("Done.", [read, wrote], back) == "code"
    # an unsure request that names only the file it reads is proven as a question: two
    # different calls that worked agree on the value, nothing changed
    report = "take the port from conf/app.ini and report it"
    assert _settle(report, "question", "The port is 8042.", [read, grep]) == "code"
    assert _settle(report, "question", "The port is 8042.", [read]) == "model"  # one derivation
    failed = _shell("grep port conf/app.ini", "port = 8042", exit_code=2)
    assert _settle(report, "question", "The port is 8042.", [read, failed]) == "model"


def test_a_count_does_not_prove_a_value_question() -> None:
    """Real-model bench (returns-6): "what does src/app.py print when it runs?" ended
    ``accept`` with a made-up printed text beside a line count that ``count_matches``
    proved. A count ties to a number the answer states, not to a name or value. Tested
    on a name question."""
    counted = _criterion("count_matches", "lib/text.py", "lines")
    wc = _shell("wc -l lib/text.py", "40 lib/text.py")
    output = "The longest is `render_page`. lib/text.py has 40 lines."
    request = "which function in lib/text.py is the longest?"
    assert _settle(request, "question", output, [wc], counted) == "model"
    # the same count does prove a how-many question's number
    how_many = "how many lines does lib/text.py have?"
    assert _settle(how_many, "question", "It has 40 lines.", [wc], counted) == "code"


def test_a_question_of_any_shape_needs_its_value_backed() -> None:
    """Real-model bench (csv-3): "What is the highest price in data/inventory.csv?", its
    shape read as free text, ended ``accept`` on the CSV row one wrong ``sort`` printed.
    Every question needs a tied check or two derivations, whatever shape was read; and a
    ``count_matches`` ties only to a request that asks to count, not to a total. Tested
    on other questions (a name question's answer states its name — Oslo, capitalised: a
    row stating only a lowercase name is proven by no figure of it)."""
    request = "Which city in data/towns.csv is the largest?"
    sort = _shell("sort -t, -k3 -n data/towns.csv | tail -1", "Oslo,no,700000")
    output = "The largest is Oslo,no,700000."
    assert _settle(request, "question", output, [sort]) == "model"  # one command's word
    read = _read("data/towns.csv", "city,country,pop\nBergen,no,290000\nOslo,no,700000\n")
    assert _settle(request, "question", output, [sort, read]) == "code"  # a second call agrees
    lines = _criterion("count_matches", "data/towns.csv", "lines")
    wc = _shell("wc -l data/towns.csv", "3 data/towns.csv")
    total = "What is the total population in data/towns.csv?"
    assert _settle(total, "question", "The total is 3.", [wc], lines) == "model"  # no sum
    how_many = "how many lines does data/towns.csv have?"
    assert _settle(how_many, "question", "It has 3 lines.", [wc], lines) == "code"


def test_that_a_written_file_exists_does_not_prove_what_it_holds() -> None:
    """Real-model bench (create-2): "make a copy of README.md named README.bak" wrote one
    made-up line to README.bak and ended ``accept`` on ``file_exists``. Existence is no
    proof of a write; a removal's ``file_exists`` = false is. Tested on other files."""
    copy = _wrote("echo notes > docs/guide.old", "docs/guide.old")
    request = "make a copy of docs/guide.md named docs/guide.old"
    exists = _criterion("file_exists", "docs/guide.old")
    assert _settle(request, "creation", "Done.", [copy], exists) == "model"
    held = _criterion("file_contains", "docs/guide.old", "# Guide")
    assert _settle(request, "creation", "Done.", [copy], held) == "code"
    gone = ToolCall(
        tool="shell",
        args={"command": "rm logs/old.log"},
        exit_code=0,
        output_preview="exit code: 0",
        stdout="",
        sandboxed=True,
        effects=(FileEffect(path="logs/old.log", change="deleted"),),
    )
    removed = _criterion("file_exists", "logs/old.log", False)
    assert _settle("remove logs/old.log", "creation", "Done.", [gone], removed) == "code"


def test_a_request_the_model_gave_no_kind_is_held_to_both_duties() -> None:
    """Real-model bench (create-2, twostep-1 r2): with no valid kind from the model
    (``unknown``) and an imperative code cannot read as a question, nothing was asked of
    the proof, and a "Done." with one unchecked write ended ``accept``. Now a request with
    no kind is held like one whose readings disagree: a write read back, or nothing
    changed and the stated values backed twice. Tested on other requests."""
    request = "put a copy of conf/app.ini into conf/app.ini.bak"
    copy = _wrote("echo x > conf/app.ini.bak", "conf/app.ini.bak")
    assert _settle(request, "unknown", "Done.", [copy]) == "model"  # a write not read back
    assert _settle(request, "unknown", "Done.", []) == "model"  # nothing done, nothing backed
    back = _criterion("file_contains", "conf/app.ini.bak", "[server]")
    assert _settle(request, "unknown", "Done.", [copy], back) == "code"
    greet = "greet the team"
    assert _settle(greet, "unknown", "Hello, team!", []) == "model"  # only the model's word
    port = "tell me the port in conf/app.ini"
    read = _read("conf/app.ini", "[server]\nport = 8042\n")
    grep = _shell("grep port conf/app.ini", "port = 8042")
    assert _settle(port, "unknown", "The port is 8042.", [read]) == "model"  # one derivation
    assert _settle(port, "unknown", "The port is 8042.", [read, grep]) == "code"


# --------------------------------------------------------------------------- a second derivation
LINES = "how many lines are in notes/todo.txt?"
NOTES = "TODO: a\nnotes\nTODO: b\nTODO: c\nideas\nTODO: d\nend\n"
WC = _shell("wc -l notes/todo.txt", "7 notes/todo.txt\n")
READ = _read("notes/todo.txt", NOTES)


def _ask(
    output: str,
    calls: list[ToolCall],
    *,
    request: str = LINES,
    kind: str = "question",
    criteria: Sequence[Criterion] = (),
    verdicts: list[Verdict] | None = None,
    pending: Sequence[Criterion] = (),
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
    )


def _check(kind: str, path: str, value: str | bool | None = None, cid: str = "t1") -> Criterion:
    return Criterion(
        id=cid, text="checked", mode="verifiable", check=Check(kind=kind, path=path, value=value)
    )


def test_an_answer_one_call_backs_is_asked_about_once_more() -> None:
    ask = _ask("7 lines.", [WC])
    assert ask == Corroboration(value="7", call=WC)
    assert ask.feedback() == (
        "Your answer states 7, which one tool call backs (`wc -l notes/todo.txt`). Derive it "
        "once more with a different command or tool (not that call), then answer again "
        "starting with the value."
    )
    assert "read_file(path=" in Corroboration(value="7", call=READ).feedback()
    # the same call again, in a later attempt, is still one derivation
    assert _ask("7 lines.", [WC, WC]) is not None


def test_the_value_asked_about_is_the_answers_not_the_exit_code_it_mentions() -> None:
    told = "`wc -l notes/todo.txt` returned the exit code 0 with the output 7 notes/todo.txt."
    assert _ask(told, [WC]) == Corroboration(value="7", call=WC)


def test_derivations_of_another_place_than_the_request_names_are_no_proof() -> None:
    """The memory-effect bench: a plan recalled from "python files in src" counted src for
    "… under src/models?"; two commands agreed on 3 (src/models holds 1) → ``accept``."""
    request = "how many python files are under src/models?"
    everything = _shell("find src -type f | wc -l", "3\n")
    python = _shell("find src -name '*.py' | wc -l", "3\n")
    answer = "There are 3 Python files under the 'src' directory."
    assert derivations("3", [everything, python], request) == 0
    assert _settle(request, "question", answer, [everything, python]) != "code"
    # nothing backs it: asked to compute it with a tool over what the request names
    assert _ask(answer, [everything], request=request) == Corroboration(value="3")
    right = _shell("find src/models -name '*.py' | wc -l", "1\n")
    listed = _shell("ls src/models", "user.py\n")
    assert derivations("1", [right, listed], request) == 2
    assert _settle(request, "question", "1 file.", [right, listed]) == "code"
    # a request that names no path holds every call to nothing more
    assert derivations("3", [everything, python], "how many python files are there?") == 2


def test_two_different_calls_that_agree_need_nothing_more() -> None:
    assert derivations("7", [WC, READ], LINES) == 2  # the file's 7 lines: a count asked
    assert _ask("7 lines.", [WC, READ]) is None


def test_no_value_is_never_asked_about() -> None:
    assert _ask("Done.", [WC]) is None  # states nothing: nothing to derive
    assert _ask("Done.", []) is None


def test_a_count_tied_to_a_how_many_request_is_proof_already() -> None:
    counted = _check("count_matches", "notes/todo.txt", "lines")
    assert _ask("7 lines.", [WC], criteria=[counted]) is None
    assert _ask("7 lines.", [WC], pending=[counted]) is None  # the task's own, judged later
    # a count does not tie a value other than a count
    total = "What is the total of the amount column in data/sales.csv?"
    awk = _shell("awk -F, 'NR > 1 { s += $2 } END { print s }' data/sales.csv", "4250\n")
    lines = _check("count_matches", "data/sales.csv", "lines")
    assert _ask("The total is 4250.", [awk], request=total, criteria=[lines]) == Corroboration(
        value="4250", call=awk
    )


def test_a_change_or_an_unsure_request_that_changed_something_is_never_asked() -> None:
    wrote = ToolCall(
        tool="shell",
        args={"command": "wc -l notes/todo.txt > count.txt"},
        exit_code=0,
        stdout="",
        sandboxed=True,
        effects=(FileEffect(path="count.txt", change="created"),),
    )
    change = "write the line count of notes/todo.txt to count.txt"
    assert _ask("7 lines.", [WC, wrote], request=change, kind="change") is None
    assert _ask("7 lines.", [WC, wrote], request=change, kind="question") is None  # unsure
    # unsure and nothing changed: held to a question's proof, so asked
    port = "tell me the port in conf/app.ini"
    grep = _shell("grep port conf/app.ini", "port = 8042\n")
    assert _ask("The port is 8042.", [grep], request=port, kind="unknown") is not None


def test_what_no_derivation_makes_proof_is_never_asked() -> None:
    failed = [Verdict(criterion_id="done", passed=False, failure_class="logical")]
    assert _ask("7 lines.", [WC], verdicts=failed) is None
    judged = [Verdict(criterion_id="done", passed=True, signal="llm", confidence=0.9)]
    assert _ask("7 lines.", [WC], verdicts=judged) is None  # a model's verdict stays one
    plausible = Criterion(id="t1", text="it reads well", mode="plausible")
    assert _ask("7 lines.", [WC], pending=[plausible]) is None  # a model will judge it
    copied = _check("output_contains", "", "lines")  # the request's own word
    assert _ask("7 lines.", [WC], criteria=[copied]) is None
    assert _ask("7 lines.", [WC], kind="") is None  # a log from before TaskSpec.kind
    assert _ask("7 lines.", [WC], verdicts=[]) is None


# --------------------------------------------------------------------------- properties
_VALUES = re.compile(r"\b(?:3|7|12|40|4250)\b")
_NUMBERS = st.sampled_from(["3", "7", "12", "40", "4250"])
_REQUESTS = st.sampled_from(
    [
        LINES,
        "how many lines are there?",  # no place named: any call may back its value
        "What is the total of the amount column in data/sales.csv?",
        "tell me the port in conf/app.ini",
        "take the port from conf/app.ini and put it in port.txt",
        "delete archive/old.log",
    ]
)
_KINDS = st.sampled_from(["question", "change", "creation", "unknown", ""])


@st.composite
def _calls(draw: st.DrawFn) -> list[ToolCall]:
    out = []
    for i in range(draw(st.integers(0, 3))):
        printed = " ".join(draw(st.lists(_NUMBERS, min_size=1, max_size=2)))
        command = draw(st.sampled_from(["wc -l a.txt", "grep -c x a.txt", f"echo {i}"]))
        failed = draw(st.booleans()) and draw(st.booleans())
        out.append(_shell(command, printed + "\n", exit_code=1 if failed else 0))
    return out


@st.composite
def _cases(draw: st.DrawFn) -> dict:
    stated = draw(st.lists(_NUMBERS, max_size=2))
    criteria = draw(
        st.sampled_from(
            [[], [_check("count_matches", "notes/todo.txt", "lines")], [_check("file_exists", "a")]]
        )
    )
    return {
        "request": draw(_REQUESTS),
        "kind": draw(_KINDS),
        "calls": draw(_calls()),
        "output": ("The answer is " + " and ".join(stated) + ".") if stated else "Done.",
        "criteria": criteria,
    }


def _case_proof(case: dict, calls: list[ToolCall]) -> str | None:
    criteria = {c.id: c for c in case["criteria"]}
    return _settle(case["request"], case["kind"], case["output"], calls, criteria)


@given(_cases())
def test_asked_only_where_a_second_agreeing_call_turns_model_into_code(case: dict) -> None:
    """Whenever it asks about a value one call backs, the proof is ``model`` now, the value
    is backed by exactly one call (the one named), and one more different call that agrees
    makes it ``code``. (An ask about a value no call backs:
    :func:`test_an_unbacked_ask_is_about_the_first_value_nothing_backs`.)"""
    ask = _ask(case["output"], case["calls"], request=case["request"], kind=case["kind"],
               criteria=case["criteria"])  # fmt: skip
    if ask is None or ask.call is None:
        return
    assert _case_proof(case, case["calls"]) == "model"
    assert derivations(ask.value, case["calls"], case["request"]) == 1
    assert derivations(ask.value, [ask.call], case["request"]) == 1
    # a different command that computes it (one that prints a number it was given, as
    # ``printf '%s\\n' 7``, would back nothing: test_proof_given)
    place = " ".join(request_paths(case["request"]))
    second = _shell(f"sort -u b.txt | paste -sd+ | bc  # again {place}", f"{ask.value}\n")
    assert _case_proof(case, [*case["calls"], second]) == "code"


@given(_cases())
def test_never_asked_when_every_value_is_backed_and_one_twice(case: dict) -> None:
    """Nor where the proof is ``code`` already; and a value no call backs is asked about
    only as one to show (no call named), never for a second derivation."""
    ask = _ask(case["output"], case["calls"], request=case["request"], kind=case["kind"],
               criteria=case["criteria"])  # fmt: skip
    stated = [v for v in ("3", "7", "12", "40", "4250") if f" {v}" in case["output"]]
    backing = [derivations(v, case["calls"], case["request"]) for v in stated]
    if backing and max(backing) >= 2 and min(backing) >= 1:
        assert ask is None
    if backing and min(backing) == 0:
        assert ask is None or ask.call is None
    if _case_proof(case, case["calls"]) == "code":
        assert ask is None


@given(_cases())
def test_an_unbacked_ask_is_about_the_first_value_nothing_backs(case: dict) -> None:
    """An ask with no call: the proof is ``model`` now, the value is the first stated that
    no call backs, and once every value is printed by two different calls over what the
    request names, nothing is asked and the proof is ``code`` — the ask adds no proof
    of its own."""
    ask = _ask(case["output"], case["calls"], request=case["request"], kind=case["kind"],
               criteria=case["criteria"])  # fmt: skip
    if ask is None or ask.call is not None:
        return
    request = case["request"]
    assert _case_proof(case, case["calls"]) == "model"
    stated = [v for v in _VALUES.findall(case["output"])]
    backing = [derivations(v, case["calls"], request) for v in stated]
    assert ask.value == stated[backing.index(0)]
    assert "which no tool result shows" in ask.feedback() and f" {ask.value}," in ask.feedback()
    place = " ".join(request_paths(request))
    shown = [  # commands that compute each value (not ones that print it as given)
        _shell(f"{command}  # {place}", f"{v}\n")
        for v in stated
        for command in ("awk 'END { print NR }' b.txt", "sort -u b.txt | paste -sd+ | bc")
    ]
    calls = [*case["calls"], *shown]
    assert _ask(case["output"], calls, request=request, kind=case["kind"],
                criteria=case["criteria"]) is None  # fmt: skip
    assert _case_proof(case, calls) == "code"
