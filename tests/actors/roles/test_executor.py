"""The Executor: one attempt per addressed SubTask, stopping for a structured reason."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from artoo.actors.roles.executor import Executor
from artoo.schemas import (
    Config,
    ConfirmationDecision,
    ConfirmationRequest,
    ExecutionResult,
    SubTask,
)
from artoo.testing import RoleHarness, write_script


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"role": "executor", "tool_calls": [{"name": name, "arguments": arguments}]}


def _run(
    tmp_path: Path, entries: list[dict[str, Any]], subtask: SubTask, workspace: Path | None = None
) -> ExecutionResult:
    model = write_script(tmp_path / "s.toml", entries)
    config = Config(max_turns=4)
    with RoleHarness(
        Executor, instance="pair-0", model=model, config=config, workspace=workspace
    ) as h:
        h.send(subtask, to="pair-1")  # another pair's: ignored
        h.send(subtask, to="pair-0")
        (result,) = h.wait_for(ExecutionResult)
        assert len(h.published(ExecutionResult)) == 1
        assert result.to == "pair-0"
        return result.body


def test_an_answer_ends_the_attempt(tmp_path: Path) -> None:
    entries = [_call("glob", pattern="*"), {"role": "executor", "content": "two files"}]
    result = _run(tmp_path, entries, SubTask(subtask_id="s1", instruction="list"))
    assert result.stop == "answer" and result.ok and result.output == "two files"
    assert [c.tool for c in result.tool_calls] == ["glob"]


def test_a_blocked_tool_is_refused_structurally(tmp_path: Path) -> None:
    entries = [_call("shell", command="ls"), {"role": "executor", "content": "could not"}]
    st = SubTask(subtask_id="s1", instruction="list", blocked_tools=["shell"])
    result = _run(tmp_path, entries, st)
    (call,) = result.tool_calls
    assert call.refusal == "blocked_tool" and not call.ok


def test_the_same_call_three_times_is_a_doom_loop(tmp_path: Path) -> None:
    entries = [{**_call("glob", pattern="*"), "times": 0}]
    result = _run(tmp_path, entries, SubTask(subtask_id="s1", instruction="list"))
    assert result.stop == "doom_loop" and not result.ok and len(result.tool_calls) == 3


def test_the_turn_cap_and_a_model_outage_are_their_own_stops(tmp_path: Path) -> None:
    entries = [_call("glob", pattern=f"{i}*") for i in range(4)]
    (tmp_path / "ws").mkdir()
    capped = _run(tmp_path, entries, SubTask(subtask_id="s1", instruction="list"), tmp_path / "ws")
    assert all(c.ok for c in capped.tool_calls)
    assert capped.stop == "turn_cap" and len(capped.tool_calls) == 4
    (tmp_path / "b").mkdir()
    outage = _run(tmp_path / "b", [], SubTask(subtask_id="s2", instruction="list"))
    assert outage.stop == "model_error" and not outage.ok


def _caution_run(
    tmp_path: Path, approve: bool, uses: int
) -> tuple[list[ConfirmationRequest], ExecutionResult]:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "notes.txt").write_text("hello")
    entries = [
        *[_call("read_file", path="notes.txt"), _call("shell", command="cat ./notes.txt")][:uses],
        {"role": "executor", "content": "done"},
    ]
    model = write_script(tmp_path / "s.toml", entries)
    st = SubTask(subtask_id="s1", instruction="read", caution_targets=["notes.txt"])
    with RoleHarness(Executor, instance="pair-0", model=model, workspace=tmp_path / "ws") as h:
        h.send(st, to="pair-0")
        (ask,) = h.wait_for(ConfirmationRequest)
        h.send(ConfirmationDecision(request_id=ask.body.request_id, approved=approve))
        (result,) = h.wait_for(ExecutionResult)
        asks = [e.body for e in h.published(ConfirmationRequest)]
    return asks, result.body


def test_the_first_use_of_a_caution_target_is_confirmed_once_per_task(tmp_path: Path) -> None:
    asks, result = _caution_run(tmp_path, approve=True, uses=2)
    assert len(asks) == 1 and asks[0].gate == "caution" and asks[0].target == "notes.txt"
    assert [c.ok for c in result.tool_calls] == [True, True]  # the second use is not asked


def test_a_denied_caution_target_is_refused_structurally(tmp_path: Path) -> None:
    _asks, result = _caution_run(tmp_path, approve=False, uses=1)
    first = result.tool_calls[0]
    assert not first.ok and first.refusal == "caution_denied"


def test_a_retry_after_no_tool_call_says_nothing_supported_the_answer(tmp_path: Path) -> None:
    from artoo.actors.roles.executor import NO_TOOL_YET
    from artoo.schemas import CorrectionSignal, LLMCall

    entries = [
        {"role": "executor", "content": "1 line"},
        _call("glob", pattern="*"),
        {"role": "executor", "content": "two files"},
        {"role": "executor", "content": "2 files"},
    ]
    model = write_script(tmp_path / "s.toml", entries)
    st = SubTask(subtask_id="s1", instruction="count")
    with RoleHarness(Executor, instance="pair-0", model=model, config=Config(max_turns=4)) as h:
        h.send(st, to="pair-0")
        h.wait_for(ExecutionResult)
        h.send(CorrectionSignal(subtask_id="s1", feedback="wrong count"), to="pair-0")
        h.wait_for(ExecutionResult, 2)
        h.send(CorrectionSignal(subtask_id="s1", feedback="still wrong"), to="pair-0")
        h.wait_for(ExecutionResult, 3)
        asked = [
            e.body.request["messages"] for e in h.recorder.envelopes if isinstance(e.body, LLMCall)
        ]
    first_retry = asked[1][-1]["content"]
    assert "wrong count" in first_retry and NO_TOOL_YET in first_retry
    second_retry = asked[-1][-1]["content"]  # a tool was called in attempt 2: no reminder
    assert "still wrong" in second_retry and NO_TOOL_YET not in second_retry


def test_a_tool_is_required_until_the_attempts_first_call_and_results_invite_the_answer(
    tmp_path: Path,
) -> None:
    from artoo.actors.roles.executor import AFTER_RESULT
    from artoo.schemas import LLMCall

    entries = [_call("glob", pattern="*"), {"role": "executor", "content": "no files"}]
    model = write_script(tmp_path / "s.toml", entries)
    with RoleHarness(Executor, instance="pair-0", model=model, config=Config(max_turns=4)) as h:
        h.send(SubTask(subtask_id="s1", instruction="list"), to="pair-0")
        h.wait_for(ExecutionResult)
        asked = [e.body.request for e in h.recorder.envelopes if isinstance(e.body, LLMCall)]
    assert [r.get("tool_choice") for r in asked] == ["required", None]
    tool_reply, hint = asked[1]["messages"][-2:]
    assert tool_reply["role"] == "tool" and AFTER_RESULT not in tool_reply["content"]
    assert hint == {"role": "user", "content": AFTER_RESULT}  # after the results, as a turn


def test_a_tool_that_failed_the_same_way_twice_is_not_called_a_third_time(
    tmp_path: Path,
) -> None:
    """The issue's run spent 25 ``load_data`` calls on names that never existed: after two
    failures of one kind (tool and argument names), the third is refused without running;
    another kind still runs, and a shell command's non-zero exit is a result, not a tool
    failure."""
    entries = [
        _call("load_data", filename="nope1.txt"),
        _call("load_data", filename="nope2.txt"),
        _call("load_data", filename="nope3.txt"),
        _call("glob", pattern="*"),
    ]
    result = _run(tmp_path, entries, SubTask(subtask_id="s1", instruction="read"))
    calls = result.tool_calls
    assert [c.tool for c in calls] == ["load_data", "load_data", "load_data", "glob"]
    assert [c.refusal for c in calls[:3]] == [None, None, "repeated_failure"]
    assert not calls[0].ok and not calls[1].ok
    assert calls[3].refusal != "repeated_failure"  # another kind: run (whatever it met)
    assert "failed the same way 2 times" in (calls[2].error or "")
    shells = [_call("shell", command=f"ls nope{i}") for i in range(4)]
    model = write_script(tmp_path / "shells.toml", shells)
    with RoleHarness(
        Executor, instance="pair-0", model=model, config=Config(max_turns=4), workspace=tmp_path
    ) as h:
        h.send(SubTask(subtask_id="s2", instruction="list"), to="pair-0")
        (ran,) = h.wait_for(ExecutionResult)
    assert [c.refusal for c in ran.body.tool_calls] == [None] * 4
    assert all(c.exit_code not in (None, 0) for c in ran.body.tool_calls)


def test_repeated_failure_reads_structured_fields_only() -> None:
    from artoo.actors.roles.executor import failure_kind, repeated_failure
    from artoo.schemas import ToolCall

    def failed(refusal: Any = None, **kw: Any) -> ToolCall:
        return ToolCall(tool="read_file", args={"path": "x"}, ok=False, refusal=refusal, **kw)

    assert failure_kind("read_file", {"path": "a", "limit": 3}) == ("read_file", "limit", "path")
    assert repeated_failure([failed()]) is None
    assert repeated_failure([failed(), failed()]) is not None
    assert repeated_failure([failed(), failed(refusal="blocked_target")]) is None
    assert repeated_failure([failed(exit_code=1), failed(exit_code=1)]) is None
    ok = ToolCall(tool="read_file", args={"path": "x"})
    assert repeated_failure([failed(), ok]) is None
    assert failure_kind("shell", {"command": "rm a"}) == failure_kind("shell", {"command": "rm b"})
    assert failure_kind("shell", {"command": "rm a"}) != failure_kind("shell", {"command": "ls"})


def test_a_refused_call_repeated_ends_the_attempt_and_its_tool_is_not_offered_again(
    tmp_path: Path,
) -> None:
    """A kept real-model log: after ``read_file`` was refused as a repeated failure, the
    model made the same call until the doom loop, and each retry of the same conversation
    made it three more times. Two refusals of one kind in a row end the attempt; the retry
    is not offered the refused tool, so it has to use another one (here ``glob``)."""
    from artoo.schemas import CorrectionSignal, LLMCall

    entries = [
        _call("read_file", path="gone.txt"),
        _call("read_file", path="gone2.txt"),
        _call("read_file", path="gone3.txt"),
        _call("read_file", path="gone4.txt"),
        _call("glob", pattern="*"),
        {"role": "executor", "content": "no such file"},
    ]
    model = write_script(tmp_path / "s.toml", entries)
    st = SubTask(subtask_id="s1", instruction="read gone.txt")
    (tmp_path / "ws").mkdir()
    with RoleHarness(
        Executor,
        instance="pair-0",
        model=model,
        config=Config(max_turns=8),
        workspace=tmp_path / "ws",
    ) as h:
        h.send(st, to="pair-0")
        (first,) = h.wait_for(ExecutionResult)
        h.send(CorrectionSignal(subtask_id="s1", feedback="read it"), to="pair-0")
        _, second = h.wait_for(ExecutionResult, 2)
        asked = [e.body.request for e in h.recorder.envelopes if isinstance(e.body, LLMCall)]
    calls = first.body.tool_calls
    assert [c.refusal for c in calls] == [None, None, "repeated_failure", "repeated_failure"]
    assert first.body.stop == "doom_loop" and "refused twice" in (first.body.error or "")
    offered = [{t["name"] for t in r.get("tools") or []} for r in asked]
    assert "read_file" in offered[0] and "read_file" not in offered[4] and "glob" in offered[4]
    assert [c.tool for c in second.body.tool_calls] == ["glob"]
    assert second.body.stop == "answer"


def test_is_refusal_loop_needs_two_refusals_of_one_kind_in_a_row() -> None:
    from artoo.actors.roles.executor import is_refusal_loop
    from artoo.schemas import ToolCall

    def call(tool: str = "read_file", refusal: Any = "repeated_failure", **args: Any) -> ToolCall:
        return ToolCall(tool=tool, args=args or {"path": "x"}, ok=False, refusal=refusal)

    assert is_refusal_loop([call(), call(path="y")])
    assert not is_refusal_loop([call()])
    assert not is_refusal_loop([call(), call(refusal=None)])
    assert not is_refusal_loop([call(refusal="blocked_tool"), call(refusal="blocked_tool")])
    assert not is_refusal_loop([call(), call(tool="load_data", filename="x")])
    assert is_refusal_loop([call(refusal=None), call(), call()])


# ---------------------------------------------------------------- repeated calls, cycles
def _cycle_run(
    tmp_path: Path, entries: list[dict[str, Any]]
) -> tuple[ExecutionResult, list[str], int]:
    """One attempt over a workspace of one file: its result, what the model was shown of
    each call, and how many model calls it made."""
    from artoo.schemas import LLMCall, ToolCallEnded

    ws = tmp_path / "ws"
    ws.mkdir(parents=True)
    (ws / "meeting.txt").write_text("decision: ship\naction: test\n", encoding="utf-8")
    model = write_script(tmp_path / "s.toml", entries)
    config = Config(max_turns=8)
    with RoleHarness(Executor, instance="pair-0", model=model, config=config, workspace=ws) as h:
        h.send(SubTask(subtask_id="s1", instruction="count the lines"), to="pair-0")
        (result,) = h.wait_for(ExecutionResult)
        shown = [e.body.shown for e in h.published(ToolCallEnded)]
        asked = len(h.published(LLMCall))
    return result.body, shown, asked


READS = [
    _call("read_file", path="meeting.txt"),
    _call("glob", pattern="*.txt"),
    _call("read_file", path="meeting.txt", offset=8),
]


def test_a_cycle_of_three_calls_ends_as_a_doom_loop_before_the_turn_cap(tmp_path: Path) -> None:
    """A kept real-model run cycled ``echo $decision``, ``echo $action``,
    ``echo $next_meeting`` for three attempts of 8 turns each, never the same call three
    times in a row (here three reads): each repeat is refused without running (its result
    is above), and two such refusals in a row end the attempt as a doom loop, well before
    the turn cap."""
    result, shown, asked = _cycle_run(tmp_path, [*READS, *READS, *READS])
    calls = result.tool_calls
    assert result.stop == "doom_loop" and not result.ok
    assert asked == len(calls) == 5 < 8
    assert [(c.tool, c.args) for c in calls] == [(c["name"], c["arguments"]) for c in [
        *(e["tool_calls"][0] for e in READS), *(e["tool_calls"][0] for e in READS[:2])
    ]]  # fmt: skip
    assert [c.refusal for c in calls] == [None, None, None, "repeated_call", "repeated_call"]
    assert all(c.ok for c in calls[:3])
    refused = calls[3]  # not run: nothing read
    assert not refused.ok and refused.content is None and refused.output_preview == ""
    assert "already made this call" in shown[3] and "\n" not in shown[3]
    assert "decision" in shown[0] and "decision" not in shown[3]
    assert "refused twice in a row as a repeated call" in (result.error or "")


def test_a_call_made_a_third_time_among_others_is_a_doom_loop(tmp_path: Path) -> None:
    again = _call("glob", pattern="*")
    entries = [again, READS[0], again, READS[1], again, READS[2]]
    result, _shown, asked = _cycle_run(tmp_path, entries)
    calls = result.tool_calls
    assert [c.refusal for c in calls] == [None, None, "repeated_call", None, "repeated_call"]
    assert result.stop == "doom_loop" and asked == 5
    assert "the same call glob made 3 times" in (result.error or "")


def test_a_command_run_outside_the_sandbox_is_run_again(tmp_path: Path) -> None:
    """What a command run outside the sandbox changed is not known: it is run whenever
    asked, and a read after it is run again too (the same call three times in a row is
    still a doom loop)."""
    echo = _call("shell", command="echo hi")
    entries = [READS[0], echo, READS[0], echo, {"role": "executor", "content": "2"}]
    result, _shown, _asked = _cycle_run(tmp_path, entries)
    assert [c.refusal for c in result.tool_calls] == [None] * 4
    assert not any(c.sandboxed for c in result.tool_calls) and result.stop == "answer"
    result, _shown, _asked = _cycle_run(tmp_path / "b", [echo, echo, echo])
    assert result.stop == "doom_loop" and len(result.tool_calls) == 3


def test_a_call_after_the_workspace_changed_or_a_failed_one_is_run_again(tmp_path: Path) -> None:
    """A read after a write may read something new, and a call that failed is the
    repeated-failure rule's (refused at the third failure of its kind): both run."""
    listed = _call("glob", pattern="*.txt")
    write = _call("write_file", path="count.txt", content="2\n")
    missing = _call("read_file", path="gone.txt")
    entries = [listed, write, listed, missing, missing, {"role": "executor", "content": "2"}]
    result, shown, _asked = _cycle_run(tmp_path, entries)
    calls = result.tool_calls
    assert [c.refusal for c in calls] == [None] * 5
    assert calls[1].effects and not calls[3].ok and not calls[4].ok
    assert result.stop == "answer"
    assert "count.txt" not in shown[0] and "count.txt" in shown[2]


