"""The Agent-Validator: the ladder's rules rung, retries, and what it never retries."""

from __future__ import annotations

from pathlib import Path

from artoo.actors.roles.agent_validator import (
    AgentValidator,
    corroboration_fallback,
    may_ask_again,
    may_corroborate,
)
from artoo.actors.verification.proof import _norm_value
from artoo.schemas import (
    Check,
    Config,
    CorrectionSignal,
    Criterion,
    ExecutionResult,
    LLMCall,
    SubTask,
    SubTaskOutcome,
    TaskSpec,
    ToolCall,
    Verdict,
)
from artoo.testing import RoleHarness, write_script

from ..proof_helpers import read_call, shell_call

SAYS_42 = Criterion(
    id="c1", text="says 42", mode="verifiable", check=Check(kind="output_contains", value="42")
)
ST = SubTask(subtask_id="s1", instruction="answer", criteria=[SAYS_42])


def _result(attempt: int, output: str = "", **kw: object) -> ExecutionResult:
    return ExecutionResult(subtask_id="s1", attempt=attempt, output=output, **kw)  # type: ignore[arg-type]


def _harness() -> RoleHarness:
    return RoleHarness(AgentValidator, instance="pair-0", config=Config(max_retries=1))


def test_a_passing_attempt_is_one_matched_outcome() -> None:
    with _harness() as h:
        h.send(ST, to="pair-0")
        h.send(_result(1, "it is 42"), to="pair-0")
        (outcome,) = h.wait_for(SubTaskOutcome)
    assert outcome.body.status == "matched" and outcome.body.attempts == 1


def test_a_failing_attempt_is_corrected_then_fails_after_the_retries() -> None:
    with _harness() as h:
        h.send(ST, to="pair-0")
        h.send(_result(1, "41"), to="pair-0")
        (signal,) = h.wait_for(CorrectionSignal)
        assert signal.to == "pair-0" and signal.body.failure_class == "logical"
        h.send(_result(2, "still 41"), to="pair-0")
        (outcome,) = h.wait_for(SubTaskOutcome)
    assert outcome.body.status == "failed" and outcome.body.attempts == 2
    assert len(outcome.body.history) == 2


def test_a_denied_action_and_a_model_outage_are_never_retried() -> None:
    denied = ToolCall(tool="shell", ok=False, error="denied", refusal="law1_denied")
    with _harness() as h:
        h.send(ST, to="pair-0")
        h.send(_result(1, "42 deleted", tool_calls=[denied]), to="pair-0")
        (outcome,) = h.wait_for(SubTaskOutcome)
        assert h.published(CorrectionSignal) == []
    assert outcome.body.status == "failed"  # the model's claim does not count
    assert outcome.body.failure_class == "environmental"
    with _harness() as h:
        h.send(ST, to="pair-0")
        h.send(_result(1, ok=False, error="model call failed", stop="model_error"), to="pair-0")
        (outcome,) = h.wait_for(SubTaskOutcome)
        assert h.published(CorrectionSignal) == []
    assert outcome.body.failure_class == "environmental"


