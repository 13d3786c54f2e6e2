"""``artoo replay --verify`` recomputes Law 1's decisions and the Dispatcher's grouping and
order: on the demo's log, on edited copies of it, and on scripted Systems with the sandbox
and without it."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest

import artoo
from artoo.cli import main
from artoo.replay import task_table, verify
from artoo.schemas import (
    ConfirmationDecision,
    ConfirmationRequest,
    DispatchManifest,
    Envelope,
    ExecutionResult,
    JudgeObservation,
    OutcomeSummary,
    ReplanRequest,
    SubTask,
    SubTaskOutcome,
    ToolCallEnded,
)
from artoo.testing import write_script

from .helpers import CONFIG, DATA, all_events, rewrite_event


def _mismatches(store: Path, task_id: str | None = None) -> set[tuple[int, str, str]]:
    return {(m.seq, m.kind, m.field) for m in verify(store, task_id).mismatches}


def _replace(store: Path, env: Envelope, **changes: Any) -> None:
    rewrite_event(
        store, msgspec.structs.replace(env, body=msgspec.structs.replace(env.body, **changes))
    )


def _denied_result(store: Path) -> Envelope:
    return next(
        e
        for e in all_events(store)
        if isinstance(e.body, ExecutionResult)
        and any(c.refusal == "law1_denied" for c in e.body.tool_calls)
    )


def _request(store: Path, task_id: str | None) -> Envelope:
    return next(
        e
        for e in all_events(store)
        if isinstance(e.body, ConfirmationRequest) and e.task_id == task_id
    )


# --------------------------------------------------------------------------- the demo
def test_every_demo_scenario_verifies_with_law1_and_dispatch_recomputed(
    demo_store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = verify(demo_store)
    assert report.ok, [str(m) for m in report.mismatches]
    events = all_events(demo_store)
    calls = [c for e in events if isinstance(e.body, ExecutionResult) for c in e.body.tool_calls]
    judged = [c for c in calls if c.law1]
    assert judged and all(c.tool == "shell" for c in judged)
    assert report.checked["law1"] == sum(len(c.law1) for c in judged)
    assert report.checked["law1_confirm"] == len(judged)
    assert "law1" not in report.skipped
    # each demo plan is one group: its first step, and the step after its outcome
    manifests = sum(1 for e in events if isinstance(e.body, DispatchManifest))
    assert report.checked["dispatch"] == 2 * manifests
    # scenario 4's denial is recomputed and its confirmation checked
    denied = task_table(demo_store)[3].task_id
    four = verify(demo_store, denied)
    assert four.ok and four.checked["law1_confirm"] == 1 and four.checked["law1"] >= 1
    result = _denied_result(demo_store)
    assert result.task_id == denied and result.body.tool_calls[0].law1[-1].ask
    assert main(["replay", str(demo_store), "--verify"]) == 0
    out = capsys.readouterr().out
    assert f"{report.checked['law1']} law1," in out
    assert f"{report.checked['dispatch']} dispatch," in out


def test_the_denied_calls_edited_input_is_named_by_its_seq(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    env = _denied_result(store)
    call = env.body.tool_calls[0]
    if call.sandboxed:  # its observed effect edited into a creation: nothing to ask
        edited = msgspec.structs.replace(
            call, effects=tuple(msgspec.structs.replace(e, change="created") for e in call.effects)
        )
    else:  # the parser's input edited: a command that only reads
        edited = msgspec.structs.replace(call, args={"command": "cat archive/old.log"})
    _replace(store, env, tool_calls=[edited, *env.body.tool_calls[1:]])
    report = verify(store, env.task_id)
    asked = f"tool_calls[0].law1[{len(call.law1) - 1}].ask"
    [m] = [m for m in report.mismatches if m.field == asked]
    assert (m.seq, m.kind, m.logged, m.recomputed) == (env.seq, "ExecutionResult", True, False)
    # the request and the refusal no decision asked for are named too
    request = _request(store, env.task_id)
    found = {(x.seq, x.kind, x.field) for x in report.mismatches}
    assert (request.seq, "ConfirmationRequest", "(asked)") in found
    assert (env.seq, "ExecutionResult", "tool_calls[0].refusal") in found
    assert main(["replay", str(store), "--verify"]) == 1
    out = capsys.readouterr().out
    assert f"seq {env.seq} ExecutionResult.{asked}: logged True, recomputed False" in out


def test_a_removed_confirmation_request_is_named(store: Path) -> None:
    env = _denied_result(store)
    request = _request(store, env.task_id)
    # a log has no holes: the request's record now holds a message that asks nothing
    rewrite_event(store, msgspec.structs.replace(request, body=JudgeObservation(summary="-")))
    report = verify(store, env.task_id)
    missing = [m for m in report.mismatches if m.field == "tool_calls[0].(ConfirmationRequest)"]
    assert [(m.seq, m.kind) for m in missing] == [(env.seq, "ExecutionResult")]
    assert missing[0].logged is None and missing[0].recomputed["ask"] is True


def test_an_altered_confirmation_request_is_named(store: Path) -> None:
    env = _denied_result(store)
    request = _request(store, env.task_id)
    _replace(store, request, reason="would touch nothing", effects=())
    report = verify(store, env.task_id)
    fields = {m.field: m for m in report.mismatches if m.seq == request.seq}
    assert fields["reason"].logged == "would touch nothing"
    assert fields["reason"].recomputed == env.body.tool_calls[0].law1[-1].reason
    if env.body.tool_calls[0].sandboxed:
        assert "effects" in fields


def test_a_denial_edited_into_an_approval_is_named(store: Path) -> None:
    env = _denied_result(store)
    answers = [e for e in all_events(store) if isinstance(e.body, ConfirmationDecision)]
    answer = next(e for e in answers if e.task_id == env.task_id)
    _replace(store, answer, approved=True)
    # approved, yet the call was refused by Law 1: the log contradicts itself
    assert (env.seq, "ExecutionResult", "tool_calls[0].refusal") in _mismatches(store, env.task_id)


# --------------------------------------------------------------------------- the dispatcher
THREE = "write steps.txt in three steps"


def _plan_entries(step_a: dict[str, Any]) -> list[dict[str, Any]]:
    """A creation whose round 0 (the request itself) writes nothing (its change fails),
    then the Planner's round 1: steps A and B in one group, C in the next, which writes
    the file; ``step_a``: step A's Executor entry."""
    write = {"name": "write_file", "arguments": {"path": "steps.txt", "content": "A B C"}}
    return [
        {
            "role": "perceiver",
            "content": {
                "intent": "three steps",
                "kind": "creation",
                "targets": [{"path": "steps.txt", "role": "create"}],
            },
        },
        {"role": "executor", "times": 0, "match": f"Subtask: {THREE}", "content": "Later."},
        {
            "role": "planner",
            "content": {
                "subtasks": [
                    {"instruction": "step A", "sequence": 1},
                    {"instruction": "step B", "sequence": 1},
                    {"instruction": "step C", "sequence": 2, "tools": ["write_file"]},
                ]
            },
        },
        {**step_a, "match": "Subtask: step A"},
        {"role": "executor", "match": "Subtask: step B", "content": "done"},
        {"role": "executor", "match": "Subtask: step C", "tool_calls": [write]},
        {"role": "executor", "match": "Subtask: step C", "content": "done"},
    ]