def test_a_retry_of_the_same_conversation_is_refused_a_call_it_made_a_fresh_one_is_not(
    tmp_path: Path,
) -> None:
    """A retry continues the conversation: the result of a call made in an earlier attempt
    is above, and the call is refused; a second derivation starts a new conversation, which
    has seen nothing, and the call runs."""
    from artoo.schemas import CorrectionSignal

    wc = READS[0]
    answer = {"role": "executor", "content": "2 lines"}
    entries = [wc, answer, wc, answer, wc, answer]
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "meeting.txt").write_text("a\nb\n", encoding="utf-8")
    model = write_script(tmp_path / "s.toml", entries)
    with RoleHarness(
        Executor, instance="pair-0", model=model, config=Config(max_turns=8), workspace=ws
    ) as h:
        h.send(SubTask(subtask_id="s1", instruction="count the lines"), to="pair-0")
        h.wait_for(ExecutionResult)
        h.send(CorrectionSignal(subtask_id="s1", feedback="say lines"), to="pair-0")
        h.wait_for(ExecutionResult, 2)
        h.send(CorrectionSignal(subtask_id="s1", feedback="again", corroborate="2"), to="pair-0")
        results = [e.body for e in h.wait_for(ExecutionResult, 3)]
    assert [[c.refusal for c in r.tool_calls] for r in results] == [
        [None], ["repeated_call"], [None]
    ]  # fmt: skip
    assert [r.stop for r in results] == ["answer"] * 3
    assert results[2].tool_calls[0].conversation == 1