def test_a_number_no_tool_showed_fails_without_asking_the_model(tmp_path: Path) -> None:
    """Task 7 of the real-model bench: the model would have passed "1500" (it did, in the
    recorded run); the grounding fails it first, and the retry's grounded answer is judged."""
    model = write_script(
        tmp_path / "s.toml",
        [
            {
                "role": "agent_validator",
                "content": {"passed": True, "confidence": 0.9, "evidence": "states the amount"},
            }
        ],
    )
    plausible = Criterion(id="p", text="the answer states the amount for east")
    st = SubTask(subtask_id="s1", instruction="Read data/sales.csv", criteria=[plausible])
    empty = ToolCall(tool="shell", output_preview="exit code: 0")
    shown = ToolCall(tool="shell", output_preview="exit code: 0\n--- stdout ---\neast,1300")
    spec = TaskSpec(text="what is the amount for the east region?", intent="amount", slug="a")
    with RoleHarness(AgentValidator, instance="pair-0", model=model, config=Config()) as h:
        h.send(spec)
        h.send(st, to="pair-0")
        h.send(_result(1, "The amount is 1500.", tool_calls=[empty]), to="pair-0")
        (signal,) = h.wait_for(CorrectionSignal)
        assert h.published(LLMCall) == []  # no model call spent on an ungrounded answer
        (verdict,) = signal.body.verdicts
        assert not verdict.passed and verdict.failure_class == "logical"
        assert "1500" in signal.body.feedback and "no tool result" in signal.body.feedback
        h.send(_result(2, "The amount is 1300.", tool_calls=[shown]), to="pair-0")
        (outcome,) = h.wait_for(SubTaskOutcome)
        assert len(h.published(LLMCall)) == 1
    assert outcome.body.status == "matched"


def test_no_model_is_asked_about_an_attempt_a_rule_already_failed(tmp_path: Path) -> None:
    """Half the calls: the check fails the attempt, so the plausible criterion beside it
    is not sent to the model (no script entry for the agent validator is needed)."""
    from artoo.schemas import Check, Criterion, LLMCall

    st = SubTask(
        subtask_id="s1",
        instruction="say hello",
        criteria=[
            Criterion(
                id="c1",
                text="says hello",
                mode="verifiable",
                check=Check(kind="output_contains", value="hello"),
            ),
            Criterion(id="c2", text="the tone is warm"),
        ],
    )
    model = write_script(tmp_path / "s.toml", [{"role": "planner", "content": {}}])
    with RoleHarness(AgentValidator, instance="pair-0", model=model) as h:
        h.send(st, to="pair-0")
        h.send(_result(1, "bye"), to="pair-0")
        (signal,) = h.wait_for(CorrectionSignal)
        assert h.published(LLMCall) == []
    assert [(v.criterion_id, v.passed) for v in signal.body.verdicts] == [("c1", False)]


def test_no_model_is_asked_when_code_measured_what_the_answer_states(tmp_path: Path) -> None:
    """Bench count-3's cost class (a 56 s verdict call beside a passed code count), on
    another request: the count check read the workspace and the answer states its number,
    so the subtask's plausible paraphrase is not sent to the model."""
    from artoo.schemas import Check, Criterion, LLMCall

    (tmp_path / "README.md").write_text("one two three\n")
    st = SubTask(
        subtask_id="s1",
        instruction="count the words of README.md",
        criteria=[
            Criterion(
                id="t1",
                text="states the word count",
                mode="verifiable",
                check=Check(kind="count_matches", path="README.md", value="words"),
            ),
            Criterion(id="s1c1", text="the answer gives the number of words"),
        ],
    )
    model = write_script(tmp_path / "s.toml", [{"role": "planner", "content": {}}])
    with RoleHarness(AgentValidator, instance="pair-0", model=model, workspace=tmp_path) as h:
        h.send(st, to="pair-0")
        h.send(_result(1, "README.md has 3 words."), to="pair-0")
        (outcome,) = h.wait_for(SubTaskOutcome)
        assert h.published(LLMCall) == []
    assert [(v.criterion_id, v.passed, v.signal) for v in outcome.body.verdicts] == [
        ("t1", True, "rule")
    ]


LINES = TaskSpec(
    text="how many lines are in notes/todo.txt?", intent="count", slug="c", kind="question"
)
WC = ToolCall(
    tool="shell",
    args={"command": "wc -l notes/todo.txt"},
    exit_code=0,
    output_preview="exit code: 0\n--- stdout ---\n7 notes/todo.txt",
    stdout="7 notes/todo.txt\n",
)
COUNT = SubTask(subtask_id="s1", instruction="count the lines of notes/todo.txt")


