"""The Agent-Validator: the ladder's rules rung over code's checks, retries, what it never
retries, and the one ask for a second derivation (a fresh conversation) and its end."""

from __future__ import annotations

from pathlib import Path

from artoo.actors.roles.agent_validator import AGREE, AgentValidator, after_ask
from artoo.actors.verification.proof import Ask
from artoo.schemas import (
    Check,
    Config,
    CorrectionSignal,
    Criterion,
    ExecutionResult,
    LLMCall,
    SubTask,
    SubTaskOutcome,
    Target,
    TaskSpec,
    ToolCall,
    Verdict,
)
from artoo.testing import RoleHarness, write_script

ANSWERED = Criterion(
    id="t1", text="states a number", mode="verifiable", check=Check(kind="answered", shape="number")
)
QUESTION = TaskSpec(
    text="how many entries does data/x.txt list?",
    intent="count",
    slug="c",
    kind="question",
    shape="number",
    targets=[Target(path="data/x.txt", role="read")],
    criteria=[ANSWERED],
)
ST = SubTask(subtask_id="s1", instruction=QUESTION.text, criteria=[ANSWERED])
WC = ToolCall(
    tool="shell",
    args={"command": "wc -l data/x.txt"},
    exit_code=0,
    stdout="7 data/x.txt\n",
)
AWK = ToolCall(
    tool="shell",
    args={"command": "awk 'END {print NR}' data/x.txt"},
    exit_code=0,
    stdout="7\n",
    conversation=1,
)


def _result(attempt: int, output: str = "", **kw: object) -> ExecutionResult:
    return ExecutionResult(subtask_id="s1", attempt=attempt, output=output, **kw)  # type: ignore[arg-type]


def _harness(**kw: object) -> RoleHarness:
    return RoleHarness(AgentValidator, instance="pair-0", config=Config(max_retries=1), **kw)  # type: ignore[arg-type]


def test_a_passing_answer_is_asked_once_for_a_second_derivation_then_ends() -> None:
    """A question with no code derivation: the first answer, traced to ``wc -l``, is
    asked about afresh (no value said, the method named); the fresh attempt states the
    same value by another method, and the subtask ends matched with ``asked``."""
    with _harness() as h:
        h.send(QUESTION)
        h.send(ST, to="pair-0")
        h.send(_result(1, "7 entries.", tool_calls=[WC]), to="pair-0")
        (signal,) = h.wait_for(CorrectionSignal)
        assert signal.body.corroborate == "7" and signal.body.failure_class is None
        assert "wc -l data/x.txt" in signal.body.feedback and "7" not in signal.body.feedback
        h.send(_result(2, "There are 7.", tool_calls=[AWK]), to="pair-0")
        (outcome,) = h.wait_for(SubTaskOutcome)
        assert len(h.published(CorrectionSignal)) == 1
    body = outcome.body
    assert (body.status, body.asked, body.attempts, body.output) == (
        "matched",
        "7",
        2,
        "There are 7.",
    )
    assert body.tool_calls == [WC, AWK]


def test_two_derivations_that_disagree_fail_the_subtask() -> None:
    with _harness() as h:
        h.send(QUESTION)
        h.send(ST, to="pair-0")
        h.send(_result(1, "7 entries.", tool_calls=[WC]), to="pair-0")
        h.wait_for(CorrectionSignal)
        six = ToolCall(
            tool="shell", args={"command": "grep -c . data/x.txt"}, stdout="6\n", conversation=1
        )
        h.send(_result(2, "6 entries.", tool_calls=[six]), to="pair-0")
        (outcome,) = h.wait_for(SubTaskOutcome)
    body = outcome.body
    assert body.status == "failed" and body.failure_class == "logical"
    assert "disagree" in body.reason
    assert [v.criterion_id for v in body.verdicts if not v.passed] == [AGREE]


def test_a_fresh_attempt_that_fails_leaves_the_first_answer_matched() -> None:
    with _harness() as h:
        h.send(QUESTION)
        h.send(ST, to="pair-0")
        h.send(_result(1, "7 entries.", tool_calls=[WC]), to="pair-0")
        h.wait_for(CorrectionSignal)
        h.send(_result(2, ok=False, error="doom loop: x", stop="doom_loop"), to="pair-0")
        (outcome,) = h.wait_for(SubTaskOutcome)
    body = outcome.body
    assert (body.status, body.output, body.asked) == ("matched", "7 entries.", "7")
    assert all(v.attempt == 1 for v in body.verdicts)


def test_a_number_no_tool_showed_fails_and_is_retried_not_asked() -> None:
    with _harness() as h:
        h.send(QUESTION)
        h.send(ST, to="pair-0")
        h.send(_result(1, "15 entries.", tool_calls=[WC]), to="pair-0")
        (signal,) = h.wait_for(CorrectionSignal)
        assert signal.body.corroborate == "" and signal.body.failure_class == "logical"
        assert "15" in signal.body.feedback and "no tool result" in signal.body.feedback


