"""How an answer was established (``artoo.actors.verification.proof``) and the strict
grounding under it: what a failed command printed grounds nothing, one command's word
is not proof, a model's pass never is."""

from __future__ import annotations

from artoo.actors.verification.grounding import tool_outputs
from artoo.actors.verification.ladder import ungrounded
from artoo.actors.verification.proof import (
    copied_from_request,
    derivations,
    established,
    how_established,
)
from artoo.schemas import Check, Criterion, SubTaskOutcome, ToolCall, Verdict

_Q = "What is the total of the amount column in data/sales.csv?"


def _shell(command: str, stdout: str, *, exit_code: int = 0, stderr: str = "") -> ToolCall:
    return ToolCall(
        tool="shell",
        args={"command": command},
        ok=exit_code == 0,
        exit_code=exit_code,
        output_preview=f"exit code: {exit_code}\n--- stdout ---\n{stdout}",
        stdout=stdout,
        stderr=stderr or None,
    )


def _read(path: str, text: str) -> ToolCall:
    return ToolCall(tool="read_file", args={"path": path}, target=path, output_preview=text)


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
    done = [Verdict(criterion_id="t1", passed=True), Verdict(criterion_id="request", passed=True)]
    for kind, request in (
        ("creation", "write a backup of notes/plan.md to notes/plan.bak"),
        ("change", "Do the weekly report in reports/week.md"),
    ):
        outcome = SubTaskOutcome(subtask_id="s", output="Done.", tool_calls=[failed])
        unread = established(
            request=request,
            kind=kind,
            criteria={"t1": Criterion(id="t1", text="it is done", mode="verifiable")},
            task_verdicts=done,
            outcomes=[outcome],
            output="Done.",
        )
        assert unread == "model", kind
        exists = Criterion(
            id="t1",
            text="the file exists",
            mode="verifiable",
            check=Check(kind="file_exists", path="notes/plan.bak"),
        )
        read_back = established(
            request=request,
            kind=kind,
            criteria={"t1": exists},
            task_verdicts=done,
            outcomes=[outcome],
            output="Done.",
        )
        assert read_back == "code", kind