def test_an_answer_one_call_backs_is_asked_about_once_then_given_on() -> None:
    """The attempt passed, but one call backs its 7: a second derivation is asked for
    (a CorrectionSignal whose verdicts passed), and the next answer — one call's again —
    is given on with every call of the subtask, not asked about a second time."""
    with _harness() as h:
        h.send(LINES)
        h.send(COUNT, to="pair-0")
        h.send(_result(1, "7 lines.", tool_calls=[WC]), to="pair-0")
        (signal,) = h.wait_for(CorrectionSignal)
        assert signal.to == "pair-0" and signal.body.corroborate == "7"
        assert all(v.passed for v in signal.body.verdicts) and signal.body.failure_class is None
        assert "`wc -l notes/todo.txt`" in signal.body.feedback
        h.send(_result(2, "7 lines.", tool_calls=[WC]), to="pair-0")
        (outcome,) = h.wait_for(SubTaskOutcome)
        assert len(h.published(CorrectionSignal)) == 1
    assert outcome.body.status == "matched" and outcome.body.attempts == 2
    assert outcome.body.tool_calls == [WC, WC]


def test_no_second_derivation_without_a_value_or_the_switch() -> None:
    cases = [
        (Config(max_retries=1), _result(1, "Done.", tool_calls=[WC])),  # states nothing
        (Config(max_retries=1, corroborate=False), _result(1, "7 lines.", tool_calls=[WC])),
        # the old rule (a log from before the switch): the ask was one of the retries
        (
            Config(max_retries=0, corroborate_after_last_retry=False),
            _result(1, "7 lines.", tool_calls=[WC]),
        ),
    ]
    for config, result in cases:
        with RoleHarness(AgentValidator, instance="pair-0", config=config) as h:
            h.send(LINES)
            h.send(COUNT, to="pair-0")
            h.send(result, to="pair-0")
            (outcome,) = h.wait_for(SubTaskOutcome)
            assert h.published(CorrectionSignal) == [], result.output
        assert outcome.body.status == "matched" and outcome.body.attempts == 1


def test_the_ask_needs_no_retry_left() -> None:
    """``max_retries=0``: the one attempt passed on one call's word, and a second
    derivation is still asked for (the ask corrects nothing); the attempt after it is
    judged as ever — given on when it passes, the earlier answer when it fails — and never
    retried, though it is one beyond the retries."""
    for second, output in [
        (_result(2, "7 lines.", tool_calls=[WC]), "7 lines."),
        (_result(2, "8 lines.", tool_calls=[WC]), "7 lines."),  # ungrounded: the fallback
    ]:
        with RoleHarness(AgentValidator, instance="pair-0", config=Config(max_retries=0)) as h:
            h.send(LINES)
            h.send(COUNT, to="pair-0")
            h.send(_result(1, "7 lines.", tool_calls=[WC]), to="pair-0")
            (signal,) = h.wait_for(CorrectionSignal)
            assert signal.body.corroborate == "7" and signal.body.failure_class is None
            h.send(second, to="pair-0")
            (outcome,) = h.wait_for(SubTaskOutcome)
            assert len(h.published(CorrectionSignal)) == 1, second.output
        body = outcome.body
        assert (body.status, body.attempts, body.output) == ("matched", 2, output)
        assert body.asked == "7" and body.tool_calls == [WC, WC]


def test_may_corroborate_is_the_switch_and_not_the_retries() -> None:
    assert may_corroborate(Config(max_retries=0), 1)
    assert may_corroborate(Config(max_retries=2), 3)
    assert not may_corroborate(Config(corroborate=False), 1)
    old = Config(max_retries=2, corroborate_after_last_retry=False)
    assert [may_corroborate(old, a) for a in (1, 2, 3)] == [True, True, False]


TODO = ToolCall(
    tool="shell",
    args={"command": "grep -c TODO notes/todo.txt"},
    exit_code=0,
    output_preview="exit code: 0\n--- stdout ---\n4",
    stdout="4\n",
)