def test_a_second_derivation_is_refused_the_first_ones_method(tmp_path: Path) -> None:
    """The fresh conversation asked for a second derivation may not read the value the
    way the first did (a small model re-ran the first ``read_file`` when told not to):
    the call is refused (``same_method``) and another method runs."""
    from artoo.schemas import CorrectionSignal

    read = {
        "role": "executor",
        "tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}],
    }
    again = {
        "role": "executor",
        "tool_calls": [{"name": "read_file", "arguments": {"path": "./a.txt", "offset": 0}}],
    }
    cat = {
        "role": "executor",
        "tool_calls": [{"name": "shell", "arguments": {"command": "cat a.txt"}}],
    }
    answer = {"role": "executor", "content": "7"}
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("7\n", encoding="utf-8")
    model = write_script(tmp_path / "s.toml", [read, answer, again, cat, answer])
    with RoleHarness(Executor, instance="pair-0", model=model, workspace=ws) as h:
        h.send(SubTask(subtask_id="s1", instruction="what number is in a.txt?"), to="pair-0")
        h.wait_for(ExecutionResult)
        ask = CorrectionSignal(
            subtask_id="s1", corroborate="7", feedback="another way", avoid=[["read_file", "a.txt"]]
        )
        h.send(ask, to="pair-0")
        results = [e.body for e in h.wait_for(ExecutionResult, 2)]
    fresh = results[1].tool_calls
    assert [(c.tool, c.refusal, c.conversation) for c in fresh] == [
        ("read_file", "same_method", 1),
        ("shell", None, 1),
    ]