def test_a_code_derivation_that_agrees_asks_for_nothing(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "x.txt").write_text("a\nb\nc\nd\ne\nf\ng\n")
    counted = Criterion(
        id="t2",
        text="code counts",
        mode="verifiable",
        check=Check(kind="count_matches", path="data/x.txt", value="lines"),
    )
    spec = msgspec_replace(QUESTION, criteria=[ANSWERED, counted])
    st = SubTask(subtask_id="s1", instruction=spec.text, criteria=[ANSWERED, counted])
    with _harness(workspace=tmp_path) as h:
        h.send(spec)
        h.send(st, to="pair-0")
        h.send(_result(1, "7 entries.", tool_calls=[WC]), to="pair-0")
        (outcome,) = h.wait_for(SubTaskOutcome)
        assert h.published(CorrectionSignal) == []
    assert outcome.body.status == "matched" and outcome.body.asked == ""


def msgspec_replace(spec: TaskSpec, **kw: object) -> TaskSpec:
    import msgspec

    return msgspec.structs.replace(spec, **kw)


def test_a_denied_action_and_a_model_outage_are_never_retried() -> None:
    denied = ToolCall(tool="shell", ok=False, error="denied", refusal="law1_denied")
    with _harness() as h:
        h.send(QUESTION)
        h.send(ST, to="pair-0")
        h.send(_result(1, "7 deleted", tool_calls=[denied]), to="pair-0")
        (outcome,) = h.wait_for(SubTaskOutcome)
        assert h.published(CorrectionSignal) == []
    assert outcome.body.status == "failed" and outcome.body.failure_class == "environmental"
    with _harness() as h:
        h.send(ST, to="pair-0")
        h.send(_result(1, ok=False, error="model call failed", stop="model_error"), to="pair-0")
        (outcome,) = h.wait_for(SubTaskOutcome)
        assert h.published(CorrectionSignal) == []
    assert outcome.body.failure_class == "environmental"


def test_a_claimed_change_with_no_effect_fails_and_is_retried(tmp_path: Path) -> None:
    changed = Criterion(id="t1", text="changed", mode="verifiable", check=Check(kind="changed"))
    spec = TaskSpec(
        text="create report.txt",
        intent="create",
        slug="r",
        kind="creation",
        targets=[Target(path="report.txt", role="create")],
        criteria=[changed],
    )
    st = SubTask(subtask_id="s1", instruction=spec.text, criteria=[changed])
    with _harness(workspace=tmp_path) as h:
        h.send(spec)
        h.send(st, to="pair-0")
        h.send(_result(1, "Done. I created report.txt."), to="pair-0")
        (signal,) = h.wait_for(CorrectionSignal)
    (verdict,) = signal.body.verdicts
    assert not verdict.passed and "nothing was changed" in verdict.evidence


def test_no_model_is_asked_about_an_attempt_a_rule_already_failed(tmp_path: Path) -> None:
    st = SubTask(
        subtask_id="s1",
        instruction="say hello",
        criteria=[ANSWERED, Criterion(id="c2", text="the tone is warm")],
    )
    model = write_script(tmp_path / "s.toml", [{"role": "planner", "content": {}}])
    with RoleHarness(AgentValidator, instance="pair-0", model=model) as h:
        h.send(QUESTION)
        h.send(st, to="pair-0")
        h.send(_result(1, "no number here"), to="pair-0")
        (signal,) = h.wait_for(CorrectionSignal)
        assert h.published(LLMCall) == []
    assert [(v.criterion_id, v.passed) for v in signal.body.verdicts] == [("t1", False)]


def test_after_ask_is_the_rule_of_the_attempt_after_an_ask() -> None:
    asked = _result(1, "7 entries.", tool_calls=[WC])
    first = [Verdict(criterion_id="t1", passed=True, attempt=1)]
    ok = [Verdict(criterion_id="t1", passed=True, attempt=2)]
    bad = [Verdict(criterion_id="t1", passed=False, failure_class="logical", attempt=2)]
    ask = Ask(value="7")
    same = after_ask(
        ask=ask,
        shape="number",
        asked=asked,
        asked_verdicts=first,
        result=_result(2, "7"),
        verdicts=ok,
        history=[*first, *ok],
        calls=[WC, AWK],
    )
    other = after_ask(
        ask=ask,
        shape="number",
        asked=asked,
        asked_verdicts=first,
        result=_result(2, "8"),
        verdicts=ok,
        history=[*first, *ok],
        calls=[WC, AWK],
    )
    failed = after_ask(
        ask=ask,
        shape="number",
        asked=asked,
        asked_verdicts=first,
        result=_result(2, "x"),
        verdicts=bad,
        history=[*first, *bad],
        calls=[WC],
    )
    assert (same.status, same.output) == ("matched", "7")
    assert other.status == "failed" and other.verdicts[-1].criterion_id == AGREE
    assert (failed.status, failed.output, failed.verdicts) == ("matched", "7 entries.", first)
    listed = after_ask(
        ask=Ask(value="a.py, b.py"),
        shape="list",
        asked=asked,
        asked_verdicts=first,
        result=_result(2, "b.py and a.py:\n- b.py\n- a.py"),
        verdicts=ok,
        history=ok,
        calls=[],
    )
    assert listed.status == "matched"