def test_an_ask_whose_answer_passes_with_another_value_is_asked_about_again() -> None:
    """The fresh conversation corrected the answer (7, then 4 from another call): its 4
    stands on one call's word too, and is asked about in turn — the second ask, the last
    — whatever the retries (``max_retries=0``). The attempt after it is judged as after
    the first: given on when it passes, with the value asked about last; the attempt asked
    of last when it fails."""
    for third, output, verdicts in [
        (_result(3, "4 lines.", tool_calls=[TODO]), "4 lines.", 3),
        (_result(3, "9 lines.", tool_calls=[TODO]), "4 lines.", 2),  # 9: ungrounded
        (_result(3, "7 lines.", tool_calls=[WC]), "7 lines.", 3),  # yet another: no third ask
    ]:
        with RoleHarness(AgentValidator, instance="pair-0", config=Config(max_retries=0)) as h:
            h.send(LINES)
            h.send(COUNT, to="pair-0")
            h.send(_result(1, "7 lines.", tool_calls=[WC]), to="pair-0")
            h.wait_for(CorrectionSignal)
            h.send(_result(2, "4 lines.", tool_calls=[TODO]), to="pair-0")
            first, second = h.wait_for(CorrectionSignal, count=2)
            h.send(third, to="pair-0")
            (outcome,) = h.wait_for(SubTaskOutcome)
            assert len(h.published(CorrectionSignal)) == 2, third.output
        assert (first.body.corroborate, second.body.corroborate) == ("7", "4")
        assert second.body.attempt == 2 and second.body.failure_class is None
        assert "`grep -c TODO notes/todo.txt`" in second.body.feedback
        body = outcome.body
        assert (body.status, body.attempts, body.output) == ("matched", 3, output)
        assert body.asked == "4" and [v.attempt for v in body.verdicts] == [verdicts]
        assert body.tool_calls == [WC, TODO, *third.tool_calls]


def test_no_second_ask_with_one_allowed_or_no_retry_left_under_the_old_rule() -> None:
    """``corroborate_asks`` 1 (a log from before the field): the corrected 4 is given on
    at once, the value asked about still 7; ``corroborate_after_last_retry`` off, the
    second ask is one of the retries too, and none is left after attempt 2."""
    for config in [
        Config(max_retries=2, corroborate_asks=1),
        Config(max_retries=1, corroborate_after_last_retry=False),
    ]:
        with RoleHarness(AgentValidator, instance="pair-0", config=config) as h:
            h.send(LINES)
            h.send(COUNT, to="pair-0")
            h.send(_result(1, "7 lines.", tool_calls=[WC]), to="pair-0")
            h.wait_for(CorrectionSignal)
            h.send(_result(2, "4 lines.", tool_calls=[TODO]), to="pair-0")
            (outcome,) = h.wait_for(SubTaskOutcome)
            assert len(h.published(CorrectionSignal)) == 1, config
        body = outcome.body
        assert (body.status, body.attempts, body.output, body.asked) == (
            "matched",
            2,
            "4 lines.",
            "7",
        )


def test_may_ask_again_only_about_another_value_with_an_ask_left() -> None:
    assert may_ask_again(Config(), 0, "", "7")
    assert may_ask_again(Config(corroborate_asks=1), 0, "", "7")
    assert may_ask_again(Config(), 1, "7", "4")
    assert not may_ask_again(Config(), 1, "7", "7")
    assert not may_ask_again(Config(), 1, "`7`", " '7' ")  # as the proof compares values
    assert not may_ask_again(Config(), 2, "4", "5")  # two at most
    assert not may_ask_again(Config(corroborate_asks=1), 1, "7", "4")
    # the same values as the proof's own comparison (``proof._norm_value``) makes them
    for a, b in [("`7`", "7"), ("'src/a.py'", "src/a.py"), ("7", "7.0"), ('"x" ', "x")]:
        same = _norm_value(a) == _norm_value(b)
        assert may_ask_again(Config(), 1, a, b) is not same, (a, b)