DONE = {"role": "executor", "content": "done"}


def _run(tmp: Path, entries: list[dict[str, Any]], text: str, **open_args: Any) -> Path:
    workspace = tmp / "workspace"
    if not workspace.exists():
        shutil.copytree(DATA / "workspace", workspace)
    model = write_script(tmp / "s.toml", entries)
    config = open_args.pop("config", CONFIG)
    with artoo.System.open(
        tmp / "store", model=model, workspace=workspace, config=config, **open_args
    ) as s:
        s.submit(text).result(30)
        s.flush(5)
    return tmp / "store"


@pytest.fixture(scope="module")
def groups_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _run(tmp_path_factory.mktemp("groups"), _plan_entries(DONE), THREE)


def _copy(store: Path, tmp_path: Path) -> Path:
    shutil.copytree(store, tmp_path / "copy")
    return tmp_path / "copy"


def _sent(store: Path, round: int = 1) -> list[Envelope]:
    """The SubTasks the Dispatcher sent in ``round`` (round 1: the Planner's plan)."""
    return [e for e in all_events(store) if isinstance(e.body, SubTask) and e.body.round == round]


def _manifest(store: Path, round: int = 1) -> Envelope:
    return next(
        e
        for e in all_events(store)
        if isinstance(e.body, DispatchManifest) and e.body.round == round
    )


def test_a_plan_of_two_groups_verifies_group_by_group(groups_store: Path) -> None:
    report = verify(groups_store)
    assert report.ok, [str(m) for m in report.mismatches]
    # round 0's one group (its step, the end), then round 1's first group, second, end
    assert report.checked["dispatch"] == 2 + 3
    a, b, c = _sent(groups_store)
    first = {a.body.subtask_id, b.body.subtask_id}
    outcomes = [
        e.seq
        for e in all_events(groups_store)
        if isinstance(e.body, SubTaskOutcome) and e.body.subtask_id in first
    ]
    assert c.seq > max(outcomes) and "step A: done" in c.body.context


