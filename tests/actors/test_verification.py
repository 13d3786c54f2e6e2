"""The verification ladder's shared rungs (actors/verification/ladder.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from artoo.actors.llm import LLMRequest, ScriptedBackend
from artoo.actors.verification.ladder import majority_class, model_verdict, rule_verdict
from artoo.schemas import Check, Criterion, Target, ToolCall, Verdict

CRITERION = Criterion(id="c1", text="the answer is polite")
REQUEST = LLMRequest(
    role="agent_validator", tier="tool", messages=[{"role": "user", "content": "x"}]
)


def backend(*contents: str) -> ScriptedBackend:
    return ScriptedBackend.from_entries(
        [{"role": "agent_validator", "content": c} for c in contents]
    )


def test_confident_pass() -> None:
    verdict, answer = model_verdict(
        backend('{"passed": true, "confidence": 0.9, "evidence": "kind words"}'),
        REQUEST,
        CRITERION,
        threshold=0.7,
        attempt=2,
    )
    assert (verdict.passed, verdict.signal, verdict.confidence, verdict.attempt) == (
        True,
        "llm",
        0.9,
        2,
    )
    assert answer is not None and answer.evidence == "kind words"


def test_low_confidence_is_not_a_pass_but_keeps_the_answer() -> None:
    verdict, answer = model_verdict(
        backend('{"passed": true, "confidence": 0.4}'), REQUEST, CRITERION, threshold=0.7
    )
    assert not verdict.passed
    assert verdict.evidence.startswith("low confidence (0.40)")
    assert answer is not None and answer.passed


@pytest.mark.parametrize("confidence", [-3.0, 7.0])
def test_confidence_is_clamped(confidence: float) -> None:
    verdict, _ = model_verdict(
        backend(f'{{"passed": false, "confidence": {confidence}}}'),
        REQUEST,
        CRITERION,
        threshold=0.5,
    )
    assert 0.0 <= verdict.confidence <= 1.0
    assert not verdict.passed and verdict.failure_class == "logical"


def test_unparsable_twice_fails_closed() -> None:
    verdict, answer = model_verdict(
        backend("sure, fine", "still not json"), REQUEST, CRITERION, threshold=0.7
    )
    assert answer is None
    assert not verdict.passed and verdict.confidence == 0.0
    assert "fails closed" in verdict.evidence


TOTAL = Criterion(
    id="c", text="states the total", mode="verifiable", check=Check(kind="answered", shape="number")
)


def test_rule_verdict_blames_the_environment_when_a_tool_failed(tmp_path: Path) -> None:
    failed_call = ToolCall(tool="read_file", target="x.csv", ok=False, error="no such file")
    verdict = rule_verdict(TOTAL, "I could not read it", [failed_call], tmp_path)
    assert not verdict.passed and verdict.failure_class == "environmental"
    verdict = rule_verdict(TOTAL, "the total is 41", [], tmp_path)
    assert not verdict.passed and verdict.failure_class == "logical"
    read = ToolCall(tool="read_file", args={"path": "x.csv"}, content="total\n42\n")
    assert rule_verdict(TOTAL, "the total is 42", [read], tmp_path).passed


def test_a_call_refused_as_a_repeat_is_no_failure_of_the_environment(tmp_path: Path) -> None:
    """The model read the file, made the same call again (refused: its result was above)
    and answered wrong: the work is wrong, not the environment."""
    read = ToolCall(tool="read_file", args={"path": "x.csv"}, target="x.csv", content="42")
    again = ToolCall(tool="read_file", args={"path": "x.csv"}, ok=False, refusal="repeated_call")
    verdict = rule_verdict(TOTAL, "the total is 41", [read, again], tmp_path)
    assert not verdict.passed and verdict.failure_class == "logical"


def test_majority_class() -> None:
    def v(fc: str | None, passed: bool = False) -> Verdict:
        return Verdict(criterion_id="c", passed=passed, failure_class=fc)  # type: ignore[arg-type]

    assert majority_class([v(None, True)]) is None
    assert majority_class([v("environmental"), v("environmental"), v("logical")]) == "environmental"
    assert majority_class([v("environmental"), v("logical")]) == "logical"
    assert majority_class([v(None)]) is None


REPORT = Criterion(
    id="c", text="report.txt was created", mode="verifiable", check=Check(kind="changed")
)
CREATED = [Target(path="report.txt", role="create")]


@pytest.mark.parametrize(
    ("calls", "expected"),
    [
        ([], "logical"),  # it only claimed to have written the file
        ([ToolCall(tool="glob", target=".", ok=False, error="boom")], "logical"),  # unrelated
        ([ToolCall(tool="shell", args={"command": "touch report.txt"})], "logical"),
        (
            [ToolCall(tool="write_file", target="report.txt", ok=False, error="EACCES")],
            "environmental",
        ),
        (
            [ToolCall(tool="shell", args={"command": "echo x > ./report.txt"}, ok=False)],
            "environmental",
        ),
    ],
)
def test_a_missing_change_is_attributed_by_what_the_tools_did(
    tmp_path: Path, calls: list[ToolCall], expected: str
) -> None:
    """A claimed change with no effect fails ``changed``; it is the environment's fault
    only when a call on the reading's target failed (paper §9: misattribution is a Law 0
    violation), not when another call failed on the way."""
    verdict = rule_verdict(REPORT, "I created report.txt", calls, tmp_path, targets=CREATED)
    assert not verdict.passed and verdict.failure_class == expected