def test_after_an_ask_an_attempt_that_fails_gives_on_the_answer_that_passed() -> None:
    """The attempt after the ask ends on a model outage, or states an ungrounded figure:
    no retry (two were left), the subtask ends matched on attempt 1's answer and verdicts
    with every call and verdict; a Law 1 denial still fails it."""
    denied = ToolCall(tool="shell", ok=False, error="denied", refusal="law1_denied")
    cases = [
        (_result(2, ok=False, error="model call failed", stop="model_error"), "matched"),
        (_result(2, "8 lines.", tool_calls=[WC]), "matched"),  # 8: no tool printed it
        (_result(2, "7 lines.", tool_calls=[WC, denied]), "failed"),
    ]
    for second, status in cases:
        with RoleHarness(AgentValidator, instance="pair-0", config=Config(max_retries=2)) as h:
            h.send(LINES)
            h.send(COUNT, to="pair-0")
            h.send(_result(1, "7 lines.", tool_calls=[WC]), to="pair-0")
            (signal,) = h.wait_for(CorrectionSignal)
            h.send(second, to="pair-0")
            (outcome,) = h.wait_for(SubTaskOutcome)
            assert len(h.published(CorrectionSignal)) == 1, second
        body = outcome.body
        assert (body.status, body.attempts) == (status, 2)
        assert [v.attempt for v in body.history] == [1, 2] and not body.history[1].passed
        assert body.tool_calls == [WC, *second.tool_calls]
        if status == "matched":
            assert body.output == "7 lines." and body.verdicts == signal.body.verdicts
        else:
            assert body.failure_class == "environmental" and body.verdicts[0].attempt == 2


# ---- a value no tool result shows: asked to be shown by a tool, then derived afresh
MEAN = TaskSpec(
    text="What is the average parcel weight in depot/parcels.csv?",
    intent="average",
    slug="m",
    kind="question",
)
WEIGH = SubTask(subtask_id="s1", instruction="average the kg column of depot/parcels.csv")
READ_PARCELS = read_call("depot/parcels.csv", "parcel,kg\np1,12\np2,30\np3,8\np4,17\np5,23\n")
AWK_MEAN = shell_call(
    "awk -F, 'NR > 1 { s += $2; n++ } END { print s / n }' depot/parcels.csv", "18\n"
)
PY_MEAN = shell_call(
    'python3 -c "import statistics; print(statistics.mean([12, 30, 8, 17, 23]))" '
    "# depot/parcels.csv",
    "18\n",
)


def test_a_value_no_call_backs_is_asked_to_be_shown_then_derived_again() -> None:
    """The attempt passed (grounding takes 18, the column's mean, off the file read), but
    no call backs it: a CorrectionSignal with ``unbacked`` asks for a tool to show it —
    one of the asks, no retry, ``max_retries`` 0. Shown by one command, the same 18 is
    asked about again, for a second derivation; the third attempt is given on with every
    call and 18 asked about."""
    with RoleHarness(AgentValidator, instance="pair-0", config=Config(max_retries=0)) as h:
        h.send(MEAN)
        h.send(WEIGH, to="pair-0")
        h.send(_result(1, "The average is 18 kg.", tool_calls=[READ_PARCELS]), to="pair-0")
        (shown,) = h.wait_for(CorrectionSignal)
        h.send(_result(2, "18 kg.", tool_calls=[AWK_MEAN]), to="pair-0")
        shown, again = h.wait_for(CorrectionSignal, count=2)
        h.send(_result(3, "18 kg.", tool_calls=[PY_MEAN]), to="pair-0")
        (outcome,) = h.wait_for(SubTaskOutcome)
    assert (shown.body.corroborate, shown.body.unbacked, shown.body.attempt) == ("18", True, 1)
    assert all(v.passed for v in shown.body.verdicts) and shown.body.failure_class is None
    assert "18, which no tool result shows" in shown.body.feedback
    assert (again.body.corroborate, again.body.unbacked, again.body.attempt) == ("18", False, 2)
    assert "`awk -F," in again.body.feedback
    body = outcome.body
    assert (body.status, body.attempts, body.output, body.asked) == ("matched", 3, "18 kg.", "18")
    assert body.tool_calls == [READ_PARCELS, AWK_MEAN, PY_MEAN]