def test_an_edited_plan_sequence_is_named_at_the_first_subtask_sent(
    groups_store: Path, tmp_path: Path
) -> None:
    store = _copy(groups_store, tmp_path)
    manifest = _manifest(store)
    a, b, c = manifest.body.subtasks
    swapped = [
        msgspec.structs.replace(a, sequence=2),
        msgspec.structs.replace(b, sequence=2),
        msgspec.structs.replace(c, sequence=1),
    ]
    _replace(store, manifest, subtasks=swapped)
    first = _sent(store)[0]
    report = verify(store)
    [m] = [m for m in report.mismatches if (m.seq, m.field) == (first.seq, "subtask_id")]
    assert (m.kind, m.logged, m.recomputed) == ("SubTask", a.subtask_id, c.subtask_id)
    assert main(["replay", str(store), "--verify"]) == 1


def test_a_swapped_dispatch_order_is_named_at_both_seqs(groups_store: Path, tmp_path: Path) -> None:
    store = _copy(groups_store, tmp_path)
    a, _, c = _sent(store)
    rewrite_event(store, msgspec.structs.replace(a, body=c.body))
    rewrite_event(store, msgspec.structs.replace(c, body=a.body))
    found = _mismatches(store)
    assert (a.seq, "SubTask", "subtask_id") in found
    assert (c.seq, "SubTask", "subtask_id") in found


def test_after_a_failed_group_the_rest_is_skipped_and_an_edited_skip_is_named(
    tmp_path: Path,
) -> None:
    glob = {"name": "glob", "arguments": {"pattern": "*.md"}}
    step_a = {"role": "executor", "times": 0, "tool_calls": [glob]}  # a doom loop: fails
    config = CONFIG.model_copy(update={"ggs": CONFIG.ggs.model_copy(update={"max_replans": 1})})
    store = _run(tmp_path, _plan_entries(step_a), THREE, config=config)
    report = verify(store)
    assert report.ok, [str(m) for m in report.mismatches]
    [skip] = [
        e
        for e in all_events(store)
        if isinstance(e.body, SubTaskOutcome) and e.body.status == "skipped"
    ]
    assert skip.sender == "dispatcher" and len(_sent(store)) == 2  # step C never sent
    _replace(store, skip, reason="nothing to do")
    assert (skip.seq, "SubTaskOutcome", "reason") in _mismatches(store)


# --------------------------------------------------------------------------- the gates
def _shell_entries(*commands: str) -> list[dict[str, Any]]:
    calls = [{"name": "shell", "arguments": {"command": c}} for c in commands]
    return [  # a change that names no target: Law 1 asks of each irreversible effect
        {"role": "perceiver", "content": {"intent": "tidy up", "kind": "change"}},
        {"role": "executor", "tool_calls": calls},
        {"role": "executor", "times": 0, "content": "done"},
    ]


def _approve_todo(request: ConfirmationRequest) -> bool:
    """The operator: yes to anything on notes/todo.txt, no to the rest."""
    return "notes/todo.txt" in request.action


def _calls(store: Path) -> tuple[Envelope, list[Any]]:
    env = next(e for e in all_events(store) if isinstance(e.body, ExecutionResult))
    return env, list(env.body.tool_calls)


@pytest.mark.skipif(sys.platform != "linux", reason="the sandbox needs Linux")
def test_a_sandboxed_task_verifies_and_its_edited_effects_are_named(tmp_path: Path) -> None:
    from artoo.actors.tools import probe

    if (why := probe()) is not None:
        pytest.skip(f"no sandbox on this machine: {why}")
    config = CONFIG.model_copy(
        update={"tools": CONFIG.tools.model_copy(update={"sandbox": "required"})}
    )
    entries = _shell_entries(
        "echo fresh > fresh.txt",  # creates: applied without asking
        "echo more >> notes/todo.txt",  # changes: asked, approved, applied
        "rm archive/old.log",  # deletes: asked, denied, discarded
    )
    store = _run(tmp_path, entries, "tidy up", config=config, operator=_approve_todo)
    env, (fresh, todo, rm) = _calls(store)
    assert all(c.sandboxed for c in (fresh, todo, rm))
    assert [c.law1[-1].ask for c in (fresh, todo, rm)] == [False, True, True]
    assert (todo.refusal, rm.refusal) == (None, "law1_denied")
    assert (tmp_path / "workspace" / "archive" / "old.log").exists()
    report = verify(store)
    assert report.ok, [str(m) for m in report.mismatches]
    assert report.checked["law1"] == 6 and report.checked["law1_confirm"] == 3
    # the approved overwrite logged as a creation: Law 1 would not have asked
    created = tuple(msgspec.structs.replace(e, change="created") for e in todo.effects)
    _replace(store, env, tool_calls=[fresh, msgspec.structs.replace(todo, effects=created), rm])
    found = {(m.seq, m.kind, m.field): m for m in verify(store).mismatches}
    m = found[(env.seq, "ExecutionResult", "tool_calls[1].law1[1].ask")]
    assert (m.logged, m.recomputed) == (True, False)
    assert main(["replay", str(store), "--verify"]) == 1


