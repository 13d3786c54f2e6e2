"""After a logically failed round the GGS blocks only the tools whose calls failed (did not
work, were refused, or exited non-zero): a tool whose every call worked is not the wrong
tool — what failed was the answer drawn from it. (A count of 3 that ``grep -c`` printed
failed a check; blocking ``shell`` then left no tool that could count.)"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from artoo.schemas import ReplanRequest, SubTaskOutcome, ToolCall

from .ggs_builders import S, gradient, outcome, v


def _shell(command: str, exit_code: int = 0) -> ToolCall:
    return ToolCall(tool="shell", args={"command": command}, ok=exit_code == 0, exit_code=exit_code)


def _logical(*calls: ToolCall) -> SubTaskOutcome:
    return outcome("s1", [v("s1.c", False, "logical")], calls=calls, fc="logical")


def _blocked(*outcomes: SubTaskOutcome) -> tuple[list[str], list[str]]:
    message = ReplanRequest(round=0, outcomes=list(outcomes), merged_output="3")
    step = gradient().step(message, elapsed_ms=S, now=1.0)
    assert step.directive is not None
    return step.directive.blocked_tools, step.decision.blocked_tools


def test_a_logical_failure_whose_commands_all_worked_blocks_no_tool() -> None:
    calls = (_shell("grep -c WARN logs/build.log"), _shell("wc -l logs/build.log"))
    assert _blocked(_logical(*calls)) == ([], [])


def test_a_tool_whose_call_failed_is_still_blocked() -> None:
    missing = ToolCall(tool="read_file", args={"path": "logs/nope.log"}, ok=False, error="ENOENT")
    worked = _shell("grep -c WARN logs/build.log")
    assert _blocked(_logical(worked, missing)) == (["read_file"], ["read_file"])


def test_a_command_that_exited_non_zero_or_a_refused_call_blocks_its_tool() -> None:
    grep = _shell("grep -c ERROR logs/build.log", exit_code=1)
    assert _blocked(_logical(grep)) == (["shell"], ["shell"])
    refused = ToolCall(tool="glob", args={"pattern": "**"}, ok=False, refusal="repeated_failure")
    assert _blocked(_logical(_shell("ls logs"), refused)) == (["glob"], ["glob"])


def test_a_call_refused_as_a_repeat_does_not_block_its_tool() -> None:
    """A model that cycled ``echo`` commands until the doom loop had each repeat refused
    (``repeated_call``): its commands worked, and ``shell`` is still the tool that counts."""
    echo = _shell("echo $decision")
    repeat = ToolCall(tool="shell", args=echo.args, ok=False, refusal="repeated_call")
    assert _blocked(_logical(echo, repeat, repeat)) == ([], [])


def test_a_failed_call_in_a_matched_subtask_blocks_nothing() -> None:
    missing = ToolCall(tool="read_file", args={"path": "logs/nope.log"}, ok=False, error="ENOENT")
    matched = outcome("s2", [v("s2.c", True)], calls=[missing])
    assert _blocked(matched, _logical(_shell("wc -l logs/build.log"))) == ([], [])


_CALLS = st.builds(
    ToolCall,
    tool=st.sampled_from(["shell", "read_file", "glob"]),
    ok=st.booleans(),
    exit_code=st.sampled_from([None, 0, 1, 2]),
    refusal=st.sampled_from([None, None, "repeated_failure", "repeated_call"]),
)


@given(st.lists(_CALLS, max_size=6))
def test_only_tools_with_a_failed_call_are_blocked(calls: list[ToolCall]) -> None:
    blocked, _ = _blocked(_logical(*calls))

    def failed(c: ToolCall) -> bool:
        if c.refusal == "repeated_call":  # a repeat refused says nothing of the tool
            return False
        return not c.ok or c.refusal is not None or c.exit_code not in (None, 0)

    assert set(blocked) == {c.tool for c in calls if failed(c)}
    assert len(blocked) == len(set(blocked))