def test_a_value_still_unbacked_after_the_ask_is_given_on_or_falls_back() -> None:
    """The model states 18 again with nothing to show it: the ask was answered, it is not
    repeated (the proof will hold it ``model``); an attempt after the ask that fails (21,
    which nothing shows or derives: ungrounded) gives the first answer on, 18 asked
    about."""
    cases = [
        (_result(2, "18 kg.", tool_calls=[READ_PARCELS]), "18 kg.", 2),
        (_result(2, "The average is 21 kg.", tool_calls=[AWK_MEAN]), None, 1),
    ]
    for second, output, verdicts in cases:
        with RoleHarness(AgentValidator, instance="pair-0", config=Config(max_retries=2)) as h:
            h.send(MEAN)
            h.send(WEIGH, to="pair-0")
            first = _result(1, "The average is 18 kg.", tool_calls=[READ_PARCELS])
            h.send(first, to="pair-0")
            (signal,) = h.wait_for(CorrectionSignal)
            h.send(second, to="pair-0")
            (outcome,) = h.wait_for(SubTaskOutcome)
            assert len(h.published(CorrectionSignal)) == 1, second.output
        assert signal.body.unbacked and signal.body.corroborate == "18"
        body = outcome.body
        assert (body.status, body.attempts, body.asked) == ("matched", 2, "18")
        assert body.output == (output or first.output)
        assert [v.attempt for v in body.verdicts] == [verdicts]


def test_no_ask_about_an_unbacked_value_switched_off_or_with_none_left() -> None:
    """``corroborate_unbacked`` off (a log from before it) or ``corroborate`` off: the
    answer is given on at once, as before; ``corroborate_asks`` 1: shown by one command
    after the one ask, 18 is given on with no second derivation."""
    for config in [Config(corroborate_unbacked=False), Config(corroborate=False)]:
        with RoleHarness(AgentValidator, instance="pair-0", config=config) as h:
            h.send(MEAN)
            h.send(WEIGH, to="pair-0")
            h.send(_result(1, "The average is 18 kg.", tool_calls=[READ_PARCELS]), to="pair-0")
            (outcome,) = h.wait_for(SubTaskOutcome)
            assert h.published(CorrectionSignal) == [], config
        assert (outcome.body.status, outcome.body.attempts, outcome.body.asked) == (
            "matched",
            1,
            "",
        )
    with RoleHarness(AgentValidator, instance="pair-0", config=Config(corroborate_asks=1)) as h:
        h.send(MEAN)
        h.send(WEIGH, to="pair-0")
        h.send(_result(1, "The average is 18 kg.", tool_calls=[READ_PARCELS]), to="pair-0")
        h.wait_for(CorrectionSignal)
        h.send(_result(2, "18 kg.", tool_calls=[AWK_MEAN]), to="pair-0")
        (outcome,) = h.wait_for(SubTaskOutcome)
        assert len(h.published(CorrectionSignal)) == 1
    assert (outcome.body.attempts, outcome.body.asked) == (2, "18")


def test_may_ask_again_about_the_value_an_unbacked_ask_had_shown() -> None:
    """After an ask to show a value, the same value may be asked about once more only when
    one call now backs it; not when it is still unbacked, nor past the asks allowed."""
    assert may_ask_again(Config(), 1, "18", "18", asked_unbacked=True)
    assert not may_ask_again(Config(), 1, "18", "18", asked_unbacked=True, unbacked=True)
    assert not may_ask_again(Config(), 1, "18", "18")  # a second derivation already asked
    assert not may_ask_again(Config(corroborate_asks=1), 1, "18", "18", asked_unbacked=True)
    assert may_ask_again(Config(), 1, "18", "18.4", asked_unbacked=True, unbacked=True)
    assert may_ask_again(Config(), 0, "", "18", unbacked=True)