def test_without_the_sandbox_the_parsers_decisions_verify(tmp_path: Path) -> None:
    config = CONFIG.model_copy(update={"tools": CONFIG.tools.model_copy(update={"sandbox": "off"})})
    entries = _shell_entries(
        "echo fresh > fresh.txt",  # a new file: allowed, on any workspace
        "echo more > notes/todo.txt",  # overwrites a file the workspace holds
        "rm archive/old.log",  # rm: asked whatever the workspace holds
    )
    store = _run(tmp_path, entries, "tidy up", config=config, operator=_approve_todo)
    env, (fresh, todo, rm) = _calls(store)
    assert [c.law1 and c.law1[0].basis for c in (fresh, todo, rm)] == ["parser"] * 3
    assert [c.law1[0].reads_workspace for c in (fresh, todo, rm)] == [False, True, False]
    assert (todo.refusal, rm.refusal, rm.exit_code) == (None, "law1_denied", None)
    report = verify(store)
    assert report.ok, [str(m) for m in report.mismatches]
    # the overwrite's verdict read the workspace: its confirmation is checked, not its verdict
    assert (report.checked["law1"], report.skipped["law1"]) == (2, 1)
    assert report.checked["law1_confirm"] == 3
    # the denied rm's command edited into one that only reads
    cat = msgspec.structs.replace(rm, args={"command": "cat archive/old.log"})
    _replace(store, env, tool_calls=[fresh, todo, cat])
    found = {(m.seq, m.kind, m.field): m for m in verify(store).mismatches}
    m = found[(env.seq, "ExecutionResult", "tool_calls[2].law1[0].ask")]
    assert (m.logged, m.recomputed) == (True, False)
    assert found[(env.seq, "ExecutionResult", "tool_calls[2].law1[0].reason")].logged == (
        "rm: deletes files"
    )


def test_a_command_too_long_for_the_record_is_logged_whole_and_recomputed(
    tmp_path: Path,
) -> None:
    from artoo.actors.tools import ToolRegistry
    from artoo.replay._verify_law1 import recompute_law1

    (tmp_path / "ws").mkdir()
    registry = ToolRegistry(tmp_path / "ws", tmp_path / "spill")
    command = "echo " + "a" * 5000 + " > /dev/null; rm -f gone.txt"
    call = registry.call("shell", {"command": command}).call
    assert call.args["command"] != command and call.refusal == "law1_denied"
    [check] = call.law1
    assert check.command == command and check.ask and check.reason.startswith("rm")
    assert recompute_law1(check, call) == check
    short = registry.call("shell", {"command": "rm -f gone.txt"}).call
    assert short.law1[0].command == "" and recompute_law1(short.law1[0], short) == short.law1[0]


def _without_law1(body: Any) -> Any:
    """``body`` as a log from before ``ToolCall.law1`` holds it: no call with a decision."""

    def bare(calls: Any) -> list[Any]:
        return [msgspec.structs.replace(c, law1=()) for c in calls]

    if isinstance(body, ExecutionResult | SubTaskOutcome):
        return msgspec.structs.replace(body, tool_calls=bare(body.tool_calls))
    if isinstance(body, ReplanRequest | OutcomeSummary):
        outcomes = [
            msgspec.structs.replace(o, tool_calls=bare(o.tool_calls)) for o in body.outcomes
        ]
        return msgspec.structs.replace(body, outcomes=outcomes)
    if isinstance(body, ToolCallEnded):
        return msgspec.structs.replace(body, call=msgspec.structs.replace(body.call, law1=()))
    return body


def test_a_log_older_than_toolcall_law1_verifies_with_its_law1_calls_not_recomputable(
    store: Path, tmp_path: Path
) -> None:
    shell = 0
    for env in all_events(store):
        old = _without_law1(env.body)
        if old is not env.body:
            rewrite_event(store, msgspec.structs.replace(env, body=old))
        if isinstance(env.body, ExecutionResult):
            shell += sum(1 for c in env.body.tool_calls if c.tool == "shell")
    report = verify(store)
    assert report.ok, [str(m) for m in report.mismatches]
    assert shell and report.skipped["law1"] == shell and report.checked["law1"] == 0
    # the golden 0.1 log: no ToolCall.law1 either, and its plans dispatched as recomputed
    golden = tmp_path / "golden"
    shutil.copytree(Path(__file__).parent.parent / "data" / "golden_demo_0_1", golden)
    report = verify(golden)
    assert report.skipped["law1"] > 0 and "law1_confirm" not in report.checked
    manifests = sum(1 for e in all_events(golden) if isinstance(e.body, DispatchManifest))
    assert report.checked["dispatch"] == 2 * manifests
    assert not [m for m in report.mismatches if m.kind in ("SubTask", "ConfirmationRequest")]