def test_an_echo_of_the_value_asked_to_be_shown_shows_nothing() -> None:
    """Asked to compute 18 with a tool, the model runs ``echo 18`` (naming the file, as
    the request does): a command that prints a number it was given backs nothing, so 18
    is still unbacked — the ask is answered, not repeated, and no second derivation is
    asked of the echo (once it was, naming it as the call that backs 18)."""
    echo = shell_call("echo 18  # depot/parcels.csv", "18\n")
    with RoleHarness(AgentValidator, instance="pair-0", config=Config(max_retries=0)) as h:
        h.send(MEAN)
        h.send(WEIGH, to="pair-0")
        h.send(_result(1, "The average is 18 kg.", tool_calls=[READ_PARCELS]), to="pair-0")
        (shown,) = h.wait_for(CorrectionSignal)
        h.send(_result(2, "18 kg.", tool_calls=[echo]), to="pair-0")
        (outcome,) = h.wait_for(SubTaskOutcome)
        assert len(h.published(CorrectionSignal)) == 1
    assert (shown.body.corroborate, shown.body.unbacked) == ("18", True)
    body = outcome.body
    assert (body.status, body.attempts, body.output, body.asked) == ("matched", 2, "18 kg.", "18")
    assert body.tool_calls == [READ_PARCELS, echo]


# ---- the attempt after the ask passes but does not answer: it derives nothing
TODO_TEXT = (
    "TODO: write the README\nmeeting notes from monday\nTODO: fix the release script\n"
    "TODO: answer the mail from Ana\nideas: a faster bus\nTODO: book the train\nend of notes\n"
)
READ_TODO = read_call("notes/todo.txt", TODO_TEXT, conversation=1)
SILENT = "There is no subtask to answer."
CHANGE = TaskSpec(
    text="Write the line count of notes/todo.txt to count.txt",
    intent="write the count",
    slug="w",
    kind="change",
)


def _fallback_after(
    second: ExecutionResult,
    spec: TaskSpec = LINES,
    keeps_answer: bool = True,
    verdicts: list[Verdict] | None = None,
) -> SubTaskOutcome | None:
    """:func:`corroboration_fallback` on ``second``, the attempt after an ask about the 7
    that attempt 1 read off ``wc -l`` (its verdicts, and ``second``'s unless given, pass)."""
    first = _result(1, "7 lines.", tool_calls=[WC])
    passed = [Verdict(criterion_id="done", passed=True, signal="rule", attempt=1)]
    judged = verdicts or [Verdict(criterion_id="done", passed=True, signal="rule", attempt=2)]
    return corroboration_fallback(
        asked=first,
        asked_verdicts=passed,
        result=second,
        verdicts=judged,
        history=[*passed, *judged],
        calls=[WC, *second.tool_calls],
        value="7",
        request=spec.text,
        kind=spec.kind,
        shape=spec.shape,
        keeps_answer=keeps_answer,
    )


def test_an_attempt_after_the_ask_that_states_no_number_keeps_the_answer_asked_about() -> None:
    """The real run's shape: asked about the 7 ``wc -l`` printed, the fresh conversation
    reads the file and says "There is no subtask to answer." — its verdicts pass (the
    implicit criterion), but it states no number for a how-many question, by the
    Meta-Validator's own rule: no derivation. The subtask ends matched on attempt 1's
    answer and verdicts, with both attempts' calls (the proof then sees ``wc -l`` and the
    listing read afresh) and the reason it was kept."""
    second = _result(2, SILENT, tool_calls=[READ_TODO])
    outcome = _fallback_after(second)
    assert outcome is not None
    assert (outcome.status, outcome.attempts, outcome.output) == ("matched", 2, "7 lines.")
    assert [v.attempt for v in outcome.verdicts] == [1]
    assert [v.attempt for v in outcome.history] == [1, 2] and outcome.history[1].passed
    assert outcome.tool_calls == [WC, READ_TODO] and outcome.asked == "7"
    assert outcome.reason == (
        "attempt 2 did not answer: the request asks how many (a number) and the answer states none"
    )
    # the role decides so: no retry, no second ask, attempt 1's answer given on
    with RoleHarness(AgentValidator, instance="pair-0", config=Config(max_retries=2)) as h:
        h.send(LINES)
        h.send(COUNT, to="pair-0")
        h.send(_result(1, "7 lines.", tool_calls=[WC]), to="pair-0")
        (signal,) = h.wait_for(CorrectionSignal)
        h.send(second, to="pair-0")
        (got,) = h.wait_for(SubTaskOutcome)
        assert len(h.published(CorrectionSignal)) == 1
    body = got.body
    assert (body.status, body.attempts, body.output, body.asked) == ("matched", 2, "7 lines.", "7")
    assert body.verdicts == signal.body.verdicts and body.tool_calls == [WC, READ_TODO]
    assert body.reason == outcome.reason


def test_an_attempt_after_the_ask_that_answers_is_judged_as_before() -> None:
    """Another number (4, which ``grep -c TODO`` printed) answers the question: no
    fallback — the role asks about the 4 in turn, as before. An answer that fails still
    falls back, with no reason; a Law 1 denial still fails the subtask."""
    assert _fallback_after(_result(2, "4 lines.", tool_calls=[TODO])) is None
    with RoleHarness(AgentValidator, instance="pair-0", config=Config(max_retries=2)) as h:
        h.send(LINES)
        h.send(COUNT, to="pair-0")
        h.send(_result(1, "7 lines.", tool_calls=[WC]), to="pair-0")
        h.wait_for(CorrectionSignal)
        h.send(_result(2, "4 lines.", tool_calls=[TODO]), to="pair-0")
        _, again = h.wait_for(CorrectionSignal, count=2)
        assert h.published(SubTaskOutcome) == []
    assert again.body.corroborate == "4" and again.body.attempt == 2
    failed = [Verdict(criterion_id="done", passed=False, failure_class="logical", attempt=2)]
    kept = _fallback_after(_result(2, SILENT, tool_calls=[READ_TODO]), verdicts=failed)
    assert kept is not None and kept.output == "7 lines." and kept.reason == ""
    denied = ToolCall(tool="shell", ok=False, error="denied", refusal="law1_denied")
    assert _fallback_after(_result(2, SILENT, tool_calls=[denied])) is None


def test_a_request_not_held_to_answer_or_the_old_config_gives_the_attempt_on() -> None:
    """A change is not held to answer: "Done." after the ask is no reason to keep the
    earlier answer. ``corroborate_keeps_answer`` off (a log from before it): the attempt
    that passed is given on, stating no number, as before."""
    done = _result(2, "Done.", tool_calls=[READ_TODO])
    assert _fallback_after(done, spec=CHANGE) is None
    silent = _result(2, SILENT, tool_calls=[READ_TODO])
    assert _fallback_after(silent, keeps_answer=False) is None
    config = Config(max_retries=2, corroborate_keeps_answer=False)
    with RoleHarness(AgentValidator, instance="pair-0", config=config) as h:
        h.send(LINES)
        h.send(COUNT, to="pair-0")
        h.send(_result(1, "7 lines.", tool_calls=[WC]), to="pair-0")
        h.wait_for(CorrectionSignal)
        h.send(silent, to="pair-0")
        (outcome,) = h.wait_for(SubTaskOutcome)
    body = outcome.body
    assert (body.status, body.attempts, body.output, body.reason) == ("matched", 2, SILENT, "")
    assert [v.attempt for v in body.verdicts] == [2]
